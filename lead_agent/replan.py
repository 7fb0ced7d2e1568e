"""Replanning strategies: what to do with a task that failed or missed its success criteria.

`assess` names the cause from typed facts (the worker's result, the findings, the criteria);
`decide` picks one strategy and says why:
  - retry: a transient cause (a model error after the adapter's own retries, a timeout), done
    in code, at most MAX_RETRIES times per task;
  - alternative tool: a tool failed on every call and another tool family of the run can serve;
  - skip: the task is not critical, or cannot run (the run's budget is spent);
  - replan: the lead writes a new plan from what succeeded (at most --max-replans times);
  - stop: no replan is left (--max-replans; research rounds, capped by --max-rounds, do not use up
    replans, nor replans research rounds); the lead writes the report from what it has (with --approve
    a person may allow one more plan).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from subagents.context import AgentStatus, FailureCause, Strategy
from subagents.delegation import Delegation, FindingsStatus, unmet_criteria
from subagents.loop import LoopStop
from subagents.tool_names import TOOL_FAMILIES
from subagents.worker import SubagentResult

MAX_RETRIES = 1  # in-code retries of one task for a transient cause
TRANSIENT = (FailureCause.MODEL_ERROR, FailureCause.TIMEOUT)


@dataclass(frozen=True)
class Failure:
    cause: FailureCause
    reason: str
    tool: str | None = None  # the tool that failed (TOOL_FAILED)


@dataclass(frozen=True)
class Decision:
    strategy: Strategy
    cause: FailureCause
    reason: str
    tools: tuple[str, ...] = ()  # ALTERNATIVE_TOOL: the tools the next attempt gets


def assess(result: SubagentResult) -> Failure | None:
    """Why a finished task counts as failed (None: it succeeded, possibly in part)."""
    f = result.findings
    if result.error is not None:
        return Failure(FailureCause.MODEL_ERROR if result.retryable else FailureCause.OTHER, result.error)
    if f.could_not_accomplish is not None:
        c = f.could_not_accomplish
        return Failure(FailureCause.COULD_NOT, c.reason + (f"; suggests: {c.suggestion}" if c.suggestion else ""))
    if f.status is FindingsStatus.FAILED or result.status is AgentStatus.FAILED:
        if result.stop == LoopStop.RUN_BUDGET.value:
            return Failure(FailureCause.RUN_BUDGET, "the run's budget was reached before it found anything")
        broken = [t for t, n in result.tool_errors.items() if n and not result.tool_successes.get(t)]
        if broken:
            return Failure(FailureCause.TOOL_FAILED, f"every call of {broken[0]} failed", broken[0])
        if result.stop == LoopStop.TIME_BUDGET.value:
            return Failure(FailureCause.TIMEOUT, "its time budget ran out before it found anything")
        return Failure(FailureCause.NOTHING_FOUND, "it found nothing that answers the objective")
    missed = unmet_criteria(f, result.delegation.success_criteria)
    if missed:
        return Failure(FailureCause.CRITERIA_MISSED, "missed its success criteria: " + "; ".join(missed))
    return None


def alternative_tools(delegation: Delegation, failed: str, run_tools: Sequence[str]) -> tuple[str, ...]:
    """The delegation's tools with the failed tool's family replaced by another family of the run."""
    family = next((f for f in TOOL_FAMILIES if failed in f), None)
    if family is None:
        return ()
    for other in TOOL_FAMILIES:
        if other is family:
            continue
        usable = [t for t in other if t in run_tools]
        if usable and not set(usable) <= set(delegation.tools):
            kept = [t for t in delegation.tools if t not in family]
            return tuple(dict.fromkeys(kept + usable))
    return ()


def decide(failure: Failure, delegation: Delegation, *, attempt: int, run_tools: Sequence[str],
           replans_left: int, budget_reached: str | None) -> Decision:
    """One strategy for a failed task, with its reason."""
    if budget_reached is not None or failure.cause is FailureCause.RUN_BUDGET:
        why = f"the run's {budget_reached} budget was reached" if budget_reached else failure.reason
        return Decision(Strategy.SKIP, failure.cause, f"{failure.reason}; not retried: {why}")
    if failure.cause in TRANSIENT and attempt <= MAX_RETRIES:
        return Decision(Strategy.RETRY, failure.cause, f"{failure.reason}: a transient cause, run again "
                                                       f"(retry {attempt} of {MAX_RETRIES})")
    if failure.cause is FailureCause.TOOL_FAILED and failure.tool is not None:
        tools = alternative_tools(delegation, failure.tool, run_tools)
        if tools:
            return Decision(Strategy.ALTERNATIVE_TOOL, failure.cause,
                            f"{failure.reason}; run again with {', '.join(tools)}", tools)
    if not delegation.critical:
        return Decision(Strategy.SKIP, failure.cause, f"{failure.reason}; the task is not critical")
    if replans_left > 0:
        return Decision(Strategy.REPLAN, failure.cause,
                        f"{failure.reason}; the lead is asked for a new plan ({replans_left} replan(s) left)")
    return Decision(Strategy.STOP, failure.cause,
                    f"{failure.reason}; no replan is left (--max-replans): the report is written "
                    "from what there is")
