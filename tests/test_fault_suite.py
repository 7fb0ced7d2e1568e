"""The fault suite: 20 whole runs with Claude models against the fake Messages API while it answers
20 % of requests with 429 / 529 / 500, stalls 10 % of streams and cuts 5 % of streams mid-body.

Every run must complete; every fault must show up as a `model_retry` in the transcript of the agent
that met it; no partial reply may ever be executed (every response in a transcript is a reply the
fake sent whole, and every plan the lead ran is the plan it meant).

The fake plays the agents as in tests/test_claude_run.py (`Scenario`); `Faults` wraps it. Which
request gets which fault is decided by arrival order over a fixed cycle (so the shares are exact
and every kind occurs), capped per logical call (a request body seen 3 times gets no more faults)
so that every call can succeed within the adapters' retries.

A stall delays a reply but does not damage it: the fake sends the rest after the silence. A client
whose own event loop was held up past the silence (a loaded 2-core machine) reads it whole and
rightly keeps it, so a stalled reply counts as whole, and such a stall owes no timeout retry.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trio

from lead_agent import api
from subagents.transcript import read_events
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, cut, error, stall, tool_use
from tests.test_claude_run import (DOCS, KEY, LEAD, SUB, TASKS, Scenario, block_text, blocks, is_lead,
                                   last_tool_results, make_plan)

RUNS = 20
AT_ONCE = 20
# one cycle of 20 arrivals: 4 status errors (20 %), 2 stalls (10 %), 1 cut (5 %); stalls and cuts
# apply to streamed requests (the lead's), status errors to every request
CYCLE = ["ok", "429", "ok", "stall", "ok", "529", "ok", "ok", "500", "cut",
         "ok", "ok", "429", "ok", "stall", "ok", "ok", "ok", "ok", "ok"]
STATUS = ("429", "529", "500")
MAX_FAULTS_PER_CALL = 3
CLIENT = {"max_retries": MAX_FAULTS_PER_CALL + 3, "backoff_base": 0.01, "max_backoff": 0.05, "timeout": 1.5}
STALL_SECONDS = 4.0  # longer than the client's idle timeout


def _key(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _content(content: list[dict[str, Any]]) -> str:
    """A reply's content without the ids the fake fills in."""
    keep = [{k: v for k, v in b.items() if k not in ("id", "cache_control")} for b in content]
    return json.dumps(keep, sort_keys=True)


def plan_for(run: int) -> dict[str, Any]:
    """Each run's own plan, so no two runs send the same request (faults are capped per request)."""
    return make_plan(tasks=[{**t, "objective": f"{t['objective']} (run {run})"} for t in TASKS[:2]])


class PerRunScenario(Scenario):
    def lead(self, body: dict[str, Any]) -> Reply:
        if last_tool_results(body):
            return super().lead(body)  # the report, from the findings
        first = "".join(block_text(b) for b in blocks(body["messages"][0]))
        run = int(re.search(r"\(run (\d+)\)", first).group(1))
        return tool_use(("delegate", plan_for(run)), text="I will split the question by API.")


class Faults:
    """The fake's handler: the scenario's answer, with the fault the arrival cycle assigns."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.injected: Counter[str] = Counter()
        self.whole: set[str] = set()  # content of every reply sent in full (stalled ones included)
        self.stalled: list[tuple[str, int]] = []  # (request key, its arrival count) of every stall
        self._arrivals: dict[bool, int] = {True: 0, False: 0}
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        streamed = bool(body.get("stream"))
        with self._lock:
            key = _key(body)
            self._seen[key] += 1
            slot = CYCLE[self._arrivals[streamed] % len(CYCLE)]
            self._arrivals[streamed] += 1
            if self._seen[key] > MAX_FAULTS_PER_CALL or (slot in ("stall", "cut") and not streamed):
                slot = "ok"
            self.injected[slot] += 1
            if slot == "stall":
                self.stalled.append((key, self._seen[key]))
        if slot in STATUS:
            return error(int(slot), retry_after=0 if slot == "429" else None)
        reply = self.scenario(body)
        if slot == "cut":  # mid-body: inside the tool input's JSON (the plan), or inside the report's text
            mid = 9 if any(b["type"] == "tool_use" for b in reply.content) else 4
            return cut(reply, after=mid, clean=self.injected["cut"] % 2 == 0)
        with self._lock:
            self.whole.add(_content(reply.content))
        return stall(reply, STALL_SECONDS, after=3) if slot == "stall" else reply

    def stalls_kept(self) -> int:
        """Stalls the client sat out and kept: their request was never sent again."""
        return sum(1 for key, nth in self.stalled if self._seen[key] == nth)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, body in DOCS.items():
        (root / name).write_text(body)
    return root


async def _one(i: int, tmp_path: Path, corpus: Path, srv: FakeAnthropicServer,
               results: dict[int, api.ResearchResult | BaseException]) -> None:
    try:
        results[i] = await api.research(
            f"How do TaskGroup, gather and timeout behave? (run {i})", corpus=[corpus], runs_dir=tmp_path / "runs",
            cache_dir=tmp_path / "cache", lead_model=LEAD, subagent_model=SUB, base_url=srv.base_url, api_key=KEY,
            max_rounds=1, use_config_file=False, environ={}, **CLIENT)
    except Exception as e:  # noqa: BLE001  (reported by the test)
        results[i] = e


async def _all_runs(tmp_path: Path, corpus: Path, srv: FakeAnthropicServer) -> dict[int, Any]:
    results: dict[int, Any] = {}
    limiter = trio.CapacityLimiter(AT_ONCE)

    async def limited(i: int) -> None:
        async with limiter:
            await _one(i, tmp_path, corpus, srv, results)

    async with trio.open_nursery() as nursery:
        for i in range(RUNS):
            nursery.start_soon(limited, i)
    return results


def _transcripts(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return {f.stem: list(read_events(f)) for f in sorted((run_dir / "agents").glob("*.jsonl"))}


async def test_twenty_runs_complete_through_errors_stalls_and_cuts(tmp_path: Path, corpus: Path) -> None:
    faults = Faults(PerRunScenario())
    with FakeAnthropicServer(handler=faults) as srv:
        results = await _all_runs(tmp_path, corpus, srv)
    failed = {i: r for i, r in results.items() if isinstance(r, BaseException)}
    assert not failed, failed
    assert srv.dry == 0 and not srv.handler_errors
    # a refusal can only be a request the client abandoned while sending it (a spurious timeout on a
    # loaded machine): its body arrived short; the client retried it
    assert all(len(r.raw) < int(r.headers.get("content-length") or 0) for r in srv.requests if r.refused)
    # the faults really happened, in the shares asked for
    assert faults.injected["stall"] >= 3 and faults.injected["cut"] >= 2
    assert sum(faults.injected[s] for s in STATUS) >= 0.15 * sum(faults.injected.values())
    assert sum(r.stalled for r in srv.requests) == faults.injected["stall"]
    assert sum(r.cut for r in srv.requests) == faults.injected["cut"]

    retries: Counter[str] = Counter()
    for run, result in results.items():
        assert result.status == "completed", result.manifest.get("error")
        assert "remaining tasks in the group are cancelled" in result.report
        for agent, evs in _transcripts(result.run_dir).items():
            retries.update(str(e["data"]["status"]) for e in evs if e["kind"] == "model_retry")
            for e in evs:
                if e["kind"] == "model_response":  # only replies the fake sent whole
                    assert _content(e["data"]["content"]) in faults.whole, (agent, e["data"])
                    assert e["data"]["stop_reason"] in ("tool_use", "end_turn")
                if e["kind"] == "tool_call" and e["data"]["name"] == "delegate":
                    assert e["data"]["input"] == plan_for(run)  # never a plan cut off mid-JSON
    # every fault is a retry in the transcript of the agent that met it. A client that gave up on a
    # slow answer before its error status arrived (a loaded machine) retried it as a timeout instead.
    assert set(retries) <= {*STATUS, "timeout", "connection_error", "incomplete_stream"}, retries
    assert all(retries[s] <= faults.injected[s] for s in STATUS), (retries, faults.injected)
    unseen = sum(faults.injected[s] - retries[s] for s in STATUS)
    assert retries["timeout"] >= faults.injected["stall"] - faults.stalls_kept() + unseen, (retries, faults.injected)
    assert retries["connection_error"] + retries["incomplete_stream"] >= faults.injected["cut"]
    lead_requests = [r for r in srv.requests if isinstance(r.body, dict) and is_lead(r.body)]
    assert all(r.streamed or r.status != 200 for r in lead_requests)


# ---------------------------------------------------------------- the OpenAI-compatible adapter streams too


async def test_openai_compatible_run_through_cut_and_stalled_lead_streams(tmp_path: Path) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.test_openai_run import DOCS as OPENAI_DOCS
    from tests.test_openai_run import PLAN, MODEL
    from tests.test_openai_run import Scenario as ChatScenario

    root = tmp_path / "docs"
    root.mkdir()
    for name, body in OPENAI_DOCS.items():
        (root / name).write_text(body)
    scenario, streamed = ChatScenario(), Counter[int]()

    def handler(body: dict[str, Any]):  # noqa: ANN202
        reply = scenario(body)
        if not body.get("stream"):
            return reply
        streamed[0] += 1
        if streamed[0] == 1:  # the plan, cut inside its arguments (role, content x3, call header, 1 fragment)
            return cut(reply, after=6)
        if streamed[0] == 3:  # the report, stalled
            return stall(reply, STALL_SECONDS, after=2)
        if streamed[0] == 4:  # the report again, ended cleanly before [DONE]
            return cut(reply, after=3, clean=True)
        return reply

    with FakeOpenAIServer(handler=handler) as srv:
        result = await api.research("How do TaskGroup and gather behave?", corpus=[root], runs_dir=tmp_path / "runs",
                                    cache_dir=tmp_path / "cache", provider="openai", base_url=srv.base_url,
                                    lead_model=MODEL, max_rounds=1, use_config_file=False, environ={}, **CLIENT)
    assert result.status == "completed" and "the remaining tasks in the group are cancelled" in result.report
    lead = _transcripts(result.run_dir)["lead"]
    assert [e["data"]["status"] for e in lead if e["kind"] == "model_retry"] == \
        ["connection_error", "timeout", "incomplete_stream"]
    assert [e["data"]["input"] for e in lead if e["kind"] == "tool_call"] == [PLAN]
    assert sum(r.cut for r in srv.requests) == 2 and sum(r.stalled for r in srv.requests) == 1
