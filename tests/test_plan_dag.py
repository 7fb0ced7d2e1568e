"""Step dependencies: a plan is a DAG. Bad graphs are refused with reasons the lead can act on;
independent tasks start together, a dependent task starts when its dependencies are done and reads
their findings (a tool and the typed context), never their transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import trio

from lead_agent import api
from subagents.model import ModelError, ModelRequest, ModelResponse, ToolResultBlock
from subagents.models.scripted import ScriptedModel, Step, text, tool_call
from subagents.plan_graph import find_cycle, graph_problems, longest_path
from subagents.transcript import read_events

from .conftest import lead_report_from_findings, note_tools, submit_first_hit

DOCS = {
    "taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
    "gather": "asyncio.gather returns results in the order of the awaitables passed to it.",
}


def task(objective: str, **extra: object) -> dict:
    return {"objective": objective, "tools": ["search_notes"], **extra}


def plan(*tasks: dict) -> dict:
    return {"query_type": "breadth_first", "rationale": "parts, one building on the others", "tasks": list(tasks)}


def events(run_dir: Path, agent: str) -> list[dict]:
    return list(read_events(run_dir / "agents" / f"{agent}.jsonl"))


async def research(tmp_path: Path, lead: ScriptedModel, sub: ScriptedModel, **kw: object) -> api.ResearchResult:
    return await api.research("How do TaskGroup and gather differ?", runs_dir=tmp_path / "runs", lead_model=lead,
                              subagent_model=sub, extra_tools=note_tools(DOCS), max_rounds=1, **kw)


def test_graph_checks_name_what_to_change() -> None:
    assert graph_problems([("a", ["b"]), ("b", ["c"]), ("c", ["a"])]) == [
        "tasks 'a' -> 'b' -> 'c' -> 'a' depend on each other in a cycle; remove one of these dependencies"]
    assert graph_problems([("a", ["a"])]) == ["task 1 ('a') depends on itself; remove 'a' from its depends_on"]
    assert graph_problems([("a", []), (None, ["z"])]) == [
        "task 2 depends on 'z', which is not the id of a task in this plan (ids: 'a')"]
    assert graph_problems([("a", []), ("a", [])]) == ["task ids must be unique: 'a' is the id of tasks 1 and 2"]
    assert graph_problems([("a", []), ("b", ["a"]), ("c", ["a", "b"])]) == []
    deep = {f"n{i}": [f"n{i + 1}"] for i in range(5000)} | {"n5000": ["n0"]}  # iterative: no recursion limit
    assert len(find_cycle(deep)) == 5002


def test_the_critical_path_follows_the_dag() -> None:
    durations = {"a": 3.0, "b": 1.0, "c": 1.5, "d": 2.0}
    deps = {"c": ["a", "b"], "d": ["b"]}
    assert longest_path(durations, deps) == (4.5, ["a", "c"])  # not the longest single task, not the sum
    assert longest_path(durations, {}) == (3.0, ["a"])
    assert longest_path({"a": 1.0, "b": 1.0}, {"b": ["a"]}) == (2.0, ["a", "b"])


async def test_bad_graphs_go_back_to_the_lead_with_reasons(tmp_path: Path) -> None:
    cycle = plan(task("alpha part", id="a", depends_on=["b"]), task("beta part", id="b", depends_on=["a"]))
    unknown = plan(task("alpha part", id="a"), task("beta part", depends_on=["nope"]))
    itself = plan(task("alpha part", id="a", depends_on=["a"]))
    good = plan(task("alpha part", id="a"), task("beta part", id="b", depends_on=["a"]))
    lead = ScriptedModel([tool_call("delegate", p) for p in (cycle, unknown, itself, good)] + [lead_report_from_findings])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit,
                         tool_call("search_notes", {"query": "gather"}), submit_first_hit])
    with trio.fail_after(30):  # a cycle that slipped through would wait forever
        result = await research(tmp_path, lead, sub)
    errors = [c.messages[-1].content[0] for c in lead.calls[1:4]]
    assert all(isinstance(e, ToolResultBlock) and e.is_error for e in errors)
    assert "'a' -> 'b' -> 'a' depend on each other in a cycle" in errors[0].content
    assert "depends on 'nope', which is not the id of a task in this plan (ids: 'a')" in errors[1].content
    assert "task 1 ('a') depends on itself" in errors[2].content
    assert result.status == "completed" and result.manifest["plans_rejected"] == 3
    v1 = json.loads((result.run_dir / "plan.v1.json").read_text())
    assert [(t["id"], t["depends_on"]) for t in v1["tasks"]] == [("a", []), ("b", ["a"])]


def reads_its_dependency(req: ModelRequest) -> ModelResponse:
    ctx = req.context
    assert ctx is not None and [d.delegation.id for d in ctx.dependencies] == ["tg", "ga"]
    assert "read_findings" in ctx.allowed_tools
    return tool_call("read_findings", {"task_id": "tg"}, ("read_findings", {"task_id": "elsewhere"}))


def cites_what_it_read(req: ModelRequest) -> ModelResponse:
    ok, refused = req.messages[-1].content[0], req.messages[-1].content[1]
    assert isinstance(ok, ToolResultBlock) and not ok.is_error and ok.content.startswith("<retrieved_material")
    assert isinstance(refused, ToolResultBlock) and refused.is_error and "depends on tg, ga" in refused.content
    body = json.loads(ok.content.split(">", 1)[1].rsplit("</retrieved_material>", 1)[0])
    claim = body["claims"][0]
    return tool_call("submit_findings", {"status": "ok", "summary": "compared",
                                         "claims": [{"text": claim["text"], "source_ids": claim["source_ids"]}]})


async def test_independent_tasks_run_together_and_a_dependent_waits_and_reads_their_findings(tmp_path: Path) -> None:
    p = plan(task("TaskGroup failures", id="tg"), task("gather ordering", id="ga"),
             task("compare the two", id="cmp", depends_on=["tg", "ga"]))
    lead = ScriptedModel([tool_call("delegate", p), lead_report_from_findings])
    sub = ScriptedModel(per_agent={
        "r1-sub1": [Step(tool_call("search_notes", {"query": "TaskGroup"}), delay=0.3), submit_first_hit],
        "r1-sub2": [Step(tool_call("search_notes", {"query": "gather"}), delay=0.3), submit_first_hit],
        "r1-sub3": [reads_its_dependency, cites_what_it_read],
    })
    result = await research(tmp_path, lead, sub)
    d = result.run_dir
    span = {a: (events(d, a)[0]["t"], events(d, a)[-1]["t"]) for a in ("r1-sub1", "r1-sub2", "r1-sub3")}
    assert span["r1-sub1"][0] < span["r1-sub2"][1] and span["r1-sub2"][0] < span["r1-sub1"][1]  # together
    assert span["r1-sub3"][0] >= max(span["r1-sub1"][1], span["r1-sub2"][1])  # after both
    first = [c for c in sub.calls if c.context.agent_id == "r1-sub3"][0]
    task_message = first.messages[0].text()
    assert "read_findings" in task_message and "tg (ok, 1 claim(s)): TaskGroup failures" in task_message
    assert "remaining tasks in the group are cancelled" not in task_message  # references, not pasted findings
    assert [t.name for t in first.tools] == ["search_notes", "read_findings", "submit_findings"]
    sub1_source = next(e for e in events(d, "r1-sub1") if e["kind"] == "findings")["data"]["findings"]["claims"][0]
    sub3 = next(e for e in events(d, "r1-sub3") if e["kind"] == "findings")["data"]["findings"]
    assert sub3["status"] == "ok" and sub3["claims"][0]["source_ids"] == sub1_source["source_ids"]
    assert result.manifest["citation_check"]["unsupported"] == 0
    agent = next(a for a in result.manifest["agents"] if a["agent_id"] == "r1-sub3")
    assert agent["depends_on"] == ["tg", "ga"]


async def test_a_task_whose_dependency_failed_does_not_start(tmp_path: Path) -> None:
    p = plan(task("TaskGroup failures", id="tg"), task("gather ordering", id="ga", depends_on=["tg"]))
    lead = ScriptedModel([tool_call("delegate", p), text("# Report\n\nNothing could be established.")])
    sub = ScriptedModel(per_agent={"r1-sub1": [ModelError("boom")], "r1-sub1-a2": [ModelError("boom again")]})
    result = await research(tmp_path, lead, sub, max_replans=0)
    assert not (result.run_dir / "agents" / "r1-sub2.jsonl").exists()
    decisions = [(x["agent_id"], x["strategy"], x["cause"]) for x in result.manifest["replans"]]
    assert decisions == [("r1-sub1", "retry", "model_error"), ("r1-sub1-a2", "stop", "model_error"),
                         ("r1-sub2", "stop", "dependency_failed")]
    ended = next(e for e in events(result.run_dir, "lead") if e["kind"] == "round_end")["data"]["statuses"]
    assert ended == {"r1-sub1-a2": "failed", "r1-sub2": "skipped"}
    assert "r1-sub2 (round 1, skipped)" in result.report and "its dependency r1-sub1-a2 did not succeed" in result.report
