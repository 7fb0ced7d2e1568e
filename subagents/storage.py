"""Writing the files of a run so that a full disk (or any write error) never leaves a torn line or
a half-written file behind, and is reported as one `StorageError`.

- `write_atomic(path, data)`: a temporary file beside `path`, fsync, rename over it. On failure the
  temporary file is removed and the old file (if any) stays whole.
- `AppendLog`: an append-only file (JSONL transcripts) written through an unbuffered descriptor,
  one `append` per line. A line that cannot be written whole is cut back off the file (ftruncate
  to its length before the write), so the file always ends with a complete line.

Both raise `StorageError` (an `OSError`: errno and file name kept) with one readable line:
"cannot write runs/…/agents/lead.jsonl: No space left on device".
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_write = os.write  # the one place bytes go to a file (tests inject faults here)


class StorageError(OSError):
    """A run file could not be written."""

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror or 'write failed'}"


def _storage_error(path: Path | str, err: OSError) -> StorageError:
    return StorageError(err.errno, err.strerror or str(err), str(path))


def _write_all(fd: int, data: bytes) -> int:
    """Write every byte (os.write may write fewer). An error raised part-way carries the number of
    bytes already written as its `written` attribute."""
    view, done = memoryview(data), 0
    while done < len(data):
        try:
            n = _write(fd, view[done:])
        except OSError as err:
            err.written = done  # type: ignore[attr-defined]
            raise
        if n <= 0:
            err = OSError(28, os.strerror(28))
            err.written = done  # type: ignore[attr-defined]
            raise err
        done += n
    return done


def write_atomic(path: Path, data: str | bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` all at once (temp file + rename); StorageError on failure, leaving
    neither a temp file nor a partial `path`. `durable` also fsyncs before the rename (survives a
    power loss, ~5 ms); files rewritten on every event (the manifest) skip it until the last write."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, raw)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise _storage_error(path, err) from None


class AppendLog:
    """An append-only file of whole lines. Thread-safe; `append` takes one complete line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as err:
            raise _storage_error(path, err) from None

    def append(self, line: str | bytes) -> None:
        raw = line.encode("utf-8") if isinstance(line, str) else line
        with self._lock:
            if self._fd is None:
                raise StorageError(9, "the log is closed", str(self.path))
            try:
                start = os.fstat(self._fd).st_size
                _write_all(self._fd, raw)
            except OSError as err:
                if getattr(err, "written", 0):
                    self._cut_back(start)
                raise _storage_error(self.path, err) from None

    def _cut_back(self, size: int) -> None:
        try:
            os.ftruncate(self._fd, size)  # type: ignore[arg-type]
        except OSError:
            pass

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
