"""Budgets: every token kind counts (per subagent and per run); --max-tokens, --max-cost and --deadline
stop a run that would otherwise go on, through one run-wide ledger; past the line only one wrap-up call
per agent in flight; the report is still written and says which budget stopped the run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lead_agent import api
from subagents.model import ModelRequest, ModelResponse, Usage
from subagents.models.pricing import cost
from subagents.models.scripted import ScriptedModel, Step, text, tool_call
from subagents.runs import read_run
from subagents.transcript import read_events

from .conftest import ROOT, lead_report_from_findings, note_tools, submit_first_hit
from .fakes.anthropic_server import FakeAnthropicServer, Reply, tool_use
from .fakes.anthropic_server import text as api_text

DOCS = {f"note{i}": f"Fact number {i} about the harbour lighthouse and its keepers." for i in range(12)}
SUB_MODEL, LEAD_MODEL = "claude-haiku-4-5", "claude-opus-4-6"
HEAVY = Usage(2_000, 200, 1_000, 8_000)  # one subagent call: every kind of token, 11,200 in all


def plan(n: int, **budget: Any) -> dict:
    task = {"tools": ["search_notes"], **({"budget": budget} if budget else {})}
    return {"query_type": "breadth_first", "rationale": "one per part",
            "tasks": [{"objective": f"part {i} of the lighthouse question", **task} for i in range(1, n + 1)]}


def searcher(delay: float, usage: Usage = HEAVY) -> Any:
    """A subagent step that keeps searching, and submits what it has when asked to wrap up."""
    def step(req: ModelRequest) -> ModelResponse:
        if req.context is not None and req.context.wrap_up:
            return submit_first_hit(req)
        return tool_call("search_notes", {"query": "lighthouse"}, usage=usage)
    return Step(step, delay=delay)


class Searchers:
    """Subagents that search (each call takes `delay` seconds and costs `usage`) until asked to wrap
    up, then submit at once. Records every request."""

    is_language_model = True

    def __init__(self, delay: float, usage: Usage = HEAVY, name: str = SUB_MODEL) -> None:
        self.delay, self.usage, self.name = delay, usage, name
        self.calls: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        import trio

        self.calls.append(request)
        if request.context is not None and request.context.wrap_up:
            return submit_first_hit(request)
        await trio.sleep(self.delay)
        return tool_call("search_notes", {"query": "lighthouse"}, usage=self.usage)


def subagents(n: int, delay: float, calls: int = 30) -> Searchers:
    return Searchers(delay)


def lead(n: int, **budget: Any) -> ScriptedModel:
    return ScriptedModel([tool_call("delegate", plan(n, **budget), usage=Usage(500, 100)), lead_report_from_findings],
                         name=LEAD_MODEL)


async def research(tmp_path: Path, lead_model: ScriptedModel, sub_model: ScriptedModel, **kw: Any) -> api.ResearchResult:
    return await api.research("What about the harbour lighthouse?", runs_dir=tmp_path / "runs", lead_model=lead_model,
                              subagent_model=sub_model, extra_tools=note_tools(DOCS), max_rounds=1, **kw)


def records(run_dir: Path) -> list[dict]:
    out = list(read_events(run_dir / "run.jsonl"))
    for f in sorted((run_dir / "agents").glob("*.jsonl")):
        out += list(read_events(f))
    return sorted(out, key=lambda e: e["t"])


def past_the_line(run_dir: Path) -> tuple[dict[str, int], set[str], dict]:
    """Model calls each agent started after the budget line, the agents in flight at the line, the line."""
    evs = records(run_dir)
    line = next(e for e in evs if e["kind"] == "run_budget")
    started = {e["agent_id"] for e in evs if e["kind"] == "agent_start" and e["t"] <= line["t"]}
    ended = {e["agent_id"] for e in evs if e["kind"] == "agent_end" and e["t"] <= line["t"]}
    after: dict[str, int] = {}
    for e in evs:
        if e["kind"] == "model_request" and e["t"] > line["t"]:
            after[e["agent_id"]] = after.get(e["agent_id"], 0) + 1
    return after, started - ended, line


def assert_report_says(result: api.ResearchResult, budget: str) -> None:
    assert result.status == "completed"
    assert result.manifest["budget"]["stopped_by"] == budget
    assert f"the run's {budget} budget was reached" in result.report  # the report says which budget stopped it
    assert (result.run_dir / "report.md").read_text() == result.report


def cli(*args: str, cwd: Path, env: dict[str, str]) -> Any:
    import os
    import subprocess

    full = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"} | {"PYTHONPATH": str(ROOT)} | env
    return subprocess.run([sys.executable, "-m", "lead_agent.cli", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


# ---------------------------------------------------------------- per subagent


async def test_a_subagent_token_budget_counts_cache_reads_and_writes(tmp_path: Path) -> None:
    cached = Usage(100, 50, 3_000, 4_000)  # 150 input+output, 7,150 in all
    sub = ScriptedModel(name=SUB_MODEL, per_agent={"r1-sub1": [searcher(0, cached) for _ in range(6)]})
    result = await research(tmp_path, lead(1, max_tokens=5_000), sub)
    evs = list(read_events(result.run_dir / "agents" / "r1-sub1.jsonl"))
    budget = [e["data"] for e in evs if e["kind"] == "budget"]
    assert budget == [{"budget": "token_budget", "used": 7_150, "limit": 5_000}]
    calls = [e for e in evs if e["kind"] == "model_request"]
    assert len(calls) == 2 and calls[-1]["data"]["tool_choice"] == "submit_findings"  # one search, then wrap-up
    agent = next(a for a in result.manifest["agents"] if a["agent_id"] == "r1-sub1")
    assert agent["status"] == "partial"


# ---------------------------------------------------------------- the run


async def test_max_tokens_stops_the_run_with_one_wrap_up_call_per_agent_in_flight(tmp_path: Path) -> None:
    free = await research(tmp_path / "free", lead(3), subagents(3, 0.02))
    assert free.manifest["budget"]["stopped_by"] is None
    free_tokens = free.manifest["usage"]

    result = await research(tmp_path, lead(3), subagents(3, 0.02), max_tokens=40_000)
    assert_report_says(result, "max_tokens")
    used = sum(result.manifest["usage"].values())
    assert used < sum(free_tokens.values())  # it would otherwise have gone on
    after, in_flight, line = past_the_line(result.run_dir)
    assert line["data"]["limit"] == 40_000 and line["data"]["used"] >= 40_000
    assert in_flight >= {"r1-sub1", "r1-sub2", "r1-sub3", "lead"} - {a for a in in_flight if a not in after}
    assert all(n == 1 for n in after.values()), after  # one call each past the line: the wrap-ups
    assert set(after) <= in_flight
    # the overshoot: calls answered after the line are those in flight at it, plus the wrap-ups
    responses_after = sum(1 for e in records(result.run_dir) if e["kind"] == "model_response" and e["t"] > line["t"])
    assert responses_after <= 2 * len(in_flight)
    assert used - 40_000 <= responses_after * HEAVY.total()
    # wrap-ups: subagents were asked for findings, the lead for its report without tools
    for agent, n in after.items():
        last = [e for e in read_events(result.run_dir / "agents" / f"{agent}.jsonl") if e["kind"] == "model_request"][-1]
        assert last["data"]["tool_choice"] == ("none" if agent == "lead" else "submit_findings")
    run = read_run(result.run_dir)
    assert run.trace.budget_reached is not None and run.trace.budget_reached.budget == "max_tokens"


async def test_max_cost_prices_each_token_kind_and_stops_the_run(tmp_path: Path, autojump_clock: Any) -> None:
    per_call = cost(HEAVY, SUB_MODEL)
    assert per_call is not None and per_call > cost(Usage(HEAVY.input_tokens, HEAVY.output_tokens), SUB_MODEL)
    result = await research(tmp_path, lead(3), subagents(3, 0.02), max_cost=0.05)
    assert_report_says(result, "max_cost")
    m = result.manifest
    spent = sum(a["cost_usd"] for a in m["agents"])
    assert spent == pytest.approx(m["cost_usd"]) and spent >= 0.05
    after, in_flight, line = past_the_line(result.run_dir)
    assert all(n == 1 for n in after.values()) and set(after) <= in_flight
    assert spent - 0.05 <= 2 * len(in_flight) * per_call
    assert "$0.0500" in result.report
    # the ledger's spend at the line is every kind of token at its own price, exactly
    before = [e for e in records(result.run_dir) if e["kind"] == "model_response" and e["t"] <= line["t"]]
    priced = sum(cost(Usage(**e["data"]["usage"]), e["data"]["model"]) for e in before)
    assert line["data"]["used"] == pytest.approx(priced, abs=1e-6)


async def test_the_ledger_admits_one_wrap_up_call_per_agent_past_the_line() -> None:
    from subagents.ledger import BudgetKind, Ledger, RunBudget

    reached = []
    ledger = Ledger(RunBudget(max_tokens=1_000), on_reached=reached.append)
    assert ledger.admit("a") and ledger.admit("b")
    ledger.charge(Usage(600, 0, 0, 500), SUB_MODEL)  # 1,100 tokens: the line
    assert [r.budget for r in reached] == [BudgetKind.TOKENS] and reached[0].used == 1_100
    assert not ledger.admit("a")  # no ordinary call past the line
    assert ledger.admit("a", wrap_up=True) and not ledger.admit("a", wrap_up=True)  # one wrap-up, once
    assert ledger.admit("b", wrap_up=True)
    ledger.charge(Usage(10, 10), SUB_MODEL)
    assert len(reached) == 1  # reached once, for good
    assert ledger.remaining_tokens() == 0


async def test_deadline_cuts_calls_in_flight_and_still_writes_the_report(tmp_path: Path, autojump_clock: Any) -> None:
    import trio

    start = trio.current_time()
    result = await research(tmp_path, lead(2, max_seconds=1_000, max_tool_calls=50), subagents(2, delay=30.0),
                            deadline=100)
    took = trio.current_time() - start
    assert_report_says(result, "deadline")
    assert 100 <= took < 100 + 5  # the wrap-ups are immediate here; nothing ran on to the tool budget (8 x 30 s)
    for agent in ("r1-sub1", "r1-sub2"):
        evs = list(read_events(result.run_dir / "agents" / f"{agent}.jsonl"))
        assert [e["data"]["budget"] for e in evs if e["kind"] == "budget"] == ["run_budget:deadline"]
        assert evs[-1]["data"]["status"] == "partial"
    assert "What is missing" not in result.report or "deadline" in result.report


async def test_a_subagent_never_gets_more_budget_than_the_run_has_left(tmp_path: Path) -> None:
    result = await research(tmp_path, lead(1, max_tokens=500_000, max_seconds=3_000),
                            subagents(1, 0.0, calls=3), max_tokens=30_000, deadline=600)
    start = next(e for e in read_events(result.run_dir / "agents" / "r1-sub1.jsonl") if e["kind"] == "agent_start")
    budget = start["data"]["delegation"]["budget"]
    assert budget["max_tokens"] <= 30_000 - 600  # what the lead's planning call left
    assert budget["max_seconds"] <= 600
    plan_file = json.loads((result.run_dir / "plan.v1.json").read_text())
    assert plan_file["tasks"][0]["budget"]["max_tokens"] == 500_000  # the plan keeps what the lead asked


async def test_no_subagent_starts_once_the_budget_is_spent(tmp_path: Path) -> None:
    chained = plan(2)
    chained["tasks"][0]["id"], chained["tasks"][1]["depends_on"] = "first", ["first"]
    lead_model = ScriptedModel([tool_call("delegate", chained), lead_report_from_findings], name=LEAD_MODEL)
    result = await research(tmp_path, lead_model, subagents(2, 0.0), max_tokens=30_000)
    assert result.manifest["budget"]["stopped_by"] == "max_tokens"
    assert not (result.run_dir / "agents" / "r1-sub2.jsonl").exists()  # the dependent never started
    assert [(d["agent_id"], d["strategy"], d["cause"]) for d in result.manifest["replans"]] == \
        [("r1-sub2", "skip", "run_budget")]
    assert "r1-sub2 (round 1, skipped)" in result.report and "budget was reached before it started" in result.report

    # a planning call that spends the whole budget: its plan is refused, nothing runs, the run fails and says why
    spendthrift = ScriptedModel([tool_call("delegate", plan(2), usage=Usage(50_000, 0)), text("# Nothing")],
                                name=LEAD_MODEL)
    sub = subagents(2, 0.0)
    with pytest.raises(api.RunFailed, match="never had a plan accepted") as info:
        await research(tmp_path / "b", spendthrift, sub, max_tokens=10_000)
    assert sub.calls == []
    m = json.loads((info.value.run_dir / "manifest.json").read_text())
    assert m["budget"]["stopped_by"] == "max_tokens" and m["plans_rejected"] == 1
    refused = [e for e in read_events(info.value.run_dir / "agents" / "lead.jsonl") if e["kind"] == "plan_rejected"]
    assert "max_tokens budget is reached" in refused[0]["data"]["problems"][0]


@pytest.mark.parametrize("options, said", [
    ({"max_cost": 0}, "--max-cost must be a positive number"), ({"max_cost": float("nan")}, "--max-cost must be"),
    ({"max_cost": float("inf")}, "--max-cost must be"), ({"deadline": -5}, "--deadline must be a positive number"),
    ({"max_tokens": 0}, "--max-tokens must be a positive number"), ({"max_tokens": 2.5}, "whole number"),
    ({"max_replans": -1}, "--max-replans must be 0 or more"), ({"approve": True, "plan_only": True}, "exclude"),
    ({"plan_only": True, "estimate": True}, "exclude each other")])
def test_governance_options_are_checked_once_at_the_entry_point(tmp_path: Path, options: dict, said: str) -> None:
    from lead_agent.settings import UsageError, resolve_settings

    with pytest.raises(UsageError, match=said):
        resolve_settings({"question": "q", **options}, environ={}, use_config_file=False)


def test_budget_flags_are_checked_at_the_entry_point(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nSome text about lighthouses and harbours.\n")
    for flags, said in ((["--max-cost", "nan"], "--max-cost must be a positive number"),
                        (["--approve", "--plan-only"], "exclude each other"),
                        (["--max-cost", "1", "--lead-model", "claude-unknown-9"], "has none in")):
        proc = cli("run", "q about lighthouses", "--corpus", str(tmp_path / "docs"), "--runs-dir",
                   str(tmp_path / "runs"), *flags, cwd=tmp_path,
                   env={"RESEARCH_CACHE_DIR": str(tmp_path / "c"), "ANTHROPIC_API_KEY": "sk-x"})
        assert proc.returncode == 2, (flags, proc.stderr)
        assert said in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert not (tmp_path / "runs").exists()


# ---------------------------------------------------------------- through the CLI and the real SDK


def test_max_cost_through_the_cli_against_the_messages_api(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Lighthouses\n\nThe harbour lighthouse was built in 1851 by the port authority.\n")
    cache_heavy = {"input_tokens": 3_000, "output_tokens": 300, "cache_creation_input_tokens": 2_000,
                   "cache_read_input_tokens": 20_000}

    def handler(body: dict) -> Reply:
        names = {t["name"] for t in body.get("tools", [])}
        if "delegate" in names:
            if body.get("tool_choice", {}).get("type") == "none" or len(body["messages"]) > 1:
                return api_text("# Lighthouse\n\nWhat the findings say.")
            return tool_use(("delegate", plan(2) | {"tasks": [{"objective": f"part {i}", "tools": ["search_corpus"]}
                                                                for i in (1, 2)]}))
        if body.get("tool_choice", {}).get("name") == "submit_findings":
            claim = {"text": "The harbour lighthouse was built in 1851 by the port authority.", "source_ids": ["S1"]}
            return tool_use(("submit_findings", {"status": "partial", "claims": [claim]}))
        reply = tool_use(("search_corpus", {"query": "lighthouse"}))
        reply.usage = dict(cache_heavy)
        return reply

    with FakeAnthropicServer(handler=handler) as srv:
        proc = cli("run", "When was the harbour lighthouse built?", "--corpus", str(docs), "--runs-dir",
                   str(tmp_path / "runs"), "--lead-model", LEAD_MODEL, "--subagent-model", SUB_MODEL,
                   "--max-rounds", "1", "--max-cost", "0.02", "-q", cwd=tmp_path,
                   env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.base_url,
                        "RESEARCH_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert "max_cost budget was reached" in proc.stderr
    run_dir = next((tmp_path / "runs").iterdir())
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "completed" and m["budget"]["stopped_by"] == "max_cost"
    assert m["budget"]["limits"]["max_cost"] == 0.02
    assert "the run's max_cost budget was reached" in (run_dir / "report.md").read_text()
    subs = [r for r in srv.requests if "submit_findings" in {t["name"] for t in r.body.get("tools", [])}]
    searches = [r for r in subs if r.body.get("tool_choice", {}).get("name") != "submit_findings"]
    assert len(searches) < 2 * 8  # well short of both subagents' tool budgets


async def test_estimate_prices_like_the_ledger_and_compares_with_the_run_budget(tmp_path: Path) -> None:
    result = await research(tmp_path, lead(2), subagents(2, 0.0), estimate=True, max_cost=0.0001, max_tokens=1_000)
    est = result.manifest["estimate"]
    for t in est["tasks"]:  # the same price table and function the ledger charges with
        assert t["expected_cost_usd"] == pytest.approx(cost(Usage(**t["expected_usage"]), SUB_MODEL))
    notes = est["run_budget"]["notes"]
    assert "--max-cost $0.0001 is below the expected" in notes[0] and "stop early" in notes[0]
    assert notes[1].startswith("--max-tokens 1,000: about") and notes[1].endswith("the run would stop early")
    assert "run budget: --max-cost $0.0001" in result.report


async def test_the_single_agent_is_held_to_the_run_budget(tmp_path: Path) -> None:
    from subagents.model import Usage
    from subagents.models.scripted import ScriptedModel, text, tool_call

    from .conftest import note_tools

    docs = {"lighthouse": "The harbour lighthouse was built in 1851 by the port authority."}
    model = ScriptedModel([tool_call("search_notes", {"query": "lighthouse"}, usage=Usage(5_000, 100)),
                           text(f"# L\n\n{docs['lighthouse']} [S1]")])
    result = await api.research("When was the lighthouse built?", runs_dir=tmp_path, lead_model=model, mode="single",
                                extra_tools=note_tools(docs), max_tokens=3_000, use_config_file=False, environ={})
    assert result.manifest["budget"]["stopped_by"] == "max_tokens"
    assert len(model.calls) == 2 and str(model.calls[1].tool_choice) == "none"  # the one wrap-up call
    assert result.status == "completed"
