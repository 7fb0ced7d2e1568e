"""Running an experiment's cells: one trio nursery, at most `parallel` cells at once (a
CapacityLimiter), every model built once from one `ModelFactory` (so all cells share one rate
limiter and one connection pool per model), one shared web cache. A failing cell is recorded as
failed with its error and the others go on; `max_cost` stops new cells from starting once the
experiment has spent it. Cells already completed (found by reading back the runs under `runs/`,
not by trusting a log) are kept on `--resume`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import trio

from subagents.events import EventRecord, ModelResponded, RunStarted
from subagents.model import Model
from subagents.models.pricing import cost
from subagents.models.resolve import MissingApiKey, ModelConfigError, ModelFactory
from subagents.runs import read_run

from ..api import RunFailed, run_research
from ..settings import Settings, UsageError, resolve_settings, validate
from .experiment import Cell, Experiment, ExperimentDir
from .variants import offline_note

DONE = ("completed", "completed_empty")  # run statuses a resume keeps
UNFINISHED = ("interrupted", "running")  # run statuses a resume continues (running: its process was killed)


@dataclass
class Prepared:
    """An experiment ready to run: settings, models and checks done, nothing written yet."""

    exp: Experiment
    dir: ExperimentDir
    base: Settings
    models: dict[str, tuple[Model, Model]]  # variant -> (lead, subagent)
    judge: Model | None
    note: str | None  # the offline honesty note, when it applies
    to_close: list[Model] = field(default_factory=list)


def _model(factory: ModelFactory, cache: dict[str, Model], name: str, *, judge: bool = False) -> Model:
    if name not in cache:
        try:
            cache[name] = factory.model(name)
        except MissingApiKey as e:
            if judge:  # running offline is no way out: the judge needs a language model
                raise UsageError(f"{e.env} is not set: export it to use {name!r} as the judge, or leave out "
                                 "--judge-model (there is no offline judge)") from None
            raise UsageError(str(e)) from None
        except ModelConfigError as e:
            raise UsageError(str(e)) from None
    return cache[name]


def prepare_experiment(exp: Experiment, where: ExperimentDir, *, environ: Mapping[str, str] | None = None,
                       use_config_file: bool = True, web_config: Any = None,
                       models: Mapping[str, Model] | None = None) -> Prepared:
    """Resolve settings once, build every model from one factory, check the judge. Raises UsageError."""
    options = dict(exp.options)
    if options.get("web"):  # one cache for every cell: recorded once, then replayed (a test may bring a backend)
        from subagents.web import WebConfig
        from subagents.web.config import CacheMode

        web_config = dataclasses.replace(web_config or WebConfig(), cache_mode=CacheMode.READ_THROUGH,
                                         ttl=float("inf"), cache_dir=where.web,
                                         allow_private_network=bool(options.get("allow_private_network")))
    base = resolve_settings({**options, "question": exp.questions[0].question, "runs_dir": where.runs,
                             "web_config": web_config}, environ=environ, use_config_file=use_config_file)
    from ..api import open_encoder

    factory = ModelFactory(base.models, encoder=open_encoder(base.embedding) if base.corpus else None)
    given = dict(models or {})
    cache: dict[str, Model] = {}
    by_variant: dict[str, tuple[Model, Model]] = {}
    for v in exp.variants:
        names = (v.lead_model or base.lead_model, v.subagent_model or base.subagent_model)
        by_variant[v.name] = tuple(n if not isinstance(n, str) else given.get(n) or _model(factory, cache, n)
                                   for n in names)  # type: ignore[assignment]
    judge = None
    if exp.judge_model:
        judge = given.get(exp.judge_model) or _model(factory, cache, exp.judge_model, judge=True)
        if not judge.is_language_model:
            raise UsageError(f"the judge needs a language model ({exp.judge_model!r} is not one)")
    names = {v.name: (by_variant[v.name][0].name, by_variant[v.name][1].name) for v in exp.variants}
    language = {v.name: any(m.is_language_model for m in by_variant[v.name]) for v in exp.variants}
    note = offline_note(list(exp.variants), names, language)
    closing = [m for m in cache.values() if callable(getattr(m, "aclose", None))]
    _index_once(base)
    return Prepared(exp, where, base, by_variant, judge, note, closing)


def _index_once(base: Settings) -> None:
    """Index the corpus before the cells start, so concurrent cells only find it up to date."""
    if not base.corpus:
        return
    from subagents.corpus import Corpus, CorpusError

    try:
        from ..api import open_encoder

        Corpus.open(list(base.corpus), cache_dir=base.cache_dir, encoder=open_encoder(base.embedding)).close()
    except CorpusError as e:
        raise UsageError(str(e)) from None


def cell_settings(p: Prepared, cell: Cell) -> Settings:
    v = p.exp.variant(cell.variant)
    lead, sub = p.models[v.name]
    q = p.exp.question(cell.question_id)
    s = dataclasses.replace(p.base, question=q.question, lead_model=lead, subagent_model=sub,
                            labels={"experiment": p.exp.id, "cell": cell.key, "variant": v.name,
                                    "question_id": q.id, "repeat": cell.repeat}, **v.overrides())
    validate(s)
    return s


# ---------------------------------------------------------------- finished cells


@dataclass
class PastRuns:
    """What earlier attempts at an experiment left under runs/ (read back from the runs themselves)."""

    done: dict[str, Path] = field(default_factory=dict)  # cell key -> its completed run
    unfinished: dict[str, Path] = field(default_factory=dict)  # interrupted, or left running by a killed process
    spent: float = 0.0  # what every run of the experiment cost so far (runs of unknown price count what is known)


def past_runs(where: ExperimentDir) -> PastRuns:
    """Every run of the experiment, by cell: completed runs are kept, unfinished ones are continued on
    --resume, and all of them count towards the experiment's cost."""
    from ..rundir import is_live

    past = PastRuns()
    if not where.runs.is_dir():
        return past
    for path in sorted(where.runs.iterdir()):
        if not path.is_dir():
            continue
        try:
            run = read_run(path)
        except (OSError, ValueError):
            continue
        past.spent += run.trace.cost_usd() or 0.0
        started = run.trace.started
        cell = (started.options.get("labels") or {}).get("cell") if started else None
        if not cell:
            continue
        if run.status in DONE:
            past.done[cell] = path
            past.unfinished.pop(cell, None)
        elif run.status in UNFINISHED and cell not in past.done and not is_live(path):
            past.unfinished[cell] = path
    return past


def finished_cells(where: ExperimentDir) -> dict[str, Path]:
    """Cells whose run completed, read back from the runs themselves: cell key -> run directory."""
    return past_runs(where).done


# ---------------------------------------------------------------- progress and cost


class CellWatch:
    """An observer of one cell's run: its directory and what it has cost so far."""

    def __init__(self, on_cost: Callable[[float], None]) -> None:
        self.run_dir: Path | None = None
        self.cost = 0.0
        self.unknown_cost = False
        self.on_cost = on_cost

    def on_event(self, record: EventRecord) -> None:
        e = record.event
        if isinstance(e, RunStarted):
            self.run_dir = Path(e.run_dir)
        elif isinstance(e, ModelResponded):
            c = cost(e.usage, e.model)
            if c is None:
                self.unknown_cost = True
            else:
                self.cost += c
                self.on_cost(c)


@dataclass
class Progress:
    """Cells done / running / failed, cost so far and an ETA, as lines for the terminal."""

    total: int
    parallel: int
    write: Callable[[str], None]
    done: int = 0
    failed: int = 0
    skipped: int = 0
    running: int = 0
    cost: float = 0.0
    seconds: list[float] = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)

    def eta(self) -> str:
        left = self.total - self.done - self.failed - self.skipped
        if not self.seconds or left <= 0:
            return "ETA —" if left > 0 else "ETA 0s"
        secs = sum(self.seconds) / len(self.seconds) * left / max(1, min(self.parallel, left))
        return f"ETA {int(secs) // 60}m{int(secs) % 60:02d}s" if secs >= 60 else f"ETA {secs:.0f}s"

    def line(self, what: str) -> None:
        self.write(f"[{self.done + self.failed + self.skipped}/{self.total}] {what} — done {self.done}, "
                   f"running {self.running}, failed {self.failed}"
                   + (f", skipped {self.skipped}" if self.skipped else "")
                   + f"; cost ${self.cost:.4f}; {self.eta()}")


# ---------------------------------------------------------------- running the cells


async def run_cells(p: Prepared, progress: Progress, pending: list[Cell],
                    unfinished: Mapping[str, Path] | None = None) -> None:
    """Run the pending cells; a cell with an unfinished run (`unfinished`: cell key -> run) continues it."""
    limiter = trio.CapacityLimiter(p.exp.parallel)
    unfinished = unfinished or {}

    async def one(cell: Cell) -> None:
        async with limiter:
            if p.exp.max_cost is not None and progress.cost >= p.exp.max_cost:
                progress.skipped += 1
                p.dir.log_cell({"cell": cell.key, "event": "skipped", "reason": f"max cost ${p.exp.max_cost:g} reached"})
                progress.line(f"{cell.key} not started: the experiment reached --max-cost ${p.exp.max_cost:g}")
                return
            await run_cell(p, cell, progress, unfinished.get(cell.key))

    async with trio.open_nursery() as nursery:
        for cell in pending:
            nursery.start_soon(one, cell)


async def _run(p: Prepared, cell: Cell, watch: "CellWatch", resume_from: Path | None) -> Any:
    """A new run for the cell, or its unfinished run continued (what that run spent is already counted)."""
    if resume_from is None:
        return await run_research(cell_settings(p, cell), observers=[watch])
    from ..checkpoint import open_checkpoint

    checkpoint = open_checkpoint(resume_from)
    watch.run_dir = resume_from
    watch.cost = checkpoint.trace.cost_usd() or 0.0
    return await run_research(cell_settings(p, cell), observers=[watch], checkpoint=checkpoint)


async def run_cell(p: Prepared, cell: Cell, progress: Progress, resume_from: Path | None = None) -> None:
    def add(c: float) -> None:
        progress.cost += c

    watch = CellWatch(add)
    progress.running += 1
    p.dir.log_cell({"cell": cell.key, "event": "start", **({"resumes": _rel(p, resume_from)} if resume_from else {})})
    t0 = time.monotonic()
    status, error = "failed", None
    try:
        result = await _run(p, cell, watch, resume_from)
        status = result.status
    except RunFailed as e:
        error = str(e)
    except (UsageError, Exception) as e:  # a failing cell is recorded; the experiment goes on
        error = f"{type(e).__name__}: {e}"
    except BaseException:  # Ctrl-C, SIGTERM, SIGHUP: the run ended as interrupted; so does the cell
        p.dir.log_cell({"cell": cell.key, "event": "end", "status": "interrupted", "run_dir": _rel(p, watch.run_dir),
                        "error": None, "seconds": round(time.monotonic() - t0, 3),
                        "cost_usd": None if watch.unknown_cost else round(watch.cost, 6)})
        raise
    finally:
        progress.running -= 1
    seconds = round(time.monotonic() - t0, 3)
    ok = status in DONE
    progress.done += ok
    progress.failed += not ok
    progress.seconds.append(seconds)
    p.dir.log_cell({"cell": cell.key, "event": "end", "status": status, "run_dir": _rel(p, watch.run_dir),
                    "error": error, "seconds": seconds, "cost_usd": None if watch.unknown_cost else round(watch.cost, 6)})
    progress.line(f"{cell.key} {status} in {seconds:.1f}s" + (f": {error}" if error else ""))


def _rel(p: Prepared, run_dir: Path | None) -> str | None:
    return str(run_dir.relative_to(p.dir.path)) if run_dir else None


async def close_models(p: Prepared) -> None:
    with trio.CancelScope(shield=True):
        for m in p.to_close:
            await m.aclose()  # type: ignore[attr-defined]
