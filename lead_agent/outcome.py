"""How a finished run ends, judged from what its subagents returned (not from the lead's prose).

- `completed`: the report rests on at least one subagent's claim;
- `completed_empty`: a report was written, but no subagent returned a claim (nothing was found);
- `failed`: no subagent ran (no plan was accepted), or every subagent failed with an error (its own, or
  every one of its tool calls failing).
A single agent (mode `single`, no subagents) is judged by its report: `completed` when at least one of
its citations is supported by retrieved text, else `completed_empty`.
"Possibly related" material is never a claim here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from subagents.context import AgentStatus
from subagents.events import RunStatus
from subagents.tool_names import SUBMIT_FINDINGS
from subagents.worker import SubagentResult

MAX_LISTED = 3  # failed subagents named in a reason


@dataclass(frozen=True)
class Outcome:
    status: RunStatus
    reason: str | None = None  # why the run did not simply complete


def judge_outcome(results: Sequence[SubagentResult]) -> Outcome:
    if not results:
        return Outcome(RunStatus.FAILED, "no subagent ran: nothing was researched")
    failed = [r for r in results if r.status is AgentStatus.FAILED and failure_of(r)]
    if len(failed) == len(results):
        named = "; ".join(f"{r.agent_id}: {failure_of(r)}" for r in failed[:MAX_LISTED])
        more = f" (and {len(failed) - MAX_LISTED} more)" if len(failed) > MAX_LISTED else ""
        return Outcome(RunStatus.FAILED, f"every subagent failed ({len(failed)}): {named}{more}")
    if not any(r.findings.claims for r in results):
        return Outcome(RunStatus.COMPLETED_EMPTY,
                       f"no subagent found anything: {len(results)} subagent(s) returned no claim")
    return Outcome(RunStatus.COMPLETED)


def failure_of(r: SubagentResult) -> str | None:
    """The error a subagent failed with: its own, or every call of its tools failing (nothing retrieved)."""
    if r.error:
        return r.error
    broken = [t for t, n in r.tool_errors.items() if n]
    if broken and not any(n for t, n in r.tool_successes.items() if t != SUBMIT_FINDINGS):
        return f"every tool call failed ({', '.join(f'{t} x{r.tool_errors[t]}' for t in broken)})"
    return None


def judge_single(supported_citations: int) -> Outcome:
    if supported_citations:
        return Outcome(RunStatus.COMPLETED)
    return Outcome(RunStatus.COMPLETED_EMPTY, "the single agent's report cites no retrieved passage")
