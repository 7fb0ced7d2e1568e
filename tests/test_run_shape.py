"""One shape for a run: the typed request context, the typed event stream and its reader, settings
resolved once, terminal tools, and the consistency fixes that came with them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lead_agent import api
from lead_agent.settings import UsageError, resolve_settings
from subagents.context import AgentRole, AgentStatus
from subagents.delegation import FindingsStatus, QueryType
from subagents.events import (EVENT_TYPES, AgentEnded, EventRecord, ModelResponded, PlanAccepted, RunEnded, RunStatus,
                              event_reference)
from subagents.models.scripted import ScriptedModel, text, tool_call
from subagents.prompting import prompt_names, prompts_root
from subagents.runs import read_run
from subagents.sources import SourceRegistry
from subagents.tools import ToolContext

from .conftest import ROOT, lead_report_from_findings, note_tools, submit_first_hit, write_small_corpus

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
        "gather": "asyncio.gather returns results in the order of the awaitables passed to it."}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_small_corpus(tmp_path / "docs")


def rewritten_variant(tmp_path: Path) -> Path:
    """Every prompt of `default` rewritten: other words, no tags, placeholders kept only where a
    template needs them to say anything at all."""
    folder = tmp_path / "plain-words"
    folder.mkdir()
    for name in prompt_names():
        original = (prompts_root() / "default" / f"{name}.txt").read_text()
        keep = sorted(set(re.findall(r"\$\{(\w+)\}", original)))
        body = f"PROMPT {name.upper()} REWORDED. Nothing here is tagged or phrased as before.\n"
        body += "".join(f"Value {k}: ${{{k}}}\n" for k in keep if k in ("question", "objective", "reason"))
        (folder / f"{name}.txt").write_text(body)
    return folder


def plan_and_report(run_dir: Path) -> tuple[list[dict], str]:
    plans = [json.loads(p.read_text()) for p in sorted(run_dir.glob("plan.v*.json"))]
    for p in plans:
        p.pop("created_at")
    report = (run_dir / "report.md").read_text()
    report = report[report.index("# "):]  # from the title: the offline notice is a prompt too
    # source ids are given in retrieval order, which concurrent subagents race for: compare them masked
    return plans, re.sub(r"\bS\d+\b", "S#", report)


@pytest.mark.parametrize("question", [
    "What happens to the other tasks in an asyncio TaskGroup when one of them raises an exception?",
    "Compare lists and tuples",
])
async def test_a_rewritten_prompt_variant_gives_the_offline_model_the_same_plan_and_report(
        tmp_path: Path, corpus: Path, question: str) -> None:
    variant = rewritten_variant(tmp_path)
    common = dict(corpus=[corpus], runs_dir=tmp_path / "runs", cache_dir=tmp_path / "cache", use_config_file=False,
                  environ={})
    default = await api.research(question, **common)
    other = await api.research(question, prompts=str(variant), **common)
    assert default.status == other.status == "completed"
    assert plan_and_report(default.run_dir) == plan_and_report(other.run_dir)
    files = other.manifest["prompts"]["files"]
    assert files["lead_system"]["variant"] == str(variant)
    assert files["lead_system"]["sha256"] != default.manifest["prompts"]["files"]["lead_system"]["sha256"]


async def test_the_lead_context_carries_limits_tools_and_findings_as_objects(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", {"query_type": "straightforward", "rationale": "one fact",
                                                 "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]}]}),
                          lead_report_from_findings])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit])
    await api.research("What does a TaskGroup do when a task fails?", runs_dir=tmp_path, lead_model=lead,
                       subagent_model=sub, extra_tools=note_tools(DOCS), max_subagents=3, max_rounds=2,
                       use_config_file=False, environ={})
    first, second = lead.calls
    ctx = first.context
    assert ctx.role is AgentRole.LEAD and ctx.allowed_tools == ("delegate",)
    assert ctx.question == "What does a TaskGroup do when a task fails?"
    assert ctx.limits.tasks_per_query_type == {QueryType.STRAIGHTFORWARD: 1, QueryType.DEPTH_FIRST: 3,
                                               QueryType.BREADTH_FIRST: 3}
    assert (ctx.limits.rounds_left, ctx.limits.subagent_tools, ctx.rounds) == (2, ("search_notes",), ())
    # the prompt states the same limits the code enforces
    assert "straightforward 1, depth_first 3, breadth_first 3" in first.system
    after = second.context
    assert after.limits.rounds_left == 1 and len(after.rounds) == 1
    report = after.rounds[0].subagents[0]
    assert report.status is AgentStatus.OK and report.findings.status is FindingsStatus.OK
    assert report.findings.claims[0].text == DOCS["taskgroup"]
    sub_ctx = sub.calls[0].context
    assert sub_ctx.role is AgentRole.SUBAGENT and sub_ctx.delegation.objective == "TaskGroup failures"
    assert sub_ctx.allowed_tools == ("search_notes", "submit_findings") and not sub_ctx.wrap_up


async def test_the_delegate_schema_offers_only_the_tools_of_this_run(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", {"query_type": "straightforward", "rationale": "r",
                                                 "tasks": [{"objective": "TaskGroup", "tools": ["search_notes"]}]}),
                          text("# r\n\nDone.")])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit])
    await api.research("q?", runs_dir=tmp_path, lead_model=lead, subagent_model=sub, extra_tools=note_tools(DOCS),
                       use_config_file=False, environ={})
    [delegate] = lead.calls[0].tools
    tools = delegate.input_schema["$defs"]["Delegation"]["properties"]["tools"]
    assert tools["items"] == {"type": "string", "enum": ["search_notes"]}


async def test_read_run_loads_a_run_back_into_typed_objects(tmp_path: Path, corpus: Path) -> None:
    result = await api.research("Compare lists and tuples", corpus=[corpus], runs_dir=tmp_path / "runs",
                                cache_dir=tmp_path / "cache", use_config_file=False, environ={})
    run = read_run(result.run_dir)
    assert run.status == "completed" and run.run_id == result.manifest["run_id"]
    assert run.trace.question == "Compare lists and tuples" and run.report == result.report
    plan = run.trace.plans[0]
    assert isinstance(plan, PlanAccepted) and plan.query_type is QueryType.BREADTH_FIRST and plan.author == "lead"
    assert [p.version for p in run.trace.plans] == list(range(1, len(result.manifest["plans"]) + 1))
    subs = [a for a in run.trace.ordered_agents() if a.role is AgentRole.SUBAGENT]
    assert [a.agent_id for a in subs] == [t.agent_id for p in run.trace.plans for t in p.tasks]
    for a in subs:
        assert a.finished and a.findings is not None and a.delegation is not None
        assert a.status.value == a.findings.status.value
        assert a.records[0].kind == "agent_start" and a.records[-1].kind == "agent_end"
    assert {s.id for s in run.sources} >= {c for a in subs for cl in a.findings.claims for c in cl.source_ids}
    assert run.trace.citation is not None and run.trace.citation.pass_rate == 1.0
    # the manifest written live is the same fold of the same events
    m = result.manifest
    assert [a["agent_id"] for a in m["agents"]] == [a.agent_id for a in run.trace.ordered_agents()]
    assert m["usage"] == run.trace.usage().to_dict()


async def test_read_run_of_a_killed_run_says_what_the_transcripts_say(tmp_path: Path, corpus: Path) -> None:
    result = await api.research("Compare lists and tuples", corpus=[corpus], runs_dir=tmp_path / "runs",
                                cache_dir=tmp_path / "cache", use_config_file=False, environ={})
    d = result.run_dir
    # a run killed mid-round: the run's end and one subagent's last lines never reached the disk
    (d / "run.jsonl").write_text("".join(line + "\n" for line in (d / "run.jsonl").read_text().splitlines()
                                         if '"kind": "run_end"' not in line))
    sub = d / "agents" / "r1-sub2.jsonl"
    lines = sub.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"kind": "findings"' in line)
    sub.write_text("\n".join(lines[:cut]) + "\n" + lines[cut][:25])  # a torn last line
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["status"] = "running"  # what a killed run's manifest says
    (d / "manifest.json").write_text(json.dumps(manifest))
    run = read_run(d)
    assert run.status == "running"
    agents = {a.agent_id: a for a in run.trace.ordered_agents()}
    assert agents["r1-sub2"].status is AgentStatus.RUNNING and agents["r1-sub2"].findings is None
    assert agents["r1-sub1"].finished and agents["r1-sub1"].findings is not None


def test_every_event_type_round_trips_and_runs_readme_documents_them() -> None:
    readme = (ROOT / "runs" / "README.md").read_text()
    assert event_reference() in readme, "runs/README.md is out of date: paste subagents.events.event_reference()"
    kinds = [t.kind for t in EVENT_TYPES]
    assert len(kinds) == len(set(kinds))
    from subagents.events import EventBus
    from subagents.model import Usage

    got: list[EventRecord] = []
    bus = EventBus("r")
    bus.subscribe(type("Keep", (), {"on_event": lambda self, r: got.append(r)})())
    a = bus.agent("r1-sub1", "lead")
    a.emit(ModelResponded([], "end_turn", Usage(1, 2, 3, 4), "m", 0.1))
    a.emit(AgentEnded(AgentStatus.PARTIAL, "tool_budget", None, Usage(1, 2), 3, 2))
    bus.run().emit(RunEnded(RunStatus.COMPLETED))
    for rec in got:
        back = EventRecord.from_json(json.loads(json.dumps(rec.to_json())))
        assert back == rec


def test_an_unknown_config_key_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "research.toml"
    cfg.write_text('lead_modle = "extractive"\n')
    with pytest.raises(UsageError, match="unknown key 'lead_modle'"):
        resolve_settings({"question": "q"}, environ={"RESEARCH_CONFIG": str(cfg)})


def test_settings_come_from_flags_then_environment_then_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('subagent_model = "claude-haiku-4-5"\nlead_model = "claude-opus-4-6"\ncache_dir = "/from/file"\n')
    env = {"RESEARCH_CONFIG": str(cfg), "ANTHROPIC_API_KEY": "k", "RESEARCH_LEAD_MODEL": "claude-sonnet-4-5"}
    s = resolve_settings({"question": "q"}, environ=env)
    assert (s.lead_model, s.subagent_model, s.cache_dir) == ("claude-sonnet-4-5", "claude-haiku-4-5", Path("/from/file"))
    s = resolve_settings({"question": "q", "lead_model": "extractive", "cache_dir": "/flag"}, environ=env)
    assert s.lead_model == "extractive" and s.cache_dir == Path("/flag")
    # without the file, the environment still counts (all of it, consistently)
    s = resolve_settings({"question": "q"}, environ=env, use_config_file=False)
    assert (s.lead_model, s.subagent_model) == ("claude-sonnet-4-5", "claude-haiku-4-5")
    s = resolve_settings({"question": "q"}, environ={}, use_config_file=False)
    assert (s.lead_model, s.subagent_model) == ("extractive", "extractive")


def test_cache_dir_means_the_same_for_run_and_tool(tmp_path: Path, corpus: Path) -> None:
    from .conftest import run_cli

    cache = tmp_path / "the-cache"
    run = run_cli("run", "Compare lists and tuples", "--corpus", str(corpus), "--runs-dir", str(tmp_path / "runs"),
                  "--cache-dir", str(cache), "--web", "--cache", "replay", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert list((cache / "corpus").glob("*/index.sqlite"))
    tool = run_cli("tool", "corpus", "tuples", "--corpus", str(corpus), "--cache-dir", str(cache), cwd=tmp_path)
    assert tool.returncode == 0, tool.stderr
    assert len(list((cache / "corpus").glob("*/index.sqlite"))) == 1  # the same index, not a second one
    miss = run_cli("tool", "search", "tuples", "--cache", "replay", "--cache-dir", str(cache), cwd=tmp_path)
    assert miss.returncode == 1 and str(cache / "web") in miss.stderr


async def test_read_passage_accepts_the_source_id_a_search_listed(tmp_path: Path, corpus: Path) -> None:
    from subagents.corpus import Corpus, make_corpus_tools
    from subagents.model import ToolUseBlock
    from subagents.tools import Toolbox

    with Corpus.open([corpus], cache_dir=tmp_path / "cache") as c:
        box = Toolbox(make_corpus_tools(c))
        ctx = ToolContext("a", SourceRegistry())
        found = await box.call(ToolUseBlock("1", "search_corpus", {"query": "tuples immutable"}), box.names(), ctx)
        sid = re.search(r'"source_id": "(S\d+)"', found.content).group(1)
        pid = re.search(r'"passage_id": "([^"]+)"', found.content).group(1)
        by_sid = await box.call(ToolUseBlock("2", "read_passage", {"passage_id": sid}), box.names(), ctx)
        by_pid = await box.call(ToolUseBlock("3", "read_passage", {"passage_id": pid}), box.names(), ctx)
        assert not by_sid.is_error and by_sid.content == by_pid.content
        unknown = await box.call(ToolUseBlock("4", "read_passage", {"passage_id": "S999"}), box.names(), ctx)
        assert unknown.is_error and "S999" in unknown.content


async def test_a_terminal_tool_ends_the_loop_and_returns_its_validated_input() -> None:
    from pydantic import BaseModel

    from subagents.context import RequestContext
    from subagents.events import EventBus
    from subagents.loop import AgentSpec, LoopState, LoopStop, agent_loop
    from subagents.tools import Tool, Toolbox

    class Answer(BaseModel):
        value: int

    async def done(args: Answer, ctx: ToolContext) -> str:
        return "recorded"

    model = ScriptedModel([tool_call("answer", {"value": "x"}), tool_call("answer", {"value": 42}),
                           text("never reached")])
    spec = AgentSpec(model=model, system="s", toolbox=Toolbox([Tool("answer", "d", Answer, done, terminal=True)]),
                     allowed=["answer"], tool_ctx=ToolContext("a", SourceRegistry()), events=EventBus("r").agent("a"),
                     context=lambda: RequestContext(AgentRole.SUBAGENT, "a", ("answer",)))
    state = await agent_loop(spec, LoopState(messages=[]))
    assert state.stop is LoopStop.DONE and state.terminal == Answer(value=42)  # the invalid call did not end it
    assert len(model.calls) == 2



def test_only_the_entry_point_reads_the_environment() -> None:
    """Settings and the environment are read once (cli.py, settings.py) and passed down; nothing below reads them."""
    import re

    allowed = {ROOT / "lead_agent" / "cli.py", ROOT / "lead_agent" / "settings.py"}
    readers = [f"{p.relative_to(ROOT)}:{n}" for pkg in ("lead_agent", "subagents") for p in sorted((ROOT / pkg).rglob("*.py"))
               if p not in allowed
               for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\bos\.(environ|getenv)\b", line)]
    assert readers == []
