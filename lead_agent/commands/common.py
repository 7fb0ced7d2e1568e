"""Exit codes and error printing shared by every command."""

from __future__ import annotations

import argparse
import sys

EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_EMPTY = 3  # a report was written, but no subagent found anything (status completed_empty)
EXIT_INTERRUPTED = 130


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"research: error: {message} (see {self.prog} --help)\n")


def err(msg: str) -> None:
    print(f"research: error: {msg}", file=sys.stderr)
