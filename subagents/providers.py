"""Turn a model name (and optional provider / base URL) into a `Model`.

Names: "extractive" (offline, no language model), "scripted" is test-only and built directly.
Provider adapters (anthropic, openai-compatible) are resolved here too; each adapter module is
the only one importing its SDK, so it is imported lazily.

Every configuration mistake is a `ModelConfigError` with a one-line message naming what to fix
(the variable, the flag, the URL).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import urlsplit

from .model import Model, ModelAuthError

OFFLINE_MODEL = "extractive"
PROVIDERS = ("extractive", "anthropic", "openai")
ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
ANTHROPIC_URL_ENV = "ANTHROPIC_BASE_URL"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
LEAD_MODEL_ENV = "RESEARCH_LEAD_MODEL"
SUBAGENT_MODEL_ENV = "RESEARCH_SUBAGENT_MODEL"
# A large model plans and writes; a small, cheap one does the many subagent turns.
DEFAULT_LEAD_MODEL = "claude-opus-4-6"
DEFAULT_SUBAGENT_MODEL = "claude-haiku-4-5"
# settings.extra keys passed to the adapters
_ADAPTER_OPTIONS = ("timeout", "max_retries", "max_backoff", "backoff_base")


class ModelConfigError(ValueError):
    """Bad model / provider configuration: a user mistake, reported in one line (exit 2)."""


@dataclass
class ProviderSettings:
    provider: str | None = None  # None: inferred from the model name
    base_url: str | None = None
    api_key: str | None = None
    # timeout, max_retries, max_backoff, backoff_base (adapters); requests_per_minute,
    # tokens_per_minute (a run-wide RateLimiter, created once in `shared`)
    extra: dict[str, Any] = field(default_factory=dict)


def infer_provider(name: str, settings: ProviderSettings) -> str:
    if settings.provider:
        if settings.provider not in PROVIDERS:
            raise ModelConfigError(f"unknown provider {settings.provider!r} (known: {', '.join(PROVIDERS)})")
        return settings.provider
    if name == OFFLINE_MODEL:
        return "extractive"
    if name.startswith("claude"):
        return "anthropic"
    raise ModelConfigError(
        f"unknown model {name!r}: use 'extractive' (offline), a Claude model name (claude-…), "
        "or --provider openai with --base-url for an OpenAI-compatible endpoint"
    )


def validate_base_url(url: str) -> str:
    """An http(s) URL with a host, else ModelConfigError 'malformed base URL'."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # raises ValueError on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelConfigError(f"malformed base URL {url!r}: expected http(s)://host[:port][/path]")
    if parts.username or parts.password:  # they would end up in error messages, manifests and transcripts
        raise ModelConfigError("the base URL must not contain credentials: put the key in the API key variable")
    return url.strip().rstrip("/")


def default_models(env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(lead model, subagent model): Claude models when ANTHROPIC_API_KEY is set, else
    ("extractive", "extractive"); RESEARCH_LEAD_MODEL / RESEARCH_SUBAGENT_MODEL override."""
    env = os.environ if env is None else env
    if env.get(ANTHROPIC_KEY_ENV):
        lead, sub = DEFAULT_LEAD_MODEL, DEFAULT_SUBAGENT_MODEL
    else:
        lead, sub = OFFLINE_MODEL, OFFLINE_MODEL
    return env.get(LEAD_MODEL_ENV) or lead, env.get(SUBAGENT_MODEL_ENV) or sub


def _shared_limiter(settings: ProviderSettings, shared: dict[str, Any] | None) -> Any:
    if shared is None:
        shared = {}
    if "rate_limiter" not in shared:
        rpm = settings.extra.get("requests_per_minute")
        tpm = settings.extra.get("tokens_per_minute")
        if not (rpm or tpm):
            return None
        from .ratelimit import RateLimiter

        try:
            shared["rate_limiter"] = RateLimiter(rpm, tpm)
        except ValueError:
            raise ModelConfigError(f"requests_per_minute and tokens_per_minute must be positive "
                                   f"(got {rpm}, {tpm})") from None
    return shared["rate_limiter"]


def resolve_model(name: str, settings: ProviderSettings | None = None, shared: dict[str, Any] | None = None) -> Model:
    """`shared` holds objects all models of a run share (e.g. the rate limiter), keyed by name."""
    settings = settings or ProviderSettings()
    provider = infer_provider(name, settings)
    options = {k: settings.extra[k] for k in _ADAPTER_OPTIONS if k in settings.extra}
    if provider == "extractive":
        if name != OFFLINE_MODEL:
            raise ModelConfigError(f"the extractive provider has one model, 'extractive' (got {name!r})")
        from .extractive import ExtractiveModel

        return ExtractiveModel()
    if provider == "anthropic":
        key = settings.api_key or os.environ.get(ANTHROPIC_KEY_ENV)
        if not key:
            raise ModelConfigError(
                f"{ANTHROPIC_KEY_ENV} is not set: export it to use {name!r}, or run offline with --lead-model extractive --subagent-model extractive"
            )
        base_url = settings.base_url or os.environ.get(ANTHROPIC_URL_ENV) or None
        if base_url:
            base_url = validate_base_url(base_url)
        from .anthropic_model import AnthropicModel

        try:
            return AnthropicModel(
                name, api_key=key, base_url=base_url, limiter=_shared_limiter(settings, shared), **options
            )
        except ModelAuthError as err:
            raise ModelConfigError(str(err)) from None
    if provider == "openai":
        if not settings.base_url:
            raise ModelConfigError(
                "provider 'openai' needs --base-url (e.g. http://localhost:11434/v1 for Ollama)"
            )
        base_url = validate_base_url(settings.base_url)
        from .openai_model import OpenAIModel

        return OpenAIModel(
            name,
            base_url=base_url,
            api_key=settings.api_key or os.environ.get(OPENAI_KEY_ENV) or None,
            limiter=_shared_limiter(settings, shared),
            **options,
        )
    raise ModelConfigError(f"provider {provider!r} is not available")
