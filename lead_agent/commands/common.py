"""Exit codes and error printing shared by every command."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Awaitable, Callable

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


async def run_until_signal(start: Callable[[], Awaitable[Any]]) -> tuple[Any, int | None]:
    """Run `start()`; SIGTERM or SIGHUP (what `timeout`, docker, CI and a closed terminal send) cancel it,
    so the run ends like Ctrl-C: status interrupted, usage kept. Returns (result, None), or (None, signal)."""
    import signal

    import trio

    got: list[int] = []
    result: Any = None
    failure: BaseException | None = None
    async with trio.open_nursery() as nursery:
        async def watch() -> None:
            with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                async for signum in signals:
                    got.append(signum)
                    nursery.cancel_scope.cancel()
                    return

        nursery.start_soon(watch)
        try:
            result = await start()
        except BaseException as e:  # raised below, outside the nursery (not wrapped in a group)
            failure = e
        nursery.cancel_scope.cancel()
    if got:
        return None, got[0]
    if failure is not None:
        raise failure
    return result, None
