"""Plain progress lines: an observer of the run's events that prints one line per event that matters."""

from __future__ import annotations

from typing import Callable

from subagents.context import AgentRole
from subagents.events import (AgentEnded, AgentStarted, CorpusIndexed, EventRecord, FindingsSubmitted, PlanAccepted,
                              PlanReviewed, ReplanDecided, RunBudgetReached, RunResumed, RunStarted)


class PlainProgress:
    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self._claims: dict[str, int] = {}

    def on_event(self, record: EventRecord) -> None:
        line = self.line(record)
        if line is not None:
            self.write(line)

    def line(self, record: EventRecord) -> str | None:
        e = record.event
        if isinstance(e, CorpusIndexed):
            skipped = ", ".join(f"{n} {k}" for k, n in e.skipped.items() if n)
            return (f"  {e.root}: {e.passages} passages, {e.indexed} file(s) (re)indexed, {e.unchanged} unchanged"
                    + (f", skipped {skipped}" if skipped else "") + f" ({e.seconds:.1f}s)")
        if isinstance(e, RunStarted):
            return f"run {record.run_id}: lead={e.lead_model} subagent={e.subagent_model}"
        if isinstance(e, PlanAccepted):
            by = "" if e.author == "lead" and e.version == 1 else f" (plan v{e.version}, by {e.author})"
            return f"round {e.round}: {len(e.tasks)} task(s) [{e.query_type.value}]{by} — {e.rationale}"
        if isinstance(e, PlanReviewed):
            return f"plan v{e.version}: {e.decision.value}" + (f" — {e.reason}" if e.reason else "")
        if isinstance(e, ReplanDecided):
            nxt = f" → {e.next_agent_id}" if e.next_agent_id else ""
            return f"  {e.agent_id}: {e.strategy.value}{nxt} — {e.reason}"
        if isinstance(e, RunBudgetReached):
            return f"budget reached: {e.budget} ({e.used:g} of {e.limit:g}); subagents wrap up, the lead writes the report"
        if isinstance(e, RunResumed):
            cut = f", {sum(e.repaired.values())} torn byte(s) cut" if e.repaired else ""
            return f"run {record.run_id}: attempt {e.attempt} (was {e.previous_status}{cut})"
        if isinstance(e, AgentStarted) and e.role is AgentRole.SUBAGENT and e.delegation is not None:
            return f"  {record.agent_id} started: {e.delegation.objective}"
        if isinstance(e, FindingsSubmitted):
            self._claims[record.agent_id] = len(e.findings.claims)
            return None
        if isinstance(e, AgentEnded) and record.agent_id in self._claims:
            extra = f" — {e.error}" if e.error else ""
            return (f"  {record.agent_id} {e.status.value}: {self._claims[record.agent_id]} claim(s), "
                    f"{e.tool_calls} tool call(s){extra}")
        return None
