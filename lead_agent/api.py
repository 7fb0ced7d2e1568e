"""The Python API: `await research(question, ...)` for trio callers, `research_sync(...)` otherwise.

Everything a user can get wrong is checked before the run directory exists, so a bad call
leaves nothing behind. Once the run starts, its manifest always ends in a final status:
completed, failed or interrupted.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import trio

from subagents.model import Model, Usage
from subagents.prompting import PromptError, PromptSet
from subagents.pricing import add_costs, cost
from subagents.providers import (DEFAULT_LEAD_MODEL, DEFAULT_SUBAGENT_MODEL, ModelConfigError, ProviderSettings,
                                 default_models, resolve_model)
from subagents.tokens import condense_messages, estimate_tokens
from subagents.sources import SourceRegistry
from subagents.tools import Tool, Toolbox

from .config import ConfigError, load_settings
from .orchestrator import Lead, LeadError, RunSettings, RunState, finish_report, usage_summary, write_sources
from .rundir import RunDir, new_run_id, now_iso


class UsageError(ValueError):
    """A mistake in the user's input: reported in one line, exit code 2, nothing written."""


@dataclass
class ResearchResult:
    report: str
    run_dir: Path
    manifest: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.manifest.get("status"))


@dataclass
class ResearchConfig:
    question: str
    corpus: Sequence[Path | str] = ()
    runs_dir: Path | str = "runs"
    max_subagents: int = 5
    max_rounds: int = 2
    concurrency: int = 4
    lead_model: str | Model | None = None
    subagent_model: str | Model | None = None
    prompts: str = "default"
    provider: ProviderSettings = field(default_factory=ProviderSettings)
    extra_tools: Sequence[Tool] = ()
    cache_dir: Path | None = None
    web: bool = False
    web_cache: str | None = None  # read-through (default), record, replay, off
    allow_private_network: bool | None = None
    web_config: Any = None  # a subagents.web.WebConfig; overrides the two options above (tests)
    estimate: bool = False  # plan and estimate the cost; run no subagents
    context_window: int | None = None  # tokens; default 200k for language models
    use_config_file: bool = True


def model_names(cfg: ResearchConfig, settings: dict[str, Any]) -> tuple[str | Model, str | Model]:
    """CLI/API value > environment > config file > default (Claude with a key, else extractive)."""
    lead = cfg.lead_model or settings.get("lead_model")
    sub = cfg.subagent_model or settings.get("subagent_model")
    provider = cfg.provider.provider
    if provider == "openai":
        if not lead:
            raise UsageError("--provider openai needs --lead-model (the model name the endpoint serves)")
        return lead, sub or lead
    if provider == "anthropic":
        return lead or DEFAULT_LEAD_MODEL, sub or DEFAULT_SUBAGENT_MODEL
    default_lead, default_sub = default_models(os.environ)
    return lead or default_lead, sub or default_sub


def _provider_settings(cfg: ResearchConfig, settings: dict[str, Any]) -> ProviderSettings:
    p = cfg.provider
    extra = dict(p.extra)
    for key in ("requests_per_minute", "tokens_per_minute", "timeout", "max_retries"):
        if key in settings:
            extra.setdefault(key, settings[key])
    return ProviderSettings(provider=p.provider or settings.get("provider"), base_url=p.base_url or settings.get("base_url"),
                            api_key=p.api_key, extra=extra)


def _model(spec: str | Model, settings: ProviderSettings, shared: dict[str, Any]) -> Model:
    if not isinstance(spec, str):
        return spec
    try:
        return resolve_model(spec, settings, shared)
    except ModelConfigError as e:
        raise UsageError(str(e)) from None


def _validate(cfg: ResearchConfig) -> None:
    if not isinstance(cfg.question, str) or not cfg.question.strip():
        raise UsageError("the question is empty")
    if cfg.max_subagents < 1:
        raise UsageError(f"--max-subagents must be at least 1 (got {cfg.max_subagents})")
    if cfg.max_rounds < 1:
        raise UsageError(f"--max-rounds must be at least 1 (got {cfg.max_rounds})")
    if cfg.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1 (got {cfg.concurrency})")
    if isinstance(cfg.runs_dir, str) and not cfg.runs_dir.strip():
        raise UsageError("--runs-dir is empty")
    if cfg.context_window is not None and cfg.context_window < 1000:
        raise UsageError(f"the context window must be at least 1000 tokens (got {cfg.context_window})")
    for c in cfg.corpus:
        if isinstance(c, str) and not c.strip():  # Path("") is ".": an unset $DOCS must not index the cwd
            raise UsageError("corpus path is empty")
        p = Path(c)
        if not p.exists():
            raise UsageError(f"corpus path does not exist: {p}")
        if not p.is_dir():
            raise UsageError(f"corpus path is not a directory: {p}")


def _open_corpus(cfg: ResearchConfig, progress: Callable[[str], None]) -> tuple[Any, list[Tool]]:
    if not cfg.corpus:
        return None, []
    from subagents.corpus import Corpus, CorpusError, make_corpus_tools

    announced: list[bool] = []

    def indexing(done: int, total: int) -> None:  # called only once the roots are known to be valid
        if not announced:
            announced.append(True)
            progress(f"indexing corpus: {', '.join(str(c) for c in cfg.corpus)}")

    try:
        corpus = Corpus.open([Path(c) for c in cfg.corpus], cache_dir=cfg.cache_dir, progress=indexing)
    except CorpusError as e:
        raise UsageError(str(e)) from None
    for root, stats in corpus.stats.items():
        progress(f"  {root}: {stats.passages} passages, {stats.indexed} file(s) (re)indexed, "
                 f"{stats.unchanged} unchanged, skipped {stats.skipped_binary} binary / "
                 f"{stats.skipped_undecodable} undecodable / {stats.skipped_outside} outside ({stats.seconds:.1f}s)")
    return corpus, make_corpus_tools(corpus)


def _web_tools(cfg: ResearchConfig, settings: dict[str, Any]) -> list[Tool]:
    if not cfg.web:
        return []
    from subagents.web import CACHE_MODES, WebConfig, make_web_tools

    config = cfg.web_config
    if config is None:
        mode = cfg.web_cache or settings.get("cache") or "read-through"
        if mode not in CACHE_MODES:
            raise UsageError(f"unknown cache mode {mode!r} (known: {', '.join(CACHE_MODES)})")
        allow = cfg.allow_private_network if cfg.allow_private_network is not None else \
            bool(settings.get("allow_private_network", False))
        config = WebConfig(allow_private_network=allow, cache_mode=mode)
    return make_web_tools(config)


def _context_hook(model: Model, window: int) -> Any:
    if not model.is_language_model:
        return None
    budget = int(window * 0.75)

    def hook(messages: list[Any], system: str, specs: list[Any]) -> Any:
        reserved = estimate_tokens(system) + estimate_tokens(json.dumps([vars(s) for s in specs]))
        return condense_messages(messages, budget_tokens=budget, keep_last=2, reserved_tokens=reserved)

    return hook


def _with_costs(calls: list[dict[str, Any]]) -> float | None:
    """Add cost_usd to each call record; return their sum (None if any price is unknown)."""
    for c in calls:
        c["cost_usd"] = cost(Usage(**c["usage"]), c["model"])
    return add_costs(*(c["cost_usd"] for c in calls))


async def research(question: str, *, progress: Callable[[str], None] | None = None,
                   on_start: Callable[[Path], None] | None = None, **options: Any) -> ResearchResult:
    """Run one research. Options are the fields of ResearchConfig. Raises UsageError for bad input
    (before anything is written), RunFailed when a started run fails (its directory is kept)."""
    cfg = ResearchConfig(question=question, **options)
    if isinstance(cfg.corpus, (str, os.PathLike)):  # one path, not a sequence of its characters
        cfg.corpus = [cfg.corpus]
    say = progress or (lambda msg: None)
    _validate(cfg)
    try:
        prompts = PromptSet(cfg.prompts)
    except PromptError as e:
        raise UsageError(str(e)) from None
    try:
        settings = load_settings() if cfg.use_config_file else {}
    except ConfigError as e:
        raise UsageError(str(e)) from None
    cfg.provider = _provider_settings(cfg, settings)
    lead_name, sub_name = model_names(cfg, settings)
    shared: dict[str, Any] = {}
    lead_model = _model(lead_name, cfg.provider, shared)
    sub_model = _model(sub_name, cfg.provider, shared)
    web_tools = _web_tools(cfg, settings)
    corpus, tools = _open_corpus(cfg, say)
    tools = tools + web_tools + list(cfg.extra_tools)
    if not tools:
        raise UsageError("no sources to research: give --corpus PATH and/or --web")
    toolbox = Toolbox(tools)

    run = RunDir(Path(cfg.runs_dir), new_run_id(cfg.question))
    try:
        run.create()
    except OSError as e:
        raise UsageError(f"cannot create the run directory under {cfg.runs_dir}: {e}") from None
    sources = SourceRegistry()
    state = RunState()
    run_settings = RunSettings(question=cfg.question.strip(), max_subagents=cfg.max_subagents,
                               max_rounds=cfg.max_rounds, concurrency=cfg.concurrency)
    started_wall, started = now_iso(), time.monotonic()
    manifest: dict[str, Any] = {
        "run_id": run.run_id, "question": run_settings.question, "status": "running", "created_at": started_wall,
        "options": {"corpus": [str(Path(c).resolve()) for c in cfg.corpus], "web": cfg.web,
                    "estimate": cfg.estimate, "max_subagents": cfg.max_subagents,
                    "max_rounds": cfg.max_rounds, "concurrency": cfg.concurrency, "prompts": cfg.prompts,
                    "tools": toolbox.names()},
        "config_file": settings.get("_path"),
        "models": {"lead": lead_model.name, "subagent": sub_model.name,
                   "language_model_used": lead_model.is_language_model or sub_model.is_language_model},
        "prompts": {"variant": cfg.prompts, "files": {}},
        "corpus": {str(k): vars(v) for k, v in corpus.stats.items()} if corpus is not None else {},
    }

    def save(status: str | None = None, **extra: Any) -> None:
        if status:
            manifest["status"] = status
        manifest["prompts"]["files"] = prompts.manifest()
        manifest["plans"] = [f"plan.v{p['version']}.json" for p in state.plans]
        agents = [{"agent_id": "lead", "role": "lead", "parent_id": None, "status": manifest["status"],
                   "model": lead_model.name, "usage": state.lead_usage.to_dict(), "calls": state.lead_calls,
                   "transcript": "agents/lead.jsonl"}] + [
            {**r.to_dict(), "role": "subagent", "parent_id": "lead", "round": rnd,
             "transcript": f"agents/{r.agent_id}.jsonl"} for rnd, r in state.results]
        for a in agents:
            a["cost_usd"] = _with_costs(a["calls"])
        manifest["agents"] = agents
        manifest["usage"] = usage_summary(state)
        manifest["cost_usd"] = add_costs(*(a["cost_usd"] for a in agents))
        manifest["timings"] = {"started_at": started_wall, "seconds": round(time.monotonic() - started, 3),
                               "rounds": state.rounds}
        manifest["sources"] = len(sources)
        if state.citation is not None:
            manifest["citation_check"] = state.citation.to_dict()
        manifest.update(extra)
        write_sources(run, sources)
        run.write_manifest(manifest)

    try:
        save()
        if on_start is not None:
            on_start(run.path)
        say(f"run {run.run_id}: lead={lead_model.name} subagent={sub_model.name}")
        lead = Lead(settings=run_settings, run=run, lead_model=lead_model, subagent_model=sub_model, toolbox=toolbox,
                    sources=sources, prompts=prompts, state=state, progress=say, on_round=save, estimate=cfg.estimate,
                    context_hook=_context_hook(sub_model, cfg.context_window or int(settings.get("context_window", 200_000))))
        draft = await lead.run_lead()
        if cfg.estimate:
            from .estimate import render_estimate

            text = render_estimate(lead.estimated or {})
            save("estimated", finished_at=now_iso(), estimate=lead.estimated)
            return ResearchResult(text, run.path, manifest)
        report, check = finish_report(draft, question=run_settings.question, state=state, sources=sources,
                                      lead_model=lead_model, subagent_model=sub_model)
        state.citation = check
        run.write_report(report)
        save("completed", finished_at=now_iso())
        return ResearchResult(report, run.path, manifest)
    except BaseException as e:
        interrupted = _is_interrupt(e)
        status = "interrupted" if interrupted else "failed"
        error = None if interrupted else f"{type(e).__name__}: {e}"
        if not interrupted and isinstance(e, LeadError):
            error = str(e)
        save(status, finished_at=now_iso(), error=error)
        if not interrupted and isinstance(e, Exception):
            raise RunFailed(error or status, run.path) from e
        raise
    finally:
        run.close()
        if corpus is not None:
            corpus.close()
        with trio.CancelScope(shield=True):
            for m in {id(lead_model): lead_model, id(sub_model): sub_model}.values():
                if callable(getattr(m, "aclose", None)):
                    await m.aclose()  # connection pools of provider adapters


class RunFailed(RuntimeError):
    """The run started but failed; its directory holds the transcripts and the error."""

    def __init__(self, message: str, run_dir: Path) -> None:
        super().__init__(message)
        self.run_dir = run_dir


def _is_interrupt(e: BaseException) -> bool:
    if isinstance(e, (KeyboardInterrupt, trio.Cancelled)):
        return True
    if isinstance(e, BaseExceptionGroup):
        return any(_is_interrupt(x) for x in e.exceptions)
    return False


def research_sync(question: str, **options: Any) -> ResearchResult:
    """Blocking wrapper around `research` for code that does not run trio."""
    return trio.run(lambda: research(question, **options))
