"""Model adapters and their helpers: resolution by name, the Claude and OpenAI-compatible
adapters on a shared pooled base, retries, the run-wide rate limiter, prices, and the two models
that need no network (extractive, scripted). Adapters are imported lazily by `resolve`."""

from .resolve import (DEFAULT_LEAD_MODEL, DEFAULT_SUBAGENT_MODEL, OFFLINE_MODEL, ModelConfigError, ModelFactory,
                      ModelSettings, Provider, default_models, resolve_model)

__all__ = ["DEFAULT_LEAD_MODEL", "DEFAULT_SUBAGENT_MODEL", "OFFLINE_MODEL", "ModelConfigError", "ModelFactory",
           "ModelSettings", "Provider", "default_models", "resolve_model"]
