"""fetch_page end to end through the Toolbox (exactly what an agent sees), against a real HTTP
server on 127.0.0.1: readable text from HTML, PDFs by page, redirects, caps, timeouts, refusals."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from subagents.model import ToolResultBlock, ToolUseBlock
from subagents.sources import SourceRegistry
from subagents.tools import ToolContext, Toolbox
from subagents.web import WebConfig, make_web_tools
from tests.fakes.web_server import FakeWebServer, LoopbackOnlyTransport, make_pdf, static_resolver

ARTICLE_HTML = """<!doctype html>
<html><head><title>Tidal Locking Explained | Example Science</title></head>
<body>
<header><nav class="menu">
  <a href="/">Home</a> <a href="/shop">Shop our telescopes</a> <a href="/login">Log in</a>
  <ul><li><a href="/a">Astronomy news</a></li><li><a href="/b">Gear reviews</a></li>
      <li><a href="/c">Events calendar</a></li><li><a href="/d">Member forum</a></li></ul>
</nav></header>
<aside class="sidebar"><h3>Trending</h3><ul>
  <li><a href="/t1">Ten best budget binoculars</a></li><li><a href="/t2">Win a free eclipse trip</a></li>
</ul></aside>
<main><article>
<h1>Tidal locking explained</h1>
<p>Tidal locking happens when an orbiting body always shows the same face to the body it orbits.
The Moon is tidally locked to the Earth, which is why we always see the same lunar hemisphere.</p>
<h2>How it happens</h2>
<p>Tidal forces raise a bulge on the orbiting body. When the body rotates faster than it orbits,
the bulge is dragged ahead of the line between the two bodies, and gravity pulls it back.
This torque slowly brakes the rotation until the rotation period equals the orbital period.</p>
<p>The time needed depends on the initial spin, the distance between the bodies, their masses,
and the rigidity of the orbiting body. For the Moon it took a few tens of millions of years.</p>
<h2>Examples in the Solar System</h2>
<p>Most large moons in the Solar System are tidally locked to their planets, including the
Galilean moons of Jupiter and Titan. Pluto and Charon are mutually tidally locked.</p>
</article></main>
<footer><p>Copyright 2024 Example Science Media. All rights reserved.</p>
<p><a href="/privacy">Privacy policy</a> | <a href="/terms">Terms of use</a> | Subscribe to our newsletter!</p>
</footer>
</body></html>
"""


def payload(result: ToolResultBlock) -> dict[str, Any]:
    assert not result.is_error, result.content
    m = re.fullmatch(r'<retrieved_material source="([^"]+)">\n(.*)\n</retrieved_material>', result.content, re.S)
    assert m, result.content[:200]
    return json.loads(m.group(2))


class Harness:
    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.toolbox = Toolbox(make_web_tools(config))
        self.sources = SourceRegistry()
        self.ctx = ToolContext(agent_id="web-agent", sources=self.sources)
        self.allowed = ["web_search", "fetch_page"]

    async def call(self, name: str, **inp: Any) -> ToolResultBlock:
        return await self.toolbox.call(ToolUseBlock("t1", name, inp), self.allowed, self.ctx)

    async def fetch(self, url: str, **kw: Any) -> dict[str, Any]:
        return payload(await self.call("fetch_page", url=url, **kw))

    async def fetch_error(self, url: str) -> str:
        result = await self.call("fetch_page", url=url)
        assert result.is_error, result.content[:300]
        return result.content


@pytest.fixture
def server():
    with FakeWebServer() as srv:
        yield srv


@pytest.fixture
def web(tmp_path: Path) -> Harness:
    return Harness(WebConfig(allow_private_network=True, cache_mode="off", cache_dir=tmp_path / "web",
                             resolver=static_resolver({})))


async def test_html_main_text_kept_navigation_dropped(server: FakeWebServer, web: Harness) -> None:
    url = server.page("/science/tidal-locking.html", ARTICLE_HTML)
    page = await web.fetch(url)
    assert page["url"] == url
    assert page["content_type"] == "text/html"
    assert "Tidal locking" in page["title"]
    text = "\n".join(p["text"] for p in page["passages"])
    assert "always shows the same face" in text
    assert "Pluto and Charon are mutually tidally locked" in text
    for boilerplate in ["Shop our telescopes", "Gear reviews", "Member forum", "budget binoculars",
                        "Privacy policy", "Subscribe to our newsletter"]:
        assert boilerplate not in text, boilerplate
    # headings are kept in the text and label the passages
    assert "## How it happens" in text
    headings = {p["heading"] for p in page["passages"]}
    assert headings <= {"Tidal locking explained", "How it happens", "Examples in the Solar System"}
    # every passage is a registered source carrying exactly the text shown
    for i, p in enumerate(page["passages"]):
        src = web.sources.get(p["source_id"])
        assert src is not None and src.kind == "web" and src.text == p["text"]
        assert src.key == f"web:{url}#{i}"
        assert src.locator == f"{url}#passage-{i}"
        assert src.meta["url"] == url and src.meta["heading"] == p["heading"]
        assert src.retrieved_by == ["web-agent"]
    # the request went out with the right Host header
    assert server.requests[-1].headers["host"] == f"127.0.0.1:{server.port}"


async def test_long_html_is_split_at_headings_and_paged(server: FakeWebServer, tmp_path: Path) -> None:
    sections = []
    for s in range(12):
        paras = "".join(
            f"<p>Section {s} paragraph {p}: " + " ".join(f"word{s}_{p}_{w}" for w in range(40)) + ".</p>"
            for p in range(4)
        )
        sections.append(f"<h2>Section number {s}</h2>{paras}")
    html = f"<html><head><title>Long</title></head><body><article><h1>Long page</h1>{''.join(sections)}</article></body></html>"
    url = server.page("/long.html", html)
    web = Harness(WebConfig(allow_private_network=True, cache_mode="off", max_output_chars=6000))
    first = await web.fetch(url)
    assert all(len(p["text"]) <= 1500 + 200 for p in first["passages"])
    assert first["passages_total"] > len(first["passages"])
    assert sum(len(p["text"]) for p in first["passages"]) <= 6000
    nxt = first["next_start"]
    second = await web.fetch(url, start=nxt)
    assert second["passages"][0]["source_id"] != first["passages"][-1]["source_id"]
    assert web.sources.get(second["passages"][0]["source_id"]).key == f"web:{url}#{nxt}"
    # a passage that starts a section is labelled with that section's heading
    for p in first["passages"] + second["passages"]:
        m = re.match(r"## (Section number \d+)", p["text"])
        if m:
            assert p["heading"] == m.group(1)
    past = await web.call("fetch_page", url=url, start=10_000)
    assert past.is_error and "past the end" in past.content


async def test_pdf_passages_carry_page_numbers(server: FakeWebServer, web: Harness) -> None:
    pdf = make_pdf(
        [["Orbital resonance", "Io, Europa and Ganymede are in a 1:2:4 Laplace resonance."],
         ["Page two discusses Titan.", "Titan has a thick nitrogen atmosphere."]],
        title="Moons of the outer planets",
    )
    url = server.add("/papers/moons.pdf", pdf, "application/pdf")
    page = await web.fetch(url)
    assert page["title"] == "Moons of the outer planets"
    assert page["content_type"] == "application/pdf"
    by_page = {p["page"]: p for p in page["passages"]}
    assert set(by_page) == {1, 2}
    assert "Laplace resonance" in by_page[1]["text"]
    assert "nitrogen atmosphere" in by_page[2]["text"]
    src = web.sources.get(by_page[2]["source_id"])
    assert src.locator == f"{url}#page=2" and src.meta["page"] == 2


async def test_plain_text_and_markdown_as_is(server: FakeWebServer, web: Harness) -> None:
    url = server.add("/notes.txt", "Field notes\n\nThe heron stood still for an hour.", "text/plain; charset=utf-8")
    page = await web.fetch(url)
    assert page["content_type"] == "text/plain"
    assert page["passages"][0]["text"] == "Field notes\n\nThe heron stood still for an hour."
    md = "# Guide\n\nIntro text.\n\n## Setup\n\nRun the installer."
    page = await web.fetch(server.add("/guide.md", md, "text/markdown"))
    assert page["title"] == "Guide"
    assert "Run the installer." in page["passages"][0]["text"]


async def test_redirect_chain_is_followed_and_final_url_reported(server: FakeWebServer, web: Harness) -> None:
    server.page("/final.html", ARTICLE_HTML)
    server.redirect("/r3", "/final.html#section", status=308)
    server.redirect("/r2", server.url("/r3"), status=307)
    server.redirect("/r1", "r2", status=301)  # relative Location
    start = server.redirect("/start", "/r1", status=302)
    page = await web.fetch(start)
    assert page["url"] == server.url("/final.html")
    assert web.sources.get(page["passages"][0]["source_id"]).key.startswith(f"web:{server.url('/final.html')}#")
    assert [r.path for r in server.requests] == ["/start", "/r1", "/r2", "/r3", "/final.html"]


async def test_too_many_redirects(server: FakeWebServer, web: Harness) -> None:
    for i in range(7):
        server.redirect(f"/hop{i}", f"/hop{i + 1}")
    err = await web.fetch_error(server.url("/hop0"))
    assert "too many redirects" in err
    assert len(server.requests) == 6  # the first request and 5 redirects, then we stop


async def test_redirect_loop_stops(server: FakeWebServer, web: Harness) -> None:
    server.redirect("/loop", "/loop")
    assert "too many redirects" in await web.fetch_error(server.url("/loop"))


async def test_body_over_cap_is_refused(server: FakeWebServer, tmp_path: Path) -> None:
    web = Harness(WebConfig(allow_private_network=True, cache_mode="off", max_bytes=100_000))
    with_length = server.add("/big-declared.txt", b"a" * 200_000, "text/plain")
    err = await web.fetch_error(with_length)
    assert "too large" in err and "100000" in err
    streamed = server.add("/big-streamed.txt", b"b" * 2_000_000, "text/plain", content_length=False, chunk=8192)
    err = await web.fetch_error(streamed)
    assert "exceeds the 100000-byte cap" in err


async def test_slow_response_times_out_fast(server: FakeWebServer) -> None:
    web = Harness(WebConfig(allow_private_network=True, cache_mode="off", read_timeout=0.3, total_timeout=2))
    slow_headers = server.add("/slow", b"late", "text/plain", delay=30)
    t0 = time.monotonic()
    err = await web.fetch_error(slow_headers)
    assert "timed out" in err
    slow_body = server.add("/slow-body", b"late", "text/plain", body_delay=30)
    assert "timed out" in await web.fetch_error(slow_body)
    # the overall deadline holds even when every single read is quick enough
    web = Harness(WebConfig(allow_private_network=True, cache_mode="off", read_timeout=5, total_timeout=0.5))
    err = await web.fetch_error(server.add("/slow2", b"late", "text/plain", delay=30))
    assert "timed out after 0.5s" in err
    assert time.monotonic() - t0 < 5


async def test_binary_content_refused_by_type(server: FakeWebServer, web: Harness) -> None:
    url = server.add("/blob.bin", bytes(range(256)) * 10, "application/octet-stream")
    err = await web.fetch_error(url)
    assert "unsupported content type 'application/octet-stream'" in err
    assert "image/png" in await web.fetch_error(server.add("/x.png", b"\x89PNG....", "image/png"))


async def test_missing_content_type_is_sniffed(server: FakeWebServer, web: Harness) -> None:
    page = await web.fetch(server.add("/untyped", ARTICLE_HTML, None))
    assert "always shows the same face" in page["passages"][0]["text"]
    assert "binary" in await web.fetch_error(server.add("/untyped-bin", b"\x00\x01\x02" * 100, None))


async def test_http_errors_are_readable(server: FakeWebServer, web: Harness) -> None:
    assert "HTTP 404" in await web.fetch_error(server.url("/missing"))
    server.add("/boom", "oops", "text/plain", status=500)
    assert "HTTP 500" in await web.fetch_error(server.url("/boom"))


async def test_connection_refused_is_readable(web: Harness) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    err = await web.fetch_error(f"http://127.0.0.1:{port}/")
    assert "could not fetch" in err


async def test_loopback_refused_without_the_flag(server: FakeWebServer, tmp_path: Path) -> None:
    web = Harness(WebConfig(cache_mode="off"))
    url = server.page("/a.html", ARTICLE_HTML)
    err = await web.fetch_error(url)
    assert "not a public address (loopback)" in err
    assert server.requests == []  # refused before any connection


async def test_redirect_from_public_host_to_private_is_refused(server: FakeWebServer) -> None:
    """public.test 'resolves' to a public IP; the test transport routes that IP to the loopback
    server (and refuses every other non-loopback address). Private network stays forbidden."""
    transport = LoopbackOnlyTransport({"93.184.216.34": "127.0.0.1"})
    resolver = static_resolver({"public.test": ["93.184.216.34"], "internal.test": ["10.1.2.3"]})
    web = Harness(WebConfig(cache_mode="off", resolver=resolver, transport=transport))
    server.page("/ok.html", ARTICLE_HTML)
    base = f"http://public.test:{server.port}"
    # the allowed host works, and the connection went to the address the guard checked
    page = await web.fetch(f"{base}/ok.html")
    assert page["url"] == f"{base}/ok.html"
    assert transport.seen[-1] == (f"http://93.184.216.34:{server.port}/ok.html", f"public.test:{server.port}")
    assert server.requests[-1].headers["host"] == f"public.test:{server.port}"
    # a redirect hop to a private address is checked and refused
    for target in ["http://169.254.169.254/latest/meta-data/", f"http://127.0.0.1:{server.port}/ok.html",
                   "http://internal.test/admin", "http://[::ffff:127.0.0.1]/", "http://2130706433/",
                   "file:///etc/passwd"]:
        server.redirect("/bounce", target)
        before = len(server.requests)
        err = await web.fetch_error(f"{base}/bounce")
        assert "refused" in err or "not allowed" in err, err
        assert len(server.requests) == before + 1  # only the bounce itself was requested


async def test_dns_failure_and_malformed_urls_are_tool_errors(tmp_path: Path) -> None:
    web = Harness(WebConfig(cache_mode="off", resolver=static_resolver({})))
    assert "could not resolve host 'no-such-host.test'" in await web.fetch_error("https://no-such-host.test/")
    assert "scheme 'ftp' is not allowed" in await web.fetch_error("ftp://files.test/x")
    assert "scheme 'file' is not allowed" in await web.fetch_error("file:///etc/passwd")
    assert "scheme 'gopher' is not allowed" in await web.fetch_error("gopher://x.test/")
    assert "no scheme" in await web.fetch_error("www.example.test/page")
    assert "malformed" in await web.fetch_error("http://bad host.test/")
    invalid = await web.call("fetch_page", url="")
    assert invalid.is_error and "Invalid input" in invalid.content


# ---------------------------------------------------------------- compressed bodies


async def test_a_gzip_bomb_is_stopped_without_being_decoded_past_the_cap(server: FakeWebServer) -> None:
    """100 MB of spaces is ~100 kB of gzip: one 64 kB chunk off the wire would expand to ~64 MB if it
    were decoded whole before the cap is checked."""
    import tracemalloc

    url = server.gzip_bomb("/bomb.html", 100 * 1024 * 1024)
    web = Harness(WebConfig(allow_private_network=True, cache_mode="off", max_bytes=1024 * 1024))
    tracemalloc.start()
    try:
        err = await web.fetch_error(url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "exceeds the 1048576-byte cap" in err
    assert peak < 16 * 1024 * 1024, f"decoding peaked at {peak / 1e6:.0f} MB for a 1 MB cap"


async def test_gzip_and_deflate_bodies_are_decoded(server: FakeWebServer, web: Harness) -> None:
    import zlib

    text = "Compressed field notes.\n\nThe heron stood still for an hour. " * 40
    raw_deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    for path, kw in [("/g.txt", {"encoding": "gzip"}), ("/z.txt", {"encoding": "deflate"}),
                     ("/raw.txt", {"headers": {"Content-Encoding": "deflate"}})]:
        body = raw_deflate.compress(text.encode()) + raw_deflate.flush() if path == "/raw.txt" else text
        page = await web.fetch(server.add(path, body, "text/plain", **kw))
        assert "\n\n".join(p["text"] for p in page["passages"]) == text.strip(), path
    assert server.requests[-1].headers["accept-encoding"] == "gzip, deflate"


async def test_unusable_encodings_are_tool_errors(server: FakeWebServer, web: Harness) -> None:
    br = server.add("/b.txt", b"\x8b\x02\x80hello\x03", "text/plain", headers={"Content-Encoding": "br"})
    assert "content encoding 'br'" in await web.fetch_error(br)
    broken = server.add("/broken.txt", b"\x1f\x8b\x08\x00not gzip at all", "text/plain",
                        headers={"Content-Encoding": "gzip"})
    assert "could not decode the compressed body" in await web.fetch_error(broken)


# ---------------------------------------------------------------- HTTPS through the production transport

HOST = "docs.example.test"


@pytest.fixture
def tls_server():
    with FakeWebServer(tls=True, hostnames=(HOST,)) as srv:
        srv.page("/a.html", ARTICLE_HTML)
        yield srv


def tls_harness(srv: FakeWebServer, monkeypatch: pytest.MonkeyPatch, *, trust: bool) -> Harness:
    """The fetcher's own transport (no injected one); its CA store trusts the fake's CA only if `trust`."""
    import subagents.web.fetch as fetch

    monkeypatch.setattr(fetch, "_ssl_context", srv.client_ssl_context() if trust else None)
    return Harness(WebConfig(allow_private_network=True, cache_mode="off",
                             resolver=static_resolver({HOST: ["127.0.0.1"], "other.example.test": ["127.0.0.1"]})))


async def test_https_fetch_pins_the_address_and_verifies_the_name_by_sni(
        tls_server: FakeWebServer, monkeypatch: pytest.MonkeyPatch) -> None:
    web = tls_harness(tls_server, monkeypatch, trust=True)
    page = await web.fetch(f"https://{HOST}:{tls_server.port}/a.html")
    assert "always shows the same face" in page["passages"][0]["text"]
    [rec] = tls_server.requests
    assert rec.sni == HOST and rec.headers["host"] == f"{HOST}:{tls_server.port}"


async def test_https_certificate_for_another_name_is_refused(
        tls_server: FakeWebServer, monkeypatch: pytest.MonkeyPatch) -> None:
    web = tls_harness(tls_server, monkeypatch, trust=True)
    err = await web.fetch_error(f"https://other.example.test:{tls_server.port}/a.html")
    assert "could not fetch" in err and tls_server.requests == []


async def test_https_from_an_unknown_ca_is_refused(tls_server: FakeWebServer, monkeypatch: pytest.MonkeyPatch) -> None:
    web = tls_harness(tls_server, monkeypatch, trust=False)  # the system CA store
    err = await web.fetch_error(f"https://{HOST}:{tls_server.port}/a.html")
    assert "could not fetch" in err and tls_server.requests == []


# ---------------------------------------------------------------- the fetcher's details (raw responses)


def raw_config(**kw: Any) -> WebConfig:
    return WebConfig(allow_private_network=True, cache_mode="off", resolver=static_resolver({}), **kw)


def test_content_type_parameters() -> None:
    from subagents.web.fetch import parse_content_type

    assert parse_content_type(None) == ("", None) and parse_content_type("") == ("", None)
    assert parse_content_type("Text/HTML") == ("text/html", None)
    assert parse_content_type('text/html; foo="a=b"; Charset="ISO-8859-1" ') == ("text/html", "iso-8859-1")
    assert parse_content_type("text/plain; charset='utf-8'") == ("text/plain", "utf-8")
    assert parse_content_type("text/plain; charset=") == ("text/plain", None)
    assert parse_content_type("text/plain; format=flowed") == ("text/plain", None)
    assert parse_content_type("text/plain;charset=utf-8;format=flowed") == ("text/plain", "utf-8")
    assert parse_content_type("text/plain; charset=x=y") == ("text/plain", "x=y")
    assert parse_content_type("text/plain; charset=XX-TEST") == ("text/plain", "xx-test")


def test_host_header_keeps_ipv6_brackets_and_drops_default_ports() -> None:
    import httpx

    from subagents.web.fetch import _host_header

    assert _host_header(httpx.URL("http://[::1]:8080/x")) == "[::1]:8080"
    assert _host_header(httpx.URL("https://example.test/x")) == "example.test"
    assert _host_header(httpx.URL("http://example.test:8080/")) == "example.test:8080"


async def test_what_the_request_says_and_what_the_response_holds(server: FakeWebServer) -> None:
    from subagents.web.fetch import ACCEPT, fetch_raw

    url = server.add("/r.txt", "hello", "text/plain; charset=ISO-8859-1")
    start = server.redirect("/from", "/r.txt", status=301)
    raw = await fetch_raw(start, raw_config(user_agent="test-agent/1"))
    headers = server.requests[-1].headers
    assert (headers["user-agent"], headers["accept"], headers["accept-encoding"]) == ("test-agent/1", ACCEPT,
                                                                                      "gzip, deflate")
    assert (raw.url, raw.requested_url, raw.status, raw.content_type, raw.charset, raw.body, raw.redirects,
            raw.private) == (url, start, 200, "text/plain", "iso-8859-1", b"hello", [start], True)
    assert raw.fetched_at > 0


async def test_redirect_and_status_errors_are_exact(server: FakeWebServer) -> None:
    from subagents.tools import ToolError
    from subagents.web.fetch import fetch_raw

    server.add("/no-location", b"", None, status=302)
    with pytest.raises(ToolError) as e:
        await fetch_raw(server.url("/no-location"), raw_config())
    assert str(e.value) == f"HTTP 302 redirect without a Location from {server.url('/no-location')}"
    server.redirect("/bad-location", "http://[::zz/")  # httpx itself refuses it while reading the response
    with pytest.raises(ToolError, match="could not fetch .*/bad-location: RemoteProtocolError: Invalid URL"):
        await fetch_raw(server.url("/bad-location"), raw_config())
    server.add("/choices", b"pick one", "text/plain", status=300)  # 3xx that is not a redirect: not a page
    with pytest.raises(ToolError) as e:
        await fetch_raw(server.url("/choices"), raw_config())
    assert str(e.value) == f"HTTP 300 Multiple Choices from {server.url('/choices')}"


async def test_a_refused_type_is_refused_before_its_body_is_read(server: FakeWebServer, web: Harness) -> None:
    url = server.add("/huge.png", b"\x89PNG" + b"x" * 3_000_000, "image/png")
    small = Harness(WebConfig(allow_private_network=True, cache_mode="off", max_bytes=1_000_000))
    err = await small.fetch_error(url)
    assert "unsupported content type 'image/png'" in err and "too large" not in err


async def test_the_cap_is_inclusive_and_its_messages_exact(server: FakeWebServer) -> None:
    from subagents.tools import ToolError
    from subagents.web.fetch import fetch_raw

    config = raw_config(max_bytes=1000)
    exact = server.add("/exact.txt", b"e" * 1000, "text/plain")
    assert len((await fetch_raw(exact, config)).body) == 1000
    streamed = server.add("/streamed.txt", b"s" * 1000, "text/plain", content_length=False)
    assert len((await fetch_raw(streamed, config)).body) == 1000
    zipped = server.add("/zipped.txt", b"z" * 1000, "text/plain", encoding="gzip")
    assert (await fetch_raw(zipped, config)).body == b"z" * 1000  # decodes to exactly the cap
    over = server.add("/over.txt", b"o" * 1001, "text/plain", content_length=False)
    with pytest.raises(ToolError) as e:
        await fetch_raw(over, config)
    assert str(e.value) == f"response from {over} exceeds the 1000-byte cap; download aborted"
    declared = server.add("/declared.txt", b"d" * 1001, "text/plain")
    with pytest.raises(ToolError) as e:
        await fetch_raw(declared, config)
    assert str(e.value) == f"response from {declared} is too large (1001 bytes; the cap is 1000)"


async def test_every_accepted_encoding_over_many_chunks(server: FakeWebServer) -> None:
    import os
    import zlib

    from subagents.web.fetch import fetch_raw

    text = os.urandom(300_000).hex().encode()  # compresses about 2:1: many reads off the wire
    raw_deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    bodies = {
        "/gzip": (zlib.compress(text, 6, wbits=31), "gzip"),
        "/x-gzip": (zlib.compress(text, 6, wbits=31), "x-gzip"),
        "/zlib": (zlib.compress(text, 6), "deflate"),
        "/raw": (raw_deflate.compress(text) + raw_deflate.flush(), "deflate"),
        "/identity": (text, "identity"),
    }
    for path, (body, encoding) in bodies.items():
        url = server.add(path, body, "text/plain", headers={"Content-Encoding": encoding}, chunk=4096)
        assert (await fetch_raw(url, raw_config())).body == text, path


async def test_a_corrupt_body_names_the_url(server: FakeWebServer) -> None:
    import zlib

    from subagents.tools import ToolError
    from subagents.web.fetch import fetch_raw

    good = zlib.compress(bytes(range(256)) * 400, 9, wbits=31)
    broken = good[:20] + bytes(b ^ 0xFF for b in good[20:60]) + good[60:]  # garbage inside the deflate stream
    url = server.add("/bad.gz", broken, "text/plain", headers={"Content-Encoding": "gzip"})
    with pytest.raises(ToolError) as e:
        await fetch_raw(url, raw_config())
    assert str(e.value).startswith(f"could not decode the compressed body from {url}: ")


async def test_read_timeouts_and_the_overall_deadline_are_told_apart(server: FakeWebServer) -> None:
    from subagents.tools import ToolError
    from subagents.web.fetch import fetch_raw

    slow_body = server.add("/slow-body", b"late", "text/plain", body_delay=30)
    # the read timeout (not httpx's default) fires well before the deadline. It is 2 s, not less: on a loaded
    # machine (CI: 3 xdist workers on 2 cores) the threaded server took over 0.2 s to send the headers, and a
    # timeout before the headers is "fetching", not "reading"
    with pytest.raises(ToolError) as e:
        await fetch_raw(slow_body, raw_config(read_timeout=2, total_timeout=20))
    assert str(e.value) == f"timed out reading {slow_body} (ReadTimeout)"
    slow_headers = server.add("/slow-headers", b"late", "text/plain", delay=30)
    with pytest.raises(ToolError) as e:
        await fetch_raw(slow_headers, raw_config(read_timeout=2, total_timeout=20))
    assert str(e.value) == f"timed out fetching {slow_headers} (ReadTimeout)"


async def test_a_body_cut_short_and_a_public_fetch(server: FakeWebServer) -> None:
    from subagents.tools import ToolError
    from subagents.web.fetch import fetch_raw

    short = server.add("/short.txt", b"only ten b", "text/plain", content_length=False, headers={"Content-Length": "1000"})
    with pytest.raises(ToolError) as e:
        await fetch_raw(short, raw_config())
    assert str(e.value).startswith(f"could not fetch {short}: RemoteProtocolError: ")
    server.add("/public.txt", "public", "text/plain")
    config = WebConfig(cache_mode="off", transport=LoopbackOnlyTransport({"93.184.216.34": "127.0.0.1"}),
                       resolver=static_resolver({"public.test": ["93.184.216.34"]}))
    raw = await fetch_raw(f"http://public.test:{server.port}/public.txt", config)
    assert raw.body == b"public" and raw.private is False
