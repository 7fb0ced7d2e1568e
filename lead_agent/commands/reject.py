"""`research reject RUN`: refuse the plan a `--plan-only` run waits on; the run ends (status
rejected) and nothing more runs."""

from __future__ import annotations

import argparse
from typing import Any

from .common import EXIT_USAGE, err

NAME = "reject"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("reject", help="reject the plan a --plan-only run waits on; the run ends")
    p.add_argument("run", help="a run id (under --runs-dir) or a run directory")
    p.add_argument("--reason", default="", help="why (recorded with the decision)")
    p.add_argument("--runs-dir", default="runs", metavar="DIR", help="where runs are saved (default: ./runs)")


def main(args: argparse.Namespace) -> int:
    from ..checkpoint import reject
    from ..settings import UsageError
    from .resume import locate

    path = locate(args)
    if path is None:
        return EXIT_USAGE
    try:
        reject(path, reason=args.reason)
    except UsageError as e:
        err(str(e))
        return EXIT_USAGE
    print(f"Plan rejected; run {path.name} ended (status: rejected). Nothing more runs.")
    return 0
