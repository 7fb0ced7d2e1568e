"""Web search through ddgs (DuckDuckGo & co. metasearch), made safe to call from trio.

ddgs is synchronous, and constructing ``DDGS()`` changes process-wide warning filters, so both
the construction and the call happen inside ``trio.to_thread.run_sync``, behind a
CapacityLimiter (ddgs is rate limited upstream: few calls at once). A rate limit or a timeout is
retried with exponential back-off (bounded); anything else is reported to the agent.

The backend is injectable: any ``(query, k) -> list[dict]`` returning ddgs-shaped dicts
(title, href, body). Tests pass a recorded result; nothing here needs the network then.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import trio
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from ..tools import ToolError
from .config import SearchBackend


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str

    def to_dict(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url, "snippet": self.snippet}


def ddgs_backend(query: str, k: int, *, timeout: int = 10) -> list[dict[str, Any]]:
    """The real backend. Runs in a worker thread (never call it on the trio thread)."""
    from ddgs import DDGS

    return DDGS(timeout=timeout).text(query, max_results=k)


def normalise_results(raw: list[dict[str, Any]] | None, k: int) -> list[SearchResult]:
    """ddgs dicts (title/href/body; also accepts url/link and snippet) -> SearchResult, http(s)
    URLs only, duplicates dropped, at most k."""
    out: list[SearchResult] = []
    seen: set[str] = set()
    for r in raw or []:
        if not isinstance(r, dict):
            continue
        url = str(r.get("href") or r.get("url") or r.get("link") or "").strip()
        if not url.lower().startswith(("http://", "https://")) or url in seen:
            continue
        seen.add(url)
        title = " ".join(str(r.get("title") or "").split()) or url
        snippet = " ".join(str(r.get("body") or r.get("snippet") or "").split())
        out.append(SearchResult(title, url, snippet))
        if len(out) >= k:
            break
    return out


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """ddgs wraps an engine's exception in DDGSException(err); look inside too."""
    if isinstance(exc, kind):
        return True
    return any(isinstance(a, kind) for a in getattr(exc, "args", ())) or isinstance(exc.__cause__, kind)


def _no_results(exc: BaseException) -> bool:
    return "no results" in str(exc).lower()


async def run_search(
    query: str,
    k: int,
    *,
    backend: SearchBackend | None = None,
    limiter: trio.CapacityLimiter | None = None,
    max_retries: int = 3,
    backoff: float = 2.0,
    max_backoff: float = 30.0,
    backend_timeout: int = 10,
) -> list[SearchResult]:
    """Search once (with bounded retries). Raises ToolError when it cannot."""
    if backend is None:

        def call() -> list[dict[str, Any]]:
            return ddgs_backend(query, k, timeout=backend_timeout)

    else:

        def call() -> list[dict[str, Any]]:
            return backend(query, k)

    attempt = 0
    while True:
        try:
            raw = await trio.to_thread.run_sync(call, limiter=limiter, abandon_on_cancel=True)
            return normalise_results(raw, k)
        except Exception as e:
            rate_limited = _caused_by(e, RatelimitException)
            timed_out = not rate_limited and _caused_by(e, TimeoutException)
            if not (rate_limited or timed_out):
                if isinstance(e, DDGSException) and _no_results(e):
                    return []
                if isinstance(e, DDGSException):
                    raise ToolError(f"web search failed: {e}") from None
                raise ToolError(f"web search failed: {type(e).__name__}: {e}") from None
            if attempt >= max_retries:
                what = "rate-limited by the search provider" if rate_limited else "timed out"
                raise ToolError(f"web search {what} after {attempt + 1} attempts; try again later") from None
            delay = min(max_backoff, backoff * (2**attempt)) * (0.75 + 0.5 * random.random())
            attempt += 1
            await trio.sleep(delay)
