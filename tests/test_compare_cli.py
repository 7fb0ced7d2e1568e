"""`research compare` as a user runs it: bad input (one line, exit 2, nothing written), the offline
python-docs comparison of the multi-agent default against the single-agent baseline, the offline
honesty note, and a judged experiment against the fake Messages API (a model that follows its
prompts: the harness sees the difference a prompt makes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import run_cli
from .fakes.anthropic_server import FakeAnthropicServer
from .fakes.research_play import ResearchPlay
from .test_compare import fewer_subagents_variant, write_corpus, write_questions

PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")


def bad(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Through the CLI's own process: exit 2, one line on stderr, nothing written."""
    proc = run_cli("compare", *args, cwd=tmp_path, env={"RESEARCH_CACHE_DIR": str(tmp_path / "cache"), **(env or {})})
    assert proc.returncode == 2, proc.stderr
    return _one_line(tmp_path, proc.stderr, proc.stdout)


def _one_line(tmp_path: Path, stderr: str, stdout: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("research: error: ") and "Traceback" not in stderr
    assert not (tmp_path / "runs").exists() and not stdout
    return lines[0]


@pytest.fixture
def bad_in_process(tmp_path: Path, research_in_process):
    """`research compare ARGS` in this process, expected to refuse: its one line."""

    def run(*args: str) -> str:
        code, out, err = research_in_process("compare", *args)
        assert code == 2
        return _one_line(tmp_path, err, out)

    return run


def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path: Path, bad_in_process) -> None:
    bad_ = bad_in_process
    corpus = write_corpus(tmp_path / "corpus")
    q = write_questions(tmp_path / "q.jsonl", 2)
    common = ["--questions", str(q), "--corpus", str(corpus)]
    assert "unknown variant 'nosuch'" in bad(tmp_path, "--variant", "default", "--variant", "nosuch", *common)
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.txt").write_text("hello")
    assert "notes.txt is not a known prompt" in bad_("--variant", "default", "--variant", str(stray), *common)
    hole = tmp_path / "hole"
    hole.mkdir()
    (hole / "subagent_task.txt").write_text("Do ${objective} before ${deadline}")
    assert "never fills: ${deadline}" in bad_("--variant", "default", "--variant", str(hole), *common)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert "no questions in the file" in bad_("--variant", "default", "--variant", "single",
                                              "--questions", str(empty), "--corpus", str(corpus))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "fine?"}\n{"question": oops}\n')
    assert "broken.jsonl line 2: not valid JSON" in bad_("--variant", "default", "--variant", "single",
                                                         "--questions", str(broken), "--corpus", str(corpus))
    assert "ANTHROPIC_API_KEY is not set" in bad(tmp_path, "--variant", "default", "--variant", "single", *common,
                                                  "--judge-model", "claude-sonnet-4-5")
    assert "--repeats must be a whole number of at least 1" in bad_("--variant", "default", "--variant",
                                                                    "single", *common, "--repeats", "0")
    assert "at least two variants" in bad_("--variant", "default", *common)
    assert "the judge needs a language model" in bad_("--variant", "default", "--variant", "single",
                                                      *common, "--judge-model", "extractive")
    toml = tmp_path / "exp.toml"
    toml.write_text('questions = "x.jsonl"\nrepeat = 2\n')
    assert "unknown key(s) repeat" in bad_(str(toml))
    assert "not a comparison directory" in bad_("--resume", str(tmp_path))
    assert "need the web: add --web" in bad_("--variant", "default", "--variant", "single",
                                             "--questions", "deep-research-bench")


@pytest.mark.skipif(not PYTHON_DOCS.is_dir(), reason="python3-doc is not installed (.ci/run installs it)")
def test_offline_python_docs_multi_agent_against_the_single_agent_baseline(tmp_path: Path,
                                                                           python_docs_index: Path) -> None:
    proc = run_cli("compare", "--variant", "default", "--variant", "single", "--questions", "python-docs",
                   "--split", "dev", "--limit", "6", "--parallel", "4", cwd=tmp_path,
                   env={"RESEARCH_CACHE_DIR": str(python_docs_index)}, timeout=900)  # warm, 13 s (CI once: > 300 s)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "## single vs default: verdicts" in out and "single starts fewer subagents by 100%" in out
    assert "| gold answer token F1 |" in out and "| A: default |" in out and "| B: single |" in out
    assert "[12/12]" in proc.stderr and "ETA" in proc.stderr and "cost $" in proc.stderr
    where = next((tmp_path / "runs").glob("compare-*"))
    rows = [json.loads(x) for x in (where / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and {r["variant"] for r in rows} == {"default", "single"}
    assert all(r["status"] == "completed" and r["metrics"]["answer_f1"] is not None for r in rows)
    single = next(r for r in rows if r["variant"] == "single")
    assert single["metrics"]["subagents"] == 0 and single["metrics"]["duplicate_queries"] is None
    multi = next(r for r in rows if r["variant"] == "default")
    assert multi["metrics"]["subagents"] >= 1 and multi["query_type"] is not None
    assert (where / "report.html").is_file() and (where / "summary.md").read_text() in out
    show = run_cli("show", str(where / single["run_dir"]), cwd=tmp_path)
    assert show.returncode == 0 and "single" in show.stdout


def test_offline_prompt_only_variants_are_called_out(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    q = write_questions(tmp_path / "q.jsonl", 2)
    fewer_subagents_variant(tmp_path, 1)
    exp = tmp_path / "experiment.toml"  # the same experiment from a file that can be versioned
    exp.write_text(f'questions = "{q.name}"\ncorpus = ["{corpus}"]\nparallel = 2\n\n[[variant]]\nname = "default"\n\n'
                   '[[variant]]\nname = "fewer"\nprompts = "./at-most-1"\nmax_rounds = 1\n')
    proc = run_cli("compare", str(exp), cwd=tmp_path, env={"RESEARCH_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| B: fewer | prompts …/at-most-1" in proc.stdout and "max_rounds=1" in proc.stdout
    assert "note: Offline: every model here is the extractive model, which reads no prompts" in proc.stderr
    assert "what differs here offline is the settings of the variants" in proc.stdout


def test_judged_experiment_against_the_fake_messages_api(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    q = write_questions(tmp_path / "q.jsonl", 6)
    variant = fewer_subagents_variant(tmp_path, 1)
    with FakeAnthropicServer(handler=ResearchPlay(default_tasks=3)) as srv:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
        env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=srv.base_url, HOME=str(tmp_path),
                   RESEARCH_CACHE_DIR=str(tmp_path / "cache"))
        proc = subprocess.run(
            [sys.executable, "-m", "lead_agent.cli", "compare", "--variant", "default", "--variant", str(variant),
             "--questions", str(q), "--corpus", str(corpus), "--lead-model", "claude-opus-4-6", "--subagent-model",
             "claude-haiku-4-5", "--judge-model", "claude-sonnet-4-5", "--max-rounds", "1", "--parallel", "3"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert not srv.refusals and not srv.handler_errors
        prefs = [r for r in srv.requests if any(t["name"] == "submit_preference" for t in r.body.get("tools") or [])]
    out = proc.stdout
    assert "at-most-1 starts fewer subagents by 67% [67%, 67%], p=0.031" in out
    assert "at-most-1 is cheaper by" in out and "Offline" not in out + proc.stderr
    # the judge: both orders asked for every question; the play prefers the report with more citations
    assert len(prefs) == 2 * 6
    assert "pairwise judge: the judge prefers default (at-most-1 0, default 6, ties 0 of 6), p=0.031" in out
    assert "judged citation accuracy" in out and "counted apart from the runs' cost" in out
    where = next((tmp_path / "runs").glob("compare-*"))
    judgments = [json.loads(x) for x in (where / "judge" / "judgments.jsonl").read_text().splitlines()]
    assert len(judgments) == 12 + 12 and all(j["result"] and j["cost_usd"] > 0 for j in judgments)
    transcripts = list((where / "judge" / "agents").glob("*.jsonl"))
    assert len(transcripts) == 24
    first = [json.loads(x) for x in transcripts[0].read_text().splitlines()]
    assert first[0]["kind"] == "agent_start" and first[0]["data"]["role"] == "judge"
    rows = [json.loads(x) for x in (where / "results.jsonl").read_text().splitlines()]
    assert all(0 <= r["metrics"]["judge_mean"] <= 1 for r in rows)
