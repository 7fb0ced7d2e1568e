"""`research show RUN`: plans, agents, tool calls, findings, usage and the citation check of a run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_USAGE, err, out

NAME = "show"


def add_parser(sub: Any) -> None:
    show = sub.add_parser("show", help="show a run: plans, agents, tool calls, findings, usage, citations")
    show.add_argument("run", help="a run id (under --runs-dir) or a run directory")
    show.add_argument("--runs-dir", default="runs", metavar="DIR")



def main(args: argparse.Namespace) -> int:
    from ..rundir import resolve_run
    from ..show import render_run

    try:
        path = resolve_run(args.run, Path(args.runs_dir))
    except FileNotFoundError as e:
        err(str(e))
        return EXIT_USAGE
    try:
        text = render_run(path)
    except (OSError, ValueError, LookupError, TypeError, AttributeError) as e:  # a corrupt or half-written run
        err(f"cannot show run {path}: {type(e).__name__}: {e}")
        return EXIT_FAILED
    out(text)
    return 0
