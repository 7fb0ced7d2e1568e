"""Exit codes and error printing shared by every command."""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from types import FrameType
from typing import Any, Awaitable, Callable, Iterator

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


@contextmanager
def signals_as_ctrl_c(got: list[int]) -> Iterator[None]:
    """SIGTERM and SIGHUP act as Ctrl-C while no signal watcher listens, such as while a first corpus
    indexing blocks before the run starts: trio's own Ctrl-C handler raises KeyboardInterrupt where that is
    safe (or delivers it at the next checkpoint), and the signal is noted in `got` for the exit code."""
    import signal

    def handler(signum: int, frame: FrameType | None) -> None:
        got.append(signum)
        ctrl_c = signal.getsignal(signal.SIGINT)
        if callable(ctrl_c):  # raises, or (in trio's own code) delivers it at the next checkpoint
            ctrl_c(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt  # Ctrl-C is ignored (a background job): the signal still stops the run

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


async def run_until_signal(start: Callable[[], Awaitable[Any]]) -> tuple[Any, int | None]:
    """Run `start()`; SIGTERM or SIGHUP (what `timeout`, docker, CI and a closed terminal send) cancel it,
    so the run ends like Ctrl-C: status interrupted, usage kept. Returns (result, None), or (None, signal).
    Before the watcher listens (a corpus indexing that blocks), the signals raise KeyboardInterrupt
    (`signals_as_ctrl_c`), which ends `start()` the same way."""
    got: list[int] = []
    with signals_as_ctrl_c(got):
        try:
            return await _watched(start, got)
        except (KeyboardInterrupt, BaseExceptionGroup) as e:
            ctrl_c = isinstance(e, KeyboardInterrupt) or e.subgroup(KeyboardInterrupt) is not None
            if got and ctrl_c:
                return None, got[0]
            raise


async def _watched(start: Callable[[], Awaitable[Any]], got: list[int]) -> tuple[Any, int | None]:
    import signal

    import trio

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
