"""A bug of ours inside the lead's `delegate` tool ends the run `failed` (the error in the lead's
transcript, the run's end and the manifest; RunFailed, exit 1 on the CLI) instead of reaching the lead as
a tool error it could write a report around; a plan the model got wrong stays a tool error it corrects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lead_agent import api, orchestrator
from lead_agent.checkpoint import resume
from subagents.models.scripted import ScriptedModel, tool_call
from subagents.transcript import read_events

from .conftest import lead_report_from_findings, note_tools, submit_first_hit

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled."}
QUESTION = "What does a TaskGroup do when a task raises?"
PLAN = {"query_type": "straightforward", "rationale": "one fact",
        "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]}]}


def subagent() -> ScriptedModel:
    return ScriptedModel(per_agent={"r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit]})


def events(run_dir: Path, agent: str) -> list[dict]:
    return list(read_events(run_dir / "agents" / f"{agent}.jsonl"))


async def test_an_internal_error_inside_delegate_fails_the_run_and_it_resumes(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("injected fault in round_report")

    monkeypatch.setattr(orchestrator, "round_report", broken)  # a function delegate calls after the round
    lead = ScriptedModel([tool_call("delegate", PLAN), lead_report_from_findings])
    with pytest.raises(api.RunFailed) as info:
        await api.research(QUESTION, runs_dir=tmp_path / "runs", lead_model=lead, subagent_model=subagent(),
                           extra_tools=note_tools(DOCS), use_config_file=False, environ={})
    assert len(lead.calls) == 1  # the lead never saw the fault as a tool result to write a report around
    run_dir = info.value.run_dir
    assert "RuntimeError: injected fault in round_report" in str(info.value) and "delegate" in str(info.value)
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "failed" and "injected fault in round_report" in m["error"]
    run_end = [e for e in read_events(run_dir / "run.jsonl") if e["kind"] == "run_end"]
    assert run_end[-1]["data"]["status"] == "failed" and "injected fault" in run_end[-1]["data"]["error"]
    lead_events = events(run_dir, "lead")
    failed = [e for e in lead_events if e["kind"] == "error"]
    assert failed and "in run_plan" in failed[-1]["data"]["traceback"]  # where it happened, for us
    assert lead_events[-1]["kind"] == "agent_end" and lead_events[-1]["data"]["status"] == "failed"
    assert not [e for e in lead_events if e["kind"] == "tool_result"]  # the call stays unanswered: resume runs it

    monkeypatch.undo()  # the bug fixed: the run resumes, the finished subagent reused
    lead2 = ScriptedModel([lead_report_from_findings])
    done = await resume(run_dir, lead_model=lead2, subagent_model=ScriptedModel(), extra_tools=note_tools(DOCS))
    assert done.status == "completed" and "[1]" in done.report


async def test_a_plan_the_model_got_wrong_stays_a_tool_error_it_corrects(tmp_path: Path) -> None:
    bad = {**PLAN, "tasks": [{"objective": "TaskGroup failures", "tools": ["shell"]}]}
    lead = ScriptedModel([tool_call("delegate", bad), tool_call("delegate", PLAN), lead_report_from_findings])
    result = await api.research(QUESTION, runs_dir=tmp_path / "runs", lead_model=lead, subagent_model=subagent(),
                                extra_tools=note_tools(DOCS), use_config_file=False, environ={})
    assert result.status == "completed"
    refused = [e for e in events(result.run_dir, "lead") if e["kind"] == "tool_result" and e["data"]["is_error"]]
    assert len(refused) == 1 and "plan rejected" in refused[0]["data"]["content"]
    assert "shell" in refused[0]["data"]["content"]
