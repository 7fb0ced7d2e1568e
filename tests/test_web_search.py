"""web_search: the ddgs adapter against a recorded ddgs result (no network), back-off on rate
limits (MockClock), normalisation, and what the agent sees."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from subagents.web import WebConfig
from subagents.web.search import normalise_results, run_search
from tests.test_web_fetch import Harness, payload

# The shape ddgs 9 returns from DDGS().text(query, max_results=k) (recorded, trimmed).
RECORDED = [
    {"title": "Tidal locking - Wikipedia", "href": "https://en.wikipedia.org/wiki/Tidal_locking",
     "body": "Tidal locking between a pair of co-orbiting astronomical bodies occurs when one of the objects "
             "reaches a state where there is no longer any net change in its rotation rate..."},
    {"title": "Why does the Moon always show the same face?", "href": "https://science.example.org/moon-face",
     "body": "The Moon   is tidally\nlocked to Earth."},
    {"title": "Tidal locking - Wikipedia", "href": "https://en.wikipedia.org/wiki/Tidal_locking",
     "body": "duplicate"},
    {"title": "an ftp mirror", "href": "ftp://mirror.example.org/tides.txt", "body": "not http"},
    {"title": "", "href": "https://example.net/untitled", "body": ""},
]


class RecordedBackend:
    """A backend that replays a recorded result, optionally failing first; records each call."""

    def __init__(self, result: list[dict[str, Any]], failures: list[Exception] | None = None) -> None:
        self.result = result
        self.failures = list(failures or [])
        self.calls: list[tuple[str, int, bool]] = []

    def __call__(self, query: str, k: int) -> list[dict[str, Any]]:
        self.calls.append((query, k, threading.current_thread() is threading.main_thread()))
        if self.failures:
            raise self.failures.pop(0)
        return self.result[: k + 3]


def test_normalise_results() -> None:
    out = normalise_results(RECORDED, 10)
    assert [r.url for r in out] == [
        "https://en.wikipedia.org/wiki/Tidal_locking",
        "https://science.example.org/moon-face",
        "https://example.net/untitled",
    ]
    assert out[1].snippet == "The Moon is tidally locked to Earth."
    assert out[2].title == "https://example.net/untitled"  # no title: show the URL
    assert len(normalise_results(RECORDED, 1)) == 1


async def test_web_search_tool_with_recorded_result(tmp_path: Path) -> None:
    backend = RecordedBackend(RECORDED)
    web = Harness(WebConfig(search_backend=backend, cache_mode="off"))
    out = payload(await web.call("web_search", query="tidal locking moon", k=5))
    assert out["query"] == "tidal locking moon"
    assert [r["url"] for r in out["results"]][:2] == [
        "https://en.wikipedia.org/wiki/Tidal_locking", "https://science.example.org/moon-face"]
    first = out["results"][0]
    src = web.sources.get(first["source_id"])
    assert src.key == "web-search:https://en.wikipedia.org/wiki/Tidal_locking"
    assert src.kind == "web" and src.text == first["snippet"] and src.locator == first["url"]
    assert src.meta["query"] == "tidal locking moon"
    # the blocking backend ran in a worker thread, never on trio's thread
    assert backend.calls == [("tidal locking moon", 5, False)]


async def test_search_args_validated(tmp_path: Path) -> None:
    web = Harness(WebConfig(search_backend=RecordedBackend(RECORDED), cache_mode="off"))
    for bad in [{"query": ""}, {"query": "x", "k": 0}, {"query": "x", "k": 21}, {}]:
        r = await web.call("web_search", **bad)
        assert r.is_error and "Invalid input" in r.content
    r = await web.call("web_search", query="   ")
    assert r.is_error and "empty query" in r.content


async def test_rate_limit_backs_off_then_succeeds(autojump_clock: trio.testing.MockClock) -> None:
    backend = RecordedBackend(RECORDED, failures=[RatelimitException("202 Ratelimit"),
                                                  DDGSException(RatelimitException("429"))])
    t0 = trio.current_time()
    results = await run_search("tides", 3, backend=backend, max_retries=3, backoff=2.0)
    assert len(results) == 3 and len(backend.calls) == 3
    waited = trio.current_time() - t0
    assert 2 * 0.75 + 4 * 0.75 <= waited <= 2 * 1.25 + 4 * 1.25  # exponential: ~2s then ~4s


async def test_rate_limit_gives_up_after_bounded_retries(autojump_clock: trio.testing.MockClock) -> None:
    backend = RecordedBackend(RECORDED, failures=[RatelimitException("ratelimit")] * 10)
    with pytest.raises(Exception, match="rate-limited by the search provider after 3 attempts"):
        await run_search("tides", 3, backend=backend, max_retries=2, backoff=1.0)
    assert len(backend.calls) == 3


async def test_timeouts_retry_then_report() -> None:
    # real clock (a mock clock would jump to the tool's deadline while the worker thread runs)
    web = Harness(WebConfig(cache_mode="off", search_max_retries=1, search_backoff=0.01,
                            search_backend=RecordedBackend(RECORDED, failures=[TimeoutException("timed out")] * 5)))
    r = await web.call("web_search", query="tides")
    assert r.is_error and "web search timed out after 2 attempts" in r.content


async def test_other_failures_and_no_results() -> None:
    r = await run_search("zzz", 3, backend=RecordedBackend([], failures=[DDGSException("No results found.")]))
    assert r == []
    with pytest.raises(Exception, match="web search failed: ValueError: boom"):
        await run_search("zzz", 3, backend=RecordedBackend([], failures=[ValueError("boom")]))


async def test_search_deadline(autojump_clock: trio.testing.MockClock) -> None:
    async_block = threading.Event()

    def stuck(query: str, k: int) -> list[dict[str, Any]]:
        async_block.wait(5)  # a worker thread that would hang; the deadline abandons it
        return []

    web = Harness(WebConfig(cache_mode="off", search_backend=stuck, search_timeout=3))
    try:
        r = await web.call("web_search", query="tides")
    finally:
        async_block.set()
    assert r.is_error and "timed out after 3s" in r.content


async def test_default_backend_constructs_and_calls_ddgs_in_a_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real adapter code path (`ddgs_backend`) with DDGS replaced by a recorded stand-in."""
    import ddgs

    seen: list[tuple[str, Any]] = []

    class RecordedDDGS:
        def __init__(self, timeout: int | None = 5, **kw: Any) -> None:
            seen.append(("init", (threading.current_thread() is threading.main_thread(), timeout)))

        def text(self, query: str, **kw: Any) -> list[dict[str, Any]]:
            seen.append(("text", (threading.current_thread() is threading.main_thread(), query, kw)))
            return RECORDED[: kw["max_results"]]

    monkeypatch.setattr(ddgs, "DDGS", RecordedDDGS)
    results = await run_search("tidal locking", 2, backend=None, backend_timeout=7)
    assert [r.url for r in results] == ["https://en.wikipedia.org/wiki/Tidal_locking",
                                        "https://science.example.org/moon-face"]
    assert seen == [("init", (False, 7)), ("text", (False, "tidal locking", {"max_results": 2}))]
