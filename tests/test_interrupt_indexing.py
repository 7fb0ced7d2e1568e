"""SIGTERM and SIGHUP during a first corpus indexing (before the run starts) end the CLI like Ctrl-C:
one line saying what was interrupted, the exit code of the signal, no traceback, no run directory, and
the next run indexes the corpus and completes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, write_widget_corpus

QUESTION = "How are the gears of a widget aligned?"
FILES = 6000  # about two seconds of indexing here, alone (2,400 took 0.6 s on an idle machine: no progress line)


def start_run(tmp_path: Path, docs: Path, cache: str = "cache", embedding: str = "off") -> subprocess.Popen[str]:
    """The files stage is what this file interrupts (embedding 6,000 files' passages would take minutes);
    tests/test_semantic_search.py interrupts the embedding stage."""
    env = {**os.environ, "RESEARCH_CACHE_DIR": str(tmp_path / cache), "PYTHONPATH": str(ROOT),
           "RESEARCH_EMBEDDING_MODEL": embedding}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    return subprocess.Popen([sys.executable, "-m", "lead_agent.cli", "run", QUESTION, "--corpus", str(docs),
                             "--runs-dir", str(tmp_path / "runs"), "--max-rounds", "1"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def signal_while_indexing(proc: subprocess.Popen[str], signum: int, shows: str = "indexing corpus") -> tuple[str, str]:
    """Send `signum` once a progress line with `shows` appears (the first "indexing corpus" line comes after a
    second of indexing, with more than half the files still to index); (stdout, stderr) of the process."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if shows in line:
            proc.send_signal(signum)
            break
    else:
        proc.wait()
        raise AssertionError(f"no indexing progress line: {''.join(seen)}")
    out, err = proc.communicate(timeout=60)
    return out, "".join(seen) + err


def test_sigterm_and_sighup_during_a_first_indexing_end_like_ctrl_c_and_the_next_run_works(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write_widget_corpus(docs, FILES, sections=40, folders=20)
    # each signal on a first indexing of its own: an interrupt that lands in the index's final commit takes
    # effect once the commit is done (SQLite's C code runs on), and then the index is whole
    for signum in (signal.SIGTERM, signal.SIGHUP):
        proc = start_run(tmp_path, docs, cache=f"cache-{signum}")
        out, err = signal_while_indexing(proc, signum)
        assert proc.returncode == 128 + signum, err  # 143, 129: as for a run these signals end
        lines = [ln for ln in err.splitlines() if ln.startswith("research:")]
        assert "Traceback" not in err, err
        assert len(lines) == 1 and "interrupted while indexing the corpus" in lines[0], err
        assert str(docs.resolve()) in lines[0] and "next run" in lines[0]
        assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # no run was started
        assert out == ""
    proc = start_run(tmp_path, docs, cache=f"cache-{signal.SIGHUP}")  # the index as the interrupted run left it
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "gears" in out
