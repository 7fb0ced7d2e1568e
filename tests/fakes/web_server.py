"""A real HTTP server on 127.0.0.1 serving plain web pages, for the web tool tests and benches.

    with FakeWebServer() as srv:
        srv.page("/a.html", "<html>…</html>")                      # text/html
        srv.add("/doc.pdf", pdf_bytes, "application/pdf")
        srv.redirect("/old", "/a.html", status=301)
        srv.add("/slow", b"late", "text/plain", delay=30)            # sleeps before headers
        srv.add("/big", b"x" * 10_000_000, "text/plain", content_length=False)  # streamed, no length
        srv.url("/a.html")  ->  "http://127.0.0.1:<port>/a.html"
        srv.requests       ->  [RecordedRequest(path, headers), …]

Or serve a directory (`FakeWebServer(root=Path(...))`): files under it are served with a
content type from their extension. Unknown paths answer 404. Sleeps wake up when the server
stops, so a test with a hung response still finishes fast.

HTTPS: `FakeWebServer(tls=True, hostnames=("docs.example.test",))` serves TLS with a certificate
for those names (and the listening address) from a throwaway CA made by `trustme`. A client that
trusts `srv.client_ssl_context()` (or `srv.ca`) verifies the certificate; the name the client
sent in SNI is recorded per request (`RecordedRequest.sni`), and failed handshakes (a client
that does not trust the CA, or asks for another name) in `srv.tls_errors`. `srv.base_url` is then
https://127.0.0.1:<port>; `srv.url(path, host="docs.example.test")` names a host instead.

Compressed bodies: `srv.add(path, body, ..., encoding="gzip")` (or "deflate") stores the body
compressed and sends `Content-Encoding`; `srv.gzip_bomb(path, decoded_size)` serves a small gzip
body that decodes to `decoded_size` bytes, for decoded-size caps. ("br" only with the brotli
package installed, which the project does not require.)
"""

from __future__ import annotations

import ipaddress
import mimetypes
import posixpath
import ssl
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterable, Self
from urllib.parse import unquote, urlsplit

import httpx


@dataclass
class Route:
    body: bytes
    content_type: str | None = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line
    body_delay: float = 0.0  # seconds between headers and body
    content_length: bool = True  # False: no Content-Length, body ends when the connection closes
    chunk: int = 64 * 1024
    encoding: str | None = None  # Content-Encoding of `body` (already encoded)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    arrived: float
    sni: str | None = None  # TLS only: the server name the client sent (None: no SNI)


def encode_body(data: bytes, encoding: str) -> bytes:
    """`data` as sent with `Content-Encoding: encoding` (RFC 9110 section 8.4.1)."""
    if encoding == "gzip":
        return zlib.compress(data, 9, wbits=31)
    if encoding == "deflate":  # the zlib format, as RFC 9110 defines "deflate"
        return zlib.compress(data, 9)
    if encoding == "br":
        import brotli  # not a project dependency: only where it happens to be installed

        return brotli.compress(data)
    raise ValueError(f"unsupported content encoding {encoding!r}")


class _WebHTTPServer(ThreadingHTTPServer):
    """The TLS handshake runs in the connection's own thread, so a client that stalls or fails the
    handshake never blocks the accept loop."""

    tls: ssl.SSLContext | None = None
    tls_errors: list[str]

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        try:
            conn = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            self.tls_errors.append(f"{type(e).__name__}: {e}")
            return
        try:
            super().finish_request(conn, client_address)
        finally:
            _close_tls(conn)


def _close_tls(conn: ssl.SSLSocket) -> None:
    """Send close_notify (a close-delimited body must end cleanly), then close."""
    try:
        conn.settimeout(1.0)
        conn.unwrap()
    except (ssl.SSLError, OSError, ValueError):
        pass
    finally:
        conn.close()


class FakeWebServer:
    def __init__(self, root: Path | None = None, host: str = "127.0.0.1", *, tls: bool = False,
                 hostnames: Iterable[str] = ("localhost",)) -> None:
        self.root = Path(root) if root is not None else None
        self.host = host
        self.routes: dict[str, Route] = {}
        self.requests: list[RecordedRequest] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # close-delimited bodies are allowed; one request a connection

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server._serve(self)

            def do_HEAD(self) -> None:
                server._serve(self, head=True)

        self._httpd = _WebHTTPServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.tls_errors = self.tls_errors = []
        self.ca = None
        if tls:
            self._httpd.tls = self._server_tls_context([*hostnames, host])
        self._httpd.handle_error = lambda request, client_address: None  # clients hang up on us
        self._thread: threading.Thread | None = None

    # --- routes --------------------------------------------------------------------------------
    def add(self, path: str, body: bytes | str, content_type: str | None = "text/html; charset=utf-8",
            *, encoding: str | None = None, **kw) -> str:
        data = body.encode("utf-8") if isinstance(body, str) else body
        if encoding is not None:
            data = encode_body(data, encoding)
        self.routes[path] = Route(data, content_type, encoding=encoding, **kw)
        return self.url(path)

    def gzip_bomb(self, path: str, decoded_size: int, content_type: str = "text/html; charset=utf-8",
                  fill: bytes = b" ") -> str:
        """A gzip body of a few kB that decodes to `decoded_size` bytes of `fill`."""
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        block = fill * (1024 * 1024 // len(fill))
        parts, left = [], decoded_size
        while left > 0:
            parts.append(z.compress(block[:left]))
            left -= len(block)
        parts.append(z.flush())
        self.routes[path] = Route(b"".join(parts), content_type, encoding="gzip")
        return self.url(path)

    def page(self, path: str, html: str, **kw) -> str:
        return self.add(path, html, "text/html; charset=utf-8", **kw)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        self.routes[path] = Route(b"", None, status=status, headers={"Location": location})
        return self.url(path)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def scheme(self) -> str:
        return "https" if self._httpd.tls is not None else "http"

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def url(self, path: str, host: str | None = None) -> str:
        return f"{self.scheme}://{host or self.host}:{self.port}{path}"

    # --- TLS -----------------------------------------------------------------------------------
    def _server_tls_context(self, names: list[str]) -> ssl.SSLContext:
        import trustme  # test-only dependency (the `test` extra)

        self.ca = trustme.CA()
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(*names).configure_cert(ctx)
        ctx.sni_callback = _remember_sni
        return ctx

    def client_ssl_context(self) -> ssl.SSLContext:
        """A verifying client context (hostname check on) that trusts this server's CA only."""
        if self.ca is None:
            raise RuntimeError("this FakeWebServer does not serve TLS (pass tls=True)")
        ctx = ssl.create_default_context()
        self.ca.configure_trust(ctx)
        return ctx

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> Self:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- serving -------------------------------------------------------------------------------
    def _lookup(self, path: str) -> Route | None:
        route = self.routes.get(path)
        if route is not None or self.root is None:
            return route
        rel = posixpath.normpath(unquote(path)).lstrip("/")
        if rel.startswith("..") or rel == ".":
            return None
        file = self.root / rel
        if not file.is_file():
            return None
        ctype, _ = mimetypes.guess_type(file.name)
        if ctype and ctype.startswith("text/"):
            ctype += "; charset=utf-8"
        return Route(file.read_bytes(), ctype or "application/octet-stream")

    def _serve(self, h: BaseHTTPRequestHandler, head: bool = False) -> None:
        path = urlsplit(h.path).path
        sni = getattr(h.connection, "fake_sni", None)
        with self._lock:
            self.requests.append(
                RecordedRequest(h.command, h.path, {k.lower(): v for k, v in h.headers.items()}, time.monotonic(), sni)
            )
        route = self._lookup(path)
        if route is None:
            route = Route(b"not found", "text/plain", status=404)
        try:
            if route.delay and self._stop.wait(route.delay):
                return
            h.send_response(route.status)
            if route.content_type:
                h.send_header("Content-Type", route.content_type)
            if route.encoding:
                h.send_header("Content-Encoding", route.encoding)
            for k, v in route.headers.items():
                h.send_header(k, v)
            if route.content_length:
                h.send_header("Content-Length", str(len(route.body)))
            h.end_headers()
            h.wfile.flush()
            if route.body_delay and self._stop.wait(route.body_delay):
                return
            if head:
                return
            for i in range(0, len(route.body), route.chunk):
                if self._stop.is_set():
                    return
                h.wfile.write(route.body[i : i + route.chunk])
        except (BrokenPipeError, ConnectionResetError):
            pass


def _remember_sni(conn: ssl.SSLSocket, server_name: str | None, ctx: ssl.SSLContext) -> None:
    conn.fake_sni = server_name  # type: ignore[attr-defined]  (read back by _serve)


# ---------------------------------------------------------------------------------------------
# Test helpers that go with the server


class LoopbackOnlyTransport(httpx.AsyncBaseTransport):
    """An httpx transport for tests that pretends public addresses are the loopback server.

    `mapping` maps an address the guard approved (e.g. "93.184.216.34") to a loopback address;
    any request whose host is not loopback after mapping fails with ConnectError, so a test can
    never open a connection to a non-loopback address. `seen` records (url, Host header) pairs.
    """

    def __init__(self, mapping: dict[str, str] | None = None) -> None:
        self.mapping = dict(mapping or {})
        self.inner = httpx.AsyncHTTPTransport(trust_env=False)
        self.seen: list[tuple[str, str | None]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append((str(request.url), request.headers.get("host")))
        host = self.mapping.get(request.url.host, request.url.host)
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise httpx.ConnectError(f"test transport: refusing to connect to non-loopback {host!r}")
        request.url = request.url.copy_with(host=host)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def static_resolver(table: dict[str, list[str]]):
    """An injected resolver: names in `table` resolve to their addresses; anything else fails
    like a DNS miss (socket.gaierror). No test ever asks real DNS."""
    import socket

    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known (test resolver: {host})")
        return list(table[host])

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A small valid PDF: one list of text lines per page (Helvetica, WinAnsi), with an xref."""
    objects: list[bytes] = []
    n_pages = len(pages)
    font_id = 3
    first_page_id = 4
    page_ids = [first_page_id + 2 * i for i in range(n_pages)]
    info_id = first_page_id + 2 * n_pages
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, lines in enumerate(pages):
        content_id = page_ids[i] + 1
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font_id} 0 R >> >> "
            f"/Contents {content_id} 0 R >>".encode()
        )
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
        for line in lines:
            ops.append(f"({_pdf_escape(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("cp1252")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = f"<< /Title ({_pdf_escape(title)}) >>" if title else "<< >>"
    objects.append(info.encode())
    from .pdf_pages import serialize

    return serialize(objects, info_id)
