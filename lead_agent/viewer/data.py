"""The trace viewer's data: a run read back (`read_run`) turned into one compact JSON object the
page's script draws from. Long texts are shortened (the transcripts keep them whole) so a run
with 20 subagents and thousands of events stays a small file."""

from __future__ import annotations

import difflib
import json
from typing import Any

from subagents.events import (AgentEnded, AgentFailed, AgentStarted, BudgetExhausted, ContextCondensed,
                              FindingsSubmitted, MessageAdded, ModelRetried, PlanAccepted, PlanRejected)
from subagents.model import TextBlock, ToolUseBlock
from subagents.runs import AgentTrace, Run

from ..references import source_link
from ..report_html import markdown_html
from ..spans import Span, SpanKind, agent_spans

TEXT_LIMIT = 1500  # characters of a tool result, message or passage kept in the page
INPUT_LIMIT = 600


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters in the transcript]"


def _json_clip(value: Any, limit: int = INPUT_LIMIT) -> Any:
    s = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(s) <= limit else clip(s, limit)


def _span(s: Span) -> dict[str, Any]:
    d: dict[str, Any] = {"k": "m" if s.kind is SpanKind.MODEL else "t", "n": s.name, "s": round(s.start, 3),
                         "e": round(s.end, 3), "turn": s.turn}
    if s.open:
        d["open"] = 1
    if s.kind is SpanKind.MODEL:
        d["in"] = s.input
        if s.output is not None:
            d["out"] = [_block(b) for b in s.output]
        if s.usage is not None:
            d["u"] = s.usage.to_dict()
        d["c"] = s.cost_usd
        d["stop"] = s.stop_reason
    else:
        d["in"] = _json_clip(s.input)
        if s.output is not None:
            d["out"] = clip(str(s.output))
        if s.is_error:
            d["err"] = 1
        d["id"] = s.call_id
    return d


def _block(b: Any) -> dict[str, Any]:
    if isinstance(b, TextBlock):
        return {"text": clip(b.text)}
    if isinstance(b, ToolUseBlock):  # its input is on the tool call's own span
        return {"tool": b.name}
    return {"result": clip(str(getattr(b, "content", "")))}


def _steps(a: AgentTrace, spans: list[Span]) -> list[dict[str, Any]]:
    """The transcript in order: text messages, calls (by span index), findings, notes."""
    by_seq = {s.seq: i for i, s in enumerate(spans)}
    steps: list[dict[str, Any]] = []
    for rec in a.records:
        e = rec.event
        if rec.seq in by_seq:
            steps.append({"t": round(rec.t, 3), "span": by_seq[rec.seq]})
        elif isinstance(e, MessageAdded):
            text = "\n".join(b.text for b in e.content if isinstance(b, TextBlock) and b.text.strip())
            if text:
                steps.append({"t": round(rec.t, 3), "msg": e.role, "text": clip(text)})
        elif isinstance(e, FindingsSubmitted):
            steps.append({"t": rec.t, "findings": 1})
        elif isinstance(e, (AgentFailed, ContextCondensed, BudgetExhausted, ModelRetried, PlanRejected)):
            steps.append({"t": rec.t, "note": rec.kind, "text": clip(json.dumps(rec.data(), ensure_ascii=False))})
        elif isinstance(e, PlanAccepted):
            steps.append({"t": rec.t, "note": "plan", "text": f"plan v{e.version} accepted: {len(e.tasks)} task(s)"})
        elif isinstance(e, AgentEnded):
            steps.append({"t": rec.t, "note": "end", "text": f"ended {e.status.value} (stop {e.stop or '-'})"
                                                           + (f": {e.error}" if e.error else "")})
        elif isinstance(e, AgentStarted) and e.question:
            steps.append({"t": rec.t, "msg": "question", "text": e.question})
    return steps


def _agent(a: AgentTrace, open_end: float) -> dict[str, Any]:
    spans = agent_spans(a.records, open_end)
    return {
        "id": a.agent_id, "role": a.role.value if a.role else "", "model": a.model, "round": a.round,
        "status": a.status.value, "stop": a.stop, "error": a.error, "started": a.started, "ended": a.ended,
        "usage": a.usage.to_dict(), "cost": a.cost_usd(), "tool_calls": a.tool_calls, "turns": a.turns,
        "delegation": a.delegation.model_dump(mode="json") if a.delegation else None,
        "findings": a.findings.model_dump(mode="json") if a.findings else None,
        "spans": [_span(s) for s in spans], "steps": _steps(a, spans),
    }


def plan_text(plan: PlanAccepted) -> list[str]:
    """A plan as lines, for diffs between versions (agent ids left out: they always differ)."""
    lines = [f"query type: {plan.query_type.value}", f"rationale: {plan.rationale}"]
    for t in plan.tasks:
        d = t.delegation
        lines += [f"- {d.objective}", f"    tools: {', '.join(d.tools)}",
                  f"    budget: {d.budget.max_tool_calls} calls, {d.budget.max_tokens} tokens, {d.budget.max_seconds:g}s"]
    return lines


def _plans(run: Run) -> list[dict[str, Any]]:
    out = []
    previous: list[str] | None = None
    for p in run.trace.plans:
        lines = plan_text(p)
        diff = list(difflib.unified_diff(previous, lines, f"v{p.version - 1}", f"v{p.version}", lineterm="", n=1)) \
            if previous is not None else []
        ran = run.trace.rounds.get(p.round)
        out.append({"version": p.version, "round": p.round, "author": p.author, "query_type": p.query_type.value,
                    "purpose": ran.purpose.value if ran is not None else None,
                    "rationale": p.rationale, "diff": diff,
                    "tasks": [{"agent_id": t.agent_id, **t.delegation.model_dump(mode="json")} for t in p.tasks]})
        previous = lines
    return out


def _sources(run: Run, wanted: set[str]) -> dict[str, Any]:
    out = {}
    for s in run.sources:
        if s.id not in wanted:
            continue
        link = source_link(s)
        out[s.id] = {"label": link.label, "href": link.href, "where": link.where, "kind": s.kind.value,
                     "text": clip(s.text, 4000), "by": s.retrieved_by}
    return out


def viewer_data(run: Run) -> dict[str, Any]:
    t = run.trace
    end = max(t.last_t, 1e-3)
    agents = [_agent(a, end) for a in t.ordered_agents()]
    cited = list(t.citation.cited_sources) if t.citation else []
    claimed = {sid for a in t.agents.values() if a.findings for c in a.findings.claims for sid in c.source_ids}
    m = run.manifest
    return {
        "run": {"id": run.run_id, "question": t.question or m.get("question", ""), "status": run.status,
                "error": t.error or m.get("error"), "started_at": t.started_at, "seconds": round(end, 3),
                "models": m.get("models", {}), "usage": t.usage().to_dict(), "cost": t.cost_usd(),
                "language_model_used": bool(t.started.language_model_used) if t.started else None},
        "plans": _plans(run),
        "rejected": [{"round": r.round, "problems": r.problems} for r in t.rejections],
        "agents": agents,
        "citation": None if t.citation is None else {
            "markers": t.citation.markers, "supported": t.citation.supported, "unsupported": t.citation.unsupported,
            "unknown": t.citation.unknown, "pass_rate": t.citation.pass_rate, "issues": t.citation.issues},
        "refs": {str(i + 1): sid for i, sid in enumerate(cited)},
        "sources": _sources(run, set(cited) | claimed),
        "report": markdown_html(run.report) if run.report is not None else None,
    }


__all__ = ["plan_text", "viewer_data"]
