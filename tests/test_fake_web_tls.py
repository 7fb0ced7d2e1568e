"""The fake web server over HTTPS (a throwaway trustme CA) and with compressed bodies, fetched by
httpx and by the web tool's own fetcher (`fetch_raw`), which pins the checked IP and sends the
host name in SNI and Host."""

from __future__ import annotations

import gzip
import ssl

import httpx
import pytest
import trio

from subagents.tools import ToolError
from subagents.web.config import WebConfig
from subagents.web.fetch import fetch_raw
from tests.fakes.web_server import FakeWebServer, static_resolver

HOST = "docs.example.test"
PAGE = "<html><head><title>T</title></head><body><p>Structured concurrency.</p></body></html>"


@pytest.fixture
def tls_srv():
    with FakeWebServer(tls=True, hostnames=(HOST,)) as s:
        s.page("/a.html", PAGE)
        yield s


async def test_https_with_the_ca_trusted(tls_srv: FakeWebServer) -> None:
    assert tls_srv.base_url.startswith("https://127.0.0.1:")
    async with httpx.AsyncClient(verify=tls_srv.client_ssl_context()) as c:
        r = await c.get(tls_srv.url("/a.html"))
    assert r.status_code == 200 and r.text == PAGE
    assert r.extensions["http_version"] == b"HTTP/1.0"
    assert tls_srv.requests[0].sni is None  # no SNI for an IP address (RFC 6066 section 3)


async def test_sni_and_certificate_name_for_a_pinned_address(tls_srv: FakeWebServer) -> None:
    # what a DNS-pinning client does: connect to the IP, verify the certificate for the name
    async with httpx.AsyncClient(verify=tls_srv.client_ssl_context()) as c:
        r = await c.get(tls_srv.url("/a.html"), headers={"Host": f"{HOST}:{tls_srv.port}"},
                        extensions={"sni_hostname": HOST})
    assert r.status_code == 200
    rec = tls_srv.requests[0]
    assert rec.sni == HOST and rec.headers["host"] == f"{HOST}:{tls_srv.port}"


def causes(err: BaseException | None) -> str:
    """Every exception in the cause/context chain (trio's TLS stream wraps the ssl error)."""
    seen = []
    while err is not None and len(seen) < 10:
        seen.append(repr(err))
        err = err.__cause__ or err.__context__
    return " <- ".join(seen)


async def test_certificate_checks_are_real(tls_srv: FakeWebServer) -> None:
    async with httpx.AsyncClient() as c:  # the system CA store does not know the throwaway CA
        with pytest.raises(httpx.ConnectError) as info:
            await c.get(tls_srv.url("/a.html"))
    assert "unable to get local issuer certificate" in causes(info.value)
    async with httpx.AsyncClient(verify=tls_srv.client_ssl_context()) as c:  # a name the cert lacks
        with pytest.raises(httpx.ConnectError) as info:
            await c.get(tls_srv.url("/a.html"), extensions={"sni_hostname": "other.example.test"})
    assert "Hostname mismatch" in causes(info.value)
    for _ in range(100):  # the server side of a failed handshake is recorded in its own thread
        if len(tls_srv.tls_errors) == 2:
            break
        await trio.sleep(0.02)
    assert len(tls_srv.tls_errors) == 2 and not tls_srv.requests


async def test_close_delimited_body_over_tls(tls_srv: FakeWebServer) -> None:
    tls_srv.add("/stream", b"x" * 200_000, "text/plain", content_length=False)
    async with httpx.AsyncClient(verify=tls_srv.client_ssl_context()) as c:
        r = await c.get(tls_srv.url("/stream"))
    assert len(r.content) == 200_000 and "content-length" not in r.headers


async def test_gzip_body_is_decoded_by_the_client() -> None:
    with FakeWebServer() as s:
        s.add("/g.html", PAGE, encoding="gzip")
        s.add("/d.txt", "deflated text", "text/plain", encoding="deflate")
        async with httpx.AsyncClient() as c:
            r = await c.get(s.url("/g.html"))
            assert r.headers["content-encoding"] == "gzip" and r.text == PAGE
            assert int(r.headers["content-length"]) == len(gzip.compress(PAGE.encode(), 9)) != len(PAGE)
            assert (await c.get(s.url("/d.txt"))).text == "deflated text"


async def test_gzip_bomb_is_small_on_the_wire() -> None:
    with FakeWebServer() as s:
        s.gzip_bomb("/bomb.html", 20 * 1024 * 1024)
        async with httpx.AsyncClient() as c:
            async with c.stream("GET", s.url("/bomb.html")) as r:
                wire = int(r.headers["content-length"])
                decoded = 0
                async for chunk in r.aiter_bytes():
                    decoded += len(chunk)
    assert wire < 100_000 and decoded == 20 * 1024 * 1024


def web_config(srv: FakeWebServer, **kw) -> WebConfig:
    transport = httpx.AsyncHTTPTransport(verify=srv.client_ssl_context(), trust_env=False) if srv.ca else None
    return WebConfig(allow_private_network=True, resolver=static_resolver({HOST: ["127.0.0.1"]}),
                     transport=transport, cache_mode="off", **kw)


async def test_the_web_fetcher_over_https_pins_the_address_and_sends_sni(tls_srv: FakeWebServer) -> None:
    raw = await fetch_raw(f"https://{HOST}:{tls_srv.port}/a.html", web_config(tls_srv))
    assert raw.status == 200 and raw.body == PAGE.encode() and raw.url == f"https://{HOST}:{tls_srv.port}/a.html"
    rec = tls_srv.requests[0]
    assert rec.sni == HOST and rec.headers["host"] == f"{HOST}:{tls_srv.port}"


async def test_the_web_fetcher_caps_decoded_bytes_of_a_gzip_bomb() -> None:
    with FakeWebServer(tls=True, hostnames=(HOST,)) as s:
        s.gzip_bomb("/bomb.html", 50 * 1024 * 1024)
        s.add("/fine.html", PAGE * 100, encoding="gzip")
        config = web_config(s, max_bytes=1024 * 1024)
        with pytest.raises(ToolError, match="exceeds the 1048576-byte cap"):
            await fetch_raw(f"https://{HOST}:{s.port}/bomb.html", config)
        raw = await fetch_raw(f"https://{HOST}:{s.port}/fine.html", config)
        assert raw.body == (PAGE * 100).encode()


def test_client_context_needs_tls() -> None:
    with FakeWebServer() as s:
        assert s.base_url.startswith("http://") and s.ca is None
        with pytest.raises(RuntimeError, match="tls=True"):
            s.client_ssl_context()
    assert isinstance(FakeWebServer(tls=True).client_ssl_context(), ssl.SSLContext)
