"""A full disk under a run: one clear error (exit 1, no traceback), every transcript still valid JSONL
(no torn line), no temporary file left behind, and the run stops instead of working on unrecorded.

Two ways: a fault-injecting writer at the file seam (`subagents.storage._write`, a shared byte
budget, partial writes like a filling disk) at many fill levels, and a real tmpfs that fills up
(needs root and mount; skipped elsewhere)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import traceback
from pathlib import Path

import pytest
import trio

from lead_agent import api
from subagents import storage

from .conftest import run_cli

QUESTION = "How are the gears of a widget aligned and cleaned?"


def write_corpus(root: Path) -> Path:
    root.mkdir()
    for i in range(8):
        body = " ".join(f"The gears of widget model {i} are aligned by turning shaft {j} until the marks meet."
                        for j in range(25))
        (root / f"widget{i}.md").write_text(f"# Widget {i}\n\n{body}\n\n## Cleaning\n\nClean widget {i} gears "
                                            "with a dry cloth and never submerge the gearbox.\n")
    return root


def assert_run_dir_sound(run_dir: Path) -> None:
    leftovers = [p.name for p in run_dir.rglob("*") if p.name.endswith(".tmp")]
    assert not leftovers, f"temporary files left behind: {leftovers}"
    for f in [*run_dir.glob("*.jsonl"), *run_dir.glob("agents/*.jsonl")]:
        raw = f.read_bytes()
        assert raw == b"" or raw.endswith(b"\n"), f"{f.name} ends with a torn line"
        for line in raw.splitlines():
            json.loads(line)
    for f in run_dir.glob("*.json"):
        json.loads(f.read_text())  # manifest, plans, sources: whole or absent


class FillingDisk:
    """os.write with `free` bytes left: writes what fits, then ENOSPC."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.refused = 0

    def __call__(self, fd: int, data: bytes | memoryview) -> int:
        if self.free <= 0:
            self.refused += 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = min(len(data), self.free)
        n = os.write(fd, bytes(data[:n]))
        self.free -= n
        return n


@pytest.mark.parametrize("free", [1_500, 6_000, 20_000, 45_000, 90_000])
def test_disk_filling_up_mid_run_fails_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free: int) -> None:
    corpus = write_corpus(tmp_path / "docs")
    disk = FillingDisk(free)
    monkeypatch.setattr(storage, "_write", disk)
    with pytest.raises(api.RunFailed) as info:
        trio.run(lambda: api.research(QUESTION, corpus=[corpus], runs_dir=tmp_path / "runs",
                                      cache_dir=tmp_path / "cache", use_config_file=False, environ={}))
    assert disk.refused > 0
    message = str(info.value)
    assert message.startswith("cannot write ") and message.endswith(": No space left on device")
    cause = info.value.__cause__
    assert isinstance(cause, storage.StorageError)
    assert "During handling of the above exception" not in "".join(traceback.format_exception(cause))
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert_run_dir_sound(run_dir)


class WorkAfterFailure:
    """An observer noting what the run still did after the event whose writing first failed."""

    WORK = {"model_request", "tool_call", "findings", "plan", "report"}

    def __init__(self, disk: FillingDisk) -> None:
        self.disk = disk
        self.failed_at: int | None = None  # index of the event whose writing failed
        self.events: list[str] = []

    def on_event(self, record) -> None:  # noqa: ANN001  (writers saw the event first)
        if self.disk.refused and self.failed_at is None:
            self.failed_at = len(self.events)
        self.events.append(f"{record.agent_id}:{record.kind}")

    def work_after(self) -> list[str]:
        assert self.failed_at is not None
        return [e for e in self.events[self.failed_at + 1:] if e.split(":")[1] in self.WORK]


@pytest.mark.parametrize("free", [8_000, 16_000, 24_000])
def test_run_stops_at_the_first_storage_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free: int) -> None:
    corpus = write_corpus(tmp_path / "docs")
    disk = FillingDisk(free)
    after = WorkAfterFailure(disk)
    monkeypatch.setattr(storage, "_write", disk)
    with pytest.raises(api.RunFailed):
        trio.run(lambda: api.research(QUESTION, corpus=[corpus], runs_dir=tmp_path / "runs", observers=[after],
                                      cache_dir=tmp_path / "cache", use_config_file=False, environ={}))
    assert after.work_after() == []


@pytest.fixture
def tiny_disk(tmp_path: Path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_cli_on_a_real_full_disk(tmp_path: Path, tiny_disk: Path) -> None:
    corpus = write_corpus(tmp_path / "docs")
    proc = run_cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", str(tiny_disk), "-q", cwd=tmp_path,
                   env={"RESEARCH_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and len(lines) == 2, proc.stderr
    assert lines[0].startswith("research: error: run failed: cannot write ")
    assert lines[0].endswith(": No space left on device") and lines[1].endswith("(status: failed)")
    (run_dir,) = tiny_disk.iterdir()
    assert_run_dir_sound(run_dir)
