"""summary.md: what was compared, the verdicts in words, the judge, failures per variant and the
full metric tables. The same text is printed to the terminal."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from .analysis import JudgeSummary
from .experiment import Experiment
from .stats import Comparison, fmt_p


def _num(v: float | None) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"


def _ci(c: Comparison) -> str:
    if c.diff is None:
        return "—"
    ci = f" [{c.diff_ci.low:+.3g}, {c.diff_ci.high:+.3g}]" if c.diff_ci else ""
    return f"{c.diff:+.4g}{ci}"


def _rel(c: Comparison) -> str:
    if c.rel is None:
        return "—"
    ci = f" [{c.rel_ci.low * 100:+.0f}%, {c.rel_ci.high * 100:+.0f}%]" if c.rel_ci else ""
    return f"{c.rel * 100:+.0f}%{ci}"


def _cost(rows: Sequence[dict[str, Any]]) -> float | None:
    costs = [r["metrics"].get("cost_usd") for r in rows if r["metrics"]]
    return None if any(c is None for c in costs) else sum(costs)


def run_table(exp: Experiment, rows: Sequence[dict[str, Any]], models: dict[str, tuple[str, str]]) -> list[str]:
    lines = ["| variant | settings | models (lead / subagents) | completed | failed | cost (USD) | mean wall (s) |",
             "|---|---|---|---|---|---|---|"]
    for i, v in enumerate(exp.variants):
        mine = [r for r in rows if r["variant"] == v.name]
        ok = [r for r in mine if r["status"] in ("completed", "completed_empty")]
        walls = [r["metrics"]["wall_seconds"] for r in mine if r["metrics"].get("wall_seconds") is not None]
        label = f"{'A' if i == 0 else 'B'}: {v.name}"
        lead, sub = models.get(v.name, ("?", "?"))
        lines.append(f"| {label} | {v.describe().split(' (', 1)[1].rstrip(')')} | {lead} / {sub} | {len(ok)} | "
                     f"{len(mine) - len(ok)} | {_num(_cost(mine))} | {_num(sum(walls) / len(walls) if walls else None)} |")
    return lines


def render_summary(exp: Experiment, rows: Sequence[dict[str, Any]], comps: Sequence[Comparison],
                   judge: JudgeSummary | None, note: str | None, models: dict[str, tuple[str, str]],
                   skipped: int = 0) -> str:
    a = exp.variants[0].name
    statuses = Counter(r["status"] for r in rows)
    total = exp.repeats * len(exp.questions) * len(exp.variants)
    out = [f"# Comparison {exp.id}", "",
           f"Questions: {exp.question_set} ({len(exp.questions)}); repeats: {exp.repeats}; cells: {total} "
           f"({', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}"
           + (f", {skipped} not started (max cost)" if skipped else "")
           + (f", {total - len(rows) - skipped} not run" if total - len(rows) - skipped > 0 else "") + ").",
           f"Baseline A: {a}. Every other variant B is compared with it, paired by question "
           "(repeats averaged per question).", ""]
    if note:
        out += [f"> {note}", ""]
    out += exp.notes and [f"> {n}" for n in exp.notes] + [""] or []
    out += ["## Runs", ""] + run_table(exp, rows, models) + [""]
    failures = [r for r in rows if r["status"] not in ("completed", "completed_empty")]
    if failures:
        out += ["Failed cells:", ""] + [f"- {r['cell']}: {r.get('error') or r['status']}" for r in failures] + [""]
    for b in (v.name for v in exp.variants[1:]):
        mine = [c for c in comps if c.b == b]
        sig = [c for c in mine if c.significant]
        out += [f"## {b} vs {a}: verdicts", ""]
        out += [f"- {c.verdict}" for c in sig] or ["- no metric differs significantly (p < 0.05)."]
        quiet = [c.label for c in mine if not c.significant and c.n]
        if quiet:
            out.append(f"- no significant difference in: {', '.join(quiet)}.")
        if judge is not None:
            pref = next((p for p in judge.preferences if p["b"] == b), None)
            if pref:
                out.append(f"- pairwise judge: {pref['verdict']}")
        out += ["", f"## {b} vs {a}: metrics", "",
                "| metric | A mean | B mean | B − A [95% CI] | B / A − 1 [95% CI] | p Wilcoxon | p sign | n |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {c.label} | {_num(c.mean_a)} | {_num(c.mean_b)} | {_ci(c)} | {_rel(c)} | "
                f"{fmt_p(c.p_wilcoxon)[2:]} | {fmt_p(c.p_sign)[2:]} | {c.n} |" for c in mine if c.n]
        out.append("")
    if judge is not None:
        spent = _cost(rows)
        share = (f" ({judge.cost_usd / (judge.cost_usd + spent) * 100:.1f}% of the experiment's total "
                 f"${judge.cost_usd + spent:.4f})") if judge.cost_usd is not None and spent else ""
        cost = f"${judge.cost_usd:.4f}" if judge.cost_usd is not None else "unknown (a model without a price)"
        out += ["## Judge", "", f"{judge.judgments} judgment(s), {judge.failed} failed; judge cost {cost}{share}, "
                "counted apart from the runs' cost.", ""]
        out += [f"- {e}" for e in judge.errors[:10]] + ([""] if judge.errors else [])
    out += ["Files: results.jsonl (one row per run), report.html (charts, per-question table, reports side by "
            "side), runs/ (every run; `research show` works on each)."]
    return "\n".join(out) + "\n"
