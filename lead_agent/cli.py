"""The `research` command. Each subcommand is a module in `lead_agent/commands/` with `NAME`,
`add_parser(subparsers)` and `main(args) -> exit code`; they import the run machinery only when
they run, so `research --help` stays fast.

User mistakes print one line `research: error: …` and exit 2 with nothing written; a run that
starts and fails exits 1 and keeps its directory; Ctrl-C exits 130 with the run marked
interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from .commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, Parser

COMMANDS = ("run", "show", "tool", "approve", "reject", "resume")  # modules of lead_agent.commands, in the order --help lists them

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="research", description="Multi-agent research over a local corpus (and the web).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f".commands.{name}", __package__).add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return importlib.import_module(f".commands.{args.command}", __package__).main(args)


if __name__ == "__main__":
    sys.exit(main())
