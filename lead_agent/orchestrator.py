"""The lead agent's run: plan by calling `delegate`, pass each plan through the checks and the
approval gate, run its round as a DAG of subagents (lead_agent/rounds.py), hand the findings and
the replanning decisions back, allow gap rounds and replans up to their caps, and return the
lead's final text as the draft report. Everything it does is emitted as typed events.

Two caps, counted apart: research rounds (the first round and the lead's gap rounds) are bounded by
--max-rounds; replan rounds (a new plan after failed tasks) by --max-replans. A replan never uses up a
research round. The run's budgets (cost, tokens, deadline) bound both.

Plans are data: every version the lead, a person or a replan writes is a `plan` event (version,
round, author, diff from the previous version) and a plan.vN.json file. When the run's budget is
reached the lead gets one more call to write its report from what it has.
"""

from __future__ import annotations

import dataclasses
import json
import traceback
from dataclasses import dataclass, field

from subagents.context import (AgentRole, AgentStatus, FailureCause, LeadLimits, RequestContext, RoundReport,
                               Strategy)
from subagents.delegation import Delegation, Plan, plan_problems, plan_schema, tasks_per_query_type
from subagents.events import (AgentEnded, AgentFailed, AgentStarted, EventBus, MessageAdded, PlanAccepted,
                              PlannedTask, PlanRejected, PlanReviewed, ReplanDecided, ReviewDecision, RoundEnded,
                              RoundPurpose, RoundStarted, RunStatus)
from subagents.ledger import Ledger
from subagents.loop import (AgentSpec, ContextHook, Limits, LoopState, LoopStop, add_message, agent_loop,
                            answer_tool_calls)
from subagents.model import Message, Model, TextBlock, ToolChoice, ToolUseBlock
from subagents.prompting import PromptSet
from subagents.sources import SourceRegistry
from subagents.tool_names import DELEGATE
from subagents.tools import StopAgent, Tool, ToolContext, ToolCrashed, ToolError, Toolbox
from subagents.worker import SubagentResult, SubagentRun, findings_view

from .approval import (MAX_EDITS, ApprovalMode, Approver, Defer, PlanEditError, PlanReview, Refuse, ReviewReason,
                       Verdict, plan_diff)
from .replan import Decision
from .rounds import LEAD_ID, RoundRunner, TaskOutcome, report_of


class LeadError(RuntimeError):
    """The lead could not produce a report."""


@dataclass(frozen=True)
class LeadSettings:
    question: str
    max_subagents: int = 5
    max_rounds: int = 2
    concurrency: int = 4
    lead_max_tokens: int = 8192
    subagent_max_tokens: int = 4096
    lead_max_turns: int = 12
    estimate: bool = False  # plan, then stop: the delegate tool is terminal and runs nothing
    max_replans: int = 2
    approval: ApprovalMode = ApprovalMode.NONE


@dataclass
class PendingRound:
    """A plan version that passed the checks and whose round has not run yet (or not to its end)."""

    round: int
    version: int
    plan: Plan
    author: str
    reason: ReviewReason
    approved: bool = False  # False: the gate still has to let it through


@dataclass
class LeadState:
    plans: list[Plan] = field(default_factory=list)  # the plans that ran (or were estimated), one per round
    results: list[tuple[int, SubagentResult]] = field(default_factory=list)  # (round, final attempt's result)
    rounds: list[RoundReport] = field(default_factory=list)
    rejected: int = 0
    versions: int = 0  # plan versions recorded
    last_plan: Plan | None = None  # the latest version (diffs are taken from it)
    replans: int = 0  # rounds that were replans
    replan_for: tuple[str, ...] = ()  # agents whose failure asks the lead for a new plan now
    replan_stopped: bool = False  # a failure met the replan cap: the lead writes the report
    decisions: dict[str, Decision] = field(default_factory=dict)  # final decision per failed task
    halt: RunStatus | None = None  # the lead stopped for a person (awaiting approval / rejected)
    pending: PendingRound | None = None  # a resumed run's accepted plan whose round is still to run
    verdict: Verdict | None = None  # a person's decision given ahead (`research approve --plan`)
    reuse: dict[str, SubagentResult] = field(default_factory=dict)  # a resumed run: agents that finished
    recorded: dict[str, ReplanDecided] = field(default_factory=dict)  # a resumed run: decisions made
    rounds_started: set[int] = field(default_factory=set)
    rounds_ended: set[int] = field(default_factory=set)


@dataclass
class ResumePoint:
    """Where a resumed lead continues: its conversation and counters, rebuilt from its events."""

    messages: list[Message]
    turns: int
    answered_calls: set[str]  # tool_use ids whose call was already announced (tool_call event)
    draft: str | None = None  # the lead had written its final text; only the report is left


def round_report(round_no: int, results: list[SubagentResult] | list[TaskOutcome],
                 sources: SourceRegistry) -> RoundReport:
    outcomes = [r if isinstance(r, TaskOutcome) else TaskOutcome(r) for r in results]
    titles: dict[str, str] = {}
    for o in outcomes:
        for c in o.result.findings.claims + o.result.findings.related:
            for sid in c.source_ids:
                src = sources.get(sid)
                if src is not None:
                    titles[sid] = src.title
    return RoundReport(round_no, tuple(report_of(o) for o in outcomes), titles)


def findings_json(report: RoundReport) -> str:
    """The round's findings as the lead's prompt shows them ("</" escaped: quoted text cannot close the tag)."""
    subs = []
    for s in report.subagents:
        view = findings_view(s)
        view.update(status=s.status.value, error=s.error)
        if s.decision is not None:
            view["decision"] = {"strategy": s.decision.value, "reason": s.decision_reason}
        subs.append({k: v for k, v in view.items() if v is not None or k == "error"})
    data = {"subagents": subs, "sources": dict(report.source_titles)}
    return json.dumps(data, indent=1, ensure_ascii=False).replace("</", "<\\/")


class Lead:
    def __init__(self, *, settings: LeadSettings, bus: EventBus, lead_model: Model, subagents: SubagentRun,
                 prompts: PromptSet, ledger: Ledger | None = None, approver: Approver | None = None) -> None:
        self.s = settings
        self.bus = bus
        self.lead_model = lead_model
        self.sub = subagents
        self.prompts = prompts
        self.ledger = ledger
        self.approver = approver
        self.state = LeadState()
        self.events = bus.agent(LEAD_ID)
        self.resume_point: ResumePoint | None = None
        self._wrapping = False

    # ---- what the lead may do, stated once for prompts and models alike
    def replans_left(self) -> int:
        """New plans the lead may still write after failures: --max-replans (research rounds do not count)."""
        return max(0, self.s.max_replans - self.state.replans)

    def research_rounds_left(self) -> int:
        """Research rounds (the first and gap rounds) still allowed by --max-rounds (replans do not count)."""
        return max(0, self.s.max_rounds - (len(self.state.plans) - self.state.replans))

    def rounds_left(self) -> int:
        """Rounds the lead may start now: a replan after failures (--max-replans), else a gap round
        (--max-rounds); none once the run's budget is reached."""
        if self.ledger is not None and self.ledger.stopped and not self.s.estimate:
            return 0
        if self.state.replan_for:
            return self.replans_left()
        if self.state.replan_stopped:
            return 0
        return self.research_rounds_left()

    def limits(self) -> LeadLimits:
        return LeadLimits(tasks_per_query_type=tasks_per_query_type(self.s.max_subagents),
                          max_rounds=self.s.max_rounds, rounds_left=self.rounds_left(),
                          subagent_tools=tuple(self.sub.toolbox.names()), replans_left=self.replans_left(),
                          replan_for=self.state.replan_for)

    def context(self) -> RequestContext:
        return RequestContext(role=AgentRole.LEAD, agent_id=LEAD_ID, allowed_tools=(DELEGATE,),
                              question=self.s.question, limits=self.limits(), rounds=tuple(self.state.rounds),
                              plans_rejected=self.state.rejected, wrap_up=self._wrapping)

    def tool_catalogue(self) -> str:
        return "\n".join(f"- {spec.name}: {spec.description}" for spec in self.sub.toolbox.specs())

    def effort_limits(self) -> str:
        return ", ".join(f"{qt.value} {n}" for qt, n in tasks_per_query_type(self.s.max_subagents).items())

    def system_prompt(self) -> str:
        return self.prompts.render("lead_system", max_subagents=self.s.max_subagents, max_rounds=self.s.max_rounds,
                                   effort_limits=self.effort_limits(), tools=self.tool_catalogue())

    def delegate_tool(self) -> Tool:
        return Tool(DELEGATE, self.prompts.render("delegate_tool"), Plan, self.delegate, terminal=self.s.estimate,
                    input_schema=plan_schema(self.sub.toolbox.names()),
                    crash_fails_agent=True)  # a bad plan is a ToolError the lead reads; anything else is our bug

    # ---- the delegate tool: checks, a new plan version, the gate, the round
    async def delegate(self, plan: Plan, ctx: ToolContext) -> str:
        if self.state.pending is not None:  # a resumed run: the accepted plan runs, not the call's input
            pending, self.state.pending = self.state.pending, None
            return await self.run_plan(pending)
        round_no = len(self.state.plans) + 1
        replan = bool(self.state.replan_for)
        problems = plan_problems(plan, tool_names=self.sub.toolbox.names(), max_subagents=self.s.max_subagents)
        cap = self.cap_problem(replan)
        waived = cap is not None and not problems and self.person_decides_past_the_cap(replan)
        if cap is not None and not waived:
            problems = [cap]
        if problems:
            self.state.rejected += 1
            self.events.emit(PlanRejected(round_no, problems))
            raise ToolError("plan rejected: " + "; ".join(problems))
        author = "replan" if replan else "lead"
        reason = ReviewReason.REPLAN_CAP if waived else ReviewReason.REPLAN if replan else \
            ReviewReason.FIRST if round_no == 1 else ReviewReason.GAP
        version = self.record_version(plan, round_no, author)
        return await self.run_plan(PendingRound(round_no, version, plan, author, reason))

    def person_decides_past_the_cap(self, replan: bool) -> bool:
        """Past the replan cap a person (an approver, or `research approve`) may allow one more plan;
        never past the run's budget."""
        spent = self.ledger is not None and self.ledger.stopped
        return self.s.approval is not ApprovalMode.NONE and (replan or self.state.replan_stopped) and not spent

    def cap_problem(self, replan: bool) -> str | None:
        if self.ledger is not None and self.ledger.stopped and not self.s.estimate:  # an estimate runs nothing
            line = self.ledger.reached
            return f"the run's {line.budget.value if line else ''} budget is reached; write the final report now"
        if replan and self.replans_left() <= 0 or not replan and self.state.replan_stopped:
            return (f"no replan is left (--max-replans {self.s.max_replans}); "
                    "write the final report from the findings you have")
        if not replan and self.rounds_left() <= 0:
            return f"no research rounds left (--max-rounds {self.s.max_rounds}); write the final report now"
        return None

    def record_version(self, plan: Plan, round_no: int, author: str) -> int:
        self.state.versions += 1
        v = self.state.versions
        diff = plan_diff(self.state.last_plan, plan, old_label=f"plan.v{v - 1}", new_label=f"plan.v{v}")
        self.state.last_plan = plan
        self.events.emit(PlanAccepted(version=v, round=round_no, author=author, query_type=plan.query_type,
                                      rationale=plan.rationale, tasks=[PlannedTask(a, t) for a, t in
                                                                       zip(agent_ids(round_no, plan), plan.tasks)],
                                      diff=diff))
        return v

    async def run_plan(self, pending: PendingRound) -> str:
        if not pending.approved:
            pending = await self.gate(pending)
        if pending.author == "replan":
            self.state.replans += 1
        self.state.replan_for = ()
        self.state.plans.append(pending.plan)
        if self.s.estimate:
            return "Estimate recorded: no subagents were run."
        purpose = RoundPurpose.REPLAN if pending.author == "replan" else RoundPurpose.RESEARCH
        outcomes = await self.run_tasks(pending.round, list(zip(agent_ids(pending.round, pending.plan),
                                                                 pending.plan.tasks)), purpose)
        report = round_report(pending.round, outcomes, self.sub.sources)
        self.state.rounds.append(report)
        return self.findings_message(pending.round, outcomes, report)

    def findings_message(self, round_no: int, outcomes: list[TaskOutcome], report: RoundReport) -> str:
        text = self.prompts.render("lead_findings", round=round_no, rounds_left=self.rounds_left(),
                                   findings_json=findings_json(report))
        for strategy, prompt in ((Strategy.REPLAN, "lead_replan"), (Strategy.STOP, "lead_replan_stop")):
            failed = [o for o in outcomes if o.decision is not None and o.decision.strategy is strategy]
            if failed:
                listed = "\n".join(f"- {o.result.agent_id}: {o.result.delegation.objective} — {o.decision.reason}"
                                   for o in failed if o.decision is not None)
                text += "\n\n" + self.prompts.render(prompt, tasks=listed, replans_left=self.replans_left())
        return text

    # ---- the approval gate
    async def gate(self, pending: PendingRound) -> PendingRound:
        """A person's decision on a plan: it runs as is, edited (a new version), or the lead stops."""
        given, self.state.verdict = self.state.verdict, None
        if given is None and self.s.approval is ApprovalMode.NONE and pending.reason is not ReviewReason.REPLAN_CAP:
            pending.approved = True
            return pending
        review = PlanReview(pending.plan, pending.version, pending.round, pending.author, pending.reason,
                            tool_names=tuple(self.sub.toolbox.names()), max_subagents=self.s.max_subagents,
                            agent_ids=tuple(agent_ids(pending.round, pending.plan)), note=self.review_note())
        for _ in range(MAX_EDITS + 1):
            verdict = given if given is not None else await self.ask(review)
            given = None
            if isinstance(verdict, (Refuse, Defer)):
                self.halt(pending, verdict)
            try:
                plan = review.check(verdict)  # type: ignore[arg-type]
            except PlanEditError as e:
                review = dataclasses.replace(review, problems=tuple(e.problems))
                continue
            return self.approved(pending, plan)
        self.halt(pending, Refuse(f"no valid edit after {MAX_EDITS} attempts: {'; '.join(review.problems)}"))
        raise AssertionError("unreachable")

    async def ask(self, review: PlanReview) -> Verdict:
        if self.approver is None or self.s.approval is ApprovalMode.STOP:
            return Defer("waiting for `research approve` or `research reject`")
        verdict = self.approver(review)
        if hasattr(verdict, "__await__"):
            verdict = await verdict  # type: ignore[misc]
        return verdict  # type: ignore[return-value]

    def review_note(self) -> str:
        failed = [f"{a}: {d.reason}" for a, d in self.state.decisions.items()
                  if d.strategy in (Strategy.REPLAN, Strategy.STOP)]
        return "; ".join(failed)

    def approved(self, pending: PendingRound, plan: Plan) -> PendingRound:
        if plan == pending.plan:
            self.events.emit(PlanReviewed(pending.version, pending.round, ReviewDecision.APPROVED))
        else:
            version = self.record_version(plan, pending.round, "human")
            self.events.emit(PlanReviewed(pending.version, pending.round, ReviewDecision.EDITED,
                                          edited_version=version))
            pending = PendingRound(pending.round, version, plan, pending.author, pending.reason)
        pending.approved = True
        return pending

    def halt(self, pending: PendingRound, verdict: Refuse | Defer) -> None:
        refused = isinstance(verdict, Refuse)
        self.events.emit(PlanReviewed(pending.version, pending.round,
                                      ReviewDecision.REJECTED if refused else ReviewDecision.DEFERRED, verdict.reason))
        self.state.halt = RunStatus.REJECTED if refused else RunStatus.AWAITING_APPROVAL
        raise StopAgent("The plan was rejected by a person." if refused else "The plan awaits a person's approval.")

    # ---- a round
    async def run_tasks(self, round_no: int, tasks: list[tuple[str, Delegation]],
                        purpose: RoundPurpose = RoundPurpose.RESEARCH) -> list[TaskOutcome]:
        if round_no not in self.state.rounds_started:
            self.state.rounds_started.add(round_no)
            self.events.emit(RoundStarted(round_no, [a for a, _ in tasks], purpose))
        runner = RoundRunner(self.bus, self.events, self.sub, self.s.concurrency, ledger=self.ledger,
                             replans_left=self.replans_left(), reuse=self.state.reuse, recorded=self.state.recorded)
        outcomes = await runner.run(round_no, tasks)
        self.state.results.extend((round_no, o.result) for o in outcomes)
        for o in outcomes:
            if o.decision is not None:
                self.state.decisions[o.result.agent_id] = o.decision
        self.state.replan_for = tuple(o.result.agent_id for o in outcomes
                                      if o.decision is not None and o.decision.strategy is Strategy.REPLAN)
        if any(o.decision is not None and o.decision.strategy is Strategy.STOP for o in outcomes):
            self.state.replan_stopped = True
        if round_no not in self.state.rounds_ended:
            self.state.rounds_ended.add(round_no)
            self.events.emit(RoundEnded(round_no, {o.result.agent_id: o.result.status for o in outcomes}))
        return outcomes

    async def run_round(self, round_no: int, tasks: list[tuple[str, Delegation]]) -> list[SubagentResult]:
        return [o.result for o in await self.run_tasks(round_no, tasks)]

    # ---- the lead's own loop
    def agent_spec(self) -> AgentSpec:
        return AgentSpec(
            model=self.lead_model, system=self.system_prompt(), toolbox=Toolbox([self.delegate_tool()]),
            allowed=[DELEGATE], tool_ctx=ToolContext(agent_id=LEAD_ID, sources=self.sub.sources), events=self.events,
            context=self.context, limits=Limits(max_turns=self.s.lead_max_turns), max_tokens=self.s.lead_max_tokens,
            continue_prompt=self.prompts.render("continue"), stream=True, ledger=self.ledger)

    async def run_lead(self) -> str:
        """The lead's own loop; returns its draft report (final text; empty for an estimate or a halt)."""
        spec = self.agent_spec()
        point = self.resume_point
        state = LoopState(messages=list(point.messages) if point else [], turns=point.turns if point else 0)
        if point is None:
            self.events.emit(AgentStarted(role=AgentRole.LEAD, model=self.lead_model.name, allowed_tools=[DELEGATE],
                                          question=self.s.question, prompts=self.prompts.manifest()))
        try:
            if not state.messages:  # a new lead, or one killed before its task message was written
                add_message(state, self.events,
                            Message("user", [TextBlock(self.prompts.render("lead_task", question=self.s.question))]))
            if point is not None and point.draft is not None:
                state.final_text, state.stop = point.draft, LoopStop.END_TURN
            elif point is None or not await self.answer_pending(spec, state, point):
                await agent_loop(spec, state)
            if state.stop is LoopStop.RUN_BUDGET:
                await self.wrap_up(spec, state)
            self.record_unmade_replans(state)
            return self._outcome(state)
        except LeadError:
            raise
        except ToolCrashed as e:  # a bug inside delegate: the run fails, whatever the lead could still write
            self._end_failed(state, str(e), traceback.format_exc(limit=8))
            raise LeadError(str(e)) from e
        except Exception as e:  # the run fails: the lead's transcript says why, like a subagent's
            self._end_failed(state, f"{type(e).__name__}: {e}", traceback.format_exc(limit=8))
            raise
        except BaseException as e:  # cancelled or interrupted: record, then let it propagate
            self._end(state, AgentStatus.INTERRUPTED, type(e).__name__)
            raise

    async def answer_pending(self, spec: AgentSpec, state: LoopState, point: ResumePoint) -> bool:
        """A resumed lead whose last reply called tools that were never answered: answer them (the
        delegate call runs its round), then go on. True when that ended the loop."""
        last = state.messages[-1] if state.messages else None
        uses = [b for b in last.content if isinstance(b, ToolUseBlock)] if last and last.role == "assistant" else []
        if not uses:
            return False
        return await answer_tool_calls(spec, uses, state, announced=point.answered_calls)

    async def wrap_up(self, spec: AgentSpec, state: LoopState) -> None:
        """The run's budget is reached: one more call, no tools, to write the report from what there is."""
        line = self.ledger.reached if self.ledger is not None else None
        note = TextBlock(self.prompts.render("lead_wrapup", budget=line.budget.value if line else "run",
                                             used=line.used if line else "", limit=line.limit if line else ""))
        if state.messages and state.messages[-1].role == "user":
            state.messages[-1].content.append(note)
            self.events.emit(MessageAdded("user", [note]))
        else:
            add_message(state, self.events, Message("user", [note]))
        self._wrapping = True
        wrap = AgentSpec(model=spec.model, system=spec.system, toolbox=spec.toolbox, allowed=spec.allowed,
                         tool_ctx=spec.tool_ctx, events=spec.events, context=self.context,
                         limits=Limits(max_turns=state.turns + 1), max_tokens=spec.max_tokens,
                         tool_choice=ToolChoice.none(), continue_prompt=spec.continue_prompt, stream=spec.stream,
                         ledger=spec.ledger, wrap_up=True)
        await agent_loop(wrap, state)

    def record_unmade_replans(self, state: LoopState) -> None:
        """The lead was asked for a new plan but ended without one: the real decision is recorded (stop),
        so no replan is announced that was never made."""
        if not self.state.replan_for or state.stop is LoopStop.HALTED:
            return
        for agent_id in self.state.replan_for:
            asked = self.state.decisions.get(agent_id)
            cause = asked.cause if asked is not None else FailureCause.OTHER
            decision = Decision(Strategy.STOP, cause, "asked for a new plan, the lead wrote the report instead")
            self.state.decisions[agent_id] = decision
            self.events.emit(ReplanDecided(agent_id, decision.strategy, decision.cause, decision.reason))
        self.state.replan_for = ()

    def _outcome(self, state: LoopState) -> str:
        if state.stop is LoopStop.HALTED and self.state.halt is not None:
            status = AgentStatus.STOPPED if self.state.halt is RunStatus.REJECTED else AgentStatus.AWAITING_APPROVAL
            self._end(state, status, str(state.stop))
            return ""
        if self.s.estimate:
            if state.stop is not LoopStop.DONE:
                self._end_failed(state, "the lead made no plan to estimate")
                raise LeadError("the lead made no plan to estimate")
            self._end(state, AgentStatus.ESTIMATED, str(state.stop))
            return ""
        if not self.state.plans:
            error = f"the lead never had a plan accepted{self._why_no_plan()}: nothing was researched"
            self._end_failed(state, error)
            raise LeadError(error)
        draft = state.final_text.strip()
        if not (state.stop and state.stop.finished) or not draft:
            error = f"the lead stopped without a report (stop: {state.stop or 'none'})"
            self._end_failed(state, error)
            raise LeadError(error)
        self._end(state, AgentStatus.OK, str(state.stop))
        return draft

    def _why_no_plan(self) -> str:
        """Why no plan ran: the run's budget stopped the lead (whatever it refused on the way), or plans were refused."""
        line = self.ledger.reached if self.ledger is not None else None
        if line is not None:
            return f" before the run's {line.budget.value} budget was reached ({line.used:g} of {line.limit:g})"
        return f" ({self.state.rejected} plan(s) rejected)" if self.state.rejected else ""

    def _end(self, state: LoopState, status: AgentStatus, stop: str, error: str | None = None) -> None:
        self.events.emit(AgentEnded(status, stop, error, state.usage, state.tool_calls, state.turns))

    def _end_failed(self, state: LoopState, error: str, tb: str | None = None) -> None:
        self.events.emit(AgentFailed(error, tb))
        self._end(state, AgentStatus.FAILED, str(state.stop or ""), error)


def agent_ids(round_no: int, plan: Plan) -> list[str]:
    return [f"r{round_no}-sub{i}" for i in range(1, len(plan.tasks) + 1)]


def lead_for(settings: LeadSettings, bus: EventBus, lead_model: Model, subagent_model: Model, toolbox: Toolbox,
             sources: SourceRegistry, prompts: PromptSet, context_hook: ContextHook | None,
             ledger: Ledger | None = None, approver: Approver | None = None) -> Lead:
    sub = SubagentRun(model=subagent_model, toolbox=toolbox, sources=sources, prompts=prompts,
                      max_tokens=settings.subagent_max_tokens, context_hook=context_hook, ledger=ledger)
    return Lead(settings=settings, bus=bus, lead_model=lead_model, subagents=sub, prompts=prompts, ledger=ledger,
                approver=approver)


__all__ = ["LEAD_ID", "Lead", "LeadError", "LeadSettings", "LeadState", "PendingRound", "ResumePoint", "agent_ids",
           "findings_json", "lead_for", "round_report"]
