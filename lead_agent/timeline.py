"""`research show RUN` timeline: a Gantt chart in plain text. One row per agent (lead first, then
subagents in plan order): its lifetime as a bar, model calls marked `█`, tool calls `▒` (both at
once `▓`), failed tool calls `x`, idle time inside the agent's life `─`; then its model, calls and
duration. A row still running ends in `▶`."""

from __future__ import annotations

from subagents.runs import AgentTrace, Run

from .spans import Span, SpanKind, agent_spans

MODEL, TOOL, BOTH, IDLE, FAIL, OPEN = "█", "▒", "▓", "─", "x", "▶"


def _cell(t: float, t0: float, scale: float, width: int) -> int:
    return min(width - 1, max(0, int((t - t0) * scale)))


def agent_row(a: AgentTrace, spans: list[Span], t0: float, t1: float, width: int) -> str:
    scale = width / max(t1 - t0, 1e-9)
    cells = [" "] * width
    start = a.started if a.started is not None else (spans[0].start if spans else t0)
    end = a.ended if a.ended is not None else t1
    for i in range(_cell(start, t0, scale, width), _cell(end, t0, scale, width) + 1):
        cells[i] = IDLE
    for s in spans:
        mark = MODEL if s.kind is SpanKind.MODEL else (FAIL if s.is_error else TOOL)
        for i in range(_cell(s.start, t0, scale, width), _cell(s.end, t0, scale, width) + 1):
            cells[i] = BOTH if {cells[i], mark} == {MODEL, TOOL} else (mark if cells[i] != FAIL else FAIL)
    if a.ended is None:
        cells[_cell(end, t0, scale, width)] = OPEN
    return "".join(cells)


def render_timeline(run: Run, width: int = 60) -> list[str]:
    trace = run.trace
    agents = trace.ordered_agents()
    if not agents:
        return ["Timeline: no agent events yet."]
    t0 = 0.0
    t1 = max(trace.last_t, max((a.ended or 0.0) for a in agents), 1e-3)
    name_w = max(len(a.agent_id) for a in agents)
    out = [f"Timeline (0 → {t1:.2f}s; {MODEL} model call, {TOOL} tool call, {BOTH} both, {FAIL} failed tool call, "
           f"{IDLE} waiting, {OPEN} still running)"]
    axis = f"{'':<{name_w}}  0s{'':<{width - 4 - len(f'{t1:.1f}s')}}{t1:.1f}s"
    out.append(axis)
    for a in agents:
        spans = agent_spans(a.records, t1)
        models = sum(s.kind is SpanKind.MODEL for s in spans)
        tools = a.tool_calls  # the agent's own count (manifest, Agents section): its terminal submit not included
        took = f"{(a.ended if a.ended is not None else t1) - (a.started or 0.0):.2f}s"
        out.append(f"{a.agent_id:<{name_w}} |{agent_row(a, spans, t0, t1, width)}| {a.status.value:<9} {a.model} · "
                   f"{models} model, {tools} tool call(s) · {took}")
    return out


__all__ = ["render_timeline"]
