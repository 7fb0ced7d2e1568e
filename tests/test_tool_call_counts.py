"""Tool-call counts while a run is live agree with the final count: calls refused for being over an
agent's tool-call budget are not counted as calls (they never ran); they are counted apart, as refusals.
The live tree's fold (ProgressTree, also behind the plain lines), the manifest's fold (RunTrace) and
`--json-progress` lines all say so, and each equals the agent's own count at its end."""

from __future__ import annotations

import json
from pathlib import Path

from lead_agent import api
from lead_agent.live import agent_line
from lead_agent.progress import PlainProgress
from lead_agent.progress_tree import ProgressTree
from subagents.events import EventRecord
from subagents.models.scripted import ScriptedModel, tool_call
from subagents.runs import RunTrace, read_run

from .conftest import lead_report_from_findings, note_tools, submit_first_hit

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
        "gather": "asyncio.gather returns results in the order of the awaitables passed to it."}
BUDGET = 2
PLAN = {"query_type": "straightforward", "rationale": "one fact",
        "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"],
                   "budget": {"max_tool_calls": BUDGET}}]}
SEARCHES = ["TaskGroup", "gather", "cancelled", "awaitables", "raises"]  # one turn, more calls than the budget


class CountsSeen:
    """After every event: the subagent's tool-call count as the live tree and the manifest fold it."""

    def __init__(self) -> None:
        self.tree, self.trace = ProgressTree(), RunTrace()
        self.live: list[int] = []
        self.manifest: list[int] = []

    def on_event(self, record: EventRecord) -> None:
        self.tree.apply(record)
        self.trace.apply(record, keep=False)
        if "r1-sub1" in self.tree.agents:
            self.live.append(self.tree.agents["r1-sub1"].tool_calls)
            self.manifest.append(self.trace.agents["r1-sub1"].tool_calls)


async def test_calls_refused_over_the_budget_are_not_counted_live_and_are_shown_as_refusals(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", PLAN), lead_report_from_findings])
    first, *more = SEARCHES
    sub = ScriptedModel(per_agent={"r1-sub1": [
        tool_call("search_notes", {"query": first}, *(("search_notes", {"query": q}) for q in more)),
        submit_first_hit]})
    seen, lines = CountsSeen(), []
    result = await api.research("What does a TaskGroup do when a task raises?", runs_dir=tmp_path / "runs",
                                lead_model=lead, subagent_model=sub, extra_tools=note_tools(DOCS),
                                observers=[seen, PlainProgress(lines.append, timestamps=False)],
                                use_config_file=False, environ={})
    m = json.loads((result.run_dir / "manifest.json").read_text())
    entry = next(a for a in m["agents"] if a["agent_id"] == "r1-sub1")
    final = entry["tool_calls"]
    assert final == BUDGET and entry["refused_over_budget"] == len(SEARCHES) - BUDGET
    assert max(seen.live) == final and seen.live[-1] == final  # never more than the final count, live
    assert max(seen.manifest) == final and seen.manifest[-1] == final
    refused = len(SEARCHES) - BUDGET
    assert seen.tree.agents["r1-sub1"].refused_over_budget == refused  # shown as refusals, apart
    row = agent_line(seen.tree.agents["r1-sub1"], seen.tree.last_t).plain  # the live tree's row
    assert f"{BUDGET}/{BUDGET} tool calls" in row and f"{refused} refused over budget" in row
    assert read_run(result.run_dir).trace.agents["r1-sub1"].refused_over_budget == refused

    plain = [ln for ln in lines if ln.startswith("r1-sub1")]
    assert sum("calling search_notes" in ln for ln in plain) == BUDGET  # only the calls that ran show as running
    assert sum("refused" in ln and "over its tool-call budget" in ln for ln in plain) == refused

    # the transcript (= --json-progress) line of each refused call says so
    calls = [json.loads(ln) for ln in (result.run_dir / "agents" / "r1-sub1.jsonl").read_text().splitlines()]
    calls = [c for c in calls if c["kind"] == "tool_call" and c["data"]["name"] == "search_notes"]
    flags = [c["data"].get("over_budget", False) for c in calls]  # concurrent calls: lines in no fixed order
    assert len(flags) == len(SEARCHES) and flags.count(True) == refused
