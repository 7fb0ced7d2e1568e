"""A resumed run judges its reused subagents as the live run judged them: a finished subagent's tool
failures are rebuilt from its events counting only calls its tools ran — a call refused by the
allow-list, given invalid input or refused over budget is not a tool failure, live or resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from lead_agent import api
from lead_agent.checkpoint import resume
from subagents.events import EventRecord, RunStarted
from subagents.models.scripted import ScriptedModel, Step, text, tool_call
from subagents.runs import read_run

from .conftest import note_tools

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled."}
QUESTION = "What does a TaskGroup do when a task fails?"
PLAN = {"query_type": "straightforward", "rationale": "one fact",
        "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"],
                   "budget": {"max_tool_calls": 2, "max_tokens": 60000, "max_seconds": 60}}]}
REPORT = "# Report\n\nThe notes say nothing about it."


def refused_then_submitted() -> list[Any]:
    """One turn of three calls, none of which runs: a tool outside its allow-list, invalid input, and one
    past its budget of 2; then (budget spent) its one successful call, submitting that it found nothing."""
    return [tool_call("web_search", {"query": "TaskGroup"}, ("search_notes", {}),
                      ("search_notes", {"query": "TaskGroup"})),
            tool_call("submit_findings", {"status": "failed", "summary": "nothing found", "claims": []})]


async def research(tmp_path: Path, lead: ScriptedModel, sub: ScriptedModel, **kw: Any) -> api.ResearchResult:
    return await api.research(QUESTION, runs_dir=tmp_path / "runs", lead_model=lead, subagent_model=sub,
                              extra_tools=note_tools(DOCS), max_rounds=1, max_replans=0, **kw)


async def outcome(call: Any) -> tuple[str, str | None]:
    """(status, error) of a run, a failed one included (it raises RunFailed)."""
    try:
        result = await call
    except api.RunFailed as e:
        return "failed", str(e)
    return result.status, result.manifest.get("error")


class Seen:
    def __init__(self) -> None:
        self.run_dir: Path | None = None

    def on_event(self, record: EventRecord) -> None:
        if isinstance(record.event, RunStarted):
            self.run_dir = Path(record.event.run_dir)


async def test_a_reused_subagent_s_refused_calls_are_not_tool_failures_after_resume(tmp_path: Path) -> None:
    # uninterrupted: nothing found, no tool failed — the run completes empty
    whole = await outcome(research(tmp_path / "whole", ScriptedModel([tool_call("delegate", PLAN), text(REPORT)]),
                                   ScriptedModel(per_agent={"r1-sub1": refused_then_submitted()})))
    assert whole == ("completed_empty", None)

    # the same run, interrupted after the subagent finished, while the lead writes its report
    lead = ScriptedModel([tool_call("delegate", PLAN), Step(text(REPORT), delay=3600)])
    seen = Seen()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(outcome, research(tmp_path / "cut", lead, ScriptedModel(
            per_agent={"r1-sub1": refused_then_submitted()}), observers=[seen]))
        while len(lead.calls) < 2:
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert seen.run_dir is not None and read_run(seen.run_dir).status == "interrupted"
    sub = read_run(seen.run_dir).trace.agents["r1-sub1"]
    assert sub.finished and sub.tool_errors == {} and sub.tool_successes == {"submit_findings": 1}

    # resumed: the subagent is reused (nothing runs again), and the run ends as the uninterrupted one did
    again = ScriptedModel()  # runs dry if anything asks it
    resumed = await outcome(resume(seen.run_dir, lead_model=ScriptedModel([text(REPORT)]), subagent_model=again,
                                   extra_tools=note_tools(DOCS)))
    assert not again.calls
    assert resumed == whole
