"""Record/replay cache: replay misses name the request, record then replay gives the same
sources (the real extraction re-runs on the recorded bytes), TTL, keys, and the guard still
applies to recorded responses."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from subagents.web import WebConfig
from subagents.web.cache import WebCache, fetch_request, request_key, search_request
from tests.fakes.web_server import FakeWebServer, make_pdf, static_resolver
from tests.test_web_fetch import ARTICLE_HTML, Harness, payload
from tests.test_web_search import RECORDED, RecordedBackend


@pytest.fixture
def server():
    with FakeWebServer() as srv:
        yield srv


def test_request_keys_are_normalised() -> None:
    assert search_request("  Tidal   LOCKING\tmoon ", 8) == "search\ntidal locking moon\n8"
    assert fetch_request("HTTP://Example.TEST:80/Path?q=1#frag") == "fetch\nhttp://example.test/Path?q=1"
    assert request_key(fetch_request("http://example.test/a#x")) == request_key(fetch_request("http://EXAMPLE.test:80/a"))
    assert request_key(search_request("a", 8)) != request_key(search_request("a", 9))


async def test_replay_miss_is_a_tool_error_naming_the_request(tmp_path: Path) -> None:
    web = Harness(WebConfig(cache_mode="replay", cache_dir=tmp_path, resolver=static_resolver({})))
    r = await web.call("fetch_page", url="https://Docs.Example.TEST/page#intro")
    assert r.is_error
    assert "replay miss" in r.content and "https://docs.example.test/page" in r.content
    r = await web.call("web_search", query="Tidal  Locking", k=4)
    assert r.is_error and "replay miss" in r.content and "tidal locking" in r.content


async def test_record_then_replay_gives_the_same_sources(server: FakeWebServer, tmp_path: Path) -> None:
    html_url = server.page("/article.html", ARTICLE_HTML)
    pdf_url = server.add("/paper.pdf", make_pdf([["Page one words."], ["Page two words."]]), "application/pdf")
    backend = RecordedBackend(RECORDED)
    rec = Harness(WebConfig(cache_mode="record", cache_dir=tmp_path, allow_private_network=True,
                            search_backend=backend))
    recorded = [payload(await rec.call("web_search", query="tidal locking", k=3)),
                payload(await rec.call("fetch_page", url=html_url)),
                payload(await rec.call("fetch_page", url=pdf_url + "#page=2"))]
    n_requests = len(server.requests)
    assert len(backend.calls) == 1

    def no_network(query: str, k: int):
        raise AssertionError("replay must not search")

    rep = Harness(WebConfig(cache_mode="replay", cache_dir=tmp_path, allow_private_network=True,
                            search_backend=no_network))
    replayed = [payload(await rep.call("web_search", query="tidal locking", k=3)),
                payload(await rep.call("fetch_page", url=html_url)),
                payload(await rep.call("fetch_page", url=pdf_url))]
    assert len(server.requests) == n_requests  # nothing went to the server
    assert replayed[1:] == recorded[1:]
    assert replayed[0]["results"] == recorded[0]["results"]
    assert rep.sources.to_json() == rec.sources.to_json()
    # the search key is normalised: case and spacing do not matter
    other = Harness(WebConfig(cache_mode="replay", cache_dir=tmp_path, search_backend=no_network))
    again = payload(await other.call("web_search", query="  TIDAL\tlocking ", k=3))
    assert again["results"] == recorded[0]["results"]
    # the body is stored as raw bytes next to its JSON entry
    entries = list((tmp_path / "fetch").glob("*.json"))
    assert len(entries) == 2
    entry = json.loads(entries[0].read_text())
    assert (tmp_path / "fetch" / entry["body"]).read_bytes()
    assert not list(tmp_path.rglob("*.tmp"))


async def test_read_through_serves_fresh_and_refetches_stale(server: FakeWebServer, tmp_path: Path) -> None:
    url = server.add("/note.txt", "version one", "text/plain")
    web = Harness(WebConfig(cache_mode="read-through", cache_dir=tmp_path, allow_private_network=True, ttl=3600))
    assert payload(await web.call("fetch_page", url=url))["passages"][0]["text"] == "version one"
    server.add("/note.txt", "version two", "text/plain")
    assert payload(await web.call("fetch_page", url=url))["passages"][0]["text"] == "version one"  # fresh hit
    assert len(server.requests) == 1
    # age the entry past the TTL
    entry_path = tmp_path / "fetch" / f"{request_key(fetch_request(url))}.json"
    entry = json.loads(entry_path.read_text())
    entry["stored_at"] = time.time() - 7200
    entry_path.write_text(json.dumps(entry))
    assert payload(await web.call("fetch_page", url=url))["passages"][0]["text"] == "version two"
    assert len(server.requests) == 2


async def test_off_mode_never_touches_the_cache(server: FakeWebServer, tmp_path: Path) -> None:
    url = server.add("/note.txt", "hello", "text/plain")
    web = Harness(WebConfig(cache_mode="off", cache_dir=tmp_path / "c", allow_private_network=True))
    await web.call("fetch_page", url=url)
    await web.call("fetch_page", url=url)
    assert len(server.requests) == 2 and not (tmp_path / "c").exists()


async def test_errors_are_not_cached(server: FakeWebServer, tmp_path: Path) -> None:
    web = Harness(WebConfig(cache_mode="record", cache_dir=tmp_path, allow_private_network=True))
    assert (await web.call("fetch_page", url=server.url("/missing"))).is_error
    assert not (tmp_path / "fetch").exists() or not list((tmp_path / "fetch").iterdir())


async def test_recorded_private_response_is_not_served_to_a_guarded_agent(server: FakeWebServer, tmp_path: Path) -> None:
    url = server.add("/note.txt", "internal", "text/plain")
    rec = Harness(WebConfig(cache_mode="record", cache_dir=tmp_path, allow_private_network=True))
    payload(await rec.call("fetch_page", url=url))
    guarded = Harness(WebConfig(cache_mode="replay", cache_dir=tmp_path))
    r = await guarded.call("fetch_page", url=url)
    assert r.is_error and "not a public address" in r.content


def test_default_cache_dir_ignores_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the entry point resolves RESEARCH_CACHE_DIR and passes cache_dir; nothing below it reads the environment
    monkeypatch.setenv("RESEARCH_CACHE_DIR", str(tmp_path / "rc"))
    assert WebConfig().resolved_cache_dir() == Path.home() / ".cache" / "research-agents" / "web"
    assert WebConfig(cache_dir=tmp_path / "rc" / "web").resolved_cache_dir() == tmp_path / "rc" / "web"


def test_corrupt_entries_are_misses(tmp_path: Path) -> None:
    cache = WebCache(tmp_path)
    cache.put_search("q", 3, [{"title": "t", "url": "https://x.test/", "snippet": "s"}])
    path = tmp_path / "search" / f"{request_key(search_request('q', 3))}.json"
    path.write_text("{not json")
    assert cache.get_search("q", 3, max_age=None) is None
    os.remove(path)
    assert cache.get_search("q", 3, max_age=None) is None


async def test_an_altered_or_missing_cached_body_is_never_served(server: FakeWebServer, tmp_path: Path) -> None:
    url = server.add("/note.txt", "the recorded text", "text/plain")
    rec = Harness(WebConfig(cache_mode="record", cache_dir=tmp_path, allow_private_network=True))
    payload(await rec.call("fetch_page", url=url))
    entry = json.loads((tmp_path / "fetch" / f"{request_key(fetch_request(url))}.json").read_text())
    body = tmp_path / "fetch" / entry["body"]
    assert body.read_bytes() == b"the recorded text" and entry["body_sha256"]

    body.write_bytes(b"the tampered text")
    replay = Harness(WebConfig(cache_mode="replay", cache_dir=tmp_path, allow_private_network=True))
    r = await replay.call("fetch_page", url=url)
    assert r.is_error and "replay miss" in r.content and "tampered" not in r.content
    # read-through treats it as a miss too: fetched live again, and the entry repaired
    server.add("/note.txt", "the live text", "text/plain")
    live = Harness(WebConfig(cache_mode="read-through", cache_dir=tmp_path, allow_private_network=True))
    assert payload(await live.call("fetch_page", url=url))["passages"][0]["text"] == "the live text"
    assert len(server.requests) == 2 and body.read_bytes() == b"the live text"

    body.unlink()
    r = await replay.call("fetch_page", url=url)
    assert r.is_error and "replay miss" in r.content


def test_cache_entries_round_trip_and_older_entries_without_a_checksum_still_serve(tmp_path: Path) -> None:
    from subagents.web.fetch import RawResponse

    cache = WebCache(tmp_path)
    raw = RawResponse(url="https://x.test/b", requested_url="https://x.test/a", status=203, content_type="text/plain",
                      charset="latin-1", body=b"caf\xe9", redirects=["https://x.test/a"], private=True)
    cache.put_fetch("https://x.test/a", raw)
    got = cache.get_fetch("https://X.test/a#frag", max_age=None)
    assert got is not None and got.fetched_at > 0
    assert (got.url, got.requested_url, got.status, got.content_type, got.charset, got.body, got.redirects,
            got.private) == (raw.url, raw.requested_url, 203, "text/plain", "latin-1", b"caf\xe9", raw.redirects, True)
    path = tmp_path / "fetch" / f"{request_key(fetch_request('https://x.test/a'))}.json"
    entry = json.loads(path.read_text())
    del entry["body_sha256"]
    path.write_text(json.dumps(entry))
    assert cache.get_fetch("https://x.test/a", max_age=None).body == b"caf\xe9"
    entry["request"] = "fetch\nhttps://elsewhere.test/"  # a hand-edited entry for another request
    path.write_text(json.dumps(entry))
    assert cache.get_fetch("https://x.test/a", max_age=None) is None
