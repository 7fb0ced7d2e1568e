"""Progress for logs and programs: observers of the run's events.

- `PlainProgress`: one timestamped line per event that matters (when stderr is not a terminal):
  the plan, each agent's start with its whole objective, tool calls, the lead's model calls
  (planning, synthesis) with their duration, retries, budgets, each agent's end, the citation
  check, the report, the run's end.
- `JsonProgress`: every event as one JSON line (`EventRecord.to_json`), for other programs.

The live tree for terminals is `lead_agent/live.py` (rich, imported only there).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Callable

from subagents.context import AgentRole
from subagents.events import (AgentEnded, AgentFailed, AgentStarted, BudgetExhausted, CitationChecked,
                              ContextCondensed, CorpusIndexed, CorpusIndexing, EventRecord, FindingsSubmitted, ModelRequested,
                              ModelResponded, ModelRetried, PlanAccepted, PlanRejected, PlanReviewed, ReplanDecided,
                              ReportWritten, RoundEnded, RunBudgetReached, RunEnded, RunResumed, RunStarted, ToolCalled,
                              ToolReturned)

from .progress_tree import ProgressTree, fmt_cost, fmt_secs, fmt_tokens, tool_step


def _clock(ts: str) -> str:
    """`HH:MM:SS` of an ISO timestamp (local time of the machine printing it)."""
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return ts[11:19]


class PlainProgress:
    """One line per event that matters, each starting with the time; nothing is cut mid-word."""

    def __init__(self, write: Callable[[str], None], *, timestamps: bool = True) -> None:
        self.write = write
        self.timestamps = timestamps
        self.tree = ProgressTree()  # the same fold as the live view: step names and figures agree
        self.refused: set[str] = set()  # calls refused over budget: their (error) result says nothing new

    def on_event(self, record: EventRecord) -> None:
        line = self.line(record)
        if not isinstance(record.event, (CorpusIndexed, CorpusIndexing)):
            self.tree.apply(record)
        if line is not None:
            self.write(f"{_clock(record.ts)} {line}" if self.timestamps else line)

    def line(self, record: EventRecord) -> str | None:
        e, who = record.event, record.agent_id
        if isinstance(e, CorpusIndexing):
            return indexing_line(e)
        if isinstance(e, CorpusIndexed):
            skipped = ", ".join(f"{n} {k}" for k, n in e.skipped.items() if n)
            return (f"corpus {e.root}: {e.passages} passages, {e.indexed} file(s) (re)indexed, {e.unchanged} "
                    f"unchanged" + (f", skipped {skipped}" if skipped else "") + _embedded(e) + f" ({e.seconds:.1f}s)")
        if isinstance(e, RunStarted):
            return f"run {record.run_id}: lead={e.lead_model} subagent={e.subagent_model}"
        if isinstance(e, PlanAccepted):
            by = "" if e.author == "lead" and e.version == 1 else f" (plan v{e.version}, by {e.author})"
            return f"round {e.round}: {len(e.tasks)} task(s) [{e.query_type.value}]{by} — {e.rationale}"
        if isinstance(e, PlanReviewed):
            return f"plan v{e.version}: {e.decision.value}" + (f" — {e.reason}" if e.reason else "")
        if isinstance(e, ReplanDecided):
            nxt = f" → {e.next_agent_id}" if e.next_agent_id else ""
            return f"{e.agent_id}: {e.strategy.value}{nxt} — {e.reason}"
        if isinstance(e, RunBudgetReached):
            return f"budget reached: {e.budget} ({e.used:g} of {e.limit:g}); subagents wrap up, the lead writes the report"
        if isinstance(e, RunResumed):
            cut = f", {sum(e.repaired.values())} torn byte(s) cut" if e.repaired else ""
            return f"run {record.run_id}: attempt {e.attempt} (was {e.previous_status}{cut})"
        if isinstance(e, PlanRejected):
            return f"{who}: plan rejected — {'; '.join(e.problems)}"
        if isinstance(e, AgentStarted):
            if e.role is AgentRole.SUBAGENT and e.delegation is not None:
                return f"{who} started ({e.model}): {e.delegation.objective}"
            return f"{who} started ({e.model})"
        if isinstance(e, ModelRequested) and self._is_lead(who):
            return f"{who}: {self.tree.thinking(self.tree.agents[who])} (model call {e.model})…"
        if isinstance(e, ModelResponded) and self._is_lead(who):
            return (f"{who}: model replied in {e.seconds:.1f}s ({fmt_tokens(e.usage.input_tokens)} in, "
                    f"{fmt_tokens(e.usage.output_tokens)} out, stop {e.stop_reason})")
        return self._more(record)

    def _more(self, record: EventRecord) -> str | None:
        e, who = record.event, record.agent_id
        if isinstance(e, ToolCalled) and e.over_budget:
            self.refused.add(e.id)
            return f"{who}: {e.name} refused, over its tool-call budget (not run, not counted)"
        if isinstance(e, ToolCalled):
            return f"{who}: {tool_step(e.name, e.input)}"
        if isinstance(e, ToolReturned) and e.id in self.refused:
            self.refused.discard(e.id)
            return None
        if isinstance(e, ToolReturned) and e.is_error:
            return f"{who}: {e.name} failed — {' '.join(e.content.split())[:300]}"
        if isinstance(e, ModelRetried):
            return f"{who}: retrying {e.model} ({e.status}, attempt {e.attempt}, in {e.wait:.1f}s)"
        if isinstance(e, ContextCondensed):
            return f"{who}: condensed its context ({len(e.notes)} change(s))"
        if isinstance(e, BudgetExhausted):
            return f"{who}: {e.budget.replace('_', ' ')} used up ({e.used:g} of {e.limit:g})" if (
                e.used is not None and e.limit is not None) else f"{who}: {e.budget} used up"
        if isinstance(e, AgentFailed):
            return f"{who}: error — {e.error}"
        if isinstance(e, FindingsSubmitted):
            return None
        if isinstance(e, AgentEnded):
            node = self.tree.agents.get(who)
            claims = f"{node.claims} claim(s), " if node is not None and node.claims is not None else ""
            extra = f" — {e.error}" if e.error else ""
            took = f", {fmt_secs(node.elapsed(record.t))}" if node is not None else ""
            return f"{who} {e.status.value}: {claims}{e.tool_calls} tool call(s){took}{extra}"
        if isinstance(e, RoundEnded):
            node = self.tree.rounds.get(e.round)
            return f"{node.label if node is not None else f'round {e.round}'} done: " + ", ".join(f"{a} {s.value}" for a, s in e.statuses.items())
        if isinstance(e, CitationChecked):
            return f"citation check: {e.supported}/{e.markers} supported, {e.unsupported} unsupported, {e.unknown} unknown"
        if isinstance(e, ReportWritten):
            return f"report written: {e.path}"
        if isinstance(e, RunEnded):
            u = self.tree.usage()
            return (f"run {e.status.value}" + (f" — {e.error}" if e.error else "")
                    + f" ({fmt_secs(record.t)}, {fmt_tokens(u.input_tokens)} in / {fmt_tokens(u.output_tokens)} "
                    f"out, {fmt_cost(self.tree.cost_usd())})")
        return None

    def _is_lead(self, agent_id: str) -> bool:
        """The lead (or a single agent): its model calls are worth a line each."""
        node = self.tree.agents.get(agent_id)
        return node is not None and node.role is not None and node.role is not AgentRole.SUBAGENT


class JsonProgress:
    """Every event as one JSON object per line (the transcript line format), flushed as it happens."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write

    def on_event(self, record: EventRecord) -> None:
        self.write(json.dumps(record.to_json(), ensure_ascii=False))


__all__ = ["JsonProgress", "PlainProgress"]


def indexing_line(e: CorpusIndexing) -> str:
    """Progress of a corpus indexing: files examined, then passages embedded."""
    if e.stage == "embedding":
        return (f"indexing corpus {e.root}: {e.done} of {e.total} passage(s) embedded for semantic ranking "
                f"({e.seconds:.0f}s)")
    if e.stage == "pages":
        return f"indexing corpus {e.root}: reading {e.item}, page {e.done} of {e.total} ({e.seconds:.0f}s)"
    return f"indexing corpus {e.root}: {e.done} of {e.total} file(s) examined ({e.seconds:.0f}s)"


def _embedded(e: CorpusIndexed) -> str:
    """', 120 embedded; semantic ranking on' (nothing for runs recorded before semantic ranking)."""
    if not e.semantic:
        return ""
    return (f", {e.embedded} embedded" if e.embedded else "") + f"; semantic ranking {e.semantic}"
