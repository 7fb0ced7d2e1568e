"""Ctrl-C (SIGINT) during a real `research run` process: status interrupted, transcripts kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from subagents.transcript import read_events

from .conftest import ctrl_c_default
from .fakes.anthropic_server import FakeAnthropicServer, hang, tool_use


def test_sigint_marks_the_run_interrupted_and_keeps_every_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Tasks\n\nA task group cancels the remaining tasks when one task fails.\n")
    plan = {"query_type": "breadth_first", "rationale": "two parts",
            "tasks": [{"objective": f"part {i} of the question", "tools": ["search_corpus"]} for i in (1, 2)]}

    def handler(body: dict) -> object:
        names = {t["name"] for t in body.get("tools", [])}
        if "delegate" in names:
            return tool_use(("delegate", plan))
        if len(body["messages"]) == 1:  # a subagent's first turn: search, then hang on the next call
            return tool_use(("search_corpus", {"query": "task group"}))
        return hang(60)

    with FakeAnthropicServer(handler=handler) as srv:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-secret", "ANTHROPIC_BASE_URL": srv.base_url,
               "RESEARCH_CACHE_DIR": str(tmp_path / "cache")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "lead_agent.cli", "run", "What do task groups do?", "--corpus", str(docs),
             "--runs-dir", str(tmp_path / "runs"), "--lead-model", "claude-opus-4-6",
             "--subagent-model", "claude-haiku-4-5"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_default)
        deadline = time.monotonic() + 120  # a bound, not a timing: the loop leaves as soon as both are stuck
        while time.monotonic() < deadline:  # wait until both subagents are stuck in their second call
            if sum(1 for r in srv.requests if len(r.body.get("messages", [])) > 1 and
                   "submit_findings" in {t["name"] for t in r.body.get("tools", [])}) >= 2:
                break
            time.sleep(0.05)
        else:
            proc.kill()
            raise AssertionError(f"subagents never reached their second call: {proc.communicate()}")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "interrupted" in err
    run_dir = next((tmp_path / "runs").iterdir())
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "interrupted"
    for agent in ("lead", "r1-sub1", "r1-sub2"):
        events = list(read_events(run_dir / "agents" / f"{agent}.jsonl"))
        assert events, agent
    sub = list(read_events(run_dir / "agents" / "r1-sub1.jsonl"))
    assert [e["kind"] for e in sub].count("tool_result") == 1  # the search result was kept
    assert sub[-1]["kind"] == "agent_end" and sub[-1]["data"]["status"] == "interrupted"
    assert "sk-test-secret" not in "".join(p.read_text() for p in run_dir.rglob("*") if p.is_file())
