"""Whole runs with Claude model names: the real anthropic SDK against FakeAnthropicServer on 127.0.0.1,
through the public entry points (`lead_agent.api.research` and `python -m lead_agent.cli`).

The fake plays every agent by reading each request, the way a model would: a request offering
the `delegate` tool comes from the lead (first call: a plan; after a tool error: a fixed plan;
after <findings>: a report citing the ids in them), one offering `submit_findings` from a
subagent (first turn: search_corpus; next: submit a claim quoting the retrieved text with its id).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from lead_agent import api
from subagents.models.pricing import price_for
from subagents.tools import Tool, ToolContext, untrusted
from subagents.transcript import read_events
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, error, text, tool_use

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-4f9c-never-logged"
LEAD = "claude-opus-4-6"
SUB = "claude-haiku-4-5"
EPHEMERAL = {"type": "ephemeral"}
# disjoint Anthropic usage counts every successful fake reply reports (costs are checked against them)
USAGE = {"input_tokens": 40, "output_tokens": 20, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 200}
FAST = {"max_retries": 1, "backoff_base": 0.01, "timeout": 20}

DOCS = {
    "taskgroup.md": "# Task groups\n\nWhen a task in a TaskGroup raises an exception, the remaining tasks in the "
                    "group are cancelled.\n",
    "gather.md": "# Gathering\n\nThe gather function returns the results in the order of the awaitables that "
                 "were passed to it.\n",
    "timeouts.md": "# Timeouts\n\nThe timeout context manager cancels the enclosed code once the deadline "
                   "passes.\n",
}
TASKS = [
    {"key": "taskgroup", "objective": "What happens to the other tasks when a TaskGroup task raises?",
     "queries": ["TaskGroup raises remaining tasks cancelled"]},
    {"key": "gather", "objective": "In which order does gather return its results?",
     "queries": ["gather results order awaitables"]},
    {"key": "timeout", "objective": "What does the timeout context manager do at the deadline?",
     "queries": ["timeout deadline cancels enclosed code"]},
]
QUESTION = "How do TaskGroup, gather and timeout behave?"


def make_plan(tools: tuple[str, ...] = ("search_corpus", "read_passage"), tasks: list[dict] = TASKS,
              max_tool_calls: int = 4) -> dict:
    return {"query_type": "breadth_first", "rationale": "one subagent per API",
            "tasks": [{"objective": t["objective"], "tools": list(tools), "queries": t["queries"],
                       "budget": {"max_tool_calls": max_tool_calls, "max_tokens": 50_000, "max_seconds": 60}}
                      for t in tasks]}


# ---------------------------------------------------------------- reading the wire


def tool_names(body: dict) -> list[str]:
    return [t["name"] for t in body.get("tools") or []]


def blocks(message: dict) -> list[dict]:
    c = message["content"]
    return [{"type": "text", "text": c}] if isinstance(c, str) else c


def block_text(block: dict) -> str:
    c = block.get("content", block.get("text", ""))
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c)


def delegation_of(body: dict) -> dict:
    first = "".join(block_text(b) for b in blocks(body["messages"][0]))
    return json.loads(re.search(r"<delegation>\s*(.*?)\s*</delegation>", first, re.S).group(1))


def last_tool_results(body: dict) -> list[dict]:
    return [b for b in blocks(body["messages"][-1]) if b.get("type") == "tool_result"]


def retrieved(result: dict) -> dict:
    m = re.search(r"<retrieved_material[^>]*>\s*(.*)\s*</retrieved_material>", block_text(result), re.S)
    assert m, f"no retrieved material in {block_text(result)[:200]!r}"
    return json.loads(m.group(1))


def is_lead(body: dict) -> bool:
    return "delegate" in tool_names(body)


def is_sub(body: dict) -> bool:
    return "submit_findings" in tool_names(body)


class Scenario:
    """The fake's handler: plays the lead and the subagents from what each request contains.

    `faults[key]` holds replies a subagent gets before its normal ones (e.g. a 429);
    `always[key]` a reply it gets for every call (e.g. a 529)."""

    def __init__(self, *, first_plan: dict | None = None, plan: dict | None = None, usage: dict | None = None,
                 faults: dict[str, list[Reply]] | None = None, always: dict[str, Reply] | None = None) -> None:
        self.plan = plan or make_plan()
        self.first_plan = first_plan or self.plan
        self.usage = dict(USAGE if usage is None else usage)
        self.faults = {k: deque(v) for k, v in (faults or {}).items()}
        self.always = dict(always or {})
        self.lead_errors: list[str] = []
        self.unknown: list[Any] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        if is_lead(body):
            reply = self.lead(body)
        elif is_sub(body):
            d = delegation_of(body)
            key = next((t["key"] for t in TASKS if t["objective"] == d["objective"]), d["objective"])
            with self._lock:
                if key in self.always:
                    return self.always[key]
                if self.faults.get(key):
                    return self.faults[key].popleft()
            turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
            reply = self.sub_turn(d, turn, body)
        else:
            self.unknown.append(body)
            raise AssertionError(f"neither lead nor subagent: tools {tool_names(body)}")
        if reply.status == 200:
            reply.usage = {**self.usage, **reply.usage}
        return reply

    def lead(self, body: dict) -> Reply:
        results = last_tool_results(body)
        if not results:
            return tool_use(("delegate", self.first_plan), text="I will split the question by API.")
        r = results[0]
        if r.get("is_error"):
            with self._lock:
                self.lead_errors.append(block_text(r))
            return tool_use(("delegate", self.plan))
        found = re.search(r"<findings[^>]*>\s*(.*?)\s*</findings>", block_text(r), re.S)
        assert found, "the delegate result holds no <findings>"
        data = json.loads(found.group(1))
        lines = ["# TaskGroup, gather and timeout", ""]
        for sub in data["subagents"]:
            for c in sub["claims"]:
                lines.append(f"{c['text'].strip()} [{', '.join(c['source_ids'])}]")
        return text("\n".join(lines))

    def sub_turn(self, delegation: dict, turn: int, body: dict) -> Reply:
        if turn == 0:
            return tool_use(("search_corpus", {"query": delegation["queries"][0], "k": 3}))
        hits = retrieved(last_tool_results(body)[0])["results"]
        claims = [{"text": h["snippet"], "source_ids": [h["source_id"]]} for h in hits[:1]]
        return tool_use(("submit_findings", {"status": "ok" if claims else "failed",
                                             "summary": "Answered from the corpus.", "claims": claims}))


# ---------------------------------------------------------------- helpers


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, body in DOCS.items():
        (root / name).write_text(body)
    monkeypatch.setenv("RESEARCH_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "RESEARCH_LEAD_MODEL", "RESEARCH_SUBAGENT_MODEL",
                "RESEARCH_PROVIDER", "RESEARCH_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no ./research.toml
    return root


async def run_api(tmp_path: Path, srv: FakeAnthropicServer, corpus: Path | None, *, key: str | None = KEY,
                  lead: str = LEAD, sub: str = SUB, extra: dict | None = None, **kw: Any) -> api.ResearchResult:
    kw.setdefault("max_rounds", 1)
    return await api.research(
        QUESTION, corpus=[corpus] if corpus else [], runs_dir=tmp_path / "runs", lead_model=lead, subagent_model=sub,
        base_url=srv.base_url, api_key=key, **dict(FAST, **(extra or {})),
        use_config_file=False, concurrency=kw.pop("concurrency", 4), **kw)


def events(run_dir: Path, agent: str) -> list[dict]:
    return list(read_events(run_dir / "agents" / f"{agent}.jsonl"))


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def only_run(runs: Path) -> Path:
    dirs = [p for p in runs.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    best = cur = 0
    for _, d in sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals]):
        cur += d
        best = max(best, cur)
    return best


def expected_cost(usage: dict, model: str, calls: int) -> float:
    p = price_for(model)
    assert p is not None
    return calls * (usage["input_tokens"] * p.input + usage["output_tokens"] * p.output
                    + usage["cache_creation_input_tokens"] * p.cache_write
                    + usage["cache_read_input_tokens"] * p.cache_read) / 1e6


def assert_no_secret(run_dir: Path, secret: str = KEY) -> None:
    for p in run_dir.rglob("*"):
        if p.is_file():
            assert secret not in p.read_text(encoding="utf-8", errors="replace"), f"the API key leaked into {p}"


def cli(*args: str, cwd: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    full = {**base, "HOME": str(cwd), "RESEARCH_CACHE_DIR": str(cwd / "cache"), **env}
    return subprocess.run([sys.executable, "-m", "lead_agent.cli", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=timeout)


def sent_key(req: Any) -> str | None:
    """The credential a request carried (x-api-key, or a bearer token: SDK versions differ)."""
    auth = req.headers.get("authorization", "")
    return req.headers.get("x-api-key") or (auth[len("Bearer "):] if auth.startswith("Bearer ") else None)


def cached(block: dict) -> bool:
    return block.get("cache_control") == EPHEMERAL


def markers(body: dict) -> int:
    n = sum(cached(t) for t in body.get("tools") or []) + sum(cached(b) for b in body.get("system") or [])
    return n + sum(cached(b) for m in body["messages"] for b in blocks(m))


# ---------------------------------------------------------------- the Python API


async def test_api_run_with_claude_models_end_to_end(tmp_path: Path, corpus: Path) -> None:
    scenario = Scenario()
    with FakeAnthropicServer(handler=scenario, base_latency=0.3) as srv:
        result = await run_api(tmp_path, srv, corpus)
    d = result.run_dir
    m = manifest(d)
    assert m["status"] == "completed", m.get("error")
    assert srv.dry == 0 and not srv.handler_errors and not scenario.unknown
    assert m["models"] == {"lead": LEAD, "subagent": SUB, "language_model_used": True}

    # the lead delegated by tool call, and plan.v1.json is that plan
    lead_ev = events(d, "lead")
    first = next(e for e in lead_ev if e["kind"] == "model_response")["data"]
    assert [b["name"] for b in first["content"] if b["type"] == "tool_use"] == ["delegate"]
    plan = json.loads((d / "plan.v1.json").read_text())
    assert [t["agent_id"] for t in plan["tasks"]] == ["r1-sub1", "r1-sub2", "r1-sub3"]
    assert [(t["objective"], t["tools"], t["queries"]) for t in plan["tasks"]] == \
        [(t["objective"], ["search_corpus", "read_passage"], t["queries"]) for t in make_plan()["tasks"]]

    # subagents ran in parallel: their requests overlapped on the server
    sub_reqs = [r for r in srv.requests if is_sub(r.body)]
    assert len(sub_reqs) == 6  # 3 subagents × (search turn + submit turn)
    assert max_overlap([(r.arrived, r.finished) for r in sub_reqs]) >= 2

    # each subagent started from a fresh context: one user message with its own delegation only
    firsts = [r.body for r in sub_reqs if len(r.body["messages"]) == 1]
    assert sorted(delegation_of(b)["objective"] for b in firsts) == sorted(t["objective"] for t in TASKS)

    # cache breakpoints on the wire: last tool, system, last message block (+ the previous user turn)
    second = next(r.body for r in sub_reqs if len(r.body["messages"]) == 3)
    assert [cached(t) for t in second["tools"]] == [False] * (len(second["tools"]) - 1) + [True]
    assert second["tools"][-1]["name"] == "submit_findings"
    assert cached(second["system"][-1])
    assert cached(blocks(second["messages"][-1])[-1]) and blocks(second["messages"][-1])[-1]["type"] == "tool_result"
    assert cached(blocks(second["messages"][0])[-1])
    assert markers(second) == 4
    lead_reqs = [r for r in srv.requests if is_lead(r.body)]
    assert len(lead_reqs) == 2
    lead_first = lead_reqs[0].body
    assert cached(lead_first["tools"][-1]) and cached(lead_first["system"][-1])
    assert cached(blocks(lead_first["messages"][-1])[-1])
    assert "<question>" in block_text(blocks(lead_first["messages"][0])[0])

    # streaming: the lead streams, subagents do not; the report was assembled from the stream
    assert all(r.streamed and r.body.get("stream") for r in lead_reqs)
    assert not any(r.streamed for r in sub_reqs)
    for snippet in ("remaining tasks in the group are cancelled", "order of the awaitables",
                    "cancels the enclosed code"):
        assert snippet in result.report
    assert m["citation_check"]["markers"] == 3 and m["citation_check"]["supported"] == 3
    assert "## References" in result.report and "What is missing" not in result.report

    # usage and cost from the fake's usage, per call, per agent and per run
    agents = {a["agent_id"]: a for a in m["agents"]}
    assert set(agents) == {"lead", "r1-sub1", "r1-sub2", "r1-sub3"}
    for agent_id, a in agents.items():
        model = LEAD if agent_id == "lead" else SUB
        assert len(a["calls"]) == 2
        for c in a["calls"]:
            assert c["usage"] == USAGE
            assert c["cost_usd"] == pytest.approx(expected_cost(USAGE, model, 1))
        assert a["usage"] == {k: 2 * v for k, v in USAGE.items()}
        assert a["cost_usd"] == pytest.approx(expected_cost(USAGE, model, 2))
    assert m["usage"] == {k: 8 * v for k, v in USAGE.items()}
    assert m["cost_usd"] == pytest.approx(expected_cost(USAGE, LEAD, 2) + expected_cost(USAGE, SUB, 6))
    resp = next(e for e in events(d, "r1-sub1") if e["kind"] == "model_response")["data"]
    assert resp["usage"]["cache_read_input_tokens"] == 200 and resp["usage"]["cache_creation_input_tokens"] == 300

    # the key went over the wire, and nowhere into the run directory
    assert all(sent_key(r) == KEY for r in srv.requests)
    assert_no_secret(d)


async def test_rejected_delegation_goes_back_to_the_lead_as_a_tool_error(tmp_path: Path, corpus: Path) -> None:
    bad = make_plan(tools=("search_corpus", "rm_rf"))
    scenario = Scenario(first_plan=bad)
    with FakeAnthropicServer(handler=scenario) as srv:
        result = await run_api(tmp_path, srv, corpus)
    assert result.status == "completed"
    lead_reqs = [r.body for r in srv.requests if is_lead(r.body)]
    assert len(lead_reqs) == 3  # bad plan, fixed plan, report
    rejected = last_tool_results(lead_reqs[1])
    assert len(rejected) == 1 and rejected[0]["is_error"] is True
    assert "rm_rf" in block_text(rejected[0]) and "search_corpus" in block_text(rejected[0])
    assert scenario.lead_errors and "unknown tool" in scenario.lead_errors[0]
    # the rejected plan was not recorded or run; the fixed one was
    d = result.run_dir
    assert json.loads((d / "plan.v1.json").read_text())["tasks"][0]["tools"] == ["search_corpus", "read_passage"]
    assert not (d / "plan.v2.json").exists()
    err = [e for e in events(d, "lead") if e["kind"] == "tool_result" and e["data"]["is_error"]]
    assert len(err) == 1 and "rm_rf" in err[0]["data"]["content"]
    assert len(manifest(d)["agents"]) == 4


async def test_retry_after_429_and_a_subagent_whose_calls_keep_failing(tmp_path: Path, corpus: Path) -> None:
    scenario = Scenario(faults={"taskgroup": [error(429, retry_after=0)]}, always={"gather": error(529)})
    with FakeAnthropicServer(handler=scenario) as srv:
        result = await run_api(tmp_path, srv, corpus)
    d = result.run_dir
    m = manifest(d)
    assert m["status"] == "completed"
    status = {a["agent_id"]: a["status"] for a in m["agents"]}
    # a model error is retried once more in code (replanning strategy: retry), as a second attempt
    assert status == {"lead": "ok", "r1-sub1": "ok", "r1-sub2": "failed", "r1-sub2-a2": "failed", "r1-sub3": "ok"}
    assert [(d["agent_id"], d["strategy"], d["cause"]) for d in m["replans"]][:1] == [("r1-sub2", "retry", "model_error")]

    # the 429 was retried, and the retry is in the subagent's transcript
    retries = [e["data"] for e in events(d, "r1-sub1") if e["kind"] == "model_retry"]
    assert len(retries) == 1 and retries[0]["status"] == 429 and retries[0]["attempt"] == 1
    assert [r.status for r in srv.requests if is_sub(r.body) and delegation_of(r.body)["objective"] == TASKS[0]["objective"]] \
        == [429, 200, 200]

    # 529 until retries ran out (max_retries=1: two attempts): the subagent failed, visibly
    gather = [r for r in srv.requests if is_sub(r.body) and delegation_of(r.body)["objective"] == TASKS[1]["objective"]]
    assert [r.status for r in gather] == [529, 529, 529, 529]  # two attempts of the task, two calls each
    ev2 = events(d, "r1-sub2")
    assert [e["data"]["status"] for e in ev2 if e["kind"] == "model_retry"] == [529]
    err = [e for e in ev2 if e["kind"] == "error"]
    assert len(err) == 1 and "529" in err[0]["data"]["error"]
    assert ev2[-1]["kind"] == "agent_end" and ev2[-1]["data"]["status"] == "failed"
    failed = next(a for a in m["agents"] if a["agent_id"] == "r1-sub2")
    assert "529" in failed["error"]

    # the lead was told, and the report says what is missing
    findings = block_text(last_tool_results([r.body for r in srv.requests if is_lead(r.body)][-1])[0])
    assert '"status": "failed"' in findings and "529" in findings
    missing = result.report.split("## What is missing", 1)
    assert len(missing) == 2
    assert "r1-sub2" in missing[1] and TASKS[1]["objective"] in missing[1] and "failed" in missing[1]
    assert "r1-sub1" not in missing[1] and "r1-sub3" not in missing[1]
    assert "remaining tasks in the group are cancelled" in result.report


async def test_unpriced_model_has_unknown_cost_and_env_configures_the_sdk(
        tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropicServer(handler=Scenario()) as srv:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        result = await api.research(QUESTION, corpus=[corpus], runs_dir=tmp_path / "runs", lead_model=LEAD,
                                    subagent_model="claude-unknown-9", max_rounds=1, use_config_file=False)
    d = result.run_dir
    m = manifest(d)
    assert m["status"] == "completed" and m["models"]["subagent"] == "claude-unknown-9"
    assert all(sent_key(r) == KEY for r in srv.requests)
    agents = {a["agent_id"]: a for a in m["agents"]}
    assert agents["lead"]["cost_usd"] == pytest.approx(expected_cost(USAGE, LEAD, 2))
    for sub in ("r1-sub1", "r1-sub2", "r1-sub3"):
        assert agents[sub]["cost_usd"] is None
        assert all(c["cost_usd"] is None and c["usage"] == USAGE for c in agents[sub]["calls"])
    assert m["cost_usd"] is None  # a partial sum would mislead
    raw = (d / "manifest.json").read_text()
    assert '"cost_usd": null' in raw
    show = cli("show", str(d), cwd=tmp_path, env={})
    assert show.returncode == 0, show.stderr
    assert re.search(r"cost unknown", show.stdout)
    assert re.search(r"lead .*cost \$\d+\.\d{4}", show.stdout)
    assert_no_secret(d)


class BigReadArgs(BaseModel):
    part: int = Field(ge=1, le=20)


PARTS = 8


def big_read_tool() -> Tool:
    """One part of a long report: ~700 tokens, registered as a source."""
    async def run(args: BigReadArgs, ctx: ToolContext) -> str:
        body = f"Part {args.part} of the long report. " + " ".join(
            f"Sentence {i} of part {args.part} says that cancellation propagates to every child task." for i in range(45))
        src = ctx.sources.register(key=f"big:{args.part}", kind="corpus", title=f"Long report part {args.part}",
                                   locator=f"big#{args.part}", text=body, agent_id=ctx.agent_id)
        return untrusted("long report", {"source_id": src.id, "text": body})

    return Tool("read_big", "Read one part (1-20) of a long report.", BigReadArgs, run)


class ReadAllParts(Scenario):
    def sub_turn(self, delegation: dict, turn: int, body: dict) -> Reply:
        if turn < PARTS:
            return tool_use(("read_big", {"part": turn + 1}))
        got = retrieved(last_tool_results(body)[0])
        return tool_use(("submit_findings", {"status": "ok", "summary": "read every part",
                                             "claims": [{"text": got["text"][:120], "source_ids": [got["source_id"]]}]}))


async def test_small_context_window_condenses_old_tool_results(tmp_path: Path, corpus: Path) -> None:
    # 8 results of ~700 tokens (~5.6k) overflow a 8k window (condensing starts near 75 % of it);
    # condensed to ~100 tokens each, the older ones fit again, so nothing needs dropping.
    one = [{"key": "big", "objective": "Summarise the long report", "queries": []}]
    scenario = ReadAllParts(plan=make_plan(tools=("read_big",), tasks=one, max_tool_calls=PARTS + 2))
    with FakeAnthropicServer(handler=scenario) as srv:
        result = await run_api(tmp_path, srv, None, extra_tools=[big_read_tool()], context_window=8000)
    d = result.run_dir
    assert result.status == "completed", manifest(d).get("error")
    subs = [r.body for r in srv.requests if is_sub(r.body)]
    assert len(subs) == PARTS + 1
    notes = [n for e in events(d, "r1-sub1") if e["kind"] == "context_condensed" for n in e["data"]["notes"]]
    assert any(n.startswith("condensed tool result") and "(read_big)" in n for n in notes), notes
    assert not any("dropped" in n or "still over budget" in n for n in notes), notes

    def result_text(body: dict, exchange: int) -> str:  # the tool result of the n-th exchange (0-based)
        return block_text(blocks(body["messages"][2 + 2 * exchange])[0])

    # the oldest result went over the wire whole while it was recent, condensed once it was not
    assert "[condensed:" not in result_text(subs[1], 0) and "Sentence 44 of part 1" in result_text(subs[1], 0)
    final = subs[-1]
    first = result_text(final, 0)
    assert "[condensed:" in first and "chars omitted to fit the context window" in first
    assert first.startswith("<retrieved_material") and "Sentence 44 of part 1" not in first
    # the two latest exchanges are kept whole
    for exchange in (PARTS - 2, PARTS - 1):
        assert "[condensed:" not in result_text(final, exchange)
        assert f"Sentence 44 of part {exchange + 1}" in result_text(final, exchange)
    # the lead's context has no hook: its findings were not condensed, and the report went through
    assert "cancellation propagates" in result.report


# ---------------------------------------------------------------- the CLI


def test_cli_run_with_env_key_and_show_prints_cost(tmp_path: Path, corpus: Path) -> None:
    with FakeAnthropicServer(handler=Scenario(), base_latency=0.1) as srv:
        proc = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", "runs", "--max-rounds", "1",
                   "--lead-model", LEAD, "--subagent-model", SUB, cwd=tmp_path,
                   env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": srv.base_url})
    assert proc.returncode == 0, proc.stderr
    assert "remaining tasks in the group are cancelled" in proc.stdout and "Run saved to" in proc.stdout
    assert "Traceback" not in proc.stderr and KEY not in proc.stderr + proc.stdout
    d = only_run(tmp_path / "runs")
    m = manifest(d)
    assert m["status"] == "completed" and m["config_file"] is None
    assert len([r for r in srv.requests if is_sub(r.body)]) == 6
    assert m["cost_usd"] == pytest.approx(expected_cost(USAGE, LEAD, 2) + expected_cost(USAGE, SUB, 6))
    show = cli("show", d.name, "--runs-dir", "runs", cwd=tmp_path, env={})
    assert show.returncode == 0, show.stderr
    assert f"cost ${m['cost_usd']:.4f}" in show.stdout
    assert "cache write 2400 read 1600" in show.stdout  # 8 calls × (300, 200)
    assert "unknown" not in show.stdout.split("Agents:")[1].split("Citation check")[0]
    assert_no_secret(d)


def test_cli_lead_401_exits_1_and_keeps_the_run(tmp_path: Path, corpus: Path) -> None:
    with FakeAnthropicServer(handler=lambda body: error(401, message="invalid x-api-key")) as srv:
        proc = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", "runs", "--provider", "anthropic",
                   cwd=tmp_path, env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": srv.base_url})
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "ANTHROPIC_API_KEY" in proc.stderr and "401" in proc.stderr
    assert KEY not in proc.stderr
    assert len(srv.requests) == 1  # an auth error is not retried
    d = only_run(tmp_path / "runs")
    m = manifest(d)
    assert m["status"] == "failed" and "401" in m["error"]
    lead = events(d, "lead")
    assert [e["kind"] for e in lead][:3] == ["agent_start", "message", "model_request"]
    assert not (d / "report.md").exists()
    assert_no_secret(d)


@pytest.mark.parametrize("args, env, needle", [
    (["--provider", "anthropic"], {}, "ANTHROPIC_API_KEY"),
    (["--lead-model", LEAD], {}, None),  # a Claude name without a key: same one-line error
    (["--provider", "gemini"], {"ANTHROPIC_API_KEY": KEY}, "unknown provider"),
    (["--provider", "anthropic", "--base-url", "localhost:9999"], {"ANTHROPIC_API_KEY": KEY}, "malformed base URL"),
    (["--provider", "anthropic", "--base-url", "http://"], {"ANTHROPIC_API_KEY": KEY}, "malformed base URL"),
    (["--provider", "anthropic"], {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "ftp://x"}, "malformed base URL"),
])
def test_cli_configuration_errors_exit_2_in_one_line(tmp_path: Path, corpus: Path, args: list[str],
                                                     env: dict[str, str], needle: str | None) -> None:
    proc = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", "runs", *args, cwd=tmp_path, env=env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("research: error:"), proc.stderr
    assert (needle or "ANTHROPIC_API_KEY") in lines[0]
    assert KEY not in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_cli_estimate_plans_without_running_subagents(tmp_path: Path, corpus: Path) -> None:
    with FakeAnthropicServer(handler=Scenario()) as srv:
        proc = cli("run", QUESTION, "--corpus", str(corpus), "--runs-dir", "runs", "--estimate",
                   "--lead-model", LEAD, "--subagent-model", SUB, cwd=tmp_path,
                   env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": srv.base_url})
    assert proc.returncode == 0, proc.stderr
    assert not any(is_sub(r.body) for r in srv.requests)
    assert len(srv.requests) == 1 and is_lead(srv.requests[0].body)
    d = only_run(tmp_path / "runs")
    m = manifest(d)
    assert m["status"] == "estimated"
    plan = json.loads((d / "plan.v1.json").read_text())
    assert [t["objective"] for t in plan["tasks"]] == [t["objective"] for t in TASKS]
    est = m["estimate"]
    assert [t["agent_id"] for t in est["tasks"]] == ["r1-sub1", "r1-sub2", "r1-sub3"]
    assert all(isinstance(t["expected_cost_usd"], float) and t["expected_cost_usd"] > 0 for t in est["tasks"])
    assert 0 < est["expected_cost_usd"] <= est["max_cost_usd"]
    assert m["cost_usd"] == pytest.approx(expected_cost(USAGE, LEAD, 1))  # the planning call itself
    assert "total: $" in proc.stdout and "no subagents were run" in proc.stdout
    assert [a["agent_id"] for a in m["agents"]] == ["lead"]
    assert not (d / "report.md").exists()
    assert_no_secret(d)
