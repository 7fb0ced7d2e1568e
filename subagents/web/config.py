"""Configuration of the web tools: one frozen-ish dataclass, every knob in one place.

Tests inject a search backend (no network), a resolver (no DNS) and, when they need to pretend
a loopback server is a public host, an httpx transport.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import httpx

    from .guard import Resolver

class CacheMode(StrEnum):
    READ_THROUGH = "read-through"  # serve entries younger than the TTL, else fetch live and store
    RECORD = "record"  # always fetch live and store
    REPLAY = "replay"  # recorded responses only; a miss is an error
    OFF = "off"


CACHE_MODES: tuple[str, ...] = tuple(m.value for m in CacheMode)

# A synchronous search backend: (query, k) -> list of dicts with title/href/body (ddgs's shape).
SearchBackend = Callable[[str, int], list[dict[str, Any]]]

DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; research-agents/0.1; research assistant)"


def default_cache_dir() -> Path:
    """~/.cache/research-agents/web (the entry point passes the configured cache root's web/)."""
    return Path.home() / ".cache" / "research-agents" / "web"


@dataclass
class WebConfig:
    # --- the guard ---
    allow_private_network: bool = False  # True only for tests on loopback / an explicit CLI flag
    resolver: "Resolver | None" = None  # async (host, port) -> [ip, ...]; None: trio getaddrinfo
    # --- the cache ---
    cache_mode: CacheMode = CacheMode.READ_THROUGH
    cache_dir: Path | None = None  # None: default_cache_dir()
    ttl: float = 24 * 3600.0  # seconds a read-through entry stays fresh
    # --- fetching ---
    connect_timeout: float = 10.0
    read_timeout: float = 20.0  # between bytes
    total_timeout: float = 60.0  # whole fetch, all redirect hops and the body
    extract_timeout: float = 60.0  # HTML/PDF extraction in a worker thread
    max_bytes: int = 5 * 1024 * 1024  # body cap (decoded bytes); over it the fetch is aborted
    max_redirects: int = 5
    max_pdf_pages: int = 300
    user_agent: str = DEFAULT_USER_AGENT
    transport: "httpx.AsyncBaseTransport | None" = None  # tests only
    extract_concurrency: int = 2  # worker threads for trafilatura / pypdf
    # --- passages and tool output ---
    passage_max_chars: int = 1500  # passages are cut at paragraph/heading boundaries below this
    passage_heading_min_chars: int = 400  # a heading starts a new passage once this much is held
    max_output_chars: int = 20000  # passage text returned by one fetch_page call (pages on with `start`)
    # --- searching ---
    search_backend: SearchBackend | None = None  # None: ddgs (DDGS().text)
    search_timeout: float = 60.0  # whole search, retries included
    search_backend_timeout: int = 10  # passed to DDGS(timeout=…)
    search_max_retries: int = 3  # retries after a rate limit / timeout
    search_backoff: float = 2.0  # first back-off in seconds; doubles each retry
    search_max_backoff: float = 30.0
    search_concurrency: int = 1  # ddgs calls at once (it is rate limited upstream)

    def __post_init__(self) -> None:
        if self.cache_mode not in CACHE_MODES:
            raise ValueError(f"cache_mode must be one of {CACHE_MODES}, not {self.cache_mode!r}")
        self.cache_mode = CacheMode(self.cache_mode)
        if self.max_redirects < 0 or self.max_bytes <= 0:
            raise ValueError("max_redirects must be >= 0 and max_bytes > 0")

    def resolved_cache_dir(self) -> Path:
        return Path(self.cache_dir).expanduser() if self.cache_dir is not None else default_cache_dir()
