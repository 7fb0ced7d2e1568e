"""`research compare` stopped and resumed, through real processes against the fake Messages API:
SIGTERM / SIGHUP / SIGINT end the cells in flight as `interrupted` and print how to resume; kill -9
leaves them `running`; `--resume` continues both, and keeps the experiment's --max-cost, counting
what the earlier cells spent."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lead_agent.rundir import RunDir

from .conftest import ctrl_c_default
from .fakes.anthropic_server import FakeAnthropicServer, Reply, hang
from .fakes.research_play import ResearchPlay
from .test_compare import fewer_subagents_variant, write_corpus, write_questions

MODELS = ["--lead-model", "claude-opus-4-6", "--subagent-model", "claude-haiku-4-5"]


def _use_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, srv: FakeAnthropicServer) -> None:
    """This process's environment as `_env` gives it (for `research compare` run in process)."""
    for k in [k for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))]:
        monkeypatch.delenv(k)
    for k, v in _env(tmp_path, srv).items():
        monkeypatch.setenv(k, v)


def _env(tmp_path: Path, srv: FakeAnthropicServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=srv.base_url, HOME=str(tmp_path),
               RESEARCH_CACHE_DIR=str(tmp_path / "cache"))
    return env


def _compare(*args: str) -> list[str]:
    return [sys.executable, "-m", "lead_agent.cli", "compare", *args]


def _experiment(tmp_path: Path, questions: int) -> list[str]:
    corpus = write_corpus(tmp_path / "corpus")
    q = write_questions(tmp_path / "q.jsonl", questions)
    variant = fewer_subagents_variant(tmp_path, 1)
    return ["--variant", "default", "--variant", str(variant), "--questions", str(q), "--corpus", str(corpus),
            "--max-rounds", "1", *MODELS]


class StuckSubagents:
    """ResearchPlay, except that a subagent's second call hangs while `stuck` is set."""

    def __init__(self) -> None:
        self.play = ResearchPlay(default_tasks=1)
        self.stuck = True

    def __call__(self, body: dict[str, Any]) -> Reply:
        names = {t["name"] for t in body.get("tools") or []}
        if self.stuck and "submit_findings" in names and len(body["messages"]) > 1:
            return hang(60)
        return self.play(body)


def _stuck_calls(srv: FakeAnthropicServer) -> int:
    return sum(1 for r in srv.requests if len(r.body.get("messages", [])) > 1
               and "submit_findings" in {t["name"] for t in r.body.get("tools") or []})


def _start_and_wait(tmp_path: Path, srv: FakeAnthropicServer, args: list[str], in_flight: int) -> subprocess.Popen:
    proc = subprocess.Popen(_compare(*args), cwd=tmp_path, env=_env(tmp_path, srv), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_default)
    deadline = time.monotonic() + 120  # a bound, not a timing: the loop leaves as soon as the cells are stuck
    while _stuck_calls(srv) < in_flight:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise AssertionError(f"the cells never got stuck: {proc.communicate()}")
        time.sleep(0.05)
    return proc


def _statuses(where: Path) -> list[str]:
    return sorted(json.loads((d / "manifest.json").read_text())["status"] for d in (where / "runs").iterdir())


@pytest.fixture
def resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """`research compare --resume DIR` through the `research` entry point in this process (the
    interrupted process was real; a second one per resume costs seconds): (exit code, stderr)."""
    from lead_agent.cli import main

    def run(srv: FakeAnthropicServer, where: Path, *extra: str) -> tuple[int, str]:
        monkeypatch.chdir(tmp_path)
        _use_env(monkeypatch, tmp_path, srv)
        capsys.readouterr()
        code = main(["compare", "--resume", str(where), *extra])
        return code, capsys.readouterr().err

    return run


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_ends_the_cells_in_flight_as_interrupted_and_resume_finishes_them(
        tmp_path: Path, signum: int, resume) -> None:
    handler = StuckSubagents()
    with FakeAnthropicServer(handler=handler) as srv:
        proc = _start_and_wait(tmp_path, srv, [*_experiment(tmp_path, 2), "--parallel", "2"], in_flight=2)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == (130 if signum == signal.SIGINT else 128 + signum), err
        assert "Traceback" not in err and not out
        where = next((tmp_path / "runs").glob("compare-*"))
        hint = [line for line in err.splitlines() if "--resume" in line]
        assert hint == [f"research: interrupted; finish it with: research compare --resume {where.relative_to(tmp_path)}"], err
        assert _statuses(where) == ["interrupted", "interrupted"]
        ends = [json.loads(x) for x in (where / "cells.jsonl").read_text().splitlines()]
        assert sorted(e["status"] for e in ends if e["event"] == "end") == ["interrupted", "interrupted"]

        if signum != signal.SIGTERM:
            return  # the same path from here on: resume once, after SIGTERM
        handler.stuck = False
        code, err = resume(srv, where)
    assert code == 0, err[-3000:]
    assert "2 interrupted, continued" in err
    assert _statuses(where) == ["completed"] * 4  # the interrupted runs were continued, not left behind
    rows = [json.loads(x) for x in (where / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["status"] == "completed" for r in rows)


def test_cells_left_running_by_kill_9_are_run_again_on_resume(tmp_path: Path, resume) -> None:
    handler = StuckSubagents()
    with FakeAnthropicServer(handler=handler) as srv:
        proc = _start_and_wait(tmp_path, srv, [*_experiment(tmp_path, 2), "--parallel", "2"], in_flight=2)
        proc.kill()
        proc.communicate(timeout=60)
        where = next((tmp_path / "runs").glob("compare-*"))
        assert _statuses(where) == ["running", "running"]
        killed = next((where / "runs").iterdir())
        follow = subprocess.run([sys.executable, "-m", "lead_agent.cli", "show", str(killed), "--follow"],
                                cwd=tmp_path, env=_env(tmp_path, srv), capture_output=True, text=True, timeout=60)
        assert follow.returncode == 1 and "no live process holds this run" in follow.stderr  # not waiting forever

        live = RunDir.at(killed)
        live.lock()  # as if the process running the experiment were still alive: its cells must not run twice
        try:
            code, err = resume(srv, where)
        finally:
            live.unlock()
        assert code == 2 and "is still running" in err and len(_statuses(where)) == 2
        handler.stuck = False
        code, err = resume(srv, where)
        runs = subprocess.run([sys.executable, "-m", "lead_agent.cli", "runs", "--runs-dir", str(where / "runs")],
                              cwd=tmp_path, env=_env(tmp_path, srv), capture_output=True, text=True, timeout=60)
    assert code == 0, err[-3000:]
    assert _statuses(where) == ["completed"] * 4
    assert "running" not in runs.stdout and runs.returncode == 0
    rows = [json.loads(x) for x in (where / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["status"] == "completed" for r in rows)


def _costs(stderr: str) -> list[float]:
    return [float(c) for c in re.findall(r"cost \$(\d+\.\d+)", stderr)]


def test_resume_keeps_the_saved_max_cost_and_counts_what_was_spent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from lead_agent.cli import main  # the `research` entry point in this process (a subprocess costs seconds)

    def compare(*args: str) -> str:
        assert main(["compare", *args]) == 0
        return capsys.readouterr().err

    monkeypatch.chdir(tmp_path)
    with FakeAnthropicServer(handler=ResearchPlay(default_tasks=1)) as srv:
        _use_env(monkeypatch, tmp_path, srv)
        compare(*_experiment(tmp_path, 2), "--parallel", "1", "--max-cost", "0.000001")
        where = next((tmp_path / "runs").glob("compare-*"))
        spent = sum(e["cost_usd"] for e in map(json.loads, (where / "cells.jsonl").read_text().splitlines())
                    if e["event"] == "end")
        assert spent > 0.0001 and _statuses(where) == ["completed"]
        asked = len(srv.requests)

        again = compare("--resume", str(where))
        assert len(srv.requests) == asked  # no new cell started: the experiment had spent its --max-cost
        assert _statuses(where) == ["completed"]
        assert again.count("not started: the experiment reached --max-cost $1e-06") == 3
        assert _costs(again) and all(c == pytest.approx(spent, abs=0.00005) for c in _costs(again))

        more = compare("--resume", str(where), "--max-cost", "5")  # a larger budget given on resume is kept too
        assert _statuses(where) == ["completed"] * 4
        assert min(_costs(more)) > spent
        assert json.loads((where / "experiment.json").read_text())["max_cost"] == 5


def test_resume_keeps_the_models_the_environment_chose(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Started with an API key and no model flags (Claude by default), resumed in a shell without the
    key: the resume refuses, instead of finishing the experiment with another model."""
    from lead_agent.cli import main

    monkeypatch.chdir(tmp_path)
    with FakeAnthropicServer(handler=ResearchPlay(default_tasks=1)) as srv:
        _use_env(monkeypatch, tmp_path, srv)
        args = [a for a in _experiment(tmp_path, 2) if a not in MODELS]
        assert main(["compare", *args, "--parallel", "1", "--max-cost", "0.000001"]) == 0
        where = next((tmp_path / "runs").glob("compare-*"))
        capsys.readouterr()
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        assert main(["compare", "--resume", str(where), "--max-cost", "5"]) == 2
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY is not set" in err and "claude-" in err, err
    assert _statuses(where) == ["completed"]
