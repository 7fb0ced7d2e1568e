"""Turn a model name (and the resolved provider settings) into a `Model`.

Names: "extractive" (offline, no language model); "scripted" is test-only and built directly.
Provider adapters (anthropic, openai-compatible) are resolved here too; each adapter module is
the only one importing its SDK, so it is imported lazily. Nothing here reads the environment:
the entry point resolves keys and URLs once into `ModelSettings`.

Every configuration mistake is a `ModelConfigError` with a one-line message naming what to fix
(the variable, the flag, the URL).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from ..extractive.meaning import Encoder
from ..model import Model, ModelAuthError

OFFLINE_MODEL = "extractive"
ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"  # named in messages; read by the entry point
# A large model plans and writes; a small, cheap one does the many subagent turns.
DEFAULT_LEAD_MODEL = "claude-opus-4-6"
DEFAULT_SUBAGENT_MODEL = "claude-haiku-4-5"


class Provider(StrEnum):
    EXTRACTIVE = "extractive"
    ANTHROPIC = "anthropic"
    OPENAI = "openai"


class ModelConfigError(ValueError):
    """Bad model / provider configuration: a user mistake, reported in one line (exit 2)."""


class MissingApiKey(ModelConfigError):
    """A model needs an API key that is not set. The message suggests running offline; a caller for
    whom that is no way out (a judge needs a language model) words its own from `env` and `model`."""

    def __init__(self, env: str, model: str) -> None:
        super().__init__(f"{env} is not set: export it to use {model!r}, or run offline with "
                         "--lead-model extractive --subagent-model extractive")
        self.env = env
        self.model = model


@dataclass(frozen=True)
class ModelSettings:
    """Everything the adapters of a run need, resolved once at the entry point."""

    provider: Provider | None = None  # None: inferred from the model name
    base_url: str | None = None  # --base-url / config (the provider's endpoint)
    anthropic_api_key: str | None = None
    anthropic_base_url: str | None = None  # ANTHROPIC_BASE_URL, used when base_url is unset
    openai_api_key: str | None = None
    requests_per_minute: float | None = None  # one limiter shared by every agent of a run
    tokens_per_minute: float | None = None
    timeout: float = 120.0
    max_retries: int = 4
    max_backoff: float = 30.0
    backoff_base: float = 0.5

    def __repr__(self) -> str:  # never shows a key
        return (f"ModelSettings(provider={self.provider!r}, base_url={self.base_url!r}, "
                f"anthropic_base_url={self.anthropic_base_url!r})")


def parse_provider(value: str | Provider | None) -> Provider | None:
    if value is None or isinstance(value, Provider):
        return value
    try:
        return Provider(value)
    except ValueError:
        known = ", ".join(p.value for p in Provider)
        raise ModelConfigError(f"unknown provider {value!r} (known: {known})") from None


def infer_provider(name: str, settings: ModelSettings) -> Provider:
    if settings.provider is not None:
        return settings.provider
    if name == OFFLINE_MODEL:
        return Provider.EXTRACTIVE
    if name.startswith("claude"):
        return Provider.ANTHROPIC
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


def default_models(settings: ModelSettings) -> tuple[str, str]:
    """(lead model, subagent model) when none is named: Claude models when an Anthropic key is
    configured, else ("extractive", "extractive")."""
    if settings.provider is Provider.ANTHROPIC or (settings.provider is None and settings.anthropic_api_key):
        return DEFAULT_LEAD_MODEL, DEFAULT_SUBAGENT_MODEL
    return OFFLINE_MODEL, OFFLINE_MODEL


class ModelFactory:
    """Builds the models of one run; they share one rate limiter."""

    def __init__(self, settings: ModelSettings, encoder: Encoder | None = None) -> None:
        """`encoder`: the sentence encoder of the run's corpus (the extractive model ranks sentences by
        meaning with it; None: by words alone)."""
        self.settings = settings
        self.encoder = encoder
        self._limiter: Any = None

    def limiter(self) -> Any:
        s = self.settings
        if self._limiter is None and (s.requests_per_minute or s.tokens_per_minute):
            from .ratelimit import RateLimiter

            try:
                self._limiter = RateLimiter(s.requests_per_minute, s.tokens_per_minute)
            except ValueError:
                raise ModelConfigError(f"requests_per_minute and tokens_per_minute must be positive "
                                       f"(got {s.requests_per_minute}, {s.tokens_per_minute})") from None
        return self._limiter

    def _options(self) -> dict[str, Any]:
        s = self.settings
        return {"timeout": s.timeout, "max_retries": s.max_retries, "max_backoff": s.max_backoff,
                "backoff_base": s.backoff_base}

    def model(self, name: str) -> Model:
        provider = infer_provider(name, self.settings)
        if provider is Provider.EXTRACTIVE:
            if name != OFFLINE_MODEL:
                raise ModelConfigError(f"the extractive provider has one model, 'extractive' (got {name!r})")
            from .extractive import ExtractiveModel

            return ExtractiveModel(self.encoder)
        if provider is Provider.ANTHROPIC:
            return self._anthropic(name)
        return self._openai(name)

    def _anthropic(self, name: str) -> Model:
        s = self.settings
        if not s.anthropic_api_key:
            raise MissingApiKey(ANTHROPIC_KEY_ENV, name)
        base_url = s.base_url or s.anthropic_base_url
        if base_url:
            base_url = validate_base_url(base_url)
        from .claude import AnthropicModel

        try:
            return AnthropicModel(name, api_key=s.anthropic_api_key, base_url=base_url, limiter=self.limiter(),
                                  **self._options())
        except ModelAuthError as err:
            raise ModelConfigError(str(err)) from None

    def _openai(self, name: str) -> Model:
        s = self.settings
        if not s.base_url:
            raise ModelConfigError("provider 'openai' needs --base-url (e.g. http://localhost:11434/v1 for Ollama)")
        base_url = validate_base_url(s.base_url)
        from .openai_compat import OpenAIModel

        return OpenAIModel(name, base_url=base_url, api_key=s.openai_api_key, limiter=self.limiter(),
                           **self._options())


def resolve_model(name: str, settings: ModelSettings | None = None) -> Model:
    """One model on its own (a run uses `ModelFactory`, so its models share a limiter)."""
    return ModelFactory(settings or ModelSettings()).model(name)
