"""From finished cells to results: one row per run (metrics read back from its transcripts), the
judge's rubric scores and pairwise preferences, and the paired statistics per metric.

The first variant is the baseline A; every other variant B is compared with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import trio

from subagents.runs import read_run

from .experiment import Cell, Experiment, ExperimentDir
from .judge import CRITERIA, Judge, pair_outcome
from .metrics import METRICS, Better, MetricInfo, Scale, query_type, run_metrics
from .stats import Comparison, compare_metric, preference_summary

JUDGE_METRICS: tuple[MetricInfo, ...] = tuple(
    MetricInfo(f"judge_{c}", f"judged {c.replace('_', ' ')}", Better.HIGHER, Scale.POINTS) for c in CRITERIA
) + (MetricInfo("judge_mean", "judged mean score", Better.HIGHER, Scale.POINTS),)
ALL_METRICS = METRICS + JUDGE_METRICS


def cell_runs(where: ExperimentDir) -> dict[str, tuple[Path | None, dict[str, Any]]]:
    """The last ended record of every cell: cell key -> (run dir, log record). A completed run found
    under runs/ wins over the log (a crash between a run's end and its log line loses nothing)."""
    from .runner import DONE, finished_cells

    out: dict[str, tuple[Path | None, dict[str, Any]]] = {}
    for rec in where.cell_log():
        if rec.get("event") == "end":
            out[rec["cell"]] = (where.path / rec["run_dir"] if rec.get("run_dir") else None, rec)
    for cell, path in finished_cells(where).items():
        prev = out.get(cell)
        if prev is None or prev[1].get("status") not in DONE or prev[0] != path:
            out[cell] = (path, {"cell": cell, "event": "end", "status": "completed",
                                "seconds": prev[1].get("seconds") if prev else None})
    return out


def result_rows(exp: Experiment, where: ExperimentDir) -> list[dict[str, Any]]:
    rows = []
    runs = cell_runs(where)
    for cell in exp.cells():
        if cell.key not in runs:
            continue
        path, rec = runs[cell.key]
        q = exp.question(cell.question_id)
        row: dict[str, Any] = {"experiment": exp.id, "cell": cell.key, "variant": cell.variant,
                               "question_id": q.id, "question": q.question, "repeat": cell.repeat,
                               "status": rec.get("status", "failed"), "error": rec.get("error"),
                               "seconds": rec.get("seconds"), "run_id": None, "run_dir": None,
                               "mode": exp.variant(cell.variant).mode.value, "query_type": None, "metrics": {}}
        if path is not None and path.is_dir():
            run = read_run(path)
            row.update(run_id=run.run_id, run_dir=str(path.relative_to(where.path)), status=run.status,
                       error=run.trace.error or row["error"], query_type=query_type(run),
                       metrics=run_metrics(run, q))
        rows.append(row)
    return rows


# ---------------------------------------------------------------- the judge


@dataclass
class JudgeSummary:
    cost_usd: float | None = 0.0
    judgments: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    preferences: list[dict[str, Any]] = field(default_factory=list)  # per B variant vs A
    outcomes: dict[str, dict[str, str | None]] = field(default_factory=dict)  # "a|b" -> question -> winner


def _effort(row: dict[str, Any]) -> str:
    m = row["metrics"]
    return (f"mode {row['mode']}; subagents {m.get('subagents')}; rounds {m.get('rounds')}; tool calls "
            f"{m.get('tool_calls')}; distinct sources retrieved {m.get('sources_retrieved')}; "
            f"citations supported {m.get('citation_pass_rate')}")


def _report(where: ExperimentDir, row: dict[str, Any]) -> str | None:
    if row["status"] not in ("completed", "completed_empty") or not row["run_dir"]:
        return None
    f = where.path / row["run_dir"] / "report.md"
    return f.read_text(encoding="utf-8") if f.is_file() else None


async def judge_rows(exp: Experiment, where: ExperimentDir, rows: list[dict[str, Any]], judge: Judge,
                     parallel: int, note: Callable[[str], None]) -> JudgeSummary:
    """Rubric scores into each row's metrics; pairwise preferences of every B against A."""
    limiter = trio.CapacityLimiter(parallel)
    summary = JudgeSummary()
    by_cell = {r["cell"]: r for r in rows}
    costs: list[float | None] = []

    async def rubric(row: dict[str, Any], report: str) -> None:
        async with limiter:
            q = exp.question(row["question_id"])
            j = await judge.rubric(row["run_id"], q.question, report, q.answers, _effort(row))
        _count(summary, costs, j)
        if j.result is not None:
            scores = {c: float(j.result[c]["score"]) for c in CRITERIA}
            row["metrics"].update({f"judge_{c}": s for c, s in scores.items()},
                                  judge_mean=sum(scores.values()) / len(scores))
            row["judge"] = {"rubric": j.result, "judge_id": j.judge_id, "cost_usd": j.cost_usd}

    pairs: list[tuple[str, str, str, int, str, str]] = []
    a = exp.variants[0].name
    for b in (v.name for v in exp.variants[1:]):
        for q in exp.questions:
            for r in range(1, exp.repeats + 1):
                ra, rb = by_cell.get(Cell(a, q.id, r).key), by_cell.get(Cell(b, q.id, r).key)
                if ra and rb and _report(where, ra) and _report(where, rb):
                    pairs.append((a, b, q.id, r, ra["run_id"], rb["run_id"]))
    results: dict[tuple[str, str, str, int], list[Any]] = {}

    async def prefer(a_: str, b_: str, qid: str, r: int, run_a: str, run_b: str, swapped: bool) -> None:
        q = exp.question(qid)
        ra, rb = _report(where, by_cell[Cell(a_, qid, r).key]), _report(where, by_cell[Cell(b_, qid, r).key])
        first, second = (rb, ra) if swapped else (ra, rb)
        key = f"{run_b}--{run_a}" if swapped else f"{run_a}--{run_b}"
        async with limiter:
            j = await judge.prefer(key, q.question, first or "", second or "", q.answers)
        _count(summary, costs, j)
        results.setdefault((a_, b_, qid, r), [None, None])[int(swapped)] = j.result

    async with trio.open_nursery() as nursery:
        for row in rows:
            report = _report(where, row)
            if report is not None:
                nursery.start_soon(rubric, row, report)
        for pair in pairs:
            for swapped in (False, True):
                nursery.start_soon(prefer, *pair, swapped)
    summary.cost_usd = _sum(costs)
    _preferences(exp, results, summary)
    return summary


def _count(summary: JudgeSummary, costs: list[float | None], j: Any) -> None:
    summary.judgments += 1
    costs.append(j.cost_usd)
    if j.error:
        summary.failed += 1
        summary.errors.append(f"{j.judge_id}: {j.error}")


def _sum(costs: list[float | None]) -> float | None:
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def _preferences(exp: Experiment, results: dict[tuple[str, str, str, int], list[Any]], s: JudgeSummary) -> None:
    """Per question: the outcome over repeats (more wins than losses), then a sign test over questions."""
    a = exp.variants[0].name
    for b in (v.name for v in exp.variants[1:]):
        by_q: dict[str, str | None] = {}
        for q in exp.questions:
            outs = [pair_outcome(*results[(a, b, q.id, r)]) for r in range(1, exp.repeats + 1)
                    if (a, b, q.id, r) in results]
            outs = [o for o in outs if o is not None]
            if not outs:
                continue
            wa, wb = outs.count("a"), outs.count("b")
            by_q[q.id] = "tie" if wa == wb else (a if wa > wb else b)
        s.outcomes[f"{a}|{b}"] = by_q
        vals = list(by_q.values())
        s.preferences.append(preference_summary(vals.count(b), vals.count(a), vals.count("tie"), a, b))


# ---------------------------------------------------------------- statistics


def comparisons(exp: Experiment, rows: list[dict[str, Any]]) -> list[Comparison]:
    """Every metric that has values, every B against A."""
    a = exp.variants[0].name
    values: dict[str, set[Any]] = {}
    for r in rows:
        for k, v in r["metrics"].items():
            if v is not None:
                values.setdefault(k, set()).add(v)
    out = []
    for b in (v.name for v in exp.variants[1:]):
        for info in ALL_METRICS:
            if len(values.get(info.key, ())) > 1 or values.get(info.key, {0}) != {0}:  # all zero: nothing to say
                out.append(compare_metric(rows, info, a, b))
    return out
