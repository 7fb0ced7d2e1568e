"""The `research` command. Each subcommand is a module in `lead_agent/commands/` with `NAME`,
`add_parser(subparsers)` and `main(args) -> exit code`; they import the run machinery only when
they run, so `research --help` stays fast.

User mistakes print one line `research: error: …` and exit 2 with nothing written; a run that
starts and fails exits 1 and keeps its directory; a run whose subagents found nothing
(completed_empty) prints its report and exits 3; Ctrl-C exits 130 with the run marked
interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from .commands.common import EXIT_EMPTY, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, Parser

COMMANDS = ("run", "show", "runs", "compare", "tool", "approve", "reject", "resume")  # modules of lead_agent.commands, in --help order

__all__ = ["EXIT_EMPTY", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE", "build_parser", "main"]


class _Version(argparse.Action):
    """`--version`: the installed package's version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kw: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("research-agents")
        except PackageNotFoundError:
            v = "unknown (not installed)"
        print(f"research {v}")
        parser.exit(0)


EPILOG = """\
examples:
  research run "Compare lists and tuples" --corpus /usr/share/doc/python3.11/html
  research runs                      # the runs so far, newest first
  research show RUN --html           # a self-contained trace viewer of one run
  research tool corpus "TaskGroup" --corpus /usr/share/doc/python3.11/html

`research COMMAND --help` describes each command.
"""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="research", description="Multi-agent research over a local corpus (and the web).",
               epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f".commands.{name}", __package__).add_parser(sub)
    return p


EXIT_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        args.environ = dict(os.environ)  # read once, here; commands pass it down (TERM, EDITOR, OTEL_*)
        code = importlib.import_module(f".commands.{args.command}", __package__).main(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # `research … | head`: the reader has gone; say nothing
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush does not complain either
        return EXIT_PIPE


if __name__ == "__main__":
    sys.exit(main())
