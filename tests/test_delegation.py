"""The plan checks at their seam: what the delegate schema allows, what policy refuses beyond it
(effort per query type, tools this run does not have), and the typed delegation's own rules."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from subagents.delegation import (EFFORT, Budget, Delegation, Findings, FindingsStatus, Plan, QueryType, plan_problems,
                                  plan_schema, tasks_per_query_type)

TOOLS = ["search_corpus", "read_passage"]


def plan(query_type: str, n: int, tools: list[str] | None = None) -> Plan:
    return Plan.model_validate({"query_type": query_type, "rationale": "split by part",
                                "tasks": [{"objective": f"part {i}", "tools": tools or ["search_corpus"]}
                                          for i in range(n)]})


def test_effort_per_query_type_is_capped_by_max_subagents() -> None:
    assert tasks_per_query_type(5) == {QueryType.STRAIGHTFORWARD: 1, QueryType.DEPTH_FIRST: 4,
                                       QueryType.BREADTH_FIRST: 5}
    assert tasks_per_query_type(1) == {q: 1 for q in QueryType}
    assert tasks_per_query_type(100) == dict(EFFORT)


@pytest.mark.parametrize("query_type, most", [("straightforward", 1), ("depth_first", 4), ("breadth_first", 6)])
def test_a_plan_may_have_as_many_tasks_as_its_type_deserves_and_no_more(query_type: str, most: int) -> None:
    assert plan_problems(plan(query_type, most), tool_names=TOOLS, max_subagents=6) == []
    [problem] = plan_problems(plan(query_type, most + 1), tool_names=TOOLS, max_subagents=6)
    assert problem == (f"a {query_type} plan may have at most {most} task(s) in this run, not {most + 1}; "
                       "merge tasks or classify the question differently")


def test_tools_this_run_does_not_have_are_refused_per_task() -> None:
    p = Plan.model_validate({"query_type": "breadth_first", "rationale": "r", "tasks": [
        {"objective": "one", "tools": ["search_corpus"]},
        {"objective": "two", "tools": ["web_search", "search_corpus", "rm_rf"]}]})
    assert plan_problems(p, tool_names=TOOLS, max_subagents=5) == [
        "task 2 names unknown tool(s) 'web_search', 'rm_rf'; available: search_corpus, read_passage"]
    both = plan_problems(plan("straightforward", 2, ["rm_rf"]), tool_names=TOOLS, max_subagents=5)
    assert len(both) == 3 and both[1].startswith("task 1 ") and both[2].startswith("task 2 ")


def test_the_delegate_schema_lists_only_this_runs_tools() -> None:
    schema = plan_schema(["web_search", "fetch_page"])
    assert "title" not in schema
    tools = schema["$defs"]["Delegation"]["properties"]["tools"]
    assert tools["items"] == {"type": "string", "enum": ["web_search", "fetch_page"]} and tools["minItems"] == 1
    assert schema["required"] == ["query_type", "rationale", "tasks"]
    assert plan_schema([])["$defs"]["Delegation"]["properties"]["tools"]["items"]["enum"] == []
    assert "enum" not in Plan.model_json_schema()["$defs"]["Delegation"]["properties"]["tools"]["items"]


def test_a_delegation_objective_is_stripped_and_must_not_be_blank() -> None:
    d = Delegation(objective="  What is a TaskGroup?  ", tools=["search_corpus"])
    assert d.objective == "What is a TaskGroup?"
    assert d.budget == Budget() and d.budget.max_tool_calls == 8 and d.queries == []
    with pytest.raises(ValidationError, match="objective is blank"):
        Delegation(objective="     ", tools=["search_corpus"])
    with pytest.raises(ValidationError, match="tools"):
        Delegation(objective="fine", tools=[])
    with pytest.raises(ValidationError, match="extra"):
        Delegation.model_validate({"objective": "fine", "tools": ["x"], "shell": "rm -rf /"})


@pytest.mark.parametrize("field, bad", [("max_tool_calls", 0), ("max_tool_calls", 101), ("max_tokens", 0),
                                        ("max_seconds", 0), ("max_seconds", 3601)])
def test_budgets_have_bounds(field: str, bad: float) -> None:
    with pytest.raises(ValidationError):
        Budget.model_validate({field: bad})


def test_findings_and_plans_need_their_parts() -> None:
    f = Findings(status="ok")
    assert f.status is FindingsStatus.OK and f.claims == [] and f.summary == ""
    with pytest.raises(ValidationError):
        Findings.model_validate({"status": "ok", "claims": [{"text": "x", "source_ids": []}]})
    with pytest.raises(ValidationError):
        Plan.model_validate({"query_type": "depth_first", "rationale": "r", "tasks": []})
    with pytest.raises(ValidationError):
        Plan.model_validate({"query_type": "sideways", "rationale": "r", "tasks": [{"objective": "o", "tools": ["t"]}]})
