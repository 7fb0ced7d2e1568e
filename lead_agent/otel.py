"""OpenTelemetry export (optional extra `[otel]`): an observer that turns the run's events into spans
following the GenAI semantic conventions, so Jaeger, Phoenix or Langfuse can show a run:

    invoke_workflow research                 the run (gen_ai.workflow.name, gen_ai.conversation.id = run id)
      invoke_agent lead                      one span per agent (gen_ai.agent.id / .name)
        chat claude-opus-4-6                 one per model call: request/response model, token usage,
                                             finish reasons, cost (research.cost_usd)
        execute_tool delegate                one per tool call (gen_ai.tool.name / .call.id / .type)
          invoke_agent r1-sub1               subagents run inside the lead's delegate call
            execute_tool search_corpus …

Span times come from the events (`ts` and `t`), so a finished run can be exported afterwards too
(`research show RUN --otel`). `--otel` uses the standard OTLP/HTTP exporter, which reads the
standard `OTEL_EXPORTER_OTLP_*` variables itself; it is built at the entry point. Message contents
are not exported; tool-call arguments are (shortened), since they are what a trace reader looks for.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from typing import Any, Mapping

from subagents.context import AgentRole, AgentStatus
from subagents.events import (RUN_AGENT, AgentEnded, AgentFailed, AgentStarted, CitationChecked, EventRecord,
                              ModelRequested, ModelResponded, RunEnded, RunStarted, ToolCalled, ToolReturned)
from subagents.models.pricing import cost
from subagents.tool_names import DELEGATE

ARGS_LIMIT = 1000


EXPORT_TIMEOUT = 3.0  # seconds an export (retries included) may take unless OTEL_EXPORTER_OTLP_*TIMEOUT says
_TIMEOUT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")


def otlp_exporter(environ: Mapping[str, str] | None = None) -> Any:
    """The standard OTLP/HTTP span exporter (configured by OTEL_EXPORTER_OTLP_* variables; `environ`, read
    at the entry point, only says whether a timeout was set: if not, an export gives up after
    EXPORT_TIMEOUT s instead of the SDK's 10). ImportError when the [otel] extra is not installed."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    timed = environ is not None and any(environ.get(v) for v in _TIMEOUT_VARS)
    return OTLPSpanExporter(timeout=None if timed or environ is None else EXPORT_TIMEOUT)


class _Captured(logging.Handler):
    """Holds what the OpenTelemetry SDK logs (it reports export failures only as log lines) so that
    they reach the user as one line of ours, not as raw logger output."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.lines) < 20:
            self.lines.append(" ".join(record.getMessage().split()))

    @property
    def reason(self) -> str | None:
        """The OS's word for the failure (`Connection refused`), the collector's HTTP answer, or that
        it did not answer in time (the SDK logs no cause then); else the first line logged."""
        for pattern, fmt in ((r"\[Errno -?\d+\] ([^'\")]+)", "{0}"), (r"code: (\d+), reason: (.+)", "HTTP {0} {1}"),
                             (r"due to timeout", "no answer before the export timeout")):
            for line in self.lines:
                m = re.search(pattern, line)
                if m:
                    return fmt.format(*(g.strip() for g in m.groups()))
        return self.lines[0][:160] if self.lines else None


def provider_of(model: str) -> str:
    m = model.lower()
    if m.startswith("claude"):
        return "anthropic"
    if m in ("extractive", "scripted") or not m:
        return "research_agents"
    return "openai"


class Tally:
    """Wraps a span exporter and counts what it sent and what it could not (the SDK only logs failures)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent = 0
        self.failed = 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        if self.failed and not self.sent:  # the collector never answered: later batches would only wait too
            self.failed += len(spans)
            return SpanExportResult.FAILURE
        result = self.inner.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


class OtelExporter:
    """An observer of the run's events that emits OpenTelemetry spans through `exporter`."""

    def __init__(self, exporter: Any = None, *, tracer_provider: Any = None, service_name: str = "research-agents") -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.tally: Tally | None = None
        if tracer_provider is None:
            tracer_provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
            if exporter is not None:
                self.tally = Tally(exporter)
                tracer_provider.add_span_processor(BatchSpanProcessor(self.tally))
        self._log = _Captured()
        self._sdk_logger = logging.getLogger("opentelemetry")
        self._propagate = self._sdk_logger.propagate
        if self.tally is not None:  # its failures are said once, in export_summary()
            self._sdk_logger.addHandler(self._log)
            self._sdk_logger.propagate = False
        self.provider = tracer_provider
        self.tracer = tracer_provider.get_tracer("research-agents")
        self._t0: float | None = None  # epoch seconds of the run's t = 0
        self._last = 0.0
        self.root: Any = None
        self.run_id = ""
        self.agents: dict[str, Any] = {}
        self.models: dict[str, Any] = {}
        self.tools: dict[tuple[str, str], Any] = {}
        self.exported = 0

    # ---- time
    def _ns(self, rec: EventRecord) -> int:
        if self._t0 is None:
            try:
                self._t0 = datetime.fromisoformat(rec.ts).timestamp() - rec.t
            except ValueError:
                import time

                self._t0 = time.time() - rec.t
        self._last = max(self._last, rec.t)
        return int((self._t0 + rec.t) * 1e9)

    def _start(self, name: str, parent: Any, start: int, attrs: dict[str, Any]) -> Any:
        from opentelemetry import trace

        ctx = trace.set_span_in_context(parent) if parent is not None else None
        self.exported += 1
        return self.tracer.start_span(name, context=ctx, start_time=start, attributes=attrs,
                                      kind=trace.SpanKind.INTERNAL if name.startswith("invoke") else trace.SpanKind.CLIENT)

    # ---- events
    def on_event(self, rec: EventRecord) -> None:
        e = rec.event
        if rec.agent_id == RUN_AGENT:
            self._run_event(rec)
            return
        if isinstance(e, AgentStarted):
            self._agent_started(rec, e)
        elif isinstance(e, ModelRequested):
            self.models[rec.agent_id] = self._start(f"chat {e.model}", self._agent(rec), self._ns(rec), {
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": provider_of(e.model),
                "gen_ai.request.model": e.model, "gen_ai.request.max_tokens": e.max_tokens,
                "gen_ai.conversation.id": rec.run_id, "gen_ai.agent.id": rec.agent_id})
        elif isinstance(e, ModelResponded):
            self._model_responded(rec, e)
        elif isinstance(e, ToolCalled):
            args = json.dumps(e.input, ensure_ascii=False, default=str)
            self.tools[(rec.agent_id, e.id)] = self._start(f"execute_tool {e.name}", self._agent(rec), self._ns(rec), {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.name, "gen_ai.tool.call.id": e.id,
                "gen_ai.tool.type": "function", "gen_ai.tool.call.arguments": args[:ARGS_LIMIT],
                "gen_ai.agent.id": rec.agent_id})
        elif isinstance(e, ToolReturned):
            span = self.tools.pop((rec.agent_id, e.id), None)
            if span is not None:
                if e.is_error:
                    self._error(span, "tool_error", e.content[:300])
                span.end(end_time=self._ns(rec))
        elif isinstance(e, AgentFailed):
            span = self.agents.get(rec.agent_id)
            if span is not None:
                self._error(span, "agent_failed", e.error)
        elif isinstance(e, AgentEnded):
            self._agent_ended(rec, e)

    def _run_event(self, rec: EventRecord) -> None:
        e = rec.event
        if isinstance(e, RunStarted):
            self.run_id = rec.run_id
            self.root = self._start("invoke_workflow research", None, self._ns(rec), {
                "gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "research",
                "gen_ai.conversation.id": rec.run_id, "research.question": e.question,
                "research.lead_model": e.lead_model, "research.subagent_model": e.subagent_model})
        elif isinstance(e, CitationChecked) and self.root is not None:
            self.root.set_attributes({"research.citations.markers": e.markers,
                                      "research.citations.supported": e.supported})
        elif isinstance(e, RunEnded) and self.root is not None:
            self._end_open(self._ns(rec))
            self.root.set_attribute("research.status", e.status.value)
            if e.error:
                self._error(self.root, "run_failed", e.error)
            self.root.end(end_time=self._ns(rec))
            self.root = None

    def _agent(self, rec: EventRecord) -> Any:
        return self.agents.get(rec.agent_id) or self.root

    def _agent_started(self, rec: EventRecord, e: AgentStarted) -> None:
        parent = self.root
        if e.role is not AgentRole.LEAD and rec.parent_id:
            delegate = next((s for (a, _), s in self.tools.items() if a == rec.parent_id and
                             getattr(s, "name", "") == f"execute_tool {DELEGATE}"), None)
            parent = delegate or self.agents.get(rec.parent_id) or self.root
        attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": rec.agent_id,
                                 "gen_ai.agent.name": e.role.value, "gen_ai.request.model": e.model,
                                 "gen_ai.provider.name": provider_of(e.model), "gen_ai.conversation.id": rec.run_id}
        if e.delegation is not None:
            attrs["gen_ai.agent.description"] = e.delegation.objective
        if e.round is not None:
            attrs["research.round"] = e.round
        self.agents[rec.agent_id] = self._start(f"invoke_agent {rec.agent_id}", parent, self._ns(rec), attrs)

    def _model_responded(self, rec: EventRecord, e: ModelResponded) -> None:
        span = self.models.pop(rec.agent_id, None)
        if span is None:
            return
        u = e.usage
        attrs: dict[str, Any] = {
            "gen_ai.response.model": e.model, "gen_ai.response.finish_reasons": [e.stop_reason],
            "gen_ai.usage.input_tokens": u.input_tokens, "gen_ai.usage.output_tokens": u.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": u.cache_read_input_tokens,
            "gen_ai.usage.cache_creation.input_tokens": u.cache_creation_input_tokens}
        c = cost(u, e.model)
        if c is not None:
            attrs["research.cost_usd"] = c
        span.set_attributes(attrs)
        span.end(end_time=self._ns(rec))

    def _agent_ended(self, rec: EventRecord, e: AgentEnded) -> None:
        span = self.agents.pop(rec.agent_id, None)
        if span is None:
            return
        end = self._ns(rec)
        for key in [k for k in self.tools if k[0] == rec.agent_id]:
            self.tools.pop(key).end(end_time=end)
        model = self.models.pop(rec.agent_id, None)
        if model is not None:
            model.end(end_time=end)
        span.set_attributes({"research.status": e.status.value, "research.stop": e.stop,
                             "research.tool_calls": e.tool_calls, "research.turns": e.turns,
                             "gen_ai.usage.input_tokens": e.usage.input_tokens,
                             "gen_ai.usage.output_tokens": e.usage.output_tokens})
        if e.status is AgentStatus.FAILED:
            self._error(span, "agent_failed", e.error or "failed")
        span.end(end_time=end)

    @staticmethod
    def _error(span: Any, kind: str, message: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, message[:300]))

    def _end_open(self, end: int) -> None:
        for span in [*self.tools.values(), *self.models.values(), *self.agents.values()]:
            span.end(end_time=end)
        self.tools.clear()
        self.models.clear()
        self.agents.clear()

    def close(self) -> None:
        """End whatever is still open (an interrupted run) and flush every span to the exporter."""
        if self._t0 is not None:
            end = int((self._t0 + self._last) * 1e9)
            self._end_open(end)
            if self.root is not None:
                self.root.end(end_time=end)
                self.root = None
        try:
            self.provider.force_flush()
            self.provider.shutdown()
        finally:
            self._sdk_logger.removeHandler(self._log)
            self._sdk_logger.propagate = self._propagate

    def export_summary(self) -> str:
        """What reached the exporter: `sent N span(s)` (and how many could not be sent)."""
        if self.tally is None:
            return f"{self.exported} span(s) recorded"
        if not self.tally.failed:
            return f"sent {self.tally.sent} span(s)"
        where = getattr(self.tally.inner, "_endpoint", None)
        why = f" ({self._log.reason})" if self._log.reason else ""
        return (f"sent {self.tally.sent} span(s); {self.tally.failed} could not be sent"
                + (f" to {where}" if where else "") + why)


__all__ = ["OtelExporter", "otlp_exporter", "provider_of"]
