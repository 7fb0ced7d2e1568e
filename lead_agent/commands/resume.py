"""`research resume RUN`: continue a run that was interrupted, failed or killed (kill -9 included)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_USAGE, err

NAME = "resume"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("resume", help="continue an interrupted, failed or killed run from its transcripts")
    p.add_argument("run", help="a run id (under --runs-dir) or a run directory")
    p.add_argument("--runs-dir", default="runs", metavar="DIR", help="where runs are saved (default: ./runs)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def locate(args: argparse.Namespace) -> Path | None:
    from ..rundir import resolve_run

    try:
        return resolve_run(args.run, Path(args.runs_dir))
    except FileNotFoundError as e:
        err(str(e))
        return None


def observers(args: argparse.Namespace, path: Path) -> tuple[list[Any], Any]:
    from .run import _RunDirSeen

    seen = _RunDirSeen()
    seen.path = path
    obs: list[Any] = [seen]
    if not args.quiet:
        from ..progress import PlainProgress

        obs.append(PlainProgress(lambda msg: print(msg, file=sys.stderr, flush=True)))
    return obs, seen


def main(args: argparse.Namespace) -> int:
    from ..checkpoint import resume
    from .run import execute_run, reviewer

    path = locate(args)
    if path is None:
        return EXIT_USAGE
    obs, seen = observers(args, path)
    return execute_run(lambda: resume(path, observers=obs, reviewer=reviewer(args.environ)), seen)
