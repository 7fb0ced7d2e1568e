"""Every run budget (--deadline, --max-cost, --max-tokens) stopping a run through the CLI, offline and
against the fake Messages API, in multi-agent and single mode: the report says which budget stopped the
run, the terminal says what the run used in the end, and a run that had nothing to research says the
budget stopped it (audit defects 1, 14, 17)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT
from .fakes.anthropic_server import FakeAnthropicServer, Reply, tool_use
from .fakes.anthropic_server import text as api_text

SUB_MODEL = "claude-haiku-4-5"
FACT = "The harbour lighthouse was built in 1851 by the port authority."
QUESTION = "When was the harbour lighthouse built?"
HEAVY = {"input_tokens": 3_000, "output_tokens": 300, "cache_creation_input_tokens": 2_000,
         "cache_read_input_tokens": 20_000}  # 25,300 tokens, about $0.0112 with claude-haiku-4-5
LIMITS = {"deadline": ["--deadline", "4"], "max_cost": ["--max-cost", "0.005"],
          "max_tokens": ["--max-tokens", "20000"]}


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
    full = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"} | {"PYTHONPATH": str(ROOT)} | (env or {})
    return subprocess.run([sys.executable, "-m", "lead_agent.cli", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=timeout)


def docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir(exist_ok=True)
    (d / "a.md").write_text(f"# Lighthouses\n\n{FACT}\n")
    return d


def one_run(runs: Path) -> tuple[Path, dict]:
    (run_dir,) = list(runs.iterdir())
    return run_dir, json.loads((run_dir / "manifest.json").read_text())


def searched(body: dict) -> bool:
    return any(b.get("type") == "tool_result" for m in body["messages"] if isinstance(m["content"], list)
               for b in m["content"])


def handler(budget: str, release: threading.Event) -> Any:
    """Claude agents that search until told to wrap up: each search is slow (deadline) or heavy (cost,
    tokens); a subagent's wrap-up submits the fact when it has read anything, the single agent's wrap-up
    writes it as its report."""
    def reply(body: dict) -> Reply:
        names = {t["name"] for t in body.get("tools", [])}
        choice = body.get("tool_choice", {})
        if choice.get("name") == "submit_findings":
            claim = {"text": FACT, "source_ids": ["S1"]}
            return tool_use(("submit_findings", {"status": "partial", "claims": [claim]} if searched(body)
                             else {"status": "failed", "claims": []}))
        if choice.get("type") == "none":
            return api_text(f"# Lighthouse\n\n{FACT} [S1]" if searched(body) else "# Lighthouse\n\nNothing found.")
        if budget == "deadline" and searched(body):
            release.wait(60)  # the second search is cut by the deadline
        call = tool_use(("search_corpus", {"query": "harbour lighthouse"}))
        if budget != "deadline":
            call.usage = dict(HEAVY)
        assert "delegate" not in names
        return call
    return reply


@pytest.mark.parametrize("mode", ["multi", "single"])
@pytest.mark.parametrize("budget", ["deadline", "max_cost", "max_tokens"])
def test_each_budget_stops_a_run_against_the_messages_api(tmp_path: Path, budget: str, mode: str) -> None:
    # multi: the offline lead (extractive) with Claude subagents: its wrap-up call writes the report
    models = ["--lead-model", "extractive", "--subagent-model", SUB_MODEL] if mode == "multi" else \
        ["--mode", "single", "--lead-model", SUB_MODEL]
    release = threading.Event()
    with FakeAnthropicServer(handler=handler(budget, release)) as srv:
        proc = cli("run", QUESTION, "--corpus", str(docs(tmp_path)), "--runs-dir", str(tmp_path / "runs"),
                   "--max-rounds", "1", "-q", *models, *LIMITS[budget], cwd=tmp_path,
                   env={"ANTHROPIC_API_KEY": "sk-fake", "ANTHROPIC_BASE_URL": srv.base_url,
                        "RESEARCH_CACHE_DIR": str(tmp_path / "cache")})
        release.set()
    assert "Traceback" not in proc.stderr and "error" not in proc.stderr, proc.stderr
    run_dir, m = one_run(tmp_path / "runs")
    assert m["budget"]["stopped_by"] == budget, m.get("error")
    report = (run_dir / "report.md").read_text()
    assert f"Stopped early:** the run's {budget} budget was reached" in report
    assert "when it stopped" in report  # what the line says stays true after the wrap-up calls
    assert report in proc.stdout
    # the terminal states the final usage (wrap-up calls included), not only the figure at the line
    said = next(line for line in proc.stderr.splitlines() if "budget was reached" in line)
    assert f"final usage with the wrap-up calls: {m['budget']['used']['tokens']:,} tokens, " \
           f"${m['cost_usd']:.4f}" in said
    if budget == "max_cost":
        assert m["cost_usd"] > m["budget"]["used_at_stop"] >= 0.005
    if budget == "deadline":
        assert "of 4s)" in said
    assert proc.returncode == (0 if m["status"] == "completed" else 3), proc.stderr
    assert m["status"] == "completed"


def test_a_deadline_offline_stops_the_run_and_says_so(tmp_path: Path) -> None:
    """Offline the models cost nothing, so only --deadline can stop a run: one so short it is reached
    before the lead's first call. The lead's wrap-up runs (no crash), nothing was researched, and the
    error names the budget, not a refused plan (defects 1 and 14)."""
    corpus = docs(tmp_path)
    env = {"RESEARCH_CACHE_DIR": str(tmp_path / "cache")}
    proc = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", str(tmp_path / "runs"), "--deadline",
               "0.000001", "-q", cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "AttributeError" not in proc.stderr, proc.stderr
    assert "run failed: the lead never had a plan accepted before the run's deadline budget was reached" \
        in proc.stderr
    assert "rejected" not in proc.stderr
    _, m = one_run(tmp_path / "runs")
    assert m["status"] == "failed" and m["budget"]["stopped_by"] == "deadline" and "deadline budget" in m["error"]

    single = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", str(tmp_path / "single"), "--deadline",
                 "0.000001", "--mode", "single", "-q", cwd=tmp_path, env=env)
    assert single.returncode == 3, single.stderr
    run_dir, m = one_run(tmp_path / "single")
    report = (run_dir / "report.md").read_text()
    assert "Stopped early:** the run's deadline budget was reached" in report
    assert "Nothing was retrieved: no search ran." in report  # not "the documents do not answer"
    assert m["budget"]["stopped_by"] == "deadline"


def test_a_run_stopped_by_its_deadline_resumes_to_a_report(tmp_path: Path) -> None:
    """The deadline is reached while a subagent's wrap-up call hangs; the run is interrupted there;
    `research resume` finishes it: the offline lead writes the report from what there is (without the
    fix its wrap-up call crashed the resumed run too)."""
    hang = {"on": True}

    def reply(body: dict) -> Reply:
        if body.get("tool_choice", {}).get("name") == "submit_findings":
            while hang["on"]:
                time.sleep(0.05)
            claim = {"text": FACT, "source_ids": ["S1"]}
            return tool_use(("submit_findings", {"status": "partial", "claims": [claim]} if searched(body)
                             else {"status": "failed", "claims": []}))
        if searched(body):
            while hang["on"]:
                time.sleep(0.05)
        return tool_use(("search_corpus", {"query": "harbour lighthouse"}))

    args = ["--corpus", str(docs(tmp_path)), "--runs-dir", str(tmp_path / "runs"), "--max-rounds", "1",
            "--lead-model", "extractive", "--subagent-model", SUB_MODEL, "--deadline", "4"]
    with FakeAnthropicServer(handler=reply) as srv:
        env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"} | {
            "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": "sk-fake", "ANTHROPIC_BASE_URL": srv.base_url,
            "RESEARCH_CACHE_DIR": str(tmp_path / "cache")}
        proc = subprocess.Popen([sys.executable, "-m", "lead_agent.cli", "run", QUESTION, *args], cwd=tmp_path,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        start = time.monotonic()
        while not any(r.body.get("tool_choice", {}).get("name") == "submit_findings" for r in srv.requests):
            assert time.monotonic() - start < 60 and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        hang["on"] = False
        run_dir, m = one_run(tmp_path / "runs")
        assert m["status"] == "interrupted" and m["budget"]["stopped_by"] == "deadline", err
        resumed = cli("resume", str(run_dir), "-q", cwd=tmp_path, env=env)
    assert "Traceback" not in resumed.stderr and "error" not in resumed.stderr, resumed.stderr
    _, m = one_run(tmp_path / "runs")
    report = (run_dir / "report.md").read_text()
    assert "Stopped early:** the run's deadline budget was reached" in report
    # the unfinished subagent is not run again past the line (its earlier searches are not reused)
    assert "r1-sub1 (round 1, skipped)" in report
    assert m["status"] == "completed_empty" and resumed.returncode == 3
    assert "deadline budget was reached" in resumed.stderr
