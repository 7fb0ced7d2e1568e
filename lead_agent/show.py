"""`research show RUN`: a run directory rendered for a terminal, read back through `read_run`
(the transcripts stay the source of truth; the manifest adds the settings and timings)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from subagents.events import AgentFailed, ContextCondensed, FindingsSubmitted, ModelRetried, ToolCalled, ToolReturned
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


def render_run(path: Path) -> str:
    from .rundir import is_live

    run = read_run(path)
    m = run.manifest
    status = run.status
    if status == "running" and not is_live(path):
        status += " — no live process (killed?); continue it with `research resume`"
    out = [f"Run {run.run_id}  [{status}]", f"Question: {run.trace.question or m['question']}"]
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
    out += _plans(run)
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
        out += ["", f"Plan v{plan.version} (round {plan.round}, {plan.query_type.value}, by {plan.author}{diff}): "
                    f"{plan.rationale}"]
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
    out = [f"  {a.agent_id:<10} {a.status.value:<11} {timing:<14} tool calls {a.tool_calls}, "
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
