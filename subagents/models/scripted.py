"""A scripted model for tests: a queue of responses, every call recorded, running dry is an error.

A step is a ModelResponse, an exception instance (raised), a callable (request -> response) or
`Step(response, delay=s)`. Give one queue, or one queue per agent id (`per_agent`), since
concurrent subagents reach a shared model in no fixed order: the queue is chosen by the
request's typed context (`request.context.agent_id`), never by prompt text.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Union

import trio

from ..model import ModelError, ModelRequest, ModelResponse, StopReason, TextBlock, ToolUseBlock, Usage


class ScriptExhausted(ModelError):
    """The test's script has no response left for this call."""


@dataclass
class Step:
    response: "StepLike"
    delay: float = 0.0


StepLike = Union[ModelResponse, BaseException, Callable[[ModelRequest], ModelResponse], Step]

_ids = itertools.count(1)


def text(t: str, stop_reason: str = "end_turn", usage: Usage | None = None) -> ModelResponse:
    return ModelResponse([TextBlock(t)], StopReason(stop_reason), usage or Usage(10, 10))


def tool_call(name: str, input: dict[str, Any], *more: tuple[str, dict[str, Any]], usage: Usage | None = None) -> ModelResponse:
    blocks = [ToolUseBlock(f"toolu_{next(_ids):04d}", n, i) for n, i in ((name, input), *more)]
    return ModelResponse(list(blocks), StopReason.TOOL_USE, usage or Usage(10, 10))


@dataclass
class ScriptedModel:
    responses: list[StepLike] = field(default_factory=list)
    per_agent: dict[str, list[StepLike]] = field(default_factory=dict)
    name: str = "scripted"
    is_language_model: bool = True
    calls: list[ModelRequest] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        snapshot = copy.deepcopy(dataclasses.replace(request, on_retry=None))
        self.calls.append(snapshot)
        agent = request.context.agent_id if request.context is not None else ""
        queue = self.per_agent.get(agent) if agent in self.per_agent else self.responses
        if not queue:
            raise ScriptExhausted(f"scripted model ran dry (call {len(self.calls)}, agent {agent or '?'})")
        step = queue.pop(0)
        delay = 0.0
        if isinstance(step, Step):
            step, delay = step.response, step.delay
        if delay:
            await trio.sleep(delay)
        if isinstance(step, BaseException):
            raise step
        if callable(step) and not isinstance(step, ModelResponse):
            step = step(snapshot)
        assert isinstance(step, ModelResponse)
        return step
