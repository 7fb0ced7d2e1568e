"""The lead agent's run: plan by calling `delegate`, run each round's subagents in a trio nursery
under a CapacityLimiter, hand the findings back, allow gap rounds up to the cap, and return the
lead's final text as the draft report. Everything it does is emitted as typed events.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field

import trio

from subagents.context import AgentRole, AgentStatus, LeadLimits, RequestContext, RoundReport, SubagentReport
from subagents.delegation import Delegation, Plan, plan_problems, plan_schema, tasks_per_query_type
from subagents.events import (AgentEnded, AgentFailed, AgentStarted, EventBus, PlanAccepted, PlannedTask,
                              PlanRejected, RoundEnded, RoundStarted)
from subagents.loop import AgentSpec, ContextHook, Limits, LoopState, LoopStop, add_message, agent_loop
from subagents.model import Message, Model, TextBlock
from subagents.prompting import PromptSet
from subagents.sources import SourceRegistry
from subagents.tool_names import DELEGATE
from subagents.tools import Tool, ToolContext, ToolError, Toolbox
from subagents.worker import SubagentResult, SubagentRun, run_subagent

LEAD_ID = "lead"


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


@dataclass
class LeadState:
    plans: list[Plan] = field(default_factory=list)
    results: list[tuple[int, SubagentResult]] = field(default_factory=list)  # (round, result)
    rounds: list[RoundReport] = field(default_factory=list)
    rejected: int = 0


def round_report(round_no: int, results: list[SubagentResult], sources: SourceRegistry) -> RoundReport:
    titles: dict[str, str] = {}
    for r in results:
        for c in r.findings.claims + r.findings.related:
            for sid in c.source_ids:
                src = sources.get(sid)
                if src is not None:
                    titles[sid] = src.title
    return RoundReport(round_no, tuple(SubagentReport(r.agent_id, r.delegation, r.status, r.findings, r.error)
                                       for r in results), titles)


def findings_json(report: RoundReport) -> str:
    """The round's findings as the lead's prompt shows them ("</" escaped: quoted text cannot close the tag)."""
    subs = [{"agent_id": s.agent_id, "objective": s.delegation.objective, "status": s.status.value,
             "summary": s.findings.summary, "claims": [c.model_dump() for c in s.findings.claims],
             "open_questions": s.findings.open_questions, "error": s.error,
             **({"related": [c.model_dump() for c in s.findings.related]} if s.findings.related else {})}
            for s in report.subagents]
    data = {"subagents": subs, "sources": dict(report.source_titles)}
    return json.dumps(data, indent=1, ensure_ascii=False).replace("</", "<\\/")


class Lead:
    def __init__(self, *, settings: LeadSettings, bus: EventBus, lead_model: Model, subagents: SubagentRun,
                 prompts: PromptSet) -> None:
        self.s = settings
        self.bus = bus
        self.lead_model = lead_model
        self.sub = subagents
        self.prompts = prompts
        self.state = LeadState()
        self.events = bus.agent(LEAD_ID)

    # ---- what the lead may do, stated once for prompts and models alike
    def limits(self) -> LeadLimits:
        return LeadLimits(tasks_per_query_type=tasks_per_query_type(self.s.max_subagents),
                          max_rounds=self.s.max_rounds, rounds_left=self.s.max_rounds - len(self.state.plans),
                          subagent_tools=tuple(self.sub.toolbox.names()))

    def context(self) -> RequestContext:
        return RequestContext(role=AgentRole.LEAD, agent_id=LEAD_ID, allowed_tools=(DELEGATE,),
                              question=self.s.question, limits=self.limits(), rounds=tuple(self.state.rounds),
                              plans_rejected=self.state.rejected)

    def tool_catalogue(self) -> str:
        return "\n".join(f"- {spec.name}: {spec.description}" for spec in self.sub.toolbox.specs())

    def effort_limits(self) -> str:
        return ", ".join(f"{qt.value} {n}" for qt, n in tasks_per_query_type(self.s.max_subagents).items())

    def system_prompt(self) -> str:
        return self.prompts.render("lead_system", max_subagents=self.s.max_subagents, max_rounds=self.s.max_rounds,
                                   effort_limits=self.effort_limits(), tools=self.tool_catalogue())

    def delegate_tool(self) -> Tool:
        return Tool(DELEGATE, self.prompts.render("delegate_tool"), Plan, self.delegate, terminal=self.s.estimate,
                    input_schema=plan_schema(self.sub.toolbox.names()))

    # ---- the delegate tool
    async def delegate(self, plan: Plan, ctx: ToolContext) -> str:
        round_no = len(self.state.plans) + 1
        problems = plan_problems(plan, tool_names=self.sub.toolbox.names(), max_subagents=self.s.max_subagents)
        if round_no > self.s.max_rounds:
            problems = [f"no delegation rounds left (the limit is {self.s.max_rounds}); write the final report now"]
        if problems:
            self.state.rejected += 1
            self.events.emit(PlanRejected(round_no, problems))
            raise ToolError("plan rejected: " + "; ".join(problems))
        agent_ids = [f"r{round_no}-sub{i}" for i in range(1, len(plan.tasks) + 1)]
        self.state.plans.append(plan)
        self.events.emit(PlanAccepted(version=round_no, round=round_no, author="lead", query_type=plan.query_type,
                                      rationale=plan.rationale,
                                      tasks=[PlannedTask(a, t) for a, t in zip(agent_ids, plan.tasks)]))
        if self.s.estimate:
            return "Estimate recorded: no subagents were run."
        results = await self.run_round(round_no, list(zip(agent_ids, plan.tasks)))
        report = round_report(round_no, results, self.sub.sources)
        self.state.rounds.append(report)
        return self.prompts.render("lead_findings", round=round_no, rounds_left=self.s.max_rounds - round_no,
                                   findings_json=findings_json(report))

    async def run_round(self, round_no: int, tasks: list[tuple[str, Delegation]]) -> list[SubagentResult]:
        limiter = trio.CapacityLimiter(self.s.concurrency)
        results: dict[str, SubagentResult] = {}
        self.events.emit(RoundStarted(round_no, [a for a, _ in tasks]))

        async def one(agent_id: str, delegation: Delegation) -> None:
            async with limiter:
                results[agent_id] = await run_subagent(delegation, agent_id=agent_id, run=self.sub,
                                                       events=self.bus.agent(agent_id, LEAD_ID), round_no=round_no)

        async with trio.open_nursery() as nursery:
            for agent_id, delegation in tasks:
                nursery.start_soon(one, agent_id, delegation)
        ordered = [results[a] for a, _ in tasks]
        self.state.results.extend((round_no, r) for r in ordered)
        self.events.emit(RoundEnded(round_no, {r.agent_id: r.status for r in ordered}))
        return ordered

    # ---- the lead's own loop
    def agent_spec(self) -> AgentSpec:
        return AgentSpec(
            model=self.lead_model, system=self.system_prompt(), toolbox=Toolbox([self.delegate_tool()]),
            allowed=[DELEGATE], tool_ctx=ToolContext(agent_id=LEAD_ID, sources=self.sub.sources), events=self.events,
            context=self.context, limits=Limits(max_turns=self.s.lead_max_turns), max_tokens=self.s.lead_max_tokens,
            continue_prompt=self.prompts.render("continue"), stream=True)

    async def run_lead(self) -> str:
        """The lead's own loop; returns its draft report (final text; empty for an estimate)."""
        spec = self.agent_spec()
        state = LoopState(messages=[])
        self.events.emit(AgentStarted(role=AgentRole.LEAD, model=self.lead_model.name, allowed_tools=[DELEGATE],
                                      question=self.s.question, prompts=self.prompts.manifest()))
        try:
            add_message(state, self.events,
                        Message("user", [TextBlock(self.prompts.render("lead_task", question=self.s.question))]))
            await agent_loop(spec, state)
            return self._outcome(state)
        except LeadError:
            raise
        except Exception as e:  # the run fails: the lead's transcript says why, like a subagent's
            self._end_failed(state, f"{type(e).__name__}: {e}", traceback.format_exc(limit=8))
            raise
        except BaseException as e:  # cancelled or interrupted: record, then let it propagate
            self._end(state, AgentStatus.INTERRUPTED, type(e).__name__)
            raise

    def _outcome(self, state: LoopState) -> str:
        if self.s.estimate:
            if state.stop is not LoopStop.DONE:
                self._end_failed(state, "the lead made no plan to estimate")
                raise LeadError("the lead made no plan to estimate")
            self._end(state, AgentStatus.ESTIMATED, str(state.stop))
            return ""
        if not self.state.plans:
            why = f" ({self.state.rejected} plan(s) rejected)" if self.state.rejected else ""
            error = f"the lead never had a plan accepted{why}: nothing was researched"
            self._end_failed(state, error)
            raise LeadError(error)
        draft = state.final_text.strip()
        if not (state.stop and state.stop.finished) or not draft:
            error = f"the lead stopped without a report (stop: {state.stop or 'none'})"
            self._end_failed(state, error)
            raise LeadError(error)
        self._end(state, AgentStatus.OK, str(state.stop))
        return draft

    def _end(self, state: LoopState, status: AgentStatus, stop: str, error: str | None = None) -> None:
        self.events.emit(AgentEnded(status, stop, error, state.usage, state.tool_calls, state.turns))

    def _end_failed(self, state: LoopState, error: str, tb: str | None = None) -> None:
        self.events.emit(AgentFailed(error, tb))
        self._end(state, AgentStatus.FAILED, str(state.stop or ""), error)


def lead_for(settings: LeadSettings, bus: EventBus, lead_model: Model, subagent_model: Model, toolbox: Toolbox,
             sources: SourceRegistry, prompts: PromptSet, context_hook: ContextHook | None) -> Lead:
    sub = SubagentRun(model=subagent_model, toolbox=toolbox, sources=sources, prompts=prompts,
                      max_tokens=settings.subagent_max_tokens, context_hook=context_hook)
    return Lead(settings=settings, bus=bus, lead_model=lead_model, subagents=sub, prompts=prompts)

