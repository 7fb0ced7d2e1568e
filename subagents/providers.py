"""Turn a model name (and optional provider / base URL) into a `Model`.

Names: "extractive" (offline, no language model), "scripted" is test-only and built directly.
Provider adapters (anthropic, openai-compatible) are resolved here too; each adapter module is
the only one importing its SDK, so it is imported lazily.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Model

OFFLINE_MODEL = "extractive"
PROVIDERS = ("extractive", "anthropic", "openai")


class ModelConfigError(ValueError):
    """Bad model / provider configuration: a user mistake, reported in one line (exit 2)."""


@dataclass
class ProviderSettings:
    provider: str | None = None  # None: inferred from the model name
    base_url: str | None = None
    api_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # timeouts, retries, rate limits


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


def resolve_model(name: str, settings: ProviderSettings | None = None, shared: dict[str, Any] | None = None) -> Model:
    """`shared` holds objects all models of a run share (e.g. the rate limiter), keyed by name."""
    settings = settings or ProviderSettings()
    provider = infer_provider(name, settings)
    if provider == "extractive":
        if name != OFFLINE_MODEL:
            raise ModelConfigError(f"the extractive provider has one model, 'extractive' (got {name!r})")
        from .extractive import ExtractiveModel

        return ExtractiveModel()
    raise ModelConfigError(f"provider {provider!r} is not available yet")
