"""Append-only JSONL transcripts, one file per agent, one line per event, flushed as written.

Every line carries the identity of the event:
    {"v": 1, "run_id", "agent_id", "parent_id", "seq", "turn", "kind", "ts", "t", "data"}
`ts` is wall-clock ISO-8601 (UTC), `t` seconds since the run started (monotonic), `seq` the
line's index in this file. Event kinds and their `data` are documented in runs/README.md.
A crash loses at most the line being written.
"""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|x-api-key|secret|password|token)$", re.I)


def _scrub(obj: Any) -> Any:
    """Never log secrets: drop values whose key names a credential."""
    if isinstance(obj, dict):
        return {k: ("[redacted]" if isinstance(k, str) and SECRET_KEYS.search(k) and isinstance(v, str) else _scrub(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v) for v in obj]
    return obj


class Clock:
    """Shared by all transcripts of a run so `t` values are comparable across agents."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 6)


class Transcript:
    def __init__(self, path: Path, *, run_id: str, agent_id: str, parent_id: str | None, clock: Clock) -> None:
        self.path = path
        self.run_id = run_id
        self.agent_id = agent_id
        self.parent_id = parent_id
        self.clock = clock
        self.turn = 0
        self._seq = 0
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "a", encoding="utf-8")

    def event(self, kind: str, data: dict[str, Any] | None = None, *, turn: int | None = None) -> dict[str, Any]:
        with self._lock:
            line = {
                "v": 1,
                "run_id": self.run_id,
                "agent_id": self.agent_id,
                "parent_id": self.parent_id,
                "seq": self._seq,
                "turn": self.turn if turn is None else turn,
                "kind": kind,
                "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                "t": self.clock.now(),
                "data": _scrub(data or {}),
            }
            self._seq += 1
            if not self._fh.closed:
                self._fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
                self._fh.flush()
            return line

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Read a transcript, tolerating a torn last line (a crash mid-write)."""
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            raw = raw.strip()
            if not raw:
                continue
            try:
                yield json.loads(raw)
            except json.JSONDecodeError:
                return
