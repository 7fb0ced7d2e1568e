"""Append-only JSONL transcripts, one file per agent, one line per event, flushed as written.

`TranscriptWriter` is an observer of a run's event stream: each agent's records go to
`agents/<agent_id>.jsonl`, run-level records (run start/end, citation check, report) to
`run.jsonl`. Every line is `EventRecord.to_json()`:
    {"v", "run_id", "agent_id", "parent_id", "seq", "turn", "kind", "ts", "t", "data"}
A crash loses at most the line being written; readers skip a torn line (the last one after a crash, or
one in the middle when a resumed run appended after it) and read on. A line that cannot be written
whole (a full disk) is cut back off the file and raises `StorageError` (subagents/storage.py).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterator

from .events import RUN_AGENT, EventRecord
from .storage import AppendLog, StorageError

AGENTS_DIR = "agents"
RUN_LOG = "run.jsonl"


def transcript_path(run_dir: Path, agent_id: str) -> Path:
    return run_dir / RUN_LOG if agent_id == RUN_AGENT else run_dir / AGENTS_DIR / f"{agent_id}.jsonl"


class TranscriptWriter:
    """Writes every record to its agent's file as it happens."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._files: dict[str, AppendLog] = {}
        self._lock = threading.Lock()
        self._closed = False

    def on_event(self, record: EventRecord) -> None:
        line = json.dumps(record.to_json(), ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self._closed:
                return
            log = self._files.get(record.agent_id)
            if log is None:
                path = transcript_path(self.run_dir, record.agent_id)
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as err:
                    raise StorageError(err.errno, err.strerror, str(path.parent)) from None
                log = self._files[record.agent_id] = AppendLog(path)
                if _ends_torn(path):  # a crash cut the last line: start on a fresh one
                    log.append("\n")
            log.append(line)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for log in self._files.values():
                log.close()
            self._files.clear()


def _ends_torn(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        if fh.tell() == 0:
            return False
        fh.seek(-1, 2)
        return fh.read(1) != b"\n"


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Read a transcript's lines as dicts, skipping torn lines (a crash mid-write; the writer appends)."""
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            raw = raw.strip()
            if not raw:
                continue
            try:
                yield json.loads(raw)
            except json.JSONDecodeError:
                continue


def read_records(path: Path) -> Iterator[EventRecord]:
    """Read a transcript back into typed records."""
    for line in read_events(path):
        yield EventRecord.from_json(line)
