"""`run_comparison`: an experiment from start (or resume) to its results, summary and report.

    exp = build_experiment({"questions": "python-docs", "limit": 10}, ["default", "single"])
    result = await run_comparison(exp, ExperimentDir(Path("runs") / exp.id))
    print(result.summary)

Everything a user can get wrong is checked (`prepare_experiment`) before the comparison directory
is created. Model objects can stand in for model names (`models={"name": model}`: tests, custom
adapters).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from subagents.events import EventBus
from subagents.model import Model
from subagents.transcript import TranscriptWriter

from ..settings import UsageError
from .analysis import JudgeSummary, comparisons, judge_rows, result_rows
from .experiment import REPORT_HTML, RESULTS, SUMMARY, Experiment, ExperimentDir
from .html_report import render_html
from .judge import JUDGMENTS, Judge
from .runner import Prepared, Progress, close_models, past_runs, prepare_experiment, run_cells
from .stats import Comparison
from .summary import render_summary


@dataclass
class ComparisonResult:
    path: Path
    summary: str
    rows: list[dict[str, Any]]
    comparisons: list[Comparison]
    judge: JudgeSummary | None
    note: str | None

    def comparison(self, metric: str, b: str | None = None) -> Comparison:
        return next(c for c in self.comparisons if c.metric == metric and (b is None or c.b == b))


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _skipped(where: ExperimentDir, finished: set[str]) -> int:
    return len({r["cell"] for r in where.cell_log() if r.get("event") == "skipped"} - finished)


async def run_comparison(exp: Experiment, where: ExperimentDir, *, resume: bool = False,
                         progress: Callable[[str], None] | None = _stderr, environ: Mapping[str, str] | None = None,
                         use_config_file: bool = True, web_config: Any = None,
                         models: Mapping[str, Model] | None = None) -> ComparisonResult:
    write = progress or (lambda _: None)
    if resume:
        _refuse_if_running(where)
    p = prepare_experiment(exp, where, environ=environ, use_config_file=use_config_file, web_config=web_config,
                           models=models)
    try:
        if not resume:
            p.exp = exp = _pinned(exp, p)
            where.create(exp)
        else:
            where.save(exp)  # settings changed on resume (--parallel, --max-cost) hold for later resumes too
        if p.note:
            write(f"note: {p.note}")
        past = past_runs(where)
        done = past.done
        pending = [c for c in exp.cells() if c.key not in done]
        total = len(exp.variants) * len(exp.questions) * exp.repeats
        prog = Progress(total=total, parallel=exp.parallel, write=write, done=len(done), cost=past.spent)
        write(f"{exp.id}: {total} cells ({len(exp.variants)} variants × {len(exp.questions)} questions × "
              f"{exp.repeats} repeat(s)), {exp.parallel} at once" + (f"; {len(done)} already done" if done else "")
              + (f"; {len(past.unfinished)} interrupted, continued" if past.unfinished else "")
              + (f"; ${past.spent:.4f} spent so far" if past.spent else ""))
        await run_cells(p, prog, pending, past.unfinished)
        return await finish(p, write)
    finally:
        await close_models(p)


def _refuse_if_running(where: ExperimentDir) -> None:
    """--resume while a process still runs the experiment would run its cells twice: refused."""
    from ..rundir import is_live

    live = [d.name for d in sorted(where.runs.glob("*")) if d.is_dir() and is_live(d)] if where.runs.is_dir() else []
    if live:
        raise UsageError(f"the comparison {where.path} is still running (a live process holds its run {live[0]}): "
                         "wait for it, or stop it, before resuming")


def _pinned(exp: Experiment, p: Prepared) -> Experiment:
    """The experiment with the models the environment or config file chose (no flag named them), so
    --resume runs the same models in another shell, or refuses, instead of switching."""
    chosen = {k: getattr(p.base, k) for k in ("lead_model", "subagent_model") if isinstance(getattr(p.base, k), str)}
    return dataclasses.replace(exp, options={**chosen, **exp.options})


async def finish(p: Prepared, write: Callable[[str], None]) -> ComparisonResult:
    exp, where = p.exp, p.dir
    rows = result_rows(exp, where)
    judge = None
    if p.judge is not None:
        write(f"judging with {p.judge.name}: rubric per report, pairwise per question (both orders)")
        where.judge.mkdir(exist_ok=True)
        bus = EventBus(f"judge-{exp.id}")
        writer = TranscriptWriter(where.judge)
        bus.subscribe(writer)
        try:
            judge = await judge_rows(exp, where, rows, Judge(p.judge, bus, where.judge / JUDGMENTS), exp.parallel,
                                     write)
        finally:
            writer.close()
    comps = comparisons(exp, rows)
    models = {v: (lead.name, sub.name) for v, (lead, sub) in p.models.items()}
    summary = render_summary(exp, rows, comps, judge, p.note, models,
                             skipped=_skipped(where, {r["cell"] for r in rows}))
    with open(where.path / RESULTS, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    (where.path / SUMMARY).write_text(summary, encoding="utf-8")
    (where.path / REPORT_HTML).write_text(render_html(exp, where.path, rows, comps, judge, p.note), encoding="utf-8")
    return ComparisonResult(where.path, summary, rows, comps, judge, p.note)
