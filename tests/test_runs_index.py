"""`research runs`: newest first, filters, JSON, unreadable runs listed; and the CLI polish around it
(--version, help, BrokenPipeError when piped to head, one-line errors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lead_agent import runs_index
from subagents import runs as run_layout

from .conftest import ROOT, run_cli


def fake_run(root: Path, stamp: str, question: str, status: str = "completed", subagents: int = 2,
             cost: float | None = 0.01) -> Path:
    run_id = f"{stamp}-{question.lower().replace(' ', '-')[:20]}-ab12"
    d = root / run_id
    (d / "agents").mkdir(parents=True)
    agents = [{"agent_id": "lead", "role": "lead"}] + [{"agent_id": f"r1-sub{i}", "role": "subagent"}
                                                       for i in range(1, subagents + 1)]
    (d / "manifest.json").write_text(json.dumps({
        "run_id": run_id, "question": question, "status": status, "created_at": f"{stamp[:4]}-{stamp[4:6]}-"
        f"{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}.000+00:00",
        "models": {"lead": "claude-opus-4-6", "subagent": "claude-haiku-4-5"}, "agents": agents,
        "cost_usd": cost, "timings": {"seconds": 12.5}}))
    return d


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    fake_run(root, "20260105-100000", "How do asyncio task groups work", subagents=3)
    fake_run(root, "20260103-090000", "Compare lists and tuples", status="failed", cost=None)
    fake_run(root, "20260110-120000", "What is a trio nursery", status="interrupted")
    broken = root / "20260101-080000-broken-run-0000"
    (broken / "agents").mkdir(parents=True)
    (broken / "manifest.json").write_text('{"run_id": ')  # killed while the manifest was first written
    (root / "notes.txt").write_text("not a run")
    return root


def test_the_manifest_name_is_the_run_layout_one() -> None:
    assert runs_index.MANIFEST == run_layout.MANIFEST


def test_runs_are_listed_newest_first_with_their_figures(runs: Path, tmp_path: Path) -> None:
    proc = run_cli("runs", "--runs-dir", str(runs), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["RUN", "STARTED", "(UTC)"]
    order = [line.split()[0] for line in lines[1:]]
    assert order == ["20260110-120000-what-is-a-trio-nurse-ab12", "20260105-100000-how-do-asyncio-task--ab12",
                     "20260103-090000-compare-lists-and-tu-ab12", "20260101-080000-broken-run-0000"]
    assert "2026-01-05 10:00" in lines[2] and " 3 " in lines[2] and "$0.0100" in lines[2] and "12.5s" in lines[2]
    assert "claude-opus-4-6/claude-haiku-4-5" in lines[2] and "How do asyncio task groups work" in lines[2]
    assert "unreadable" in lines[4]


@pytest.mark.parametrize("args, expected", [
    (["--status", "failed"], ["Compare lists and tuples"]),
    (["--grep", "ASYNCIO|nursery"], ["What is a trio nursery", "How do asyncio task groups work"]),
    (["--since", "2026-01-04"], ["What is a trio nursery", "How do asyncio task groups work"]),
    (["--since", "2026-01-05T10:00:01"], ["What is a trio nursery"]),
    (["-n", "2"], ["What is a trio nursery", "How do asyncio task groups work"]),
])
def test_filters(runs: Path, tmp_path: Path, args: list[str], expected: list[str]) -> None:
    proc = run_cli("runs", "--runs-dir", str(runs), "--json", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [r["question"] for r in data] == expected
    assert set(data[0]) >= {"run_id", "started_at", "status", "question", "lead_model", "subagent_model",
                            "subagents", "cost_usd", "seconds"}


def test_a_limit_says_there_may_be_more(runs: Path, tmp_path: Path) -> None:
    proc = run_cli("runs", "--runs-dir", str(runs), "-n", "1", cwd=tmp_path)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 3 and "-n 0 for all" in proc.stdout


def test_since_accepts_ages() -> None:
    from datetime import datetime, timezone

    now = datetime(2026, 1, 10, 12, 0, tzinfo=timezone.utc)
    assert runs_index.parse_since("2h", now) == datetime(2026, 1, 10, 10, 0, tzinfo=timezone.utc)
    assert runs_index.parse_since("3d", now).day == 7 and runs_index.parse_since("1w", now).day == 3


@pytest.mark.parametrize("args, message", [
    (["--since", "yesterday"], "--since 'yesterday'"),
    (["--grep", "("], "--grep"),
    (["--limit", "-1"], "--limit"),
    (["--runs-dir", "/nonexistent/runs"], "no runs directory"),
])
def test_bad_runs_arguments_are_one_line(runs: Path, tmp_path: Path, args: list[str], message: str) -> None:
    extra = [] if "--runs-dir" in args else ["--runs-dir", str(runs)]
    proc = run_cli("runs", *extra, *args, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("research: error:") and message in lines[0], proc.stderr


def test_output_to_a_closed_pipe_is_silent(runs: Path, tmp_path: Path) -> None:
    for i in range(300):  # enough output to fill the pipe
        fake_run(runs, f"2025{1 + i // 28 % 12:02d}{1 + i % 28:02d}-{i % 24:02d}0000", f"question {i}")
    proc = subprocess.Popen([sys.executable, "-m", "lead_agent.cli", "runs", "--runs-dir", str(runs), "-n", "0",
                             "--json"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # what `| head -1` does: read a line, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


def test_version_and_help(tmp_path: Path) -> None:
    version = run_cli("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("research ") and version.stderr == ""
    run_help = run_cli("run", "--help", cwd=tmp_path).stdout
    assert "--corpus PATH" in run_help and "at least one" in run_help and "examples:" in run_help
    assert "--web-cache MODE" in run_help and "--cache-dir DIR" in run_help
    assert "--cache " not in run_help.replace("--cache-dir", "")  # the old name is accepted, not advertised
    corpus_help = run_cli("tool", "corpus", "--help", cwd=tmp_path).stdout
    assert "--cache-dir" in corpus_help and "--web-cache" not in corpus_help and "--cache " not in corpus_help
    assert "--web-cache" in run_cli("tool", "fetch", "--help", cwd=tmp_path).stdout


def test_every_run_argument_has_help() -> None:
    import argparse

    from lead_agent.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {a.dest}" for name, p in sub.choices.items() for a in p._actions
               if a.help is None and not isinstance(a, argparse._SubParsersAction)]
    assert not missing, f"arguments without help: {missing}"


def test_help_does_not_load_rich_or_the_run_machinery() -> None:
    code = ("import sys; from lead_agent.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'trio', 'pydantic', 'anthropic', "
            "'opentelemetry', 'markdown_it')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
