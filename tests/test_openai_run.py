"""A whole run against an OpenAI-compatible endpoint (FakeOpenAIServer on 127.0.0.1) through the CLI:
`research run … --provider openai --base-url <fake>/v1 --lead-model llama3.1`.

The fake plays the lead (tools offer `delegate`) and the subagents (tools offer `submit_findings`)
by reading each chat-completions request, as in tests/test_claude_run.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from subagents.transcript import read_events
from tests.fakes.openai_server import ChatReply, FakeOpenAIServer, chat, chat_tools

MODEL = "llama3.1"
KEY = "sk-test-openai-3b1e-never-logged"
QUESTION = "How do TaskGroup and gather behave?"
DOCS = {
    "taskgroup.md": "# Task groups\n\nWhen a task in a TaskGroup raises an exception, the remaining tasks in the "
                    "group are cancelled.\n",
    "gather.md": "# Gathering\n\nThe gather function returns the results in the order of the awaitables that "
                 "were passed to it.\n",
}
TASKS = [
    {"objective": "What happens to the other tasks when a TaskGroup task raises?", "tools": ["search_corpus"],
     "queries": ["TaskGroup raises remaining tasks cancelled"]},
    {"objective": "In which order does gather return its results?", "tools": ["search_corpus", "read_passage"],
     "queries": ["gather results order awaitables"]},
]
PLAN = {"query_type": "breadth_first", "rationale": "one subagent per API", "tasks": TASKS}


def tool_names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def trailing_tool_messages(body: dict) -> list[dict]:
    out = []
    for m in reversed(body["messages"]):
        if m["role"] != "tool":
            break
        out.insert(0, m)
    return out


class Scenario:
    def __init__(self) -> None:
        self.unknown: list[dict] = []

    def __call__(self, body: dict) -> ChatReply:
        names = tool_names(body)
        if "delegate" in names:
            return self.lead(body)
        if "submit_findings" in names:
            return self.sub(body)
        self.unknown.append(body)
        raise AssertionError(f"neither lead nor subagent: tools {names}")

    def lead(self, body: dict) -> ChatReply:
        results = trailing_tool_messages(body)
        if not results:
            assert "<question>" in body["messages"][1]["content"]
            return chat_tools(("delegate", PLAN), content="Splitting the question by API.")
        found = re.search(r"<findings[^>]*>\s*(.*?)\s*</findings>", results[0]["content"], re.S)
        assert found, results[0]["content"][:300]
        lines = ["# TaskGroup and gather", ""]
        for sub in json.loads(found.group(1))["subagents"]:
            for c in sub["claims"]:
                lines.append(f"{c['text'].strip()} [{', '.join(c['source_ids'])}]")
        return chat("\n".join(lines))

    def sub(self, body: dict) -> ChatReply:
        user = next(m for m in body["messages"] if m["role"] == "user")
        d = json.loads(re.search(r"<delegation>\s*(.*?)\s*</delegation>", user["content"], re.S).group(1))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            return chat_tools(("search_corpus", {"query": d["queries"][0], "k": 2}))
        material = re.search(r"<retrieved_material[^>]*>\s*(.*)\s*</retrieved_material>",
                             trailing_tool_messages(body)[0]["content"], re.S)
        hit = json.loads(material.group(1))["results"][0]
        return chat_tools(("submit_findings", {"status": "ok", "summary": "found it",
                                               "claims": [{"text": hit["snippet"], "source_ids": [hit["source_id"]]}]}))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, body in DOCS.items():
        (root / name).write_text(body)
    return root


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    full = {**base, "HOME": str(cwd), "RESEARCH_CACHE_DIR": str(cwd / "cache"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "lead_agent.cli", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120)


def test_cli_run_against_an_openai_compatible_endpoint(tmp_path: Path, corpus: Path) -> None:
    scenario = Scenario()
    with FakeOpenAIServer(handler=scenario, base_latency=0.2) as srv:
        proc = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", "runs", "--max-rounds", "1",
                   "--provider", "openai", "--base-url", srv.base_url, "--lead-model", MODEL,
                   cwd=tmp_path, env={"OPENAI_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    assert srv.dry == 0 and not srv.handler_errors and not scenario.unknown
    assert "Traceback" not in proc.stderr
    assert "the remaining tasks in the group are cancelled" in proc.stdout
    assert "in the order of the awaitables" in proc.stdout
    d = next((tmp_path / "runs").iterdir())
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "completed"
    assert m["models"] == {"lead": MODEL, "subagent": MODEL, "language_model_used": True}
    assert m["citation_check"]["markers"] == 2 and m["citation_check"]["supported"] == 2

    # every request went to the chat-completions endpoint with the model name and the key
    assert {r.path for r in srv.requests} == {"/v1/chat/completions"}
    assert all(r.body["model"] == MODEL and r.headers.get("authorization") == f"Bearer {KEY}" for r in srv.requests)

    # the lead delegated by a tool call; plan.v1.json is that plan
    lead_reqs = [r.body for r in srv.requests if "delegate" in tool_names(r.body)]
    assert len(lead_reqs) == 2
    assert lead_reqs[0]["messages"][0]["role"] == "system"
    tool_msg = trailing_tool_messages(lead_reqs[1])
    assert len(tool_msg) == 1 and "<findings" in tool_msg[0]["content"]
    assert tool_msg[0]["tool_call_id"] == lead_reqs[1]["messages"][-2]["tool_calls"][0]["id"]
    plan = json.loads((d / "plan.v1.json").read_text())
    assert [(t["agent_id"], t["objective"], t["tools"]) for t in plan["tasks"]] == \
        [("r1-sub1", TASKS[0]["objective"], ["search_corpus"]), ("r1-sub2", TASKS[1]["objective"], ["search_corpus", "read_passage"])]

    # subagents saw only their allowed tools (+ submit_findings), ran in parallel and submitted by tool call
    sub_reqs = [r for r in srv.requests if "submit_findings" in tool_names(r.body)]
    assert len(sub_reqs) == 4
    assert {tuple(tool_names(r.body)) for r in sub_reqs} == {("search_corpus", "submit_findings"),
                                                             ("search_corpus", "read_passage", "submit_findings")}
    firsts = sorted((r.arrived, r.finished) for r in sub_reqs if len(r.body["messages"]) == 2)
    assert len(firsts) == 2 and firsts[1][0] < firsts[0][1]  # the two first turns overlapped
    for agent in ("r1-sub1", "r1-sub2"):
        evs = list(read_events(d / "agents" / f"{agent}.jsonl"))
        submitted = [e for e in evs if e["kind"] == "tool_call" and e["data"]["name"] == "submit_findings"]
        assert len(submitted) == 1
        assert evs[-1]["kind"] == "agent_end" and evs[-1]["data"]["status"] == "ok"

    # usage from the endpoint; no price for a local model: cost unknown, never guessed
    assert m["usage"]["input_tokens"] > 0 and m["usage"]["output_tokens"] > 0
    assert m["cost_usd"] is None and all(a["cost_usd"] is None for a in m["agents"])
    for p in d.rglob("*"):
        if p.is_file():
            assert KEY not in p.read_text(encoding="utf-8", errors="replace"), p


@pytest.mark.parametrize("args, needle", [
    (["--base-url", "localhost:11434/v1", "--lead-model", MODEL], "malformed base URL"),
    (["--base-url", "http://:11434/v1", "--lead-model", MODEL], "malformed base URL"),
    (["--base-url", "http://127.0.0.1:notaport/v1", "--lead-model", MODEL], "malformed base URL"),
    (["--lead-model", MODEL], "--base-url"),
    (["--base-url", "http://127.0.0.1:9/v1"], "--lead-model"),
    (["--base-url", "http://127.0.0.1:9/v1", "--lead-model", MODEL, "--requests-per-minute", "-5"], "--requests-per-minute must be"),
])
def test_cli_openai_configuration_errors_exit_2(tmp_path: Path, corpus: Path, args: list[str], needle: str) -> None:
    proc = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", "runs", "--provider", "openai", *args,
               cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("research: error:") and needle in lines[0], proc.stderr
    assert not (tmp_path / "runs").exists()
