"""Fetching one URL: httpx on trio, every redirect hop re-checked by the guard, a body cap and an
overall deadline so a fetch never hangs.

* Redirects are followed by hand (at most `max_redirects` hops) so each Location is checked —
  a public page redirecting to http://169.254.169.254/ is refused.
* The connection goes to the address the guard checked (see guard.py on DNS rebinding): the
  request URL carries the checked IP, the Host header and TLS SNI carry the name.
* The content type is checked from the headers before the body is read, so a refused type costs
  no download; the body is streamed and the fetch aborted as soon as it passes `max_bytes`
  (a Content-Length over the cap is refused up front). The cap applies to decoded bytes, so a
  compressed bomb is stopped too: the body is read raw and decoded here (gzip and deflate, the only
  encodings we accept) at most `DECODE_STEP` bytes at a time, so memory stays near the cap however
  much one compressed chunk would expand (httpx's own decoder expands a whole chunk at once).
  Another Content-Encoding is refused.
* `trust_env=False`: proxy variables would send requests somewhere the guard never saw.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterator

import httpx
import trio

from ..tools import ToolError
from .config import WebConfig
from .guard import CheckedTarget as Target
from .guard import check_url, normalise_url

REDIRECT_CODES = (301, 302, 303, 307, 308)
ACCEPT_ENCODING = "gzip, deflate"  # what _BoundedDecoder reads
DECODE_STEP = 64 * 1024  # most decoded bytes produced by one decompress call
ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,text/markdown;q=0.8,*/*;q=0.1"


@dataclass
class RawResponse:
    """What extraction needs, and what the cache stores, to re-run extraction later."""

    url: str  # final URL after redirects (normalised, no fragment)
    requested_url: str
    status: int
    content_type: str  # media type, lowercased, no parameters ("" if the server sent none)
    charset: str | None
    body: bytes
    redirects: list[str] = field(default_factory=list)  # URLs that redirected, in order
    private: bool = False  # some hop was on a non-public address (allow_private_network)
    fetched_at: float = 0.0


def parse_content_type(header: str | None) -> tuple[str, str | None]:
    if not header:
        return "", None
    media, _, rest = header.partition(";")
    charset = None
    for param in rest.split(";"):
        k, _, v = param.partition("=")
        if k.strip().lower() == "charset" and v.strip():
            charset = v.strip().strip("\"'").lower()
    return media.strip().lower(), charset


class _Borrowed(httpx.AsyncBaseTransport):
    """An injected transport outlives the per-fetch client: closing the client must not close it."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        pass


_ssl_context = None


def _shared_ssl_context():
    """Loading the CA bundle costs tens of ms; one verifying context serves every fetch."""
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = httpx.create_ssl_context()
    return _ssl_context


def _host_header(url: httpx.URL) -> str:
    host = url.raw_host.decode("ascii")
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{url.port}" if url.port else host


async def fetch_raw(
    url: str,
    config: WebConfig,
    *,
    check_content_type: Callable[[str], None] | None = None,
) -> RawResponse:
    """GET `url` under the guard. Raises ToolError (or its GuardError subclass) on any failure.

    `check_content_type(media_type)` is called on the final response's headers before the body
    is read; it raises ToolError to refuse a type.
    """
    start_url = normalise_url(url)
    try:
        with trio.fail_after(config.total_timeout):
            return await _fetch(start_url, config, check_content_type)
    except trio.TooSlowError:
        raise ToolError(f"timed out after {config.total_timeout:g}s fetching {start_url}") from None


def _client(config: WebConfig) -> httpx.AsyncClient:
    timeout = httpx.Timeout(connect=config.connect_timeout, read=config.read_timeout, write=config.read_timeout,
                            pool=config.connect_timeout)
    if config.transport is not None:
        transport: httpx.AsyncBaseTransport = _Borrowed(config.transport)
    else:
        # no keep-alive: a pooled connection to an IP must never serve another host name
        transport = httpx.AsyncHTTPTransport(
            verify=_shared_ssl_context(), trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)
        )
    return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False, trust_env=False,
                             headers={"User-Agent": config.user_agent, "Accept": ACCEPT,
                                      "Accept-Encoding": ACCEPT_ENCODING})


async def _send_pinned(client: httpx.AsyncClient, target: Target) -> httpx.Response:
    """GET the checked address itself (no second DNS lookup), with the original Host header and SNI."""
    pinned = target.url.copy_with(host=target.address)
    extensions = {}
    if target.url.scheme == "https" and target.host != target.address:
        extensions["sni_hostname"] = target.host
    request = client.build_request("GET", pinned, headers={"Host": _host_header(target.url)}, extensions=extensions)
    try:
        return await client.send(request, stream=True)
    except httpx.TimeoutException as e:
        raise ToolError(f"timed out fetching {target.url} ({type(e).__name__})") from None
    except httpx.HTTPError as e:
        raise ToolError(f"could not fetch {target.url}: {type(e).__name__}: {e or 'connection failed'}") from None


def _redirect_target(response: httpx.Response, target: Target) -> httpx.URL | None:
    """The next URL of a redirect, or None when the response is not one."""
    if response.status_code not in REDIRECT_CODES:
        return None
    location = response.headers.get("location")
    if not location:
        raise ToolError(f"HTTP {response.status_code} redirect without a Location from {target.url}")
    try:
        return target.url.join(location.strip())
    except (httpx.InvalidURL, ValueError) as e:
        raise ToolError(f"bad redirect Location {location[:200]!r} from {target.url}: {e}") from None


async def _read_body(response: httpx.Response, target: Target, config: WebConfig,
                     check_content_type: Callable[[str], None] | None) -> tuple[str, str | None, bytes]:
    if not 200 <= response.status_code < 300:
        raise ToolError(f"HTTP {response.status_code} {response.reason_phrase} from {target.url}")
    media, charset = parse_content_type(response.headers.get("content-type"))
    if check_content_type is not None:
        check_content_type(media)
    return media, charset, await _read_capped(response, config.max_bytes, target.url)


async def _fetch(
    start_url: httpx.URL,
    config: WebConfig,
    check_content_type: Callable[[str], None] | None,
) -> RawResponse:
    current = start_url
    redirects: list[str] = []
    private = False
    async with _client(config) as client:
        for _hop in range(config.max_redirects + 1):
            target = await check_url(current, allow_private_network=config.allow_private_network,
                                     resolver=config.resolver)
            private = private or target.private
            response = await _send_pinned(client, target)
            try:
                nxt = _redirect_target(response, target)
                if nxt is not None:
                    redirects.append(str(target.url))
                    current = nxt
                    continue
                media, charset, body = await _read_body(response, target, config, check_content_type)
            except httpx.TimeoutException as e:
                raise ToolError(f"timed out reading {target.url} ({type(e).__name__})") from None
            except httpx.HTTPError as e:
                raise ToolError(f"could not fetch {target.url}: {type(e).__name__}: {e}") from None
            finally:
                await response.aclose()
            return RawResponse(url=str(target.url), requested_url=str(start_url), status=response.status_code,
                               content_type=media, charset=charset, body=body, redirects=redirects, private=private,
                               fetched_at=time.time())
    raise ToolError(f"too many redirects (more than {config.max_redirects}) starting from {start_url}")


async def _read_capped(response: httpx.Response, max_bytes: int, url: httpx.URL) -> bytes:
    declared = response.headers.get("content-length")
    if declared and declared.strip().isdigit() and int(declared) > max_bytes:
        raise ToolError(f"response from {url} is too large ({int(declared)} bytes; the cap is {max_bytes})")
    decoder = _BoundedDecoder(response.headers.get("content-encoding", ""), url)
    buf = bytearray()
    async for raw in response.aiter_raw():
        for piece in decoder.decode(raw):
            buf += piece
            if len(buf) > max_bytes:
                raise ToolError(f"response from {url} exceeds the {max_bytes}-byte cap; download aborted")
    buf += decoder.flush()
    if len(buf) > max_bytes:
        raise ToolError(f"response from {url} exceeds the {max_bytes}-byte cap; download aborted")
    return bytes(buf)


class _BoundedDecoder:
    """Content-Encoding gzip / deflate / identity, decoded at most DECODE_STEP bytes per step."""

    def __init__(self, header: str, url: httpx.URL) -> None:
        encoding = header.strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise ToolError(f"response from {url} uses content encoding {header!r}; only gzip and deflate are read")
        self.url = url
        self.deflate = encoding == "deflate"
        self.z = None if encoding in ("", "identity") else zlib.decompressobj(31 if not self.deflate else 15)
        self.started = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        if self.z is None:
            yield data
            return
        try:
            if self.deflate and not self.started and data:
                data = self._pick_deflate_format(data)
            self.started = self.started or bool(data)
            while data and not self.z.eof:
                yield self.z.decompress(data, DECODE_STEP)
                data = self.z.unconsumed_tail
        except zlib.error as e:
            raise ToolError(f"could not decode the compressed body from {self.url}: {e}") from None

    def _pick_deflate_format(self, data: bytes) -> bytes:
        """RFC 9110 says deflate is the zlib format; some servers send raw deflate (as httpx, accept both)."""
        try:
            zlib.decompressobj(15).decompress(data[:2])
        except zlib.error:
            self.z = zlib.decompressobj(-zlib.MAX_WBITS)
        return data

    def flush(self) -> bytes:
        if self.z is None:
            return b""
        try:
            return self.z.flush(DECODE_STEP)
        except zlib.error as e:
            raise ToolError(f"could not decode the compressed body from {self.url}: {e}") from None
