"""The run directory on disk (layout: `subagents.runs`). Files are written atomically
(tmp + fsync + rename, `subagents.storage.write_atomic`: a failed write leaves no temp file and the
old file whole). `RunDir` observes the event stream to write each accepted plan version."""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from subagents.events import EventRecord, PlanAccepted
from subagents.runs import MANIFEST, REPORT, REPORT_HTML, plan_file
from subagents.storage import write_atomic
from subagents.transcript import AGENTS_DIR, RUN_LOG


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id(question: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", question.lower()).strip("-")[:40].strip("-") or "run"
    return f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{slug}-{secrets.token_hex(2)}"


def write_json(path: Path, data: Any, *, durable: bool = True) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", durable=durable)


def plan_record(plan: PlanAccepted, ts: str) -> dict[str, Any]:
    return {"version": plan.version, "round": plan.round, "author": plan.author, "created_at": ts,
            "query_type": plan.query_type.value, "rationale": plan.rationale,
            "tasks": [{"agent_id": t.agent_id, **t.delegation.model_dump(mode="json", exclude_none=True)}
                      for t in plan.tasks],
            "diff": plan.diff}


LOCK = ".lock"


class RunLocked(RuntimeError):
    """Another live process holds the run (it is still running)."""


class RunDir:
    def __init__(self, root: Path, run_id: str) -> None:
        self.run_id = run_id
        self.path = root / run_id
        self._lock: IO[str] | None = None

    @classmethod
    def at(cls, path: Path) -> "RunDir":
        return cls(path.parent, path.name)

    def create(self) -> None:
        (self.path / AGENTS_DIR).mkdir(parents=True, exist_ok=False)

    def lock(self) -> None:
        """Hold the run for this process (released when it ends, however it ends: kill -9 included)."""
        fh = open(self.path / LOCK, "a+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            pid = fh.read().strip()
            fh.close()
            raise RunLocked(f"run {self.run_id} is still running" + (f" (process {pid})" if pid else "")) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock = fh

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def write_manifest(self, manifest: dict[str, Any], *, durable: bool = True) -> None:
        write_json(self.path / MANIFEST, manifest, durable=durable)

    def write_report(self, text: str) -> Path:
        path = self.path / REPORT
        write_atomic(path, text)
        return path

    def write_report_html(self, text: str, title: str) -> Path:
        """report.html: the same report as one self-contained page with clickable citations."""
        from .report_html import report_page

        path = self.path / REPORT_HTML
        write_atomic(path, report_page(text, title))
        return path

    def on_event(self, record: EventRecord) -> None:
        if isinstance(record.event, PlanAccepted):
            write_json(self.path / plan_file(record.event.version), plan_record(record.event, record.ts))


def is_live(path: Path) -> bool:
    """A process holds this run's lock now (it is running, not killed)."""
    lock = path / LOCK
    if not lock.is_file():
        return False
    with open(lock, encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def resolve_run(ref: str, runs_dir: Path) -> Path:
    """A run id (under runs_dir) or a path to a run directory."""
    p = Path(ref)
    candidates = list(dict.fromkeys((p, runs_dir / ref)))  # an absolute ref: runs_dir / ref is the ref itself
    for cand in candidates:  # a crash before the first manifest write still left the run's own transcript
        if (cand / MANIFEST).is_file() or (cand / RUN_LOG).is_file():
            return cand
        if (cand / "experiment.json").is_file():  # = lead_agent.compare.experiment.EXPERIMENT
            raise FileNotFoundError(f"{ref!r} is a comparison, not a run: `research runs --runs-dir {cand}` lists "
                                    f"its runs; its results are in {cand / 'summary.md'}")
    raise FileNotFoundError(f"no run {ref!r} (looked for {' and '.join(f'{c}/{MANIFEST}' for c in candidates)})")


__all__ = ["LOCK", "RunDir", "RunLocked", "is_live", "new_run_id", "now_iso", "plan_record", "resolve_run",
           "write_json"]
