"""The agent loop shared by the lead and the subagents.

model turn → tool calls (all of one turn run concurrently) → tool results in one user message →
next turn, until the model ends its turn, a terminal tool succeeds, or a budget runs out.
Every message, call, result, usage and error goes to the agent's transcript as it happens.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import trio

from .model import (Message, Model, ModelRequest, ModelResponse, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock,
                    Usage)
from .tools import ToolContext, Toolbox
from .transcript import Transcript

MAX_CONTINUATIONS = 3
CONTINUE_PROMPT = "Your previous reply was cut off by the output limit. Continue exactly where you stopped."


@dataclass
class Limits:
    max_tool_calls: int | None = None
    max_tokens: int | None = None  # input + output tokens over all calls
    max_turns: int = 50
    exempt: frozenset[str] = frozenset()  # tools that do not count against max_tool_calls


@dataclass
class LoopState:
    messages: list[Message]
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    turns: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)  # per model call: usage + duration
    stop: str = ""  # end_turn | done | tool_budget | token_budget | max_turns | <stop_reason>
    final_text: str = ""


# A hook that may rewrite the conversation before each call (context budget); returns notes.
# It receives the messages, the system prompt and the tool specs (which also take up the window).
ContextHook = Callable[[list[Message], str, list[ToolSpec]], tuple[list[Message], list[str]]]


async def call_model(model: Model, request: ModelRequest, transcript: Transcript, state: LoopState) -> ModelResponse:
    transcript.event(
        "model_request",
        {
            "model": model.name,
            "system_sha256": _sha(request.system),
            "tools": [t.name for t in request.tools],
            "tool_choice": request.tool_choice,
            "max_tokens": request.max_tokens,
            "n_messages": len(request.messages),
        },
    )
    started = time.monotonic()
    request.metadata.setdefault("log", transcript.event)
    response = await model.complete(request)
    took = time.monotonic() - started
    state.usage = state.usage + response.usage
    state.calls.append({"model": response.model or model.name, "usage": response.usage.to_dict(), "seconds": round(took, 4)})
    transcript.event("model_response", {**response.to_dict(), "seconds": round(took, 4)})
    return response


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def add_message(state: LoopState, transcript: Transcript, message: Message) -> None:
    state.messages.append(message)
    transcript.event("message", message.to_dict())


async def run_tool_calls(
    uses: list[ToolUseBlock], toolbox: Toolbox, allowed: list[str], ctx: ToolContext, transcript: Transcript,
    state: LoopState, limits: Limits,
) -> list[ToolResultBlock]:
    """Run one turn's tool calls concurrently; calls past the tool budget are refused."""
    results: list[ToolResultBlock | None] = [None] * len(uses)

    async def one(i: int, use: ToolUseBlock) -> None:
        transcript.event("tool_call", {"id": use.id, "name": use.name, "input": use.input})
        started = time.monotonic()
        counted = use.name not in limits.exempt
        if counted and limits.max_tool_calls is not None and state.tool_calls >= limits.max_tool_calls:
            res = ToolResultBlock(use.id, "Refused: the tool-call budget of this agent is exhausted.", is_error=True)
        else:
            state.tool_calls += counted
            res = await toolbox.call(use, allowed, ctx)
        results[i] = res
        transcript.event(
            "tool_result",
            {"id": use.id, "name": use.name, "is_error": res.is_error, "content": res.content,
             "seconds": round(time.monotonic() - started, 4)},
        )

    async with trio.open_nursery() as nursery:
        for i, use in enumerate(uses):
            # Budget check happens in order of the calls, before any runs.
            nursery.start_soon(one, i, use)
    return [r for r in results if r is not None]


async def agent_loop(
    *,
    model: Model,
    system: str,
    state: LoopState,
    toolbox: Toolbox,
    allowed: list[str],
    ctx: ToolContext,
    transcript: Transcript,
    limits: Limits,
    max_tokens: int = 4096,
    tool_choice: str = "auto",
    is_done: Callable[[], bool] = lambda: False,
    context_hook: ContextHook | None = None,
    metadata: dict[str, Any] | None = None,
) -> LoopState:
    """Drive one agent until it stops. Exceptions from the model propagate to the caller."""
    specs = toolbox.specs(allowed)
    continuations = 0
    partial_text = ""
    while True:
        if state.turns >= limits.max_turns:
            state.stop = "max_turns"
            return state
        if limits.max_tokens is not None and state.usage.input_tokens + state.usage.output_tokens >= limits.max_tokens:
            state.stop = "token_budget"
            return state
        if limits.max_tool_calls is not None and state.tool_calls >= limits.max_tool_calls and state.turns > 0:
            state.stop = "tool_budget"
            return state
        if context_hook is not None:
            new_messages, notes = context_hook(state.messages, system, specs)
            if notes:
                state.messages = new_messages
                transcript.event("context_condensed", {"notes": notes})
        state.turns += 1
        transcript.turn = state.turns
        request = ModelRequest(
            system=system, messages=list(state.messages), tools=specs, max_tokens=max_tokens,
            tool_choice=tool_choice, metadata=dict(metadata or {}),
        )
        response = await call_model(model, request, transcript, state)
        add_message(state, transcript, Message("assistant", response.content or [TextBlock("")]))
        uses = response.tool_uses()
        if uses:
            results = await run_tool_calls(uses, toolbox, allowed, ctx, transcript, state, limits)
            add_message(state, transcript, Message("user", list(results)))
            if is_done():
                state.stop = "done"
                return state
            continue
        text = response.text()
        if response.stop_reason == "pause_turn" and continuations < MAX_CONTINUATIONS:
            continuations += 1  # the server paused a long turn: send it back to let it go on
            continue
        if response.stop_reason == "max_tokens" and continuations < MAX_CONTINUATIONS:
            continuations += 1
            partial_text += text
            add_message(state, transcript, Message("user", [TextBlock(CONTINUE_PROMPT)]))
            continue
        state.final_text = partial_text + text
        state.stop = response.stop_reason or "end_turn"
        return state
