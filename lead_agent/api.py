"""The Python API: `await research(question, ...)` for trio callers, `research_sync(...)` otherwise.

Settings are resolved once here (flags/arguments > environment > config file > defaults).
Everything a user can get wrong is checked before the run directory exists, so a bad call
leaves nothing behind. Once the run starts, its events end in a final status: completed,
completed_empty (a report, but no subagent found anything), failed, interrupted or estimated.
Pass `observers=[...]` (objects with `on_event(record)`) to see the run's typed events as they
happen.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import trio

from subagents.events import (RUN_AGENT, CitationChecked, CorpusIndexed, CorpusIndexing, EstimateMade, EventBus, Observer,
                              ReportWritten, RunBudgetReached, RunEnded, RunStarted, RunStatus, SourceRegistered)
from subagents.ledger import BudgetKind, BudgetLine, Ledger, RunBudget
from subagents.model import Model
from subagents.models.pricing import price_for
from subagents.models.resolve import ModelConfigError, ModelFactory
from subagents.prompting import DEFAULT_VARIANT, PromptError, PromptSet, variant_problems
from subagents.sources import Source, SourceRegistry
from subagents.storage import StorageError
from subagents.tokens import condense_messages, estimate_tokens
from subagents.tools import Tool, Toolbox
from subagents.transcript import TranscriptWriter

from .approval import ApprovalMode
from .manifest import ManifestKeeper
from .orchestrator import Lead, LeadError, LeadSettings, lead_for
from .rundir import RunDir, RunLocked, new_run_id
from .settings import Embedding, RunMode, Settings, UsageError, resolve_settings

if TYPE_CHECKING:
    from subagents.corpus.embedding import MiniLMEncoder

    from .checkpoint import Checkpoint


@dataclass
class ResearchResult:
    report: str
    run_dir: Path
    manifest: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.manifest.get("status"))


class RunFailed(RuntimeError):
    """The run started but failed; its directory holds the transcripts and the error."""

    def __init__(self, message: str, run_dir: Path) -> None:
        super().__init__(message)
        self.run_dir = run_dir


def is_interrupt(e: BaseException) -> bool:
    if isinstance(e, (KeyboardInterrupt, trio.Cancelled)):
        return True
    if isinstance(e, BaseExceptionGroup):
        return any(is_interrupt(x) for x in e.exceptions)
    return False


_is_interrupt = is_interrupt  # older name


@dataclass
class Prepared:
    """A run's parts, built and checked before anything is written."""

    settings: Settings
    prompts: PromptSet
    lead_model: Model
    subagent_model: Model
    toolbox: Toolbox
    corpus: Any = None
    models_to_close: list[Model] = field(default_factory=list)


async def research(question: str, *, observers: Sequence[Observer] = (), environ: Mapping[str, str] | None = None,
                   use_config_file: bool = True, **options: Any) -> ResearchResult:
    """Run one research. Options are the fields of `Settings` (plus provider, base_url, api_key,
    requests_per_minute, tokens_per_minute, timeout, max_retries, max_backoff, backoff_base).
    Raises UsageError for bad input (before anything is written), RunFailed when a started run
    fails (its directory is kept)."""
    settings = resolve_settings({"question": question, **options}, environ=environ, use_config_file=use_config_file)
    return await run_research(settings, observers=observers)


def research_sync(question: str, **options: Any) -> ResearchResult:
    """Blocking wrapper around `research` for code that does not run trio."""
    return trio.run(lambda: research(question, **options))


async def run_research(settings: Settings, *, observers: Sequence[Observer] = (),
                       checkpoint: "Checkpoint | None" = None) -> ResearchResult:
    """Run a new run, or continue the one a checkpoint (lead_agent/resume.py) was read from."""
    bus = checkpoint.bus() if checkpoint is not None else EventBus(new_run_id(settings.question))
    for obs in observers if checkpoint is None else ():
        bus.subscribe(obs)
    try:
        prep = prepare(settings, bus)
        if checkpoint is not None:  # a person's edit is checked before anything is shown or written
            checkpoint.check_verdict(prep.toolbox.names(), settings.max_subagents)
            for obs in observers:
                bus.subscribe(obs)
    except BaseException:
        if checkpoint is not None:
            checkpoint.run_dir.unlock()
        raise
    try:
        return await execute(prep, bus, checkpoint)
    finally:
        if prep.corpus is not None:
            prep.corpus.close()
        with trio.CancelScope(shield=True):
            for m in prep.models_to_close:
                await m.aclose()  # type: ignore[attr-defined]  # connection pools of provider adapters


# ---------------------------------------------------------------- preparing


def _prompt_set(variant: str) -> PromptSet:
    """The run's prompts; a folder holding a file that is no known prompt, or a placeholder the code never
    fills, is a usage error before anything is written (the same check `research compare` makes)."""
    try:
        prompts = PromptSet(variant)
    except PromptError as e:
        raise UsageError(str(e)) from None
    problems = [] if prompts.variant == DEFAULT_VARIANT else variant_problems(prompts.folder)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise UsageError(f"prompt folder {prompts.folder}: {problems[0]}{more}")
    return prompts


def prepare(settings: Settings, bus: EventBus) -> Prepared:
    prompts = _prompt_set(settings.prompts)
    lead_model, sub_model = _models(settings)
    _check_prices(settings, lead_model, sub_model)
    _check_runs_dir(settings.runs_dir)  # before the corpus is indexed: a mistake is the first thing said
    web_tools = _web_tools(settings)
    corpus, corpus_tools = _open_corpus(settings, bus)
    tools = corpus_tools + web_tools + list(settings.extra_tools)
    if not tools:
        raise UsageError("no sources to research: give --corpus PATH and/or --web")
    given = (settings.lead_model, settings.subagent_model)  # a caller's model objects are the caller's to close
    closing = [m for m in {id(lead_model): lead_model, id(sub_model): sub_model}.values()
               if callable(getattr(m, "aclose", None)) and not any(m is g for g in given)]
    return Prepared(settings, prompts, lead_model, sub_model, Toolbox(tools), corpus, closing)


def _check_runs_dir(runs_dir: Path) -> None:
    """The runs directory, or the nearest part of it that exists, must be a folder."""
    for p in (Path(runs_dir), *Path(runs_dir).absolute().parents):
        if p.exists():
            if not p.is_dir():
                raise UsageError(f"--runs-dir {runs_dir}: {p} is not a folder")
            return


def _check_prices(settings: Settings, *models: Model) -> None:
    """--max-cost needs every language model's price (the ledger never guesses a cost)."""
    if settings.max_cost is None:
        return
    for m in models:
        if m.is_language_model and price_for(m.name) is None:
            raise UsageError(f"--max-cost needs the price of every model, and {m.name!r} has none in "
                             "subagents/models/pricing.json; use --max-tokens instead")


def _models(settings: Settings) -> tuple[Model, Model]:
    factory = ModelFactory(settings.models, encoder=open_encoder(settings.embedding) if settings.corpus else None)
    try:
        return tuple(m if not isinstance(m, str) else factory.model(m)  # type: ignore[return-value]
                     for m in (settings.lead_model, settings.subagent_model))
    except ModelConfigError as e:
        raise UsageError(str(e)) from None


def _open_corpus(settings: Settings, bus: EventBus) -> tuple[Any, list[Tool]]:
    if not settings.corpus:
        return None, []
    from subagents.corpus import Corpus, CorpusError, make_corpus_tools

    try:
        corpus = Corpus.open(list(settings.corpus), cache_dir=settings.cache_dir, progress=_indexing_progress(bus),
                             encoder=open_encoder(settings.embedding))
    except CorpusError as e:
        raise UsageError(str(e)) from None
    for root, st in corpus.stats.items():
        bus.run().emit(CorpusIndexed(str(root), st.passages, st.indexed, st.unchanged, st.seconds, {
            "binary": st.skipped_binary, "undecodable": st.skipped_undecodable, "outside": st.skipped_outside,
            "duplicate": st.skipped_duplicate, "unreadable": st.skipped_other},
            embedded=st.embedded, semantic=_semantic_label(st, settings)))
    return corpus, make_corpus_tools(corpus)


def _semantic_label(stats: Any, settings: Settings) -> str:
    """"on" when the root's passages have vectors to rank by meaning, else "off (why)"."""
    return "on" if stats.vectors else f"off ({settings.embedding.why_off or 'no passage vectors'})"


INDEXING_FIRST, INDEXING_EVERY = 1.0, 2.0  # seconds: a warm index says nothing, a first indexing shows it works


def _indexing_progress(bus: EventBus, clock: Callable[[], float] = time.monotonic) -> Callable[..., None]:
    """A corpus progress callback that sends `CorpusIndexing` once indexing has taken a second, then every
    two seconds and at the end of each stage (files examined, passages embedded)."""
    from subagents.corpus import IndexStage

    start: dict[str, float] = {}
    last: dict[tuple[str, IndexStage], float] = {}

    def progress(root: str, done: int, total: int, stage: IndexStage = IndexStage.FILES, item: str = "") -> None:
        now = clock()
        t0 = start.setdefault(root, now)
        key = (root, stage)
        due = last.get(key, t0 + INDEXING_FIRST - INDEXING_EVERY) + INDEXING_EVERY
        if now - t0 >= INDEXING_FIRST and (now >= due or (done == total and key in last)):
            last[key] = now
            bus.run().emit(CorpusIndexing(root, done, total, round(now - t0, 1), stage=stage.value, item=item))

    return progress


def open_encoder(embedding: Embedding) -> MiniLMEncoder | None:
    """The sentence encoder of the settings' embedding model (None when off); UsageError when it cannot load."""
    if embedding.model_dir is None:
        return None
    from subagents.corpus import CorpusError
    from subagents.corpus.embedding import load_encoder

    try:
        return load_encoder(embedding.model_dir)
    except CorpusError as e:
        raise UsageError(str(e)) from None


def _web_tools(settings: Settings) -> list[Tool]:
    if not settings.web:
        return []
    from subagents.web import WebConfig, make_web_tools

    config = settings.web_config or WebConfig(allow_private_network=settings.allow_private_network,
                                              cache_mode=settings.web_cache, cache_dir=settings.cache_dir / "web")
    return make_web_tools(config)


def _context_hook(model: Model, window: int) -> Any:
    if not model.is_language_model:
        return None
    budget = int(window * 0.75)

    def hook(messages: list[Any], system: str, specs: list[Any]) -> Any:
        reserved = estimate_tokens(system) + estimate_tokens(json.dumps([vars(s) for s in specs]))
        return condense_messages(messages, budget_tokens=budget, keep_last=2, reserved_tokens=reserved)

    return hook


# ---------------------------------------------------------------- running


def _new_run_dir(s: Settings, bus: EventBus) -> RunDir:
    run = RunDir(s.runs_dir, bus.run_id)
    try:
        run.create()
        run.lock()
    except (OSError, RunLocked) as e:
        raise UsageError(f"cannot create the run directory under {s.runs_dir}: {e}") from None
    return run


def _record_sources(bus: EventBus) -> Any:
    """The source registry's listener: every registration becomes an event in the retrieving agent's stream."""
    def listener(src: Source, added: str, agent_id: str) -> None:
        bus.agent(agent_id or RUN_AGENT).emit(SourceRegistered(src.id, src.key, src.kind.value, src.title,
                                                               src.locator, added, dict(src.meta)))
    return listener


def _ledger(s: Settings, bus: EventBus, checkpoint: "Checkpoint | None") -> Ledger:
    def reached(line: BudgetLine) -> None:
        bus.run().emit(RunBudgetReached(line.budget.value, line.used, line.limit))

    ledger = Ledger(RunBudget(s.max_cost, s.max_tokens, s.deadline), on_reached=reached)
    if checkpoint is not None:  # what the earlier attempts spent counts
        trace = checkpoint.trace
        ledger.usage, ledger.cost_usd, ledger.elapsed_before = trace.usage(), trace.cost_usd() or 0.0, trace.last_t
        if trace.budget_reached is not None:
            b = trace.budget_reached
            ledger.reached = BudgetLine(BudgetKind(b.budget), b.used, b.limit)
    return ledger


def _lead(prep: Prepared, bus: EventBus, sources: SourceRegistry, ledger: Ledger) -> Any:
    s = prep.settings
    if s.mode is RunMode.SINGLE:
        from .single import single_for

        return single_for(LeadSettings(question=s.question, max_subagents=s.max_subagents, max_rounds=s.max_rounds,
                                       concurrency=s.concurrency), bus, prep.lead_model, prep.toolbox, sources,
                          prep.prompts, _context_hook(prep.lead_model, s.context_window), ledger=ledger)
    approver = s.approve if callable(s.approve) else None
    return lead_for(LeadSettings(question=s.question, max_subagents=s.max_subagents, max_rounds=s.max_rounds,
                                 concurrency=s.concurrency, estimate=s.estimate, max_replans=s.max_replans,
                                 approval=ApprovalMode(s.approval_mode())),
                    bus, prep.lead_model, prep.subagent_model, prep.toolbox, sources, prep.prompts,
                    _context_hook(prep.subagent_model, s.context_window), ledger=ledger, approver=approver)


async def execute(prep: Prepared, bus: EventBus, checkpoint: "Checkpoint | None" = None) -> ResearchResult:
    """Run a prepared run to its end: a new one, or (with a checkpoint) one that resumes."""
    s = prep.settings
    run = checkpoint.run_dir if checkpoint is not None else _new_run_dir(s, bus)
    sources = checkpoint.sources if checkpoint is not None else SourceRegistry()
    sources.listener = _record_sources(bus)
    transcripts = TranscriptWriter(run.path)
    keeper = ManifestKeeper(run, sources, trace=checkpoint.trace if checkpoint is not None else None)
    for obs in (run, keeper, transcripts):
        bus.subscribe(obs, first=True)
    ledger = _ledger(s, bus, checkpoint)
    try:
        bus.clock.restart()  # `t` counts from the run's start, not from corpus indexing
        with trio.CancelScope() as scope:
            bus.on_storage_error = lambda _e: scope.cancel()  # the run can no longer be recorded: stop it
            bus.run().emit(checkpoint.resumed() if checkpoint is not None else _run_started(prep, run))
            ledger.start()
            lead = _lead(prep, bus, sources, ledger)
            if checkpoint is not None:
                await checkpoint.restore(lead)
            draft = await lead.run_lead()
            if lead.state.halt is not None:
                text = _finish_halt(lead, bus)
            elif s.estimate:
                text = _finish_estimate(lead, bus)
            else:
                text = _finish_report(lead, draft, prep, run, sources, bus, keeper.trace.budget_reached)
        if bus.storage_error is not None:
            raise bus.storage_error
        return ResearchResult(text, run.path, keeper.last)
    except BaseException as e:
        interrupted = is_interrupt(e) and bus.storage_error is None
        error = None if interrupted else (str(e) if isinstance(e, (LeadError, StorageError))
                                          else f"{type(e).__name__}: {e}")
        _end(bus, RunStatus.INTERRUPTED if interrupted else RunStatus.FAILED, error, prep.prompts)
        if not interrupted and isinstance(e, Exception):
            raise RunFailed(error or "failed", run.path) from e
        raise
    finally:
        transcripts.close()
        run.unlock()


def _run_started(prep: Prepared, run: RunDir) -> RunStarted:
    s = prep.settings
    corpus = {str(k): vars(v) for k, v in prep.corpus.stats.items()} if prep.corpus is not None else {}
    return RunStarted(
        question=s.question, run_dir=str(run.path), lead_model=prep.lead_model.name,
        subagent_model=prep.subagent_model.name,
        language_model_used=prep.lead_model.is_language_model or prep.subagent_model.is_language_model,
        options={**s.summary(), "tools": prep.toolbox.names()}, prompt_variant=prep.prompts.variant,
        config_file=str(s.config_file) if s.config_file else None, corpus=corpus)


def _finish_estimate(lead: Lead, bus: EventBus) -> str:
    from .estimate import estimate_lead_plan, render_estimate

    estimate = estimate_lead_plan(lead)
    bus.run().emit(EstimateMade(estimate))
    _end(bus, RunStatus.ESTIMATED, None, lead.prompts)
    return render_estimate(estimate)


def _finish_halt(lead: Lead, bus: EventBus) -> str:
    """The lead stopped for a person: its plan awaits approval, or was rejected."""
    assert lead.state.halt is not None
    _end(bus, lead.state.halt, None, lead.prompts)
    return ""


def _finish_report(lead: Lead, draft: str, prep: Prepared, run: RunDir, sources: SourceRegistry,
                   bus: EventBus, budget: RunBudgetReached | None = None) -> str:
    from .outcome import judge_outcome, judge_single
    from .report import finish_report

    single = prep.settings.mode is RunMode.SINGLE
    outcome = None if single else judge_outcome([r for _, r in lead.state.results])
    if outcome is not None and outcome.status is RunStatus.FAILED:  # nothing to report from
        raise LeadError(outcome.reason or "nothing was researched")
    report, check = finish_report(draft, question=prep.settings.question, results=lead.state.results,
                                  sources=sources, lead_model=prep.lead_model, subagent_model=prep.subagent_model,
                                  prompts=prep.prompts, budget=budget, decisions=lead.state.decisions,
                                  semantic=bool(prep.corpus is not None and prep.corpus.semantic))
    outcome = outcome or judge_single(check.supported)
    path = run.write_report(report)
    run.write_report_html(report, prep.settings.question)
    d = check.to_dict()
    bus.run().emit(CitationChecked(d["markers"], d["supported"], d["unsupported"], d["unknown"], d["pass_rate"],
                                   d["issues"], d["cited_sources"]))
    bus.run().emit(ReportWritten(str(path), len(report)))
    _end(bus, outcome.status, None, prep.prompts)
    return report


def _end(bus: EventBus, status: RunStatus, error: str | None, prompts: PromptSet) -> None:
    try:
        bus.run().emit(RunEnded(status, error, prompts.manifest()))
    except Exception:
        if status is not RunStatus.FAILED:
            raise
        # already failing (e.g. an observer of the caller's raised): the writers got the event first
