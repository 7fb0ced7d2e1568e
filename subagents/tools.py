"""The tool seam: a tool has a name, a description, a pydantic model for its input (whose JSON
schema the model sees) and an async `run`. Any failure becomes an `is_error` tool result that
the model can read and act on; a tool never crashes its agent, unless it is marked `crash_fails_agent`
(its only failures the model could fix are ToolErrors; anything else it raises is our bug: ToolCrashed).

A *terminal* tool ends its agent's loop when it succeeds; the loop returns its validated input
(`submit_findings` returns the findings this way).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable

from pydantic import BaseModel, ValidationError

from .model import ToolResultBlock, ToolSpec, ToolUseBlock
from .sources import SourceRegistry


class ToolError(Exception):
    """A failure the agent should read (bad argument, refused URL, replay miss, …)."""


class ToolCrashed(Exception):
    """A tool marked `crash_fails_agent` raised something other than a ToolError: a bug of ours, not a
    mistake the model can correct. It ends the agent (failed) instead of going back to the model."""

    def __init__(self, tool: str, cause: Exception) -> None:
        super().__init__(f"the {tool} tool failed with an internal error: {type(cause).__name__}: {cause}")
        self.tool = tool


class StopAgent(Exception):
    """Raised by a tool to end its agent's loop without answering the call (the lead's plan awaits
    a person's approval, or a person refused it). The call is answered when the run resumes."""


@dataclass
class ToolContext:
    """What a tool may know about its caller. Tools never see the caller's conversation."""

    agent_id: str
    sources: SourceRegistry


@dataclass
class Tool:
    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[Any, ToolContext], Awaitable[str]]  # receives a validated `args` instance
    terminal: bool = False  # a successful call ends the agent's loop
    input_schema: dict[str, Any] | None = None  # overrides the schema derived from `args`
    crash_fails_agent: bool = False  # an exception other than ToolError is our bug: it fails the agent (ToolCrashed)

    def spec(self) -> ToolSpec:
        schema = self.input_schema
        if schema is None:
            schema = self.args.model_json_schema()
            schema.pop("title", None)
        return ToolSpec(self.name, self.description, schema)


@dataclass
class ToolOutcome:
    """One call's result block, and the validated input when the call succeeded."""

    result: ToolResultBlock
    args: BaseModel | None = None
    terminal: bool = False  # a terminal tool succeeded
    ran: bool = False  # the tool itself ran (not refused, unknown or given invalid input)
    halt: bool = False  # the tool raised StopAgent


def format_validation_error(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"]) or "(input)"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


class Toolbox:
    """A set of tools by name. `call` enforces an allow-list in code, whatever the model asks."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name {tool.name!r}")
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool:
        return self._tools[name]

    def specs(self, allowed: Iterable[str] | None = None) -> list[ToolSpec]:
        names = self.names() if allowed is None else [n for n in allowed if n in self._tools]
        return [self._tools[n].spec() for n in names]

    async def call(self, use: ToolUseBlock, allowed: Iterable[str], ctx: ToolContext) -> ToolResultBlock:
        return (await self.run(use, allowed, ctx)).result

    async def run(self, use: ToolUseBlock, allowed: Iterable[str], ctx: ToolContext) -> ToolOutcome:
        allowed = set(allowed)
        if use.name not in allowed:
            return _error(use, f"Refused: tool {use.name!r} is not allowed for this agent. "
                               f"Allowed tools: {', '.join(sorted(allowed)) or '(none)'}.")
        tool = self._tools.get(use.name)
        if tool is None:
            return _error(use, f"Unknown tool {use.name!r}.")
        try:
            args = tool.args.model_validate(use.input)
        except ValidationError as e:
            return _error(use, f"Invalid input for {use.name}: {format_validation_error(e)}")
        try:
            content = await tool.run(args, ctx)
        except StopAgent as e:
            return ToolOutcome(ToolResultBlock(use.id, str(e)), args, ran=True, halt=True)
        except ToolError as e:
            return ToolOutcome(ToolResultBlock(use.id, f"{use.name} failed: {e}", is_error=True), ran=True)
        except Exception as e:  # a tool bug must not kill the agent; the model reads it
            if tool.crash_fails_agent:  # unless the tool's failures are ours alone (the lead's delegate)
                raise ToolCrashed(use.name, e) from e
            return ToolOutcome(ToolResultBlock(use.id, f"{use.name} failed unexpectedly: {type(e).__name__}: {e}",
                                               is_error=True), ran=True)
        return ToolOutcome(ToolResultBlock(use.id, content), args, tool.terminal, ran=True)


def _error(use: ToolUseBlock, message: str) -> ToolOutcome:
    return ToolOutcome(ToolResultBlock(use.id, message, is_error=True))


def untrusted(label: str, payload: Any) -> str:
    """Wrap retrieved material so it is plainly data, never instructions.

    The agent's system prompt says text between these markers is quoted material to evaluate,
    never to obey; tools and boundaries are fixed in code, whatever the material says.
    """
    body = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, indent=1)
    return f"<retrieved_material source=\"{label}\">\n{neutralise_markers(body)}\n</retrieved_material>"


_WRAPPER_TAG = re.compile(r"<(\s*/?\s*retrieved_material)", re.I)


def neutralise_markers(text: str) -> str:
    """Retrieved text must not be able to close (or open) the <retrieved_material> wrapper."""
    return _WRAPPER_TAG.sub(r"‹\1", text)
