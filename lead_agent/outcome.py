"""How a finished run ends, judged from what its subagents returned (not from the lead's prose).

- `completed`: the report rests on at least one subagent's claim;
- `completed_empty`: a report was written, but no subagent returned a claim (nothing was found);
- `failed`: no subagent ran (no plan was accepted), or every subagent failed with an error.
A single agent (mode `single`, no subagents) is judged by its report: `completed` when at least one of
its citations is supported by retrieved text, else `completed_empty`.
"Possibly related" material is never a claim here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from subagents.context import AgentStatus
from subagents.events import RunStatus
from subagents.worker import SubagentResult

MAX_LISTED = 3  # failed subagents named in a reason


@dataclass(frozen=True)
class Outcome:
    status: RunStatus
    reason: str | None = None  # why the run did not simply complete


def judge_outcome(results: Sequence[SubagentResult]) -> Outcome:
    if not results:
        return Outcome(RunStatus.FAILED, "no subagent ran: nothing was researched")
    failed = [r for r in results if r.status is AgentStatus.FAILED and r.error]
    if len(failed) == len(results):
        named = "; ".join(f"{r.agent_id}: {r.error}" for r in failed[:MAX_LISTED])
        more = f" (and {len(failed) - MAX_LISTED} more)" if len(failed) > MAX_LISTED else ""
        return Outcome(RunStatus.FAILED, f"every subagent failed ({len(failed)}): {named}{more}")
    if not any(r.findings.claims for r in results):
        return Outcome(RunStatus.COMPLETED_EMPTY,
                       f"no subagent found anything: {len(results)} subagent(s) returned no claim")
    return Outcome(RunStatus.COMPLETED)


def judge_single(supported_citations: int) -> Outcome:
    if supported_citations:
        return Outcome(RunStatus.COMPLETED)
    return Outcome(RunStatus.COMPLETED_EMPTY, "the single agent's report cites no retrieved passage")
