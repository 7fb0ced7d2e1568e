"""`research runs`: list the runs under --runs-dir, newest first, with filters; `--json` for programs."""

from __future__ import annotations

import argparse
from typing import Any

from .common import EXIT_USAGE, err

NAME = "runs"

EXAMPLES = """\
examples:
  research runs                              # the newest 20 runs
  research runs --status failed --since 3d   # failed runs of the last three days
  research runs --grep 'asyncio|trio' -n 0   # every run whose question matches
  research runs --json | jq '.[].run_id'
  research runs --runs-dir runs/compare-20260101-120000-1a2b   # the runs one comparison made
"""

STATUSES = ("running", "completed", "completed_empty", "failed", "interrupted", "estimated", "awaiting_approval",
            "rejected", "comparison", "unreadable")  # every subagents.events.RunStatus (not imported: --help stays fast), then ours


def add_parser(sub: Any) -> None:
    p = sub.add_parser("runs", help="list runs: id, time, status, question, models, subagents, cost, duration",
                       description="List the runs under --runs-dir, newest first (read from their manifests). A "
                                   "`research compare` directory is one row (status comparison); give it as "
                                   "--runs-dir to list the runs it made.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs-dir", default="runs", metavar="DIR", help="where runs are saved (default ./runs)")
    p.add_argument("--status", metavar="STATUS", choices=STATUSES, help=f"only runs with this status ({', '.join(STATUSES[:-1])}, …)")
    p.add_argument("--since", metavar="WHEN", help="only runs started since WHEN: 30m, 2h, 3d, 1w, 2026-01-31, "
                                                   "2026-01-31T14:00 (UTC)")
    p.add_argument("--grep", metavar="REGEX", help="only runs whose question (or id) matches (case-insensitive)")
    p.add_argument("-n", "--limit", type=int, default=20, metavar="N", help="at most N runs (default 20; 0: all)")
    p.add_argument("--json", action="store_true", help="a JSON array of run summaries")


def main(args: argparse.Namespace) -> int:
    import json
    import re
    import shutil
    from pathlib import Path

    from ..runs_index import comparison_runs, list_runs, parse_since, render_table

    filters: dict[str, Any] = {"status": args.status}
    try:
        if args.since:
            filters["since"] = parse_since(args.since)
        if args.grep:
            filters["grep"] = re.compile(args.grep, re.I)
    except (ValueError, re.error) as e:
        err(f"--grep: {e}" if isinstance(e, re.error) else str(e))
        return EXIT_USAGE
    if args.limit < 0:
        err(f"--limit must be 0 (all) or more (got {args.limit})")
        return EXIT_USAGE
    runs_dir = Path(args.runs_dir)
    if not runs_dir.is_dir():
        err(f"no runs directory {runs_dir} (give --runs-dir DIR)")
        return EXIT_USAGE
    runs_dir = comparison_runs(runs_dir) or runs_dir  # a comparison directory: the runs it made
    runs, more = list_runs(runs_dir, limit=args.limit or None, **filters)
    if args.json:
        print(json.dumps([r.to_json() for r in runs], indent=1, ensure_ascii=False))
        return 0
    if not runs:
        print("no runs match" if any(filters.values()) else f"no runs in {runs_dir}")
        return 0
    import sys

    width = shutil.get_terminal_size((140, 24)).columns if sys.stdout.isatty() else 10_000  # piped: whole questions
    print("\n".join(render_table(runs, width)))
    if more:
        print(f"(the newest {len(runs)} shown; -n 0 for all, or filter with --status/--since/--grep)")
    return 0
