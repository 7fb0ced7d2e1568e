"""OpenTelemetry export: a run's events become GenAI-convention spans (the SDK's in-memory exporter)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lead_agent import api
from subagents.model import Usage
from subagents.models.scripted import ScriptedModel, text, tool_call
from subagents.runs import iter_records, read_run

from .conftest import lead_report_from_findings, note_tools, run_cli, submit_first_hit

pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra is not installed (pip install -e '.[otel]')")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from lead_agent.otel import OtelExporter  # noqa: E402

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
        "gather": "asyncio.gather returns results in the order of the awaitables passed to it."}
PLAN = {"query_type": "breadth_first", "rationale": "two APIs",
        "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]},
                  {"objective": "gather ordering", "tools": ["search_notes"]}]}


async def scripted_run(tmp_path: Path, observers: list) -> api.ResearchResult:
    lead = ScriptedModel([tool_call("delegate", PLAN, usage=Usage(100, 20, 5, 7)), lead_report_from_findings])
    sub = ScriptedModel(per_agent={a: [tool_call("search_notes", {"query": q}), submit_first_hit]
                                   for a, q in (("r1-sub1", "TaskGroup"), ("r1-sub2", "gather"))})
    return await api.research("How do TaskGroup and gather behave?", runs_dir=tmp_path, lead_model=lead,
                              subagent_model=sub, extra_tools=note_tools(DOCS), max_rounds=1, observers=observers,
                              use_config_file=False, environ={})


async def test_a_run_exports_one_span_per_agent_model_call_and_tool_call(tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    otel = OtelExporter(memory)
    result = await scripted_run(tmp_path, [otel])
    otel.close()
    spans = memory.get_finished_spans()
    by_name: dict[str, list] = {}
    for s in spans:
        by_name.setdefault(s.name, []).append(s)
    [root] = by_name["invoke_workflow research"]
    assert root.parent is None and root.attributes["gen_ai.conversation.id"] == result.manifest["run_id"]
    assert root.attributes["research.status"] == "completed"
    run = read_run(result.run_dir)
    agents = {a.agent_id: a for a in run.trace.agents.values()}
    # one span per agent, the lead under the run, subagents inside the lead's delegate call
    agent_spans = {s.attributes["gen_ai.agent.id"]: s for s in spans if s.name.startswith("invoke_agent ")}
    assert set(agent_spans) == set(agents)
    [delegate] = by_name["execute_tool delegate"]
    assert agent_spans["lead"].parent.span_id == root.context.span_id
    assert delegate.parent.span_id == agent_spans["lead"].context.span_id
    for sub in ("r1-sub1", "r1-sub2"):
        assert agent_spans[sub].parent.span_id == delegate.context.span_id
        assert agent_spans[sub].attributes["gen_ai.agent.description"] == agents[sub].delegation.objective
    # a span per model call with model and token usage, a span per tool call
    records = list(iter_records(result.run_dir))
    responses = [r for r in records if r.kind == "model_response"]
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == len(responses) == sum(len(a.calls) for a in agents.values())
    lead_chat = min((s for s in chats if s.attributes["gen_ai.agent.id"] == "lead"), key=lambda s: s.start_time)
    assert lead_chat.attributes["gen_ai.request.model"] == "scripted"
    assert (lead_chat.attributes["gen_ai.usage.input_tokens"], lead_chat.attributes["gen_ai.usage.output_tokens"],
            lead_chat.attributes["gen_ai.usage.cache_creation.input_tokens"],
            lead_chat.attributes["gen_ai.usage.cache_read.input_tokens"]) == (100, 20, 5, 7)
    assert lead_chat.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert len(tools) == sum(1 for r in records if r.kind == "tool_call")
    search = next(s for s in tools if s.name == "execute_tool search_notes")
    assert search.attributes["gen_ai.tool.call.arguments"] in ('{"query": "TaskGroup"}', '{"query": "gather"}')
    assert search.parent.span_id in {agent_spans["r1-sub1"].context.span_id, agent_spans["r1-sub2"].context.span_id}
    # spans nest in time as the events did
    for s in spans:
        assert s.start_time <= s.end_time
        if s.parent is not None:
            parent = next(p for p in spans if p.context.span_id == s.parent.span_id)
            assert parent.start_time <= s.start_time and s.end_time <= parent.end_time


async def test_a_failed_tool_call_is_an_error_span(tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    otel = OtelExporter(memory)
    lead = ScriptedModel([tool_call("delegate", {**PLAN, "tasks": PLAN["tasks"][:1]}), text("# Nothing found\n\nNo.")])
    sub = ScriptedModel([tool_call("search_notes", {"query": "zzzz"}), tool_call(
        "submit_findings", {"status": "failed", "summary": "nothing", "claims": []})])
    with pytest.raises(api.RunFailed, match="every subagent failed"):  # its only tool call failed
        await api.research("q?", runs_dir=tmp_path, lead_model=lead, subagent_model=sub, extra_tools=note_tools(DOCS),
                           max_rounds=1, observers=[otel], use_config_file=False, environ={})
    otel.close()  # a failed run is exported too
    [search] = [s for s in memory.get_finished_spans() if s.name == "execute_tool search_notes"]
    assert search.status.status_code is StatusCode.ERROR and search.attributes["error.type"] == "tool_error"


def test_show_otel_exports_a_finished_run_through_otlp(tmp_path: Path) -> None:
    """`research show RUN --otel` sends the spans to the OTLP endpoint the standard variables name."""
    import gzip
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    import trio

    got: list[bytes] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append(gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *a: object) -> None:
            pass

    result = trio.run(scripted_run, tmp_path, [])
    server = HTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        proc = run_cli("show", str(result.run_dir), "--otel", cwd=tmp_path, env={
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{server.server_port}/v1/traces"})
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    names = []
    for body in got:
        req = ExportTraceServiceRequest.FromString(body)
        names += [s.name for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert "invoke_workflow research" in names and "invoke_agent r1-sub1" in names
    assert names.count("execute_tool search_notes") == 2
    assert proc.stderr.strip().endswith(f"): sent {len(names)} span(s)"), proc.stderr


def test_spans_that_cannot_be_sent_are_reported_not_claimed(tmp_path: Path) -> None:
    import socket

    import trio

    result = trio.run(scripted_run, tmp_path, [])
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = run_cli("show", str(result.run_dir), "--otel", cwd=tmp_path, env={
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{port}/v1/traces", "OTEL_EXPORTER_OTLP_TIMEOUT": "1"})
    assert proc.returncode == 1
    import re

    assert re.search(r"\): sent 0 span\(s\); [1-9]\d* could not be sent to http://127\.0\.0\.1:\d+/v1/traces \(.+\)$",
                     proc.stderr.strip()), proc.stderr
