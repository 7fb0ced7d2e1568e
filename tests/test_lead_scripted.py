"""The lead/subagent machinery through the Python API, with scripted models and in-memory tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
import trio.testing

from lead_agent import api
from subagents.model import ModelError
from subagents.models.scripted import ScriptedModel, ScriptExhausted, Step, text, tool_call
from subagents.events import EventRecord, RunStarted
from subagents.transcript import read_events

from .conftest import last_results, lead_report_from_findings, note_tools, submit_first_hit

DOCS = {
    "taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
    "gather": "asyncio.gather returns results in the order of the awaitables passed to it.",
    "timeout": "asyncio.timeout cancels the enclosed code when the deadline passes.",
}


def task(objective: str, tools: list[str] | None = None, **extra) -> dict:
    return {"objective": objective, "tools": tools or ["search_notes"], **extra}


def plan(*tasks: dict, rationale: str = "split by topic", qtype: str = "breadth_first") -> dict:
    return {"query_type": qtype, "rationale": rationale, "tasks": list(tasks)}


class RunDirSeen:
    """An observer that calls back with the run directory once the run has started."""

    def __init__(self, callback) -> None:
        self.callback = callback

    def on_event(self, record: EventRecord) -> None:
        if isinstance(record.event, RunStarted):
            self.callback(Path(record.event.run_dir))


def events(run_dir: Path, agent: str) -> list[dict]:
    return list(read_events(run_dir / "agents" / f"{agent}.jsonl"))


async def run(tmp_path: Path, lead: ScriptedModel, sub: ScriptedModel, **kw):
    return await api.research("How do TaskGroup and gather differ?", runs_dir=tmp_path / "runs", lead_model=lead,
                              subagent_model=sub, extra_tools=note_tools(DOCS), **kw)


async def test_full_run_writes_run_directory_and_checked_report(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup failures", queries=["TaskGroup"]),
                                                    task("gather ordering"))),
                          lead_report_from_findings])
    sub = ScriptedModel(per_agent={
        "r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit],
        "r1-sub2": [tool_call("search_notes", {"query": "gather"}), submit_first_hit],
    })
    result = await run(tmp_path, lead, sub)
    d = result.run_dir
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "completed"
    assert {a["agent_id"] for a in m["agents"]} == {"lead", "r1-sub1", "r1-sub2"}
    assert m["citation_check"]["markers"] == 2 and m["citation_check"]["supported"] == 2
    assert (d / "plan.v1.json").is_file() and not (d / "plan.v2.json").exists()
    assert "[1]" in result.report and "[2]" in result.report and "## References" in result.report
    assert (d / "report.md").read_text() == result.report
    sources = json.loads((d / "sources.json").read_text())
    assert {s["id"] for s in sources} >= {"S1", "S2"}
    # every transcript line carries its identity
    for agent in ("lead", "r1-sub1", "r1-sub2"):
        evs = events(d, agent)
        assert evs and all(e["run_id"] == m["run_id"] and e["agent_id"] == agent for e in evs)
        assert [e["seq"] for e in evs] == list(range(len(evs)))
        assert evs[0]["parent_id"] == (None if agent == "lead" else "lead")
    kinds = [e["kind"] for e in events(d, "r1-sub1")]
    assert kinds[0] == "agent_start" and "tool_call" in kinds and "tool_result" in kinds and kinds[-1] == "agent_end"
    # each subagent started with a fresh context holding only its own delegation
    first = sub.calls[0].messages
    assert len(first) == 1 and "<delegation>" in first[0].text()
    assert all("gather ordering" not in c.messages[0].text() for c in sub.calls if c.context.agent_id == "r1-sub1")


async def test_rejected_plan_goes_back_to_the_lead_which_fixes_it(tmp_path: Path) -> None:
    lead = ScriptedModel([
        tool_call("delegate", plan(task("xyz topic", tools=["search_notes", "rm_rf"]))),  # unknown tool
        tool_call("delegate", {"query_type": "depth_first", "tasks": []}),  # schema: no rationale, no tasks
        tool_call("delegate", plan(task("TaskGroup"))),
        lead_report_from_findings,
    ])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit])
    result = await run(tmp_path, lead, sub)
    results = [b for c in lead.calls for m in c.messages for b in m.content if getattr(b, "type", "") == "tool_result"]
    first_error = lead.calls[1].messages[-1].content[0]
    assert first_error.is_error and "unknown tool" in first_error.content and "'rm_rf'" in first_error.content
    second_error = lead.calls[2].messages[-1].content[0]
    assert second_error.is_error and "rationale" in second_error.content and "tasks" in second_error.content
    assert result.status == "completed" and results
    assert json.loads((result.run_dir / "plan.v1.json").read_text())["tasks"][0]["objective"] == "TaskGroup"


async def test_too_many_tasks_rejected_with_the_limit_and_a_run_without_a_plan_fails(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("alpha topic"), task("beta topic"), task("gamma topic"))),
                          text("# No research was possible")])
    with pytest.raises(api.RunFailed, match="never had a plan accepted") as info:
        await run(tmp_path, lead, ScriptedModel(), max_subagents=2)
    err = lead.calls[1].messages[-1].content[0]
    assert err.is_error and "at most 2 task(s) in this run, not 3" in err.content
    d = info.value.run_dir
    m = json.loads((d / "manifest.json").read_text())
    assert not (d / "plan.v1.json").exists() and m["plans"] == [] and m["plans_rejected"] == 1
    assert m["status"] == "failed" and "never had a plan accepted (1 plan(s) rejected)" in m["error"]
    assert not (d / "report.md").exists()


async def test_effort_follows_the_query_type(tmp_path: Path) -> None:
    lead = ScriptedModel([
        tool_call("delegate", plan(task("alpha topic"), task("beta topic"), qtype="straightforward")),
        tool_call("delegate", plan(task("alpha topic"), qtype="straightforward")),
        lead_report_from_findings,
    ])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit])
    result = await run(tmp_path, lead, sub)
    err = lead.calls[1].messages[-1].content[0]
    assert err.is_error and "straightforward plan may have at most 1 task(s) in this run, not 2" in err.content
    assert len(json.loads((result.run_dir / "plan.v1.json").read_text())["tasks"]) == 1


async def test_tool_outside_allow_list_is_refused_in_code(tmp_path: Path) -> None:
    calls: list[str] = []
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup", tools=["search_notes"]))), text("# done")])
    sub = ScriptedModel([
        tool_call("delete_everything", {"path": "/"}),
        tool_call("submit_findings", {"status": "failed", "claims": []}),
    ])
    result = await api.research("q", runs_dir=tmp_path, lead_model=lead, subagent_model=sub,
                                extra_tools=note_tools(DOCS, calls))
    res = [e for e in events(result.run_dir, "r1-sub1") if e["kind"] == "tool_result"][0]["data"]
    assert res["is_error"] and res["content"].startswith("Refused") and "search_notes" in res["content"]
    # and a tool that exists in the run but was not delegated is refused too
    lead2 = ScriptedModel([tool_call("delegate", plan(task("xyz topic", tools=["search_notes"]))), text("# done")])
    from subagents.tools import Tool

    other = Tool("secret_tool", "not for this task", note_tools(DOCS)[0].args, note_tools(DOCS, calls)[0].run)
    sub2 = ScriptedModel([tool_call("secret_tool", {"query": "TaskGroup"}),
                          tool_call("submit_findings", {"status": "failed", "claims": []})])
    r2 = await api.research("q", runs_dir=tmp_path, lead_model=lead2, subagent_model=sub2,
                            extra_tools=note_tools(DOCS, calls) + [other])
    res2 = [e for e in events(r2.run_dir, "r1-sub1") if e["kind"] == "tool_result"][0]["data"]
    assert res2["is_error"] and "not allowed" in res2["content"]
    assert calls == []  # nothing ran
    assert [t.name for t in sub2.calls[0].tools] == ["search_notes", "submit_findings"]


class Meeting:
    """Wraps a scripted model: each agent's first call waits until `n` agents are in their first call.
    Agents that do not run at the same time never meet, and time out (virtual time: MockClock)."""

    def __init__(self, inner: ScriptedModel, n: int) -> None:
        self.inner, self.n = inner, n
        self.name, self.is_language_model = inner.name, True
        self.seen: set[str] = set()
        self.all_here = trio.Event()
        self.order: list[str] = []  # agent id of every call, in the order the calls began

    async def complete(self, request):
        agent = request.context.agent_id
        self.order.append(agent)
        if agent.startswith("r1-") and agent not in self.seen and self.n:
            self.seen.add(agent)
            if len(self.seen) == self.n:
                self.all_here.set()
            with trio.fail_after(600):
                await self.all_here.wait()
        return await self.inner.complete(request)


async def test_subagents_run_at_the_same_time(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("alpha topic"), task("beta topic"), task("gamma topic"))), text("# done")])
    per = {f"r1-sub{i}": [tool_call("search_notes", {"query": "asyncio"}), submit_first_hit] for i in (1, 2, 3)}
    sub = Meeting(ScriptedModel(per_agent=per), n=3)
    result = await run(tmp_path, lead, sub, concurrency=3)
    statuses = {a["agent_id"]: a["status"] for a in result.manifest["agents"]}
    assert statuses == {"lead": "ok", "r1-sub1": "ok", "r1-sub2": "ok", "r1-sub3": "ok"}  # all three met
    assert trio.current_time() < 600


async def test_concurrency_limit_serialises(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("alpha topic"), task("beta topic"))), text("# done")])

    def per() -> dict:
        return {f"r1-sub{i}": [Step(tool_call("search_notes", {"query": "asyncio"}), delay=1), submit_first_hit]
                for i in (1, 2)}

    one = Meeting(ScriptedModel(per_agent=per()), n=0)
    await run(tmp_path, ScriptedModel(list(lead.responses)), one, concurrency=1)
    assert one.order in (["r1-sub1"] * 2 + ["r1-sub2"] * 2, ["r1-sub2"] * 2 + ["r1-sub1"] * 2)
    two = Meeting(ScriptedModel(per_agent=per()), n=0)  # the same with room for both: they interleave
    await run(tmp_path, lead, two, concurrency=2)
    assert sorted(two.order[:2]) == ["r1-sub1", "r1-sub2"]


async def test_failing_subagent_does_not_cancel_siblings(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup"), task("broken"), task("gather"))),
                          lead_report_from_findings])
    per = {
        "r1-sub1": [Step(tool_call("search_notes", {"query": "TaskGroup"}), delay=0.2), submit_first_hit],
        "r1-sub2": [ModelError("upstream exploded")],
        "r1-sub2-a2": [ModelError("upstream exploded")],  # a model error is retried once, in code
        "r1-sub3": [Step(tool_call("search_notes", {"query": "gather"}), delay=0.2), submit_first_hit],
    }
    result = await run(tmp_path, lead, ScriptedModel(per_agent=per))
    m = result.manifest
    status = {a["agent_id"]: a["status"] for a in m["agents"]}
    assert status == {"lead": "ok", "r1-sub1": "ok", "r1-sub2": "failed", "r1-sub2-a2": "failed", "r1-sub3": "ok"}
    # asked for a new plan, the lead wrote the report: that real decision is recorded after the replan request
    assert [(d["agent_id"], d["strategy"]) for d in m["replans"]] == [("r1-sub2", "retry"), ("r1-sub2-a2", "replan"),
                                                                     ("r1-sub2-a2", "stop")]
    failed = next(a for a in m["agents"] if a["agent_id"] == "r1-sub2")
    assert "upstream exploded" in failed["error"]
    assert "## What is missing" in result.report and "upstream exploded" in result.report
    assert any(e["kind"] == "error" for e in events(result.run_dir, "r1-sub2"))
    # the lead saw the failure in its findings
    assert '"status": "failed"' in lead.calls[1].messages[-1].content[0].content


async def test_exhausted_budget_ends_with_partial_findings(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup", budget={"max_tool_calls": 2}))), text("# r")])
    sub = ScriptedModel([
        tool_call("search_notes", {"query": "TaskGroup"}),
        tool_call("search_notes", {"query": "gather"}),
        # budget gone after two calls: the wrap-up turn offers only submit_findings
        lambda req: tool_call("submit_findings", {"status": "ok", "claims": [
            {"text": DOCS["taskgroup"], "source_ids": ["S1"]}]}),
    ])
    result = await run(tmp_path, lead, sub)
    agent = next(a for a in result.manifest["agents"] if a["agent_id"] == "r1-sub1")
    assert agent["status"] == "partial" and agent["stop"] == "tool_budget" and agent["tool_calls"] == 2
    assert len(sub.calls) == 3 and str(sub.calls[-1].tool_choice) == "submit_findings" and [t.name for t in sub.calls[-1].tools] == ["submit_findings"]


async def test_parallel_calls_past_the_budget_are_refused(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup", budget={"max_tool_calls": 2}))), text("# r")])
    sub = ScriptedModel([
        tool_call("search_notes", {"query": "TaskGroup"}, ("search_notes", {"query": "gather"}),
                  ("search_notes", {"query": "timeout"})),
        submit_first_hit,
    ])
    calls: list[str] = []
    result = await api.research("q", runs_dir=tmp_path, lead_model=lead, subagent_model=sub,
                                extra_tools=note_tools(DOCS, calls))
    evs = events(result.run_dir, "r1-sub1")
    first_reply = next(e for e in evs if e["kind"] == "model_response")["data"]["content"]
    ids = [b["id"] for b in first_reply if b["type"] == "tool_use"]
    results = {e["data"]["id"]: e["data"] for e in evs if e["kind"] == "tool_result"}
    assert [results[i]["is_error"] for i in ids] == [False, False, True]  # refused in the order of the calls
    assert "budget" in results[ids[2]]["content"] and sorted(calls) == ["r1-sub1:TaskGroup", "r1-sub1:gather"]


async def test_unknown_source_id_in_findings_is_a_tool_error(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup"))), lead_report_from_findings])
    sub = ScriptedModel([
        tool_call("search_notes", {"query": "TaskGroup"}),
        tool_call("submit_findings", {"status": "ok", "claims": [{"text": "made up", "source_ids": ["S99"]}]}),
        tool_call("submit_findings", {"status": "ok", "claims": [{"text": DOCS["taskgroup"], "source_ids": ["S1"]}]}),
    ])
    result = await run(tmp_path, lead, sub)
    errs = [e["data"]["content"] for e in events(result.run_dir, "r1-sub1") if e["kind"] == "tool_result" and e["data"]["is_error"]]
    assert errs and "S99" in errs[0]
    assert result.manifest["citation_check"]["supported"] == 1


async def test_gap_round_writes_plan_v2_and_is_capped(tmp_path: Path) -> None:
    lead = ScriptedModel([
        tool_call("delegate", plan(task("TaskGroup"))),
        tool_call("delegate", plan(task("timeouts"), rationale="gap: timeouts not covered")),
        tool_call("delegate", plan(task("more"), rationale="one more")),  # over --max-rounds 2
        text("# Report\n\nDone."),
    ])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit,
                         tool_call("search_notes", {"query": "timeout"}), submit_first_hit])
    result = await run(tmp_path, lead, sub, max_rounds=2)
    v2 = json.loads((result.run_dir / "plan.v2.json").read_text())
    assert v2["rationale"] == "gap: timeouts not covered" and v2["tasks"][0]["agent_id"] == "r2-sub1"
    assert not (result.run_dir / "plan.v3.json").exists()
    refusal = lead.calls[3].messages[-1].content[0]
    assert refusal.is_error and "no research rounds left (--max-rounds" in refusal.content


async def test_scripted_model_running_dry_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(api.RunFailed) as info:
        await run(tmp_path, ScriptedModel([]), ScriptedModel())
    m = json.loads((info.value.run_dir / "manifest.json").read_text())
    assert m["status"] == "failed" and "ran dry" in m["error"]
    assert issubclass(ScriptExhausted, ModelError)


async def test_interrupt_marks_run_interrupted_and_keeps_transcripts(tmp_path: Path,
                                                                    autojump_clock: trio.testing.MockClock) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("alpha topic"), task("beta topic"))), text("# never")])
    per = {"r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), KeyboardInterrupt()],
           "r1-sub2": [Step(tool_call("search_notes", {"query": "gather"}), delay=2), submit_first_hit]}
    started: list[Path] = []
    with pytest.raises(BaseException) as info:
        await run(tmp_path, lead, ScriptedModel(per_agent=per), observers=[RunDirSeen(started.append)])
    assert api._is_interrupt(info.value)
    d = started[0]
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "interrupted"
    sub1 = events(d, "r1-sub1")
    assert [e["kind"] for e in sub1][-1] == "agent_end" and sub1[-1]["data"]["status"] == "interrupted"
    assert any(e["kind"] == "tool_result" for e in sub1)
    assert (d / "agents" / "lead.jsonl").is_file() and (d / "agents" / "r1-sub2.jsonl").is_file()
    # the interrupted round's agents are in the manifest, with the usage they had spent
    agents = {a["agent_id"]: a for a in m["agents"]}
    assert agents["r1-sub1"]["status"] == agents["r1-sub2"]["status"] == "interrupted"
    assert agents["r1-sub1"]["usage"]["input_tokens"] == 10 and m["usage"]["input_tokens"] >= 20
    lead_end = events(d, "lead")[-1]
    assert lead_end["kind"] == "agent_end" and lead_end["data"]["status"] == "interrupted"


def test_sync_wrapper(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup"))), lead_report_from_findings])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit])
    result = api.research_sync("q?", runs_dir=tmp_path, lead_model=lead, subagent_model=sub,
                               extra_tools=note_tools(DOCS))
    assert result.status == "completed" and result.run_dir.is_dir()


@pytest.mark.parametrize("steps, message", [
    ([ModelError("lead upstream exploded")], "lead upstream exploded"),
    ([text("")], "never had a plan accepted"),
    ([tool_call("delegate", plan(task("TaskGroup"))), text("")], "stopped without a report"),
])
async def test_failed_lead_ends_its_transcript_with_error_and_agent_end(tmp_path: Path, steps, message) -> None:
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit])
    with pytest.raises(api.RunFailed) as info:
        await run(tmp_path, ScriptedModel(steps), sub)
    evs = events(info.value.run_dir, "lead")
    assert [e["kind"] for e in evs][-2:] == ["error", "agent_end"]
    assert message in evs[-2]["data"]["error"]
    assert evs[-1]["data"]["status"] == "failed" and message in evs[-1]["data"]["error"]


@pytest.mark.parametrize("as_type", [str, Path])
def test_a_single_corpus_path_is_one_root_not_its_characters(tmp_path: Path, as_type, monkeypatch) -> None:
    monkeypatch.setenv("RESEARCH_CACHE_DIR", str(tmp_path / "cache"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text(DOCS["taskgroup"] + "\n")
    lead = ScriptedModel([tool_call("delegate", plan(task("TaskGroup", tools=["search_corpus"]))), text("# r")])

    def submit_corpus_hit(request):  # corpus results carry a snippet, not the notes' text
        hit = last_results(request)[0]
        return tool_call("submit_findings", {"status": "ok", "summary": "", "claims": [
            {"text": hit["snippet"], "source_ids": [hit["source_id"]]}]})

    sub = ScriptedModel([tool_call("search_corpus", {"query": "TaskGroup"}), submit_corpus_hit])
    result = api.research_sync("q?", corpus=as_type(docs), runs_dir=tmp_path / "runs", lead_model=lead,
                               subagent_model=sub, use_config_file=False)
    assert result.status == "completed" and result.manifest["options"]["corpus"] == [str(docs.resolve())]


async def test_a_failure_right_after_the_run_directory_exists_still_ends_the_manifest(tmp_path: Path) -> None:
    seen: list[Path] = []

    def on_start(path: Path) -> None:
        seen.append(path)
        raise RuntimeError("callback exploded")

    with pytest.raises(api.RunFailed):
        await run(tmp_path, ScriptedModel(), ScriptedModel(), observers=[RunDirSeen(on_start)])
    m = json.loads((seen[0] / "manifest.json").read_text())
    assert m["status"] == "failed" and "callback exploded" in m["error"]


@pytest.mark.parametrize("report, status", [
    (f"# R\n\n{DOCS['taskgroup']} [S1]", "completed"),
    ("# R\n\nNothing in the notes answers this.", "completed_empty"),
])
async def test_a_single_agent_run_is_judged_by_its_supported_citations(tmp_path: Path, report: str,
                                                                       status: str) -> None:
    model = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), text(report)])
    result = await api.research("What does a TaskGroup do?", runs_dir=tmp_path, lead_model=model, mode="single",
                                extra_tools=note_tools(DOCS), use_config_file=False, environ={})
    assert result.status == status
