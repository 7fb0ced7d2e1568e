"""Replanning: a task that fails or misses its success criteria gets one strategy, recorded with its
reason — retry (transient causes, in code), alternative tool, skip (not critical), replan (the lead
writes a new plan version, capped by --max-replans) — and past the cap the lead writes the report, or,
with an approver, a person decides. A subagent that cannot do its task says so, with a suggestion the
lead sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lead_agent import api
from lead_agent.approval import PlanReview, ReviewReason
from lead_agent.replan import Failure, decide
from subagents.context import FailureCause, Strategy
from subagents.delegation import Delegation
from subagents.model import ModelError, ModelRequest, ModelResponse, ToolResultBlock
from subagents.models.scripted import ScriptedModel, text, tool_call
from subagents.tools import Tool, ToolContext, ToolError
from subagents.transcript import read_events

from lead_agent.live import render
from lead_agent.progress import PlainProgress
from lead_agent.progress_tree import ProgressTree

from .conftest import lead_report_from_findings, note_tools, run_cli, submit_first_hit

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
        "gather": "asyncio.gather returns results in the order of the awaitables passed to it."}


def task(objective: str, tools: list[str] | None = None, **extra: Any) -> dict:
    return {"objective": objective, "tools": tools or ["search_notes"], **extra}


def plan(*tasks: dict, rationale: str = "split") -> dict:
    return {"query_type": "breadth_first", "rationale": rationale, "tasks": list(tasks)}


def failed(**extra: Any) -> ModelResponse:
    return tool_call("submit_findings", {"status": "failed", "claims": [], **extra})


def decisions(result: api.ResearchResult) -> list[tuple[str, str, str]]:
    return [(d["agent_id"], d["strategy"], d["cause"]) for d in result.manifest["replans"]]


async def research(tmp_path: Path, lead: ScriptedModel, sub: ScriptedModel, tools: list[Tool] | None = None,
                   **kw: Any) -> api.ResearchResult:
    return await api.research("How do TaskGroup and gather differ?", runs_dir=tmp_path / "runs", lead_model=lead,
                              subagent_model=sub, extra_tools=tools or note_tools(DOCS), **kw)


def test_decisions_follow_the_cause() -> None:
    d = Delegation(objective="find it", tools=["web_search", "fetch_page"])
    run_tools = ["search_corpus", "read_passage", "web_search", "fetch_page"]
    kw: dict[str, Any] = dict(run_tools=run_tools, replans_left=1, budget_reached=None)
    assert decide(Failure(FailureCause.TIMEOUT, "slow"), d, attempt=1, **kw).strategy is Strategy.RETRY
    assert decide(Failure(FailureCause.TIMEOUT, "slow"), d, attempt=2, **kw).strategy is Strategy.REPLAN
    alt = decide(Failure(FailureCause.TOOL_FAILED, "down", "web_search"), d, attempt=1, **kw)
    assert alt.strategy is Strategy.ALTERNATIVE_TOOL and alt.tools == ("search_corpus", "read_passage")
    lone = decide(Failure(FailureCause.TOOL_FAILED, "down", "web_search"), d, attempt=1,
                  run_tools=["web_search", "fetch_page"], replans_left=0, budget_reached=None)
    assert lone.strategy is Strategy.STOP  # no other tool family in the run, no replan left
    optional = d.model_copy(update={"critical": False})
    assert decide(Failure(FailureCause.NOTHING_FOUND, "none"), optional, attempt=1, **kw).strategy is Strategy.SKIP
    spent = decide(Failure(FailureCause.MODEL_ERROR, "x"), d, attempt=1, run_tools=run_tools, replans_left=1,
                   budget_reached="max_cost")
    assert spent.strategy is Strategy.SKIP and "max_cost" in spent.reason


async def test_a_transient_failure_is_retried_in_code_without_the_lead(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup failures"))), lead_report_from_findings])
    sub = ScriptedModel(per_agent={"r1-sub1": [ModelError("overloaded after retries")],
                                   "r1-sub1-a2": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit]})
    result = await research(tmp_path, lead, sub)
    assert decisions(result) == [("r1-sub1", "retry", "model_error")]
    assert result.manifest["replans"][0]["next_agent_id"] == "r1-sub1-a2"
    assert len(lead.calls) == 2  # the lead was not asked
    assert "remaining tasks in the group are cancelled" in result.report and "What is missing" not in result.report
    assert [s.agent_id for s in lead.calls[1].context.rounds[0].subagents] == ["r1-sub1-a2"]


async def test_a_failing_tool_is_replaced_by_another_tool_of_the_run(tmp_path: Path) -> None:
    class Query(BaseModel):
        query: str

    async def down(args: Query, ctx: ToolContext) -> str:
        raise ToolError("search service unavailable")

    corpus_search = note_tools(DOCS)[0]
    tools = [Tool("web_search", "Search the web.", Query, down),
             Tool("search_corpus", "Search the notes.", corpus_search.args, corpus_search.run)]
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup failures", ["web_search"]))),
                          lead_report_from_findings])

    def uses_the_other_tool(req: ModelRequest) -> ModelResponse:
        assert req.context is not None and req.context.delegation is not None
        assert req.context.delegation.tools == ["search_corpus"]
        return tool_call("search_corpus", {"query": "TaskGroup"})

    sub = ScriptedModel(per_agent={"r1-sub1": [tool_call("web_search", {"query": "TaskGroup"}), failed()],
                                   "r1-sub1-a2": [uses_the_other_tool, submit_first_hit]})
    result = await research(tmp_path, lead, sub, tools=tools)
    assert decisions(result) == [("r1-sub1", "alternative_tool", "tool_failed")]
    d = result.manifest["replans"][0]
    assert d["tools"] == ["search_corpus"] and "every call of web_search failed" in d["reason"]
    assert result.manifest["citation_check"]["supported"] >= 1


async def test_a_task_that_is_not_critical_is_skipped_and_the_report_says_so(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup failures"), task("history trivia", critical=False))),
                          lead_report_from_findings])
    sub = ScriptedModel(per_agent={"r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit],
                                   "r1-sub2": [failed()]})
    result = await research(tmp_path, lead, sub)
    assert decisions(result) == [("r1-sub2", "skip", "nothing_found")]
    assert lead.calls[1].context.limits.replan_for == ()
    missing = result.report.split("## What is missing", 1)[1]
    assert "r1-sub2" in missing and "[skip:" in missing and "not critical" in missing


async def test_could_not_accomplish_goes_to_the_lead_which_replans(tmp_path: Path) -> None:
    suggestion = "search for asyncio.gather instead: the notes have nothing on trio"
    lead = ScriptedModel([tool_call("delegate", plan(task("trio nurseries"))),
                          tool_call("delegate", plan(task("asyncio.gather ordering"), rationale="the suggestion")),
                          lead_report_from_findings])
    sub = ScriptedModel(per_agent={
        "r1-sub1": [failed(could_not_accomplish={"reason": "no source covers trio", "suggestion": suggestion})],
        "r2-sub1": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    result = await research(tmp_path, lead, sub)
    assert decisions(result) == [("r1-sub1", "replan", "could_not_accomplish")]
    second = lead.calls[1]
    assert second.context.limits.replan_for == ("r1-sub1",) and second.context.limits.replans_left == 2
    seen = second.context.rounds[0].subagents[0]
    assert seen.findings.could_not_accomplish.suggestion == suggestion and seen.decision is Strategy.REPLAN
    message = second.messages[-1].content[0]
    assert isinstance(message, ToolResultBlock) and suggestion in message.content and "need a new plan" in message.content
    authors = [(p["version"], p["round"], p["author"]) for p in result.manifest["plan_versions"]]
    assert authors == [(1, 1, "lead"), (2, 2, "replan")]
    assert "asyncio.gather returns results" in result.report


async def test_missed_success_criteria_count_as_a_failure(tmp_path: Path) -> None:
    criteria = {"description": "two claims, naming cancellation", "min_claims": 2, "must_mention": ["cancelled"]}
    lead = ScriptedModel([tool_call("delegate", plan(task("gather ordering", success_criteria=criteria))),
                          text("# Report\n\nPartial.")])
    sub = ScriptedModel(per_agent={"r1-sub1": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    result = await research(tmp_path, lead, sub, max_replans=0)
    assert decisions(result) == [("r1-sub1", "stop", "criteria_missed")]  # --max-replans 0: no replan left
    reason = result.manifest["replans"][0]["reason"]
    assert "1 claim(s), at least 2 wanted" in reason and "do not mention 'cancelled'" in reason


async def test_past_the_replan_cap_the_lead_writes_the_report(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("trio nurseries"))),
                          tool_call("delegate", plan(task("trio nurseries, again"))),
                          tool_call("delegate", plan(task("trio nurseries, a third time"))),
                          text("# Report\n\nNothing on trio.")])
    sub = ScriptedModel(per_agent={"r1-sub1": [failed()], "r2-sub1": [failed()], "r3-sub1": [failed()]})
    result = await research(tmp_path, lead, sub, max_rounds=5, max_replans=1)
    assert decisions(result) == [("r1-sub1", "replan", "nothing_found"), ("r2-sub1", "stop", "nothing_found")]
    refused = lead.calls[3].messages[-1].content[0]
    assert refused.is_error and "no replan is left (--max-replans 1" in refused.content
    assert not (result.run_dir / "agents" / "r3-sub1.jsonl").exists()
    assert "Write the final report now from the findings you have" in lead.calls[2].messages[-1].content[0].content
    # every attempt found nothing: the report is written, the run is completed_empty
    assert result.status == "completed_empty" and result.manifest["plans"] == ["plan.v1.json", "plan.v2.json"]


async def test_with_an_approver_a_person_decides_past_the_cap(tmp_path: Path) -> None:
    asked: list[PlanReview] = []

    def approver(review: PlanReview) -> Any:
        asked.append(review)
        return review.plan

    lead = ScriptedModel([tool_call("delegate", plan(task("trio nurseries"))),
                          tool_call("delegate", plan(task("asyncio.gather ordering"))), lead_report_from_findings])
    sub = ScriptedModel(per_agent={"r1-sub1": [failed()],
                                   "r2-sub1": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    result = await research(tmp_path, lead, sub, max_rounds=3, max_replans=0, approve=approver)
    assert [r.reason for r in asked] == [ReviewReason.FIRST, ReviewReason.REPLAN_CAP]
    assert "r1-sub1" in asked[1].note
    assert decisions(result) == [("r1-sub1", "stop", "nothing_found")]
    assert (result.run_dir / "agents" / "r2-sub1.jsonl").is_file() and "asyncio.gather returns" in result.report
    assert [r["decision"] for r in result.manifest["reviews"]] == ["approved", "approved"]
    events = [e["kind"] for e in read_events(result.run_dir / "agents" / "lead.jsonl")]
    assert "plan_rejected" not in events


def drawn(tree: ProgressTree) -> str:
    """The live tree as the terminal shows it (plain text)."""
    import os

    from rich.console import Console

    console = Console(record=True, width=120, file=open(os.devnull, "w"))
    console.print(render(tree, tree.last_t, width=120))
    return console.export_text()


async def test_a_replan_does_not_use_up_a_research_round(tmp_path: Path) -> None:
    """--max-rounds caps research rounds, --max-replans caps replans: with one research round, a failed
    task is still replanned, and the replan round is labelled as one everywhere."""
    lead = ScriptedModel([tool_call("delegate", plan(task("trio nurseries"))),
                          tool_call("delegate", plan(task("asyncio.gather ordering"), rationale="replan")),
                          lead_report_from_findings])
    sub = ScriptedModel(per_agent={"r1-sub1": [failed()],
                                   "r2-sub1": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    lines: list[str] = []
    progress = PlainProgress(lines.append, timestamps=False)  # its fold is the live tree's
    result = await research(tmp_path, lead, sub, max_rounds=1, observers=[progress])
    assert decisions(result) == [("r1-sub1", "replan", "nothing_found")]
    asked = lead.calls[1].context.limits
    assert asked.replan_for == ("r1-sub1",) and asked.replans_left == 2 and asked.rounds_left == 2
    after = lead.calls[2].context.limits  # the research round is used; one replan is left, none asked for
    assert after.rounds_left == 0 and after.replans_left == 1
    assert (result.run_dir / "agents" / "r2-sub1.jsonl").is_file() and "asyncio.gather returns" in result.report
    assert result.status == "completed"
    assert [(p["round"], p["author"]) for p in result.manifest["plan_versions"]] == [(1, "lead"), (2, "replan")]
    assert [(r["round"], r["purpose"]) for r in result.manifest["timings"]["rounds"]] == [(1, "research"),
                                                                                          (2, "replan")]
    assert "round 2 (replan) done: r2-sub1 ok" in lines and "round 1 done: r1-sub1 failed" in lines
    live = drawn(progress.tree)
    assert "round 2 (replan)" in live and "round 1 (replan)" not in live
    shown = run_cli("show", str(result.run_dir), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Plan v2 (round 2 (replan), " in shown.stdout and "Plan v1 (round 1, " in shown.stdout
    from lead_agent.viewer.data import viewer_data
    from subagents.runs import read_run

    viewed = viewer_data(read_run(result.run_dir))  # what the trace viewer draws its plan headings from
    assert [(p["round"], p["purpose"]) for p in viewed["plans"]] == [(1, "research"), (2, "replan")]


async def test_with_no_replans_a_failed_task_is_not_replanned_whatever_the_rounds(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("trio nurseries"))),
                          tool_call("delegate", plan(task("trio nurseries, again"))),
                          text("# Report\n\nNothing on trio.")])
    sub = ScriptedModel(per_agent={"r1-sub1": [failed()]})
    result = await research(tmp_path, lead, sub, max_rounds=1, max_replans=0)
    assert decisions(result) == [("r1-sub1", "stop", "nothing_found")]
    assert lead.calls[1].context.limits.rounds_left == 0 and lead.calls[1].context.limits.replans_left == 0
    refused = lead.calls[2].messages[-1].content[0]
    assert refused.is_error and "no replan is left (--max-replans 0)" in refused.content
    assert not (result.run_dir / "agents" / "r2-sub1.jsonl").exists()
    assert [r["purpose"] for r in result.manifest["timings"]["rounds"]] == ["research"]
