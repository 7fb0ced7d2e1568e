"""The progress fold: what each agent is doing at every event of a scripted run, as the live tree and
the plain lines say it."""

from __future__ import annotations

from pathlib import Path

from lead_agent import api
from lead_agent.progress_tree import ProgressTree
from subagents.events import EventRecord, ModelRequested, ToolCalled
from subagents.models.scripted import ScriptedModel, tool_call

from .conftest import lead_report_from_findings, note_tools, submit_first_hit

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
        "gather": "asyncio.gather returns results in the order of the awaitables passed to it."}


class Steps:
    """Folds every event and notes each agent's step right after it."""

    def __init__(self) -> None:
        self.tree = ProgressTree()
        self.seen: list[tuple[str, str, str]] = []  # (agent, event kind, step)

    def on_event(self, rec: EventRecord) -> None:
        self.tree.apply(rec)
        node = self.tree.agents.get(rec.agent_id)
        if node is not None:
            self.seen.append((rec.agent_id, rec.kind, node.step()))


async def test_steps_name_what_each_agent_is_doing(tmp_path: Path) -> None:
    plan = {"query_type": "breadth_first", "rationale": "two APIs",
            "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]},
                      {"objective": "gather ordering", "tools": ["search_notes"], "budget": {"max_tool_calls": 1}}]}
    lead = ScriptedModel([tool_call("delegate", plan), lead_report_from_findings])
    sub = ScriptedModel(per_agent={
        "r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit],
        "r1-sub2": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    steps = Steps()
    await api.research("How do TaskGroup and gather behave?", runs_dir=tmp_path, lead_model=lead, subagent_model=sub,
                       extra_tools=note_tools(DOCS), max_rounds=1, observers=[steps], use_config_file=False, environ={})
    lead_steps = [s for a, k, s in steps.seen if a == "lead" and k == ModelRequested.kind]
    assert lead_steps == ["planning", "reading findings, writing the report"]
    assert ("lead", ToolCalled.kind, "delegating") in steps.seen
    assert ("lead", "round_start", "waiting for round 1 (2 subagents)") in steps.seen
    assert ("r1-sub1", ToolCalled.kind, "calling search_notes") in steps.seen
    assert ("r1-sub1", ToolCalled.kind, "submitting findings") in steps.seen
    # r1-sub2's one tool call used its budget up: its next model call asks it to wrap up
    assert ("r1-sub2", ModelRequested.kind, "wrapping up (tool budget used up)") in steps.seen
    tree = steps.tree
    assert [a.status.value for a in tree.subagents_of(1)] == ["ok", "partial"]
    assert all(a.step() == "" for a in tree.agents.values())  # everyone has ended
    assert tree.counts() == {"subagents": 2, "running": 0, "done": 2, "failed": 0, "tool_calls": 3,
                             "model_calls": 6}
    assert tree.usage().input_tokens == 60 and tree.status.value == "completed"


async def test_the_lead_says_whether_it_may_still_start_a_gap_round(tmp_path: Path) -> None:
    plan = {"query_type": "straightforward", "rationale": "one fact",
            "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]}]}
    lead = ScriptedModel([tool_call("delegate", plan), tool_call("delegate", plan), lead_report_from_findings])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit] * 2)
    steps = Steps()
    await api.research("What does a TaskGroup do when a task fails?", runs_dir=tmp_path, lead_model=lead,
                       subagent_model=sub, extra_tools=note_tools(DOCS), max_rounds=2, observers=[steps],
                       use_config_file=False, environ={})
    lead_steps = [s for a, k, s in steps.seen if a == "lead" and k == ModelRequested.kind]
    assert lead_steps == ["planning", "reading findings: a gap round or the report",
                          "reading findings, writing the report"]


def test_the_live_tree_stays_on_a_small_screen() -> None:
    from io import StringIO

    from rich.console import Console

    from lead_agent.live import render
    from lead_agent.progress_tree import AgentNode, RoundNode
    from subagents.context import AgentRole, AgentStatus

    tree = ProgressTree(question="q?", lead_model="m", subagent_model="m")
    tree.agents["lead"] = AgentNode("lead", role=AgentRole.LEAD, started=0.0)
    for r in (1, 2):
        ids = [f"r{r}-sub{i}" for i in range(1, 11)]
        tree.rounds[r] = RoundNode(r, ids, started=float(r), ended=2.0 if r == 1 else None, query_type="breadth_first")
        for a in ids:
            tree.agents[a] = AgentNode(a, role=AgentRole.SUBAGENT, round=r, started=float(r), objective=f"objective {a}",
                                       status=AgentStatus.OK if r == 1 else AgentStatus.RUNNING)

    def lines(height: int | None) -> list[str]:
        out = StringIO()
        Console(file=out, width=120, height=40, color_system=None).print(render(tree, 3.0, 110, height))
        return out.getvalue().splitlines()

    tall = lines(None)
    assert len(tall) > 40 and any("objective r1-sub3" in x for x in tall)
    medium = lines(30)  # room for every agent, not for their objectives
    assert len(medium) <= 30 and not any("objective" in x for x in medium) and any("r1-sub3" in x for x in medium)
    small = lines(20)
    assert len(small) <= 20 and not any("objective" in x for x in small)
    assert any("round 1" in x and "10/10 done (10 ok)" in x for x in small)  # the finished round, folded
    assert not any("r1-sub3" in x for x in small) and any("r2-sub10" in x for x in small)
