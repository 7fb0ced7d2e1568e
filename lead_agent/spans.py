"""An agent's model and tool calls as timed spans, paired from its events (ModelRequested →
ModelResponded, ToolCalled → ToolReturned by call id). The terminal timeline, the HTML viewer and
the OpenTelemetry export read the same spans. A call still in flight (a running or crashed run)
ends at `open_end` and is marked `open`."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from subagents.events import EventRecord, ModelRequested, ModelResponded, ToolCalled, ToolReturned
from subagents.model import Usage
from subagents.models.pricing import cost


class SpanKind(StrEnum):
    MODEL = "model"
    TOOL = "tool"


@dataclass
class Span:
    kind: SpanKind
    name: str  # the model or the tool
    start: float
    end: float
    turn: int
    open: bool = False  # no end event (still running, or the run was killed)
    call_id: str = ""
    input: Any = None  # tool input; for a model call, the request summary
    output: Any = None  # tool result text; for a model call, the reply blocks
    is_error: bool = False
    usage: Usage | None = None
    cost_usd: float | None = None
    stop_reason: str = ""
    seq: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)


def agent_spans(records: list[EventRecord], open_end: float) -> list[Span]:
    """Every model and tool call of one agent's records, in start order."""
    spans: list[Span] = []
    model: Span | None = None
    tools: dict[str, Span] = {}
    for rec in records:
        e = rec.event
        if isinstance(e, ModelRequested):
            model = Span(SpanKind.MODEL, e.model, rec.t, open_end, rec.turn, open=True, seq=rec.seq,
                         input={"messages": e.n_messages, "tools": e.tools, "tool_choice": e.tool_choice,
                                "max_tokens": e.max_tokens, "system_sha256": e.system_sha256})
            spans.append(model)
        elif isinstance(e, ModelResponded):
            if model is None:  # a response without its request (a torn transcript): still show it
                model = Span(SpanKind.MODEL, e.model, max(0.0, rec.t - e.seconds), rec.t, rec.turn, seq=rec.seq)
                spans.append(model)
            model.end, model.open, model.name = rec.t, False, e.model or model.name
            model.output, model.usage, model.stop_reason = e.content, e.usage, e.stop_reason
            model.cost_usd = cost(e.usage, e.model)
            model = None
        elif isinstance(e, ToolCalled):
            span = Span(SpanKind.TOOL, e.name, rec.t, open_end, rec.turn, open=True, call_id=e.id, input=e.input,
                        seq=rec.seq)
            tools[e.id] = span
            spans.append(span)
        elif isinstance(e, ToolReturned) and e.id in tools:
            span = tools.pop(e.id)
            span.end, span.open, span.output, span.is_error = rec.t, False, e.content, e.is_error
    return spans


__all__ = ["Span", "SpanKind", "agent_spans"]
