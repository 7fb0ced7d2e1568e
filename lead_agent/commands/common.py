"""Exit codes and error printing shared by every command."""

from __future__ import annotations

import argparse
import sys

from ..terminal import neutralise

EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_EMPTY = 3  # a report was written, but no subagent found anything (status completed_empty)
EXIT_INTERRUPTED = 130


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(EXIT_USAGE, neutralise(f"research: error: {message} (see {self.prog} --help)") + "\n")


def err(msg: str) -> None:
    print(neutralise(f"research: error: {msg}"), file=sys.stderr)


def out(text: str) -> None:
    """Print text that may hold retrieved or generated material: control sequences neutralised."""
    print(neutralise(text))
