"""One delegation round, run as a DAG: independent tasks start at once (under the concurrency
limiter), a dependent task starts when its dependencies are done and gets their findings to read
(`read_findings`, and the typed context). A task that fails or misses its success criteria gets a
replanning strategy (lead_agent/replan.py): a retry or an alternative tool runs here, in code, as
a new attempt (`<agent>-a2`, …); skip, replan and stop go back to the lead. Every decision is a
`replan_decision` event in the lead's stream.

Budgets: no task starts once the run's budget is reached, and a task is never given more tokens or
seconds than the run has left. A resumed run hands in the results of agents that finished
(`reuse`) and the decisions already recorded (`recorded`): those are not run or emitted again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import trio

from subagents.context import AgentStatus, FailureCause, Strategy, SubagentReport
from subagents.delegation import Delegation, Findings, FindingsStatus
from subagents.events import AgentEvents, EventBus, ReplanDecided
from subagents.ledger import Ledger
from subagents.plan_graph import graph_problems
from subagents.tool_names import SUBMIT_FINDINGS
from subagents.worker import SubagentResult, SubagentRun, run_subagent

from .replan import Decision, Failure, assess, decide

LEAD_ID = "lead"


@dataclass
class TaskOutcome:
    result: SubagentResult  # the last attempt's
    decision: Decision | None = None  # None: it succeeded

    @property
    def failed(self) -> bool:
        return self.decision is not None


def attempt_id(agent_id: str, attempt: int) -> str:
    return agent_id if attempt == 1 else f"{agent_id}-a{attempt}"


def clamp_budget(delegation: Delegation, ledger: Ledger | None, model: str) -> Delegation:
    """The delegation with a budget no larger than what the run has left."""
    if ledger is None:
        return delegation
    b = delegation.budget
    update: dict[str, float | int] = {}
    tokens = ledger.remaining_tokens(model)
    if tokens is not None and tokens < b.max_tokens:
        update["max_tokens"] = max(1, tokens)
    seconds = ledger.remaining_seconds()
    if seconds is not None and seconds < b.max_seconds:
        update["max_seconds"] = max(0.001, round(seconds, 3))
    return delegation.model_copy(update={"budget": b.model_copy(update=update)}) if update else delegation


def skipped_result(agent_id: str, delegation: Delegation, reason: str) -> SubagentResult:
    return SubagentResult(agent_id, delegation, Findings(status=FindingsStatus.FAILED, open_questions=[reason]),
                          AgentStatus.SKIPPED, stop="skipped")


def report_of(outcome: TaskOutcome) -> SubagentReport:
    r, d = outcome.result, outcome.decision
    searched = any(n for t, n in r.tool_successes.items() if t != SUBMIT_FINDINGS)
    return SubagentReport(r.agent_id, r.delegation, r.status, r.findings, r.error,
                          d.strategy if d else None, d.reason if d else "", searched=searched)


@dataclass
class RoundRunner:
    bus: EventBus
    events: AgentEvents  # the lead's stream: decisions are recorded there
    sub: SubagentRun
    concurrency: int
    ledger: Ledger | None = None
    replans_left: int = 0
    reuse: Mapping[str, SubagentResult] = field(default_factory=dict)
    recorded: Mapping[str, ReplanDecided] = field(default_factory=dict)

    async def run(self, round_no: int, tasks: Sequence[tuple[str, Delegation]]) -> list[TaskOutcome]:
        problems = graph_problems([(d.id, list(d.depends_on)) for _, d in tasks])
        if problems:  # checked with the plan already; a round never waits on a task that cannot finish
            raise ValueError("cannot run this round: " + "; ".join(problems))
        limiter = trio.CapacityLimiter(self.concurrency)
        agent_of = {d.id: a for a, d in tasks if d.id}
        done = {a: trio.Event() for a, _ in tasks}
        outcomes: dict[str, TaskOutcome] = {}

        async def one(agent_id: str, delegation: Delegation) -> None:
            try:
                deps = [agent_of[t] for t in delegation.depends_on]
                for dep in deps:
                    await done[dep].wait()
                outcomes[agent_id] = await self.task(round_no, agent_id, delegation,
                                                     [outcomes[d] for d in deps], limiter)
            finally:
                done[agent_id].set()

        async with trio.open_nursery() as nursery:
            for agent_id, delegation in tasks:
                nursery.start_soon(one, agent_id, delegation)
        return [outcomes[a] for a, _ in tasks]

    async def task(self, round_no: int, agent_id: str, delegation: Delegation, deps: list[TaskOutcome],
                   limiter: trio.CapacityLimiter) -> TaskOutcome:
        blocked = [o.result.agent_id for o in deps if o.failed]
        if blocked or (self.ledger is not None and self.ledger.stopped and agent_id not in self.reuse):
            failure = (Failure(FailureCause.DEPENDENCY_FAILED, f"its dependency {', '.join(blocked)} did not succeed")
                       if blocked else Failure(FailureCause.RUN_BUDGET, "the run's budget was reached before it started"))
            return TaskOutcome(skipped_result(agent_id, delegation, failure.reason),
                               self.decision(agent_id, agent_id, failure, delegation, 1))
        reports = [report_of(o) for o in deps]
        attempt, current = 1, delegation
        while True:
            aid = attempt_id(agent_id, attempt)
            result = self.reuse.get(aid)
            if result is None:
                if self.ledger is not None and self.ledger.stopped:  # a retry the budget no longer allows
                    failure = Failure(FailureCause.RUN_BUDGET, "the run's budget was reached before it started")
                    return TaskOutcome(skipped_result(aid, current, failure.reason),
                                       self.decision(agent_id, aid, failure, current, attempt))
                async with limiter:
                    result = await run_subagent(clamp_budget(current, self.ledger, self.sub.model.name), agent_id=aid,
                                                run=self.sub, events=self.bus.agent(aid, LEAD_ID), round_no=round_no,
                                                dependencies=reports)
            failure = assess(result)
            if failure is None:
                return TaskOutcome(result)
            decision = self.decision(agent_id, aid, failure, current, attempt)
            if decision.strategy not in (Strategy.RETRY, Strategy.ALTERNATIVE_TOOL):
                return TaskOutcome(result, decision)
            if decision.strategy is Strategy.ALTERNATIVE_TOOL:
                current = current.model_copy(update={"tools": list(decision.tools)})
            attempt += 1

    def decision(self, base_id: str, agent_id: str, failure: Failure, delegation: Delegation,
                 attempt: int) -> Decision:
        """The strategy for a failed attempt: the one recorded before a resume, else decided and recorded."""
        seen = self.recorded.get(agent_id)
        if seen is not None:
            return Decision(seen.strategy, seen.cause, seen.reason, tuple(seen.tools))
        line = self.ledger.reached if self.ledger is not None else None
        d = decide(failure, delegation, attempt=attempt, run_tools=self.sub.toolbox.names(),
                   replans_left=self.replans_left, budget_reached=line.budget.value if line else None)
        nxt = attempt_id(base_id, attempt + 1) if d.strategy in (Strategy.RETRY, Strategy.ALTERNATIVE_TOOL) else None
        self.events.emit(ReplanDecided(agent_id, d.strategy, d.cause, d.reason, nxt, list(d.tools)))
        return d
