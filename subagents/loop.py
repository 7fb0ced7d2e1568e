"""The agent loop shared by the lead and the subagents.

model turn → tool calls (all of one turn run concurrently) → tool results in one user message →
next turn, until the model ends its turn, a terminal tool succeeds, or a budget runs out.
Every message, call, result, usage and error is emitted to the agent's event stream as it happens.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable, Collection

import trio

from .context import RequestContext
from .events import (AgentEvents, BudgetExhausted, ContextCondensed, MessageAdded, ModelRequested, ModelResponded,
                     ToolCalled, ToolReturned)
from .model import (Message, Model, ModelRequest, ModelResponse, StopReason, TextBlock, ToolChoice, ToolResultBlock,
                    ToolSpec, ToolUseBlock, Usage)
from .ledger import Ledger
from .tools import ToolContext, Toolbox, ToolCrashed

MAX_CONTINUATIONS = 3


class LoopStop(StrEnum):
    """Why an agent loop ended: the model's own stop, a terminal tool, or a limit."""

    END_TURN = "end_turn"
    STOP_SEQUENCE = "stop_sequence"
    MAX_TOKENS = "max_tokens"  # the output limit, continuations used up
    PAUSE_TURN = "pause_turn"
    REFUSAL = "refusal"
    CONTEXT_EXCEEDED = "model_context_window_exceeded"
    OTHER = "other"
    DONE = "done"  # a terminal tool succeeded
    TOOL_BUDGET = "tool_budget"
    TOKEN_BUDGET = "token_budget"
    TIME_BUDGET = "time_budget"
    MAX_TURNS = "max_turns"
    RUN_BUDGET = "run_budget"  # the run's --max-cost / --max-tokens / --deadline was reached
    HALTED = "halted"  # a tool stopped the agent (a plan awaiting approval, or refused by a person)

    @classmethod
    def of(cls, reason: StopReason) -> "LoopStop":
        return cls(reason.value) if reason.value in cls._value2member_map_ else cls.OTHER

    @property
    def finished(self) -> bool:
        """The model ended on its own (not cut short by a limit)."""
        return self in (LoopStop.END_TURN, LoopStop.STOP_SEQUENCE, LoopStop.DONE)


@dataclass(frozen=True)
class Limits:
    max_tool_calls: int | None = None
    max_tokens: int | None = None  # every token kind (input, output, cache writes and reads) over all calls
    max_turns: int = 50
    exempt: frozenset[str] = frozenset()  # tools that do not count against max_tool_calls


@dataclass
class CallRecord:
    model: str
    usage: Usage
    seconds: float


@dataclass
class LoopState:
    messages: list[Message]
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    turns: int = 0
    calls: list[CallRecord] = field(default_factory=list)
    stop: LoopStop | None = None
    final_text: str = ""
    terminal: Any = None  # the validated input of the terminal tool that ended the loop
    halted: bool = False  # a tool raised StopAgent: the loop ends without answering the call
    tool_errors: dict[str, int] = field(default_factory=dict)  # per tool: calls that ran and failed
    tool_successes: dict[str, int] = field(default_factory=dict)  # per tool: calls that ran and succeeded


# A hook that may rewrite the conversation before each call (context budget); returns notes.
# It receives the messages, the system prompt and the tool specs (which also take up the window).
ContextHook = Callable[[list[Message], str, list[ToolSpec]], tuple[list[Message], list[str]]]


@dataclass
class AgentSpec:
    """What one agent loop runs with; fixed for the agent (the context is read fresh each turn)."""

    model: Model
    system: str
    toolbox: Toolbox
    allowed: list[str]
    tool_ctx: ToolContext
    events: AgentEvents
    context: Callable[[], RequestContext]
    limits: Limits = field(default_factory=Limits)
    max_tokens: int = 4096
    tool_choice: ToolChoice = field(default_factory=ToolChoice)
    context_hook: ContextHook | None = None
    continue_prompt: str = ""  # sent when a reply was cut off by the output limit
    stream: bool = False
    ledger: Ledger | None = None  # the run-wide ledger every call passes through
    wrap_up: bool = False  # the agent's wrap-up: allowed one call past the run budget, not cut by the deadline


def add_message(state: LoopState, events: AgentEvents, message: Message) -> None:
    state.messages.append(message)
    events.emit(MessageAdded(message.role, list(message.content)))


async def call_model(spec: AgentSpec, request: ModelRequest, state: LoopState) -> ModelResponse | None:
    """One model call, booked in the run's ledger. None: the run's deadline cut the call short."""
    await trio.lowlevel.checkpoint()  # a cancelled run stops here, even when models and tools never block
    spec.events.emit(ModelRequested(
        model=spec.model.name, system_sha256=hashlib.sha256(request.system.encode("utf-8")).hexdigest()[:16],
        tools=[t.name for t in request.tools], tool_choice=str(request.tool_choice), max_tokens=request.max_tokens,
        n_messages=len(request.messages)))
    started = time.monotonic()
    deadline = spec.ledger.deadline_at() if spec.ledger is not None and not spec.wrap_up else float("inf")
    response = None
    with trio.move_on_at(deadline):
        response = await spec.model.complete(request)
    if response is None:
        return None
    took = round(time.monotonic() - started, 4)
    state.usage = state.usage + response.usage
    state.calls.append(CallRecord(response.model or spec.model.name, response.usage, took))
    spec.events.emit(ModelResponded(list(response.content), str(response.stop_reason), response.usage,
                                    response.model or spec.model.name, took))
    if spec.ledger is not None:  # after the response is recorded: a line it crosses comes after it
        spec.ledger.charge(response.usage, response.model or spec.model.name)
    return response


def tally_tool_result(returned: ToolReturned, errors: dict[str, int], successes: dict[str, int]) -> None:
    """Count a result as one of its tool's failures or successes: only calls the tool itself ran. The live
    loop counts with it, and so does a run read back from its events (a resumed run's finished agents)."""
    if not returned.ran:
        return
    tally = errors if returned.is_error else successes
    tally[returned.name] = tally.get(returned.name, 0) + 1


async def run_tool_calls(spec: AgentSpec, uses: list[ToolUseBlock], state: LoopState,
                         announced: Collection[str] = ()) -> list[ToolResultBlock]:
    """Run one turn's tool calls concurrently; calls past the tool budget are refused.
    A terminal tool's success is recorded in `state.terminal`. Calls in `announced` already have
    their tool_call event (a resumed run answering a call made before the crash)."""
    await trio.lowlevel.checkpoint()  # a cancelled run runs no more tools
    results: list[ToolResultBlock | None] = [None] * len(uses)
    limits = spec.limits
    admitted: list[bool] = []
    for use in uses:  # the budget is checked in the order of the calls, before any runs
        counted = use.name not in limits.exempt
        ok = not (counted and limits.max_tool_calls is not None and state.tool_calls >= limits.max_tool_calls)
        state.tool_calls += counted and ok and use.id not in announced  # a call answered again is not a new one
        admitted.append(ok)

    crashed: list[ToolCrashed] = []  # raised once the turn's other calls are done (and recorded)

    async def one(i: int, use: ToolUseBlock) -> None:
        if use.id not in announced:
            spec.events.emit(ToolCalled(use.id, use.name, use.input, over_budget=not admitted[i]))
        started = time.monotonic()
        ran = False  # refused over budget (or, below, by the toolbox: allow-list, unknown tool, invalid input)
        if not admitted[i]:
            res = ToolResultBlock(use.id, "Refused: the tool-call budget of this agent is exhausted.", is_error=True)
        else:
            try:
                outcome = await spec.toolbox.run(use, spec.allowed, spec.tool_ctx)
            except ToolCrashed as e:  # the call stays unanswered: a resumed run makes it again
                crashed.append(e)
                return
            res, ran = outcome.result, outcome.ran
            if outcome.halt:
                state.halted = True
            elif outcome.terminal and state.terminal is None:
                state.terminal = outcome.args
        results[i] = res
        returned = ToolReturned(use.id, use.name, res.is_error, res.content, round(time.monotonic() - started, 4),
                                ran=ran)
        tally_tool_result(returned, state.tool_errors, state.tool_successes)
        spec.events.emit(returned)

    async with trio.open_nursery() as nursery:
        for i, use in enumerate(uses):
            nursery.start_soon(one, i, use)
    if crashed:
        raise crashed[0]
    return [r for r in results if r is not None]


def _budget_stop(spec: AgentSpec, state: LoopState) -> LoopStop | None:
    limits = spec.limits
    if state.turns >= limits.max_turns:
        return LoopStop.MAX_TURNS
    if limits.max_tokens is not None and state.usage.total() >= limits.max_tokens:
        return LoopStop.TOKEN_BUDGET
    if limits.max_tool_calls is not None and state.tool_calls >= limits.max_tool_calls and state.turns > 0:
        return LoopStop.TOOL_BUDGET
    if spec.ledger is not None and not spec.ledger.admit(spec.events.agent_id, wrap_up=spec.wrap_up):
        return LoopStop.RUN_BUDGET
    return None


def _budget_event(stop: LoopStop, spec: AgentSpec, state: LoopState) -> BudgetExhausted:
    if stop is LoopStop.RUN_BUDGET:
        line = spec.ledger.reached if spec.ledger is not None else None
        return BudgetExhausted(f"{stop.value}:{line.budget.value}" if line else stop.value,
                               line.used if line else None, line.limit if line else None)
    used, limit = {
        LoopStop.MAX_TURNS: (state.turns, spec.limits.max_turns),
        LoopStop.TOKEN_BUDGET: (state.usage.total(), spec.limits.max_tokens),
        LoopStop.TOOL_BUDGET: (state.tool_calls, spec.limits.max_tool_calls),
    }[stop]
    return BudgetExhausted(stop.value, used, limit)


def _condense(spec: AgentSpec, state: LoopState, specs: list[ToolSpec]) -> None:
    if spec.context_hook is None:
        return
    new_messages, notes = spec.context_hook(state.messages, spec.system, specs)
    if notes:
        state.messages = new_messages
        spec.events.emit(ContextCondensed(notes))


async def answer_tool_calls(spec: AgentSpec, uses: list[ToolUseBlock], state: LoopState,
                            announced: Collection[str] = ()) -> bool:
    """Run a turn's tool calls and append their results; True when that ends the loop (a terminal
    tool succeeded, or a tool halted the agent: then the calls stay unanswered, to be run again
    when the run resumes)."""
    results = await run_tool_calls(spec, uses, state, announced)
    if state.halted:
        state.stop = LoopStop.HALTED
        return True
    add_message(state, spec.events, Message("user", list(results)))
    if state.terminal is not None:
        state.stop = LoopStop.DONE
        return True
    return False


async def agent_loop(spec: AgentSpec, state: LoopState) -> LoopState:
    """Drive one agent until it stops. Exceptions from the model propagate to the caller."""
    specs = spec.toolbox.specs(spec.allowed)
    continuations = 0
    partial_text = ""
    while True:
        stop = _budget_stop(spec, state)
        if stop is not None:
            spec.events.emit(_budget_event(stop, spec, state))
            state.stop = stop
            return state
        _condense(spec, state, specs)
        state.turns += 1
        spec.events.turn = state.turns
        request = ModelRequest(system=spec.system, messages=list(state.messages), tools=specs,
                               max_tokens=spec.max_tokens, tool_choice=spec.tool_choice, context=spec.context(),
                               stream=spec.stream, on_retry=spec.events.retry_reporter())
        response = await call_model(spec, request, state)
        if response is None:  # the run's deadline passed during the call
            if spec.ledger is not None:
                spec.ledger.check()
            spec.events.emit(_budget_event(LoopStop.RUN_BUDGET, spec, state))
            state.stop = LoopStop.RUN_BUDGET
            return state
        add_message(state, spec.events, Message("assistant", response.content or [TextBlock("")]))
        uses = response.tool_uses()
        if uses:
            if await answer_tool_calls(spec, uses, state):
                return state
            continue
        text = response.text()
        if response.stop_reason is StopReason.PAUSE_TURN and continuations < MAX_CONTINUATIONS:
            continuations += 1  # the server paused a long turn: send it back to let it go on
            continue
        if response.stop_reason is StopReason.MAX_TOKENS and continuations < MAX_CONTINUATIONS:
            continuations += 1
            partial_text += text
            add_message(state, spec.events, Message("user", [TextBlock(spec.continue_prompt)]))
            continue
        state.final_text = partial_text + text
        state.stop = LoopStop.of(response.stop_reason)
        return state
