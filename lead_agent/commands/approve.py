"""`research approve RUN [--plan FILE]`: run the plan a `--plan-only` run waits on — as the lead wrote
it, as edited in place in its plan file, or as given in FILE (JSON or TOML). An edit is checked like
the lead's plan; a refused edit prints its problems and changes nothing."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_USAGE

NAME = "approve"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("approve", help="approve (and run) the plan a --plan-only run waits on")
    p.add_argument("run", help="a run id (under --runs-dir) or a run directory")
    p.add_argument("--plan", type=Path, metavar="FILE",
                   help="the plan to run, edited (JSON or TOML; default: the run's latest plan file as it is now)")
    p.add_argument("--runs-dir", default="runs", metavar="DIR", help="where runs are saved (default: ./runs)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def main(args: argparse.Namespace) -> int:
    from ..checkpoint import approve
    from .resume import locate, observers
    from .run import execute_run, reviewer

    path = locate(args)
    if path is None:
        return EXIT_USAGE
    obs, seen = observers(args, path)
    return execute_run(lambda: approve(path, plan=args.plan, observers=obs, reviewer=reviewer(args.environ)), seen)
