"""`research runs`: the runs under a runs directory, newest first, read from their manifests only.

Fast with many runs: directory names start with the run's UTC start time (`yyyymmdd-hhmmss-…`),
so ordering and `--since` need no file reads, and manifests are read newest first only until
`limit` runs have matched. A directory without a parsable manifest is listed as `unreadable`
(it is never skipped silently). A `research compare` directory is one row with status `comparison`
(its runs live in its own `runs/` folder: `research runs --runs-dir compare-…` lists them)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

MANIFEST = "manifest.json"  # = subagents.runs.MANIFEST; not imported: that module loads the run machinery

_STAMP = re.compile(r"^(?:compare-)?(\d{8}-\d{6})-")  # a run id, or a comparison's (compare-<stamp>-<hex>)
UNREADABLE = "unreadable"
COMPARISON = "comparison"  # a `research compare` directory: one row, pointing at its own runs
EXPERIMENT = "experiment.json"  # = lead_agent.compare.experiment.EXPERIMENT (not imported: loads the run machinery)
CELL_RUNS = "runs"  # a comparison's cells' run directories


@dataclass
class RunSummary:
    run_id: str
    path: str
    started_at: str  # ISO-8601 UTC
    status: str
    question: str
    lead_model: str
    subagent_model: str
    subagents: int
    cost_usd: float | None
    seconds: float | None
    citations: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def stamp_of(name: str) -> datetime | None:
    """The start time a run directory's name carries (UTC), or None for another name."""
    m = _STAMP.match(name)
    if not m:
        return None
    d = m.group(1)
    try:
        return datetime(int(d[0:4]), int(d[4:6]), int(d[6:8]), int(d[9:11]), int(d[11:13]), int(d[13:15]),
                        tzinfo=timezone.utc)
    except ValueError:
        return None


def _key(when: datetime) -> str:
    return when.strftime("%Y%m%d-%H%M%S")


def _candidates(runs_dir: Path) -> list[tuple[str, str]]:
    """(start-time key `yyyymmdd-hhmmss`, name) of every directory, newest first; a name without a time
    uses the directory's mtime. Names are compared as text: no dates are parsed for ordering."""
    out = []
    with os.scandir(runs_dir) as it:
        for entry in it:
            name = entry.name
            if name.startswith(".") or not entry.is_dir():
                continue
            m = _STAMP.match(name)
            if m:
                out.append((m.group(1), name))
            else:
                out.append((_key(datetime.fromtimestamp(entry.stat().st_mtime, timezone.utc)), name))
    out.sort(reverse=True)
    return out


def comparison_runs(path: Path) -> Path | None:
    """The folder of a comparison directory's runs, or None when `path` is not a comparison."""
    return path / CELL_RUNS if (path / EXPERIMENT).is_file() else None


def comparison_summary(path: Path, when: datetime) -> RunSummary:
    """A comparison as one row: its variants × questions, how many runs it holds, what they cost, and
    where to look (`research runs --runs-dir DIR/runs` lists them; summary.md has the verdicts)."""
    try:
        exp = json.loads((path / EXPERIMENT).read_text(encoding="utf-8"))
        exp = exp if isinstance(exp, dict) else {}
    except (OSError, ValueError):
        exp = {}
    runs = path / CELL_RUNS
    n = sum(1 for e in os.scandir(runs) if e.is_dir()) if runs.is_dir() else 0
    costs = []
    try:
        for line in (path / "cells.jsonl").read_text(encoding="utf-8").splitlines():
            cell = json.loads(line) if line.strip() else {}
            if isinstance(cell, dict) and isinstance(cell.get("cost_usd"), (int, float)):
                costs.append(cell["cost_usd"])
    except (OSError, ValueError):
        pass
    shape = (f"{len(exp.get('variants') or [])} variant(s) × {len(exp.get('questions') or [])} question(s), "
             if exp else "")
    return RunSummary(path.name, str(path), when.isoformat(timespec="seconds"), COMPARISON,
                      f"{shape}{n} run(s): research runs --runs-dir {runs}", "", "", 0,
                      round(sum(costs), 6) if costs else None, None)


def summary_of(path: Path, key: str) -> RunSummary:
    when = stamp_of(key + "-") or datetime.fromtimestamp(0, timezone.utc)
    if comparison_runs(path) is not None:
        return comparison_summary(path, when)
    try:
        m = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(m, dict):
            raise ValueError("not an object")
    except (OSError, ValueError):
        return RunSummary(path.name, str(path), when.isoformat(timespec="seconds"), UNREADABLE, "", "", "", 0,
                          None, None)
    models = m.get("models") or {}
    agents = m.get("agents") or []
    check = m.get("citation_check") or {}
    timings = m.get("timings") or {}
    return RunSummary(
        run_id=str(m.get("run_id") or path.name), path=str(path),
        started_at=str(m.get("created_at") or when.isoformat(timespec="seconds")),
        status=str(m.get("status", "?")), question=str(m.get("question", "")),
        lead_model=str(models.get("lead", "")), subagent_model=str(models.get("subagent", "")),
        subagents=sum(1 for a in agents if isinstance(a, dict) and a.get("role") == "subagent"),
        cost_usd=m.get("cost_usd"), seconds=timings.get("seconds"),
        citations=f"{check.get('supported', 0)}/{check.get('markers', 0)}" if check else "")


def iter_runs(runs_dir: Path, *, since: datetime | None = None, status: str | None = None,
              grep: re.Pattern[str] | None = None) -> Iterator[RunSummary]:
    """Matching runs, newest first, reading one manifest at a time."""
    if not runs_dir.is_dir():
        return
    floor = _key(since.astimezone(timezone.utc)) if since is not None else None
    for key, name in _candidates(runs_dir):
        if floor is not None and key < floor:
            break  # newest first: everything after this is older
        s = summary_of(runs_dir / name, key)
        if status is not None and s.status != status:
            continue
        if grep is not None and not (grep.search(s.question) or grep.search(s.run_id)):
            continue
        yield s


def list_runs(runs_dir: Path, *, limit: int | None = 20, **filters: Any) -> tuple[list[RunSummary], bool]:
    """Up to `limit` matching runs (None: all) and whether more may match."""
    out: list[RunSummary] = []
    for s in iter_runs(runs_dir, **filters):
        if limit is not None and len(out) >= limit:
            return out, True
        out.append(s)
    return out, False


_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """`2h`, `3d`, `1w`, `30m` ago, or a date / date-time (`2026-01-31`, `2026-01-31T14:00`; UTC unless an
    offset is given). ValueError with a one-line reason otherwise."""
    from datetime import timedelta

    now = now or datetime.now(timezone.utc)
    m = _RELATIVE.match(text.strip().lower())
    if m:
        n, unit = int(m.group(1)), m.group(2)
        return now - timedelta(**{{"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[unit]: n})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--since {text!r}: give a date (2026-01-31), a date-time (2026-01-31T14:00) "
                         "or an age (30m, 2h, 3d, 1w)") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def render_table(runs: list[RunSummary], width: int = 120) -> list[str]:
    rows = []
    for s in runs:
        when = s.started_at[:16].replace("T", " ")
        cost = "—" if s.cost_usd is None else f"${s.cost_usd:.4f}"
        secs = "—" if s.seconds is None else f"{s.seconds:.1f}s"
        models = s.lead_model if s.lead_model == s.subagent_model else f"{s.lead_model}/{s.subagent_model}"
        rows.append((s.run_id, when, s.status, str(s.subagents), cost, secs, models, s.question))
    head = ("RUN", "STARTED (UTC)", "STATUS", "SUBS", "COST", "TIME", "MODELS", "QUESTION")
    widths = [max([len(head[i])] + [len(r[i]) for r in rows]) for i in range(7)]
    fixed = sum(widths) + 2 * 7
    qw = max(20, width - fixed)

    def line(r: tuple[str, ...]) -> str:
        cells = [r[i].ljust(widths[i]) if i not in (3, 4, 5) else r[i].rjust(widths[i]) for i in range(7)]
        return "  ".join(cells) + "  " + _short(r[7], qw)

    return [line(head)] + [line(r) for r in rows]


__all__ = ["RunSummary", "comparison_runs", "iter_runs", "list_runs", "parse_since", "render_table", "stamp_of", "summary_of"]
