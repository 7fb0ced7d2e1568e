"""Plain progress lines: an observer of the run's events that prints one line per event that matters."""

from __future__ import annotations

from typing import Callable

from subagents.context import AgentRole
from subagents.events import (AgentEnded, AgentStarted, CorpusIndexed, EventRecord, FindingsSubmitted, PlanAccepted,
                              RunStarted)


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
            return f"round {e.round}: {len(e.tasks)} subagent(s) [{e.query_type.value}] — {e.rationale}"
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
