"""`research show RUN`: a run directory rendered for a terminal, from its manifest, plans and
transcripts (which stay the source of truth)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from subagents.transcript import read_events


def _short(value: Any, n: int = 90) -> str:
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _usage(u: dict[str, int] | None) -> str:
    u = u or {}
    s = f"in {u.get('input_tokens', 0)} / out {u.get('output_tokens', 0)}"
    if u.get("cache_read_input_tokens") or u.get("cache_creation_input_tokens"):
        s += f" / cache write {u.get('cache_creation_input_tokens', 0)} read {u.get('cache_read_input_tokens', 0)}"
    return s


def _cost(d: dict[str, Any]) -> str:
    v = d.get("cost_usd")
    return f"${v:.4f}" if isinstance(v, (int, float)) else "unknown"


def render_run(path: Path) -> str:
    m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    out = [f"Run {m['run_id']}  [{m['status']}]", f"Question: {m['question']}"]
    models = m.get("models", {})
    out.append(f"Models: lead={models.get('lead')} subagent={models.get('subagent')}"
               + ("" if models.get("language_model_used", True) else "  (no language model used)"))
    t = m.get("timings", {})
    out.append(f"Started {t.get('started_at')}, {t.get('seconds', 0):.2f}s; usage {_usage(m.get('usage'))}; "
               f"cost {_cost(m)}")
    if m.get("estimate"):
        from .estimate import render_estimate

        out.append(render_estimate(m["estimate"]))
    if m.get("error"):
        out.append(f"Error: {m['error']}")
    for name in m.get("plans", []):
        plan = json.loads((path / name).read_text(encoding="utf-8"))
        out += ["", f"Plan v{plan['version']} ({plan['query_type']}): {plan['rationale']}"]
        for task in plan["tasks"]:
            b = task.get("budget", {})
            out.append(f"  {task['agent_id']}: {_short(task['objective'], 100)}")
            out.append(f"      tools {', '.join(task['tools'])}; budget {b.get('max_tool_calls')} calls, "
                       f"{b.get('max_seconds')}s")
    out += ["", "Agents:"]
    for a in m.get("agents", []):
        timing = f"{a['started']:.2f}-{a['ended']:.2f}s" if "started" in a else ""
        out.append(f"  {a['agent_id']:<10} {a.get('status', '?'):<11} {timing:<14} tool calls {a.get('tool_calls', '-')}, "
                   f"usage {_usage(a.get('usage'))}, cost {_cost(a)}" + (f"  ERROR {a['error']}" if a.get("error") else ""))
        tpath = path / a.get("transcript", f"agents/{a['agent_id']}.jsonl")
        if not tpath.is_file():
            continue
        for ev in read_events(tpath):
            d = ev["data"]
            if ev["kind"] == "tool_call":
                out.append(f"      → {d['name']}({_short(d['input'], 70)})")
            elif ev["kind"] == "tool_result" and d.get("is_error"):
                out.append(f"        ✗ {_short(d['content'], 80)}")
            elif ev["kind"] == "findings":
                out.append(f"      findings [{d['status']}]: {len(d['claims'])} claim(s)")
                for c in d["claims"][:8]:
                    out.append(f"        - {_short(c['text'], 90)} {c['source_ids']}")
                for q in d.get("open_questions", []):
                    out.append(f"        ? {_short(q, 90)}")
            elif ev["kind"] in ("error", "context_condensed", "model_retry"):
                out.append(f"      ! {ev['kind']}: {_short(d, 90)}")
    c = m.get("citation_check")
    if c:
        out += ["", f"Citation check: {c['supported']}/{c['markers']} supported, {c['unsupported']} unsupported, "
                    f"{c['unknown']} unknown id(s) (pass rate {c['pass_rate']})"]
    out.append(f"Sources retrieved: {m.get('sources', 0)}; report: {path / 'report.md'}")
    return "\n".join(out)
