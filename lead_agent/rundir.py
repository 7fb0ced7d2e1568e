"""The run directory: runs/<run_id>/ with manifest.json, plan.vN.json, agents/*.jsonl,
sources.json and report.md. JSON files are written atomically (tmp + rename)."""

from __future__ import annotations

import json
import os
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from subagents.transcript import Clock, Transcript


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id(question: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", question.lower()).strip("-")[:40].strip("-") or "run"
    return f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{slug}-{secrets.token_hex(2)}"


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False, default=str)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


class RunDir:
    def __init__(self, root: Path, run_id: str) -> None:
        self.run_id = run_id
        self.path = root / run_id
        self.clock = Clock()
        self.transcripts: dict[str, Transcript] = {}

    def create(self) -> None:
        (self.path / "agents").mkdir(parents=True, exist_ok=False)

    def transcript(self, agent_id: str, parent_id: str | None) -> Transcript:
        t = Transcript(self.path / "agents" / f"{agent_id}.jsonl", run_id=self.run_id, agent_id=agent_id,
                       parent_id=parent_id, clock=self.clock)
        self.transcripts[agent_id] = t
        return t

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json(self.path / "manifest.json", manifest)

    def write_plan(self, version: int, plan: dict[str, Any]) -> Path:
        path = self.path / f"plan.v{version}.json"
        write_json(path, plan)
        return path

    def write_report(self, text: str) -> Path:
        path = self.path / "report.md"
        tmp = path.with_name("report.md.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        return path

    def close(self) -> None:
        for t in self.transcripts.values():
            t.close()


def resolve_run(ref: str, runs_dir: Path) -> Path:
    """A run id (under runs_dir) or a path to a run directory."""
    p = Path(ref)
    for cand in (p, runs_dir / ref):
        if (cand / "manifest.json").is_file():
            return cand
    raise FileNotFoundError(f"no run {ref!r} (looked for {p}/manifest.json and {runs_dir / ref}/manifest.json)")
