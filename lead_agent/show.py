"""`research show RUN`: a run directory rendered for a terminal, read back through `read_run`
(the transcripts stay the source of truth; the manifest adds the settings and timings)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from subagents.events import (AgentFailed, ContextCondensed, FindingsSubmitted, ModelRetried, RoundPurpose, ToolCalled,
                             ToolReturned)
from subagents.model import Usage
from subagents.runs import AgentTrace, Run, read_run


def _short(value: Any, n: int = 90) -> str:
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _usage(u: Usage | dict[str, int] | None) -> str:
    d = u.to_dict() if isinstance(u, Usage) else (u or {})
    s = f"in {d.get('input_tokens', 0)} / out {d.get('output_tokens', 0)}"
    if d.get("cache_read_input_tokens") or d.get("cache_creation_input_tokens"):
        s += f" / cache write {d.get('cache_creation_input_tokens', 0)} read {d.get('cache_read_input_tokens', 0)}"
    return s


def _cost(v: float | None) -> str:
    return f"${v:.4f}" if isinstance(v, (int, float)) else "unknown"


def render_run(path: Path | Run) -> str:
    from .rundir import is_live

    run = path if isinstance(path, Run) else read_run(path)
    path = run.path
    m = run.manifest
    status = run.status
    if status == "running" and not is_live(path):
        status += " — no live process (killed?); continue it with `research resume`"
    out = [f"Run {run.run_id}  [{status}]", f"Question: {run.trace.question or m.get('question', '')}"]
    models = m.get("models", {})
    out.append(f"Models: lead={models.get('lead')} subagent={models.get('subagent')}"
               + ("" if models.get("language_model_used", True) else "  (no language model used)"))
    t = m.get("timings", {})
    out.append(f"Started {t.get('started_at')}, {t.get('seconds', 0):.2f}s; usage {_usage(run.trace.usage())}; "
               f"cost {_cost(run.trace.cost_usd())}")
    if run.trace.estimate:
        from .estimate import render_estimate

        out.append(render_estimate(run.trace.estimate))
    if run.trace.error or m.get("error"):
        out.append(f"Error: {run.trace.error or m.get('error')}")
    out += [f"Refused (not read): {why}" for why in run.refused]
    out += [f"Damaged: {why}" for why in run.damaged]
    out += _plans(run)
    from .timeline import render_timeline

    out += ["", *render_timeline(run)]
    out += _governance(run)
    out += ["", "Agents:"]
    for a in run.trace.ordered_agents():
        out += _agent(a)
    c = run.trace.citation
    if c is not None:
        out += ["", f"Citation check: {c.supported}/{c.markers} supported, {c.unsupported} unsupported, "
                    f"{c.unknown} unknown id(s) (pass rate {c.pass_rate})"]
    report = f"{path / 'report.md'}" if run.report is not None else "none"
    out.append(f"Sources retrieved: {len(run.sources) or m.get('sources', 0)}; report: {report}")
    return "\n".join(out)


def _plans(run: Run) -> list[str]:
    out: list[str] = []
    for plan in run.trace.plans:
        changed = sum(1 for line in plan.diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))
        diff = f"; {changed} line(s) changed from v{plan.version - 1}" if plan.diff else ""
        ran = run.trace.rounds.get(plan.round)
        replan = " (replan)" if ran is not None and ran.purpose is RoundPurpose.REPLAN else ""
        out += ["", f"Plan v{plan.version} (round {plan.round}{replan}, {plan.query_type.value}, by {plan.author}"
                    f"{diff}): {plan.rationale}"]
        for task in plan.tasks:
            d = task.delegation
            b = d.budget
            deps = f"; after {', '.join(d.depends_on)}" if d.depends_on else ""
            out.append(f"  {task.agent_id}{f' ({d.id})' if d.id else ''}: {_short(d.objective, 100)}")
            out.append(f"      tools {', '.join(d.tools)}; budget {b.max_tool_calls} calls, {b.max_tokens} tokens, "
                       f"{b.max_seconds:g}s{deps}")
    return out


def _governance(run: Run) -> list[str]:
    """Reviews by a person, replanning decisions, the budget that stopped the run, resumptions."""
    t = run.trace
    out: list[str] = []
    for r in t.reviews:
        out.append(f"Review of plan v{r.version}: {r.decision.value}" + (f" — {r.reason}" if r.reason else ""))
    for d in t.decisions:
        nxt = f" → {d.next_agent_id}" if d.next_agent_id else ""
        out.append(f"Replanning: {d.agent_id} {d.strategy.value}{nxt} ({d.cause.value}) — {_short(d.reason, 120)}")
    if t.budget_reached is not None:
        b = t.budget_reached
        out.append(f"Stopped by the {b.budget} budget: {b.used:g} of {b.limit:g}")
    for a in t.attempts:
        cut = f"; torn lines cut: {a.repaired}" if a.repaired else ""
        out.append(f"Attempt {a.attempt}: resumed from {a.previous_status}{cut}")
    return [""] + out if out else []


def _agent(a: AgentTrace) -> list[str]:
    timing = f"{a.started:.2f}-{a.ended:.2f}s" if a.started is not None and a.ended is not None else ""
    refused = f" (+{a.refused_over_budget} refused over budget)" if a.refused_over_budget else ""
    out = [f"  {a.agent_id:<10} {a.status.value:<11} {timing:<14} tool calls {a.tool_calls}{refused}, "
           f"usage {_usage(a.usage)}, cost {_cost(a.cost_usd())}" + (f"  ERROR {a.error}" if a.error else "")]
    for rec in a.records:
        e = rec.event
        if isinstance(e, ToolCalled):
            out.append(f"      → {e.name}({_short(e.input, 70)})")
        elif isinstance(e, ToolReturned) and e.is_error:
            out.append(f"        ✗ {_short(e.content, 80)}")
        elif isinstance(e, FindingsSubmitted):
            f = e.findings
            out.append(f"      findings [{f.status.value}]: {len(f.claims)} claim(s)")
            out += [f"        - {_short(c.text, 90)} {c.source_ids}" for c in f.claims[:8]]
            out += [f"        ? {_short(q, 90)}" for q in f.open_questions]
        elif isinstance(e, (AgentFailed, ContextCondensed, ModelRetried)):
            out.append(f"      ! {rec.kind}: {_short(rec.data(), 90)}")
    return out


# ---------------------------------------------------------------- one agent, readable


def render_agent(run: Run, agent_id: str, *, width: int = 400) -> str:
    """One agent's transcript: its delegation, every message, tool call (with its input) and result
    (shortened), model call (tokens, seconds), the findings and the end."""
    from subagents.events import (AgentEnded, AgentStarted, BudgetExhausted, MessageAdded, ModelRequested,
                                  ModelResponded)
    from subagents.model import TextBlock, ToolResultBlock, ToolUseBlock

    a = run.trace.agents.get(agent_id)
    if a is None:
        known = ", ".join(x.agent_id for x in run.trace.ordered_agents()) or "none"
        raise LookupError(f"no agent {agent_id!r} in run {run.run_id} (agents: {known})")
    out = [f"Agent {a.agent_id} ({a.role.value if a.role else '?'}, {a.model}) in run {run.run_id}: {a.status.value}"]
    for rec in a.records:
        e, at = rec.event, f"{rec.t:7.2f}s"
        if isinstance(e, AgentStarted):
            if e.delegation is not None:
                d = e.delegation
                out += [f"{at} delegation: {d.objective}", f"         output format: {d.output_format}",
                        f"         tools {', '.join(d.tools)}; budget {d.budget.max_tool_calls} tool calls, "
                        f"{d.budget.max_tokens} tokens, {d.budget.max_seconds:g}s"]
                if d.queries:
                    out.append(f"         suggested queries: {'; '.join(d.queries)}")
            elif e.question:
                out.append(f"{at} question: {e.question}")
        elif isinstance(e, MessageAdded):
            for b in e.content:
                if isinstance(b, TextBlock) and b.text.strip():
                    out.append(f"{at} [{e.role}] {_short(b.text, width)}")
                elif isinstance(b, ToolResultBlock) and e.role == "user":
                    continue  # shown with the tool call below
                elif isinstance(b, ToolUseBlock):
                    continue
        elif isinstance(e, ModelRequested):
            out.append(f"{at} → model {e.model} ({e.n_messages} messages, tools {', '.join(e.tools) or 'none'}, "
                       f"tool choice {e.tool_choice})")
        elif isinstance(e, ModelResponded):
            out.append(f"{at} ← model replied in {e.seconds:.2f}s, stop {e.stop_reason}, usage {_usage(e.usage)}")
        elif isinstance(e, ToolCalled):
            out.append(f"{at} → {e.name}({_short(e.input, 200)})")
        elif isinstance(e, ToolReturned):
            mark = "✗" if e.is_error else "←"
            out.append(f"{at} {mark} {e.name} ({e.seconds:.2f}s, {len(e.content)} chars): {_short(e.content, 240)}")
        elif isinstance(e, FindingsSubmitted):
            f = e.findings
            out.append(f"{at} findings [{f.status.value}]: {_short(f.summary, width) if f.summary else ''}")
            out += [f"           - {c.text} {c.source_ids}" for c in f.claims]
            out += [f"           ? {q}" for q in f.open_questions]
        elif isinstance(e, (AgentFailed, ContextCondensed, ModelRetried, BudgetExhausted)):
            out.append(f"{at} ! {rec.kind}: {_short(rec.data(), width)}")
        elif isinstance(e, AgentEnded):
            out.append(f"{at} ended {e.status.value} (stop {e.stop or '-'}; {e.tool_calls} tool calls, {e.turns} turns, "
                       f"usage {_usage(e.usage)}, cost {_cost(a.cost_usd())})" + (f": {e.error}" if e.error else ""))
    if not a.finished:
        out.append(f"{run.trace.last_t:7.2f}s … still running (or the run stopped without ending this agent)")
    return "\n".join(out)


# ---------------------------------------------------------------- the typed run as JSON


def run_json(run: Run) -> dict[str, Any]:
    """The typed run as one JSON object: the folded state, every agent's events, plans, sources, report."""
    t = run.trace
    agents = []
    for a in t.ordered_agents():
        agents.append({
            "agent_id": a.agent_id, "parent_id": a.parent_id, "role": a.role.value if a.role else None,
            "model": a.model, "round": a.round, "status": a.status.value, "stop": a.stop, "error": a.error,
            "usage": a.usage.to_dict(), "cost_usd": a.cost_usd(), "tool_calls": a.tool_calls,
            "refused_over_budget": a.refused_over_budget, "turns": a.turns, "started": a.started, "ended": a.ended,
            "delegation": a.delegation.model_dump(mode="json") if a.delegation else None,
            "findings": a.findings.model_dump(mode="json") if a.findings else None,
            "events": [r.to_json() for r in a.records]})
    from .rundir import plan_record

    return {
        "run_id": run.run_id, "path": str(run.path), "status": run.status, "question": t.question,
        "started_at": t.started_at, "finished_at": t.finished_at, "error": t.error,
        "models": run.manifest.get("models", {}), "options": run.manifest.get("options", {}),
        "usage": t.usage().to_dict(), "cost_usd": t.cost_usd(), "seconds": t.last_t,
        "plans": [{k: v for k, v in plan_record(p, "").items() if k != "created_at"} for p in t.plans],
        "plans_rejected": [{"round": r.round, "problems": r.problems} for r in t.rejections],
        "rounds": [{"round": r.round, "purpose": r.purpose.value, "agent_ids": r.agent_ids, "started": r.started,
                    "ended": r.ended} for r in t.rounds.values()],
        "agents": agents,
        "citation_check": _citation_json(t.citation),
        "sources": [{**vars(s), "kind": s.kind.value} for s in run.sources],
        "report": run.report,
        "damaged": run.damaged,
    }


def _citation_json(c: Any) -> dict[str, Any] | None:
    if c is None:
        return None
    return {"markers": c.markers, "supported": c.supported, "unsupported": c.unsupported, "unknown": c.unknown,
            "pass_rate": c.pass_rate, "issues": c.issues, "cited_sources": c.cited_sources}
