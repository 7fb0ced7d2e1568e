"""`research show RUN --follow`: follow a run that is still going by re-reading its directory as
the transcripts grow (`read_run` works on a running or crashed run). On a terminal the live tree
is redrawn; otherwise each new event that matters is printed as a timestamped line. Ends when the
run ends, or when no live process holds it (killed: it would never end); Ctrl-C stops following
(the run itself is not touched)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Mapping

from subagents.events import EventRecord, RunEnded
from subagents.runs import iter_records

from .rundir import is_live

POLL = 0.5


def new_records(path: Path, seen: set[tuple[str, int]]) -> list[EventRecord]:
    """Events not seen before, in run order (each agent's file is read whole: transcripts are small)."""
    fresh = [r for r in iter_records(path) if (r.agent_id, r.seq) not in seen]
    seen.update((r.agent_id, r.seq) for r in fresh)
    return sorted(fresh, key=lambda r: (r.t, r.agent_id, r.seq))


def follow(path: Path, environ: Mapping[str, str], *, poll: float = POLL, timeout: float | None = None) -> int:
    from .commands.run import _is_terminal

    if _is_terminal(sys.stdout, environ):
        from .live import LiveProgress

        observer: object = LiveProgress(sys.stdout)
    else:
        from .progress import PlainProgress

        observer = PlainProgress(lambda line: print(line, flush=True))
    seen: set[tuple[str, int]] = set()
    started = time.monotonic()
    dead = 0  # polls in a row that found no process holding the run
    try:
        while True:
            ended = False
            for rec in new_records(path, seen):
                observer.on_event(rec)  # type: ignore[attr-defined]
                ended = ended or isinstance(rec.event, RunEnded)
            if ended or (timeout is not None and time.monotonic() - started > timeout):
                break
            dead = 0 if is_live(path) else dead + 1
            if dead >= 2:  # killed (kill -9, a crash): it will never end by itself
                print(f"research: no live process holds this run (killed?); continue it with "
                      f"`research resume {path}`", file=sys.stderr)
                return 1
            time.sleep(poll)
    except KeyboardInterrupt:
        pass
    finally:
        close = getattr(observer, "close", None)
        if close is not None:
            close()
    return 0
