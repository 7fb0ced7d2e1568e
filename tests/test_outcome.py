"""Outcome honesty: a run ends `completed` only when its report rests on a subagent's claim.

Every subagent failing with an error is `failed` (exit 1, no report); subagents that ran but found
nothing give `completed_empty` (the report is written and printed, exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lead_agent import api
from subagents.model import ModelError
from subagents.models.scripted import ScriptedModel, text, tool_call

from .conftest import lead_report_from_findings, note_tools, run_cli, submit_first_hit

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled."}
QUESTION = "How do TaskGroup and gather differ?"
PLAN = {"query_type": "breadth_first", "rationale": "split by topic",
        "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]},
                  {"objective": "gather ordering", "tools": ["search_notes"]}]}
NOTHING = tool_call("submit_findings", {"status": "failed", "summary": "Nothing in the notes.", "claims": [],
                                        "open_questions": ["no note mentions it"]})


async def research(tmp_path: Path, lead: ScriptedModel, sub: ScriptedModel) -> api.ResearchResult:
    return await api.research(QUESTION, runs_dir=tmp_path / "runs", lead_model=lead, subagent_model=sub,
                              extra_tools=note_tools(DOCS), max_rounds=1, use_config_file=False, environ={})


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def lead_writing(report: str = "# Report\n\nNothing could be established.") -> ScriptedModel:
    return ScriptedModel([tool_call("delegate", PLAN), text(report)])


async def test_every_subagent_failing_with_an_error_fails_the_run(tmp_path: Path) -> None:
    boom = ModelError("claude-haiku: giving up after 5 attempts; last error: HTTP 529: overloaded")
    # a model error is retried once in code (a second attempt, "-a2"): it fails again
    sub = ScriptedModel(per_agent={a: [boom] for a in ("r1-sub1", "r1-sub2", "r1-sub1-a2", "r1-sub2-a2")})
    with pytest.raises(api.RunFailed, match="every subagent failed") as info:
        await research(tmp_path, lead_writing(), sub)
    d = info.value.run_dir
    m = manifest(d)
    assert m["status"] == "failed" and "every subagent failed (2)" in m["error"] and "HTTP 529" in m["error"]
    assert not (d / "report.md").exists()
    assert [a["status"] for a in m["agents"] if a["role"] == "subagent"] == ["failed"] * 4


async def test_subagents_that_found_nothing_give_completed_empty(tmp_path: Path) -> None:
    sub = ScriptedModel(per_agent={"r1-sub1": [NOTHING], "r1-sub2": [NOTHING]})
    result = await research(tmp_path, lead_writing(), sub)
    assert result.status == "completed_empty" and manifest(result.run_dir)["status"] == "completed_empty"
    assert (result.run_dir / "report.md").read_text() == result.report
    assert "Nothing could be established." in result.report


async def test_a_failure_beside_a_subagent_that_found_nothing_is_completed_empty(tmp_path: Path) -> None:
    sub = ScriptedModel(per_agent={"r1-sub1": [ModelError("HTTP 500")], "r1-sub2": [NOTHING]})
    result = await research(tmp_path, lead_writing(), sub)
    assert result.status == "completed_empty"


async def test_one_claim_is_enough_for_completed(tmp_path: Path) -> None:
    sub = ScriptedModel(per_agent={"r1-sub1": [ModelError("HTTP 500")],
                                   "r1-sub2": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit]})
    lead = ScriptedModel([tool_call("delegate", PLAN), lead_report_from_findings])
    result = await research(tmp_path, lead, sub)
    assert result.status == "completed" and "remaining tasks in the group are cancelled" in result.report


def test_cli_run_that_finds_nothing_prints_the_report_and_exits_3(tmp_path: Path, cache_env: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gears.md").write_text("# Gears\n\nThe gears of a widget are aligned by turning the main shaft.\n")
    proc = run_cli("run", "What is the boiling point of tungsten?", "--corpus", str(docs), "--runs-dir", "runs",
                   "-q", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "# What is the boiling point of tungsten?" in proc.stdout and "Run saved to" in proc.stdout
    assert proc.stderr.strip().splitlines() == [
        "research: nothing found: no subagent returned a claim (status: completed_empty, exit 3)"]
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert manifest(run_dir)["status"] == "completed_empty" and (run_dir / "report.md").is_file()
