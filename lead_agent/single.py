"""The `single` mode: one ReAct agent with every tool of the run and the summed budget of the
subagents a lead could have started, no delegation. It is the baseline every multi-agent claim is
measured against (`research compare --variant default --variant single`).

It runs the same agent loop and emits the same typed events as the lead (agent id `single`, role
`AgentRole.SINGLE`); its final text is the draft report, citation-checked like the lead's.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import trio

from subagents.context import AgentRole, AgentStatus, RequestContext
from subagents.delegation import Budget
from subagents.events import AgentEnded, AgentFailed, AgentStarted, EventBus, MessageAdded
from subagents.ledger import Ledger
from subagents.loop import AgentSpec, ContextHook, Limits, LoopState, add_message, agent_loop
from subagents.model import Message, Model, TextBlock, ToolChoice
from subagents.prompting import PromptSet
from subagents.sources import SourceRegistry
from subagents.tools import ToolContext, Toolbox

from .orchestrator import LeadError, LeadSettings, LeadState

SINGLE_ID = "single"
WRAPUP_SECONDS = 60.0


@dataclass(frozen=True)
class SummedBudget:
    """What every subagent of every round could have spent, given to one agent."""

    max_tool_calls: int
    max_tokens: int

    @classmethod
    def of(cls, settings: LeadSettings) -> "SummedBudget":
        each, n = Budget(), settings.max_subagents * settings.max_rounds
        return cls(each.max_tool_calls * n, each.max_tokens * n)


class SingleAgent:
    """Drop-in for `Lead` in `api.execute`: `run_lead()` returns the draft report."""

    def __init__(self, *, settings: LeadSettings, bus: EventBus, model: Model, toolbox: Toolbox,
                 sources: SourceRegistry, prompts: PromptSet, context_hook: ContextHook | None,
                 ledger: Ledger | None = None) -> None:
        self.s = settings
        self.ledger = ledger  # the run's budgets hold for the single agent too
        self.model = model
        self.toolbox = toolbox
        self.sources = sources
        self.prompts = prompts
        self.context_hook = context_hook
        self.state = LeadState()  # no plans, no subagent results: nothing is missing by delegation
        self.events = bus.agent(SINGLE_ID)
        self.budget = SummedBudget.of(settings)

    def context(self, wrap_up: bool = False) -> RequestContext:
        return RequestContext(role=AgentRole.SINGLE, agent_id=SINGLE_ID, allowed_tools=tuple(self.toolbox.names()),
                              question=self.s.question, wrap_up=wrap_up)

    def agent_spec(self) -> AgentSpec:
        tools = self.toolbox.names()
        system = self.prompts.render("single_system", tools=", ".join(tools),
                                     max_tool_calls=self.budget.max_tool_calls)
        return AgentSpec(
            model=self.model, system=system, toolbox=self.toolbox, allowed=tools,
            tool_ctx=ToolContext(agent_id=SINGLE_ID, sources=self.sources), events=self.events, context=self.context,
            limits=Limits(max_tool_calls=self.budget.max_tool_calls, max_tokens=self.budget.max_tokens,
                          max_turns=self.budget.max_tool_calls + self.s.lead_max_turns),
            max_tokens=self.s.lead_max_tokens, context_hook=self.context_hook,
            continue_prompt=self.prompts.render("continue"), stream=True, ledger=self.ledger)

    async def run_lead(self) -> str:
        spec = self.agent_spec()
        state = LoopState(messages=[])
        self.events.emit(AgentStarted(role=AgentRole.SINGLE, model=self.model.name, allowed_tools=list(spec.allowed),
                                      question=self.s.question, prompts=self.prompts.manifest()))
        try:
            add_message(state, self.events,
                        Message("user", [TextBlock(self.prompts.render("single_task", question=self.s.question))]))
            await agent_loop(spec, state)
            if not (state.stop and state.stop.finished and state.final_text.strip()):
                await self._wrap_up(spec, state)
            draft = state.final_text.strip()
            if not draft:
                raise LeadError(f"the single agent stopped without a report (stop: {state.stop or 'none'})")
        except Exception as e:
            error = str(e) if isinstance(e, LeadError) else f"{type(e).__name__}: {e}"
            self.events.emit(AgentFailed(error, traceback.format_exc(limit=8)))
            self._end(state, AgentStatus.FAILED, error)
            raise
        except BaseException as e:  # cancelled or interrupted: record, then let it propagate
            self._end(state, AgentStatus.INTERRUPTED, None, type(e).__name__)
            raise
        self._end(state, AgentStatus.OK, None)
        return draft

    async def _wrap_up(self, spec: AgentSpec, state: LoopState) -> None:
        """A budget ran out before the report: ask once for it, tools still described but not callable."""
        reason = str(state.stop or "stopped")
        note = TextBlock(self.prompts.render("single_wrapup", reason=reason))
        if state.messages and state.messages[-1].role == "user":
            state.messages[-1].content.append(note)  # tool results wait for an answer: add the note to them
            self.events.emit(MessageAdded("user", [note]))
        else:
            add_message(state, self.events, Message("user", [note]))
        stop = state.stop
        wrap = AgentSpec(model=spec.model, system=spec.system, toolbox=spec.toolbox, allowed=spec.allowed,
                         tool_ctx=spec.tool_ctx, events=spec.events, context=lambda: self.context(wrap_up=True),
                         limits=Limits(max_turns=state.turns + 1), max_tokens=spec.max_tokens,
                         tool_choice=ToolChoice.none(), continue_prompt=spec.continue_prompt, stream=spec.stream,
                         ledger=self.ledger, wrap_up=True)
        with trio.move_on_after(WRAPUP_SECONDS):
            await agent_loop(wrap, state)
        state.stop = stop if not state.final_text.strip() else state.stop

    def _end(self, state: LoopState, status: AgentStatus, error: str | None, stop: str | None = None) -> None:
        self.events.emit(AgentEnded(status, stop or str(state.stop or ""), error, state.usage, state.tool_calls,
                                    state.turns))


def single_for(settings: LeadSettings, bus: EventBus, model: Model, toolbox: Toolbox, sources: SourceRegistry,
               prompts: PromptSet, context_hook: ContextHook | None, ledger: Ledger | None = None) -> SingleAgent:
    return SingleAgent(settings=settings, bus=bus, model=model, toolbox=toolbox, sources=sources, prompts=prompts,
                       context_hook=context_hook, ledger=ledger)
