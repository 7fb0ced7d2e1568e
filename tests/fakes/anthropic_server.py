"""A real HTTP server on 127.0.0.1 speaking the Anthropic Messages API, for tests and benchmarks.

    with FakeAnthropicServer([text("hello"), error(429, retry_after=0), text("again")]) as srv:
        model = AnthropicModel("claude-test", api_key="sk-test", base_url=srv.base_url)
        ...
        srv.requests[0].body["messages"]   # what went over the wire

Replies come from the scripted queue first (`replies=` / `push`), then from `handler`
(a callable: request JSON -> Reply or a dict of Reply fields; it runs in a server thread, so
keep it thread-safe), so an end-to-end test can answer by inspecting the
request. With neither left the server answers 400 "fake server ran dry" (not retried by
clients) and counts it in `dry`: running dry is an error, never a silent default. A handler
that raises is answered with a 400 naming the exception, also kept in `handler_errors`.

Faults: any status with headers (`error(429, retry_after=0)`, `error(529)`), `hang(seconds)`
(sleeps longer than the client's timeout), `Reply.stream_error` (an SSE `error` event after
message_start), and latency: `base_latency` seconds + output tokens / `tokens_per_second`
(streamed replies spread their deltas over that time).

Every request is recorded as a `RecordedRequest` (method, path, lower-cased headers, parsed
JSON body, arrival / finish times from time.monotonic(), status sent, whether it streamed,
whether the client went away).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Iterator, Self

import pytest

# ---------------------------------------------------------------- shared machinery


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or None
    raw: bytes
    arrived: float  # time.monotonic() when the request was read
    finished: float | None = None  # when the last byte of the answer was written
    status: int | None = None
    streamed: bool = False
    aborted: bool = False  # the client went away before the answer was written
    reply: Any = None  # the spec that answered

    @property
    def duration(self) -> float | None:
        return None if self.finished is None else self.finished - self.arrived


@dataclass
class Fault:
    """What every reply spec can also do: a status with headers, a hang, its own latency."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None  # error body for status != 200 (a default is derived)
    hang: float = 0.0  # seconds to sleep before answering at all
    latency: float | None = None  # overrides the server's latency model for this reply


class Dry(Exception):
    """No scripted reply left and no handler."""


class HandlerFailed(Exception):
    """The test's handler raised; the client gets a 400 naming the error."""


class _Server(ThreadingHTTPServer):
    # Many agents connect at once: with the default listen backlog of 5 the kernel drops the
    # surplus SYNs and those clients retry only after 1 s.
    request_queue_size = 128


class FakeHTTPServer:
    """Threaded HTTP/1.1 server on 127.0.0.1:0; subclasses implement `answer`."""

    endpoint = "/"

    def __init__(
        self,
        replies: Iterable[Any] = (),
        handler: Callable[[Any], Any] | None = None,
        *,
        base_latency: float = 0.0,
        tokens_per_second: float | None = None,
    ) -> None:
        self.replies: deque[Any] = deque(replies)
        self.handler = handler
        self.base_latency = base_latency
        self.tokens_per_second = tokens_per_second
        self.requests: list[RecordedRequest] = []
        self.dry = 0
        self.handler_errors: list[str] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=type(self).__name__, daemon=True
        )
        self._thread.start()

    # -- public API
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def push(self, *replies: Any) -> None:
        with self._lock:
            self.replies.extend(replies)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):04d}"

    def max_overlap(self) -> int:
        """Most requests in flight at the same moment."""
        events = []
        for r in self.requests:
            events.append((r.arrived, 1))
            events.append((r.finished if r.finished is not None else float("inf"), -1))
        best = cur = 0
        for _, d in sorted(events, key=lambda e: (e[0], e[1])):
            cur += d
            best = max(best, cur)
        return best

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- for subclasses
    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)

    def take_reply(self, body: Any) -> Any:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        if self.handler is not None:
            try:
                return self.handler(body)
            except Exception as err:  # surfaced to the client as a 400 and kept for the test
                with self._lock:
                    self.handler_errors.append(f"{type(err).__name__}: {err}")
                raise HandlerFailed(f"fake handler raised {type(err).__name__}: {err}") from err
        with self._lock:
            self.dry += 1
        raise Dry()

    def latency_for(self, fault: Fault, output_tokens: int) -> float:
        if fault.latency is not None:
            return fault.latency
        extra = output_tokens / self.tokens_per_second if self.tokens_per_second else 0.0
        return self.base_latency + extra

    def answer(self, h: "_Handler", rec: RecordedRequest) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- HTTP plumbing
    def _handler_class(self) -> type["_Handler"]:
        server = self

        class Handler(_Handler):
            fake = server

        return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in separate writes: with Nagle on, the body waits for the client's
    # delayed ACK (~40 ms per request on loopback), which would distort every timing measured here
    disable_nagle_algorithm = True
    fake: FakeHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
            arrived=time.monotonic(),
        )
        with self.fake._lock:
            self.fake.requests.append(rec)
        try:
            if self.path.split("?")[0] != self.fake.endpoint:
                self.send_json(rec, 404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
            else:
                self.fake.answer(self, rec)
        except (BrokenPipeError, ConnectionResetError):
            rec.aborted = True
        finally:
            rec.finished = time.monotonic()

    def do_GET(self) -> None:
        self.do_POST()

    # helpers used by the servers
    def send_json(self, rec: RecordedRequest, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        rec.status = status
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_fake_{id(rec):x}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start_sse(self, rec: RecordedRequest, headers: dict[str, str] | None = None) -> None:
        rec.status = 200
        rec.streamed = True
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def sse(self, event: str | None, data: Any) -> None:
        text = (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"
        self.chunk(text.encode())

    def chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# ---------------------------------------------------------------- Anthropic Messages API

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply(Fault):
    """One Messages API answer. `content` holds API-shaped blocks: {"type": "text", "text": ...},
    {"type": "tool_use", "id", "name", "input"}, {"type": "thinking", "thinking", "signature"}."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = "end_turn"
    usage: dict[str, Any] = field(default_factory=dict)  # merged over computed defaults
    model: str | None = None
    stream_error: dict[str, Any] | None = None  # SSE only: an `error` event after message_start


def text(body: str, *, stop_reason: str = "end_turn", **usage: Any) -> Reply:
    return Reply(content=[{"type": "text", "text": body}], stop_reason=stop_reason, usage=usage)


def tool_use(*calls: tuple[str, dict[str, Any]] | dict[str, Any], text: str | None = None, **usage: Any) -> Reply:
    """tool_use(("search", {"q": "x"}), ("fetch", {"url": u})) — ids are filled in if missing."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for c in calls:
        if isinstance(c, tuple):
            c = {"name": c[0], "input": c[1]}
        content.append({"type": "tool_use", "id": c.get("id"), "name": c["name"], "input": c.get("input", {})})
    return Reply(content=content, stop_reason="tool_use", usage=usage)


def error(
    status: int,
    *,
    retry_after: float | None = None,
    retry_after_ms: float | None = None,
    type: str | None = None,
    message: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    h = dict(headers or {})
    if retry_after is not None:
        h["retry-after"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        h["retry-after-ms"] = f"{retry_after_ms:g}"
    err = {"type": type or ERROR_TYPES.get(status, "api_error"), "message": message or f"fake error {status}"}
    return Reply(status=status, headers=h, error=err)


def hang(seconds: float = 30.0, then: Reply | None = None) -> Reply:
    r = then or text("too late")
    r.hang = seconds
    return r


def _estimate(obj: Any) -> int:
    return max(1, len(json.dumps(obj)) // 4)


def _pieces(s: str, n: int = 3) -> list[str]:
    if not s:
        return []
    size = max(1, -(-len(s) // n))
    return [s[i : i + size] for i in range(0, len(s), size)]


class FakeAnthropicServer(FakeHTTPServer):
    """`base_url` is what AnthropicModel / anthropic.AsyncAnthropic take (no /v1)."""

    endpoint = "/v1/messages"

    @property
    def base_url(self) -> str:
        return self.origin

    def answer(self, h: _Handler, rec: RecordedRequest) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        try:
            reply = self.take_reply(body)
        except Dry:
            h.send_json(rec, 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "fake server ran dry: no scripted reply left"}})
            return
        except HandlerFailed as err:
            h.send_json(rec, 400, {"type": "error", "error": {"type": "invalid_request_error", "message": str(err)}})
            return
        if isinstance(reply, dict):
            reply = Reply(**reply)
        rec.reply = reply
        self.sleep(reply.hang)
        if reply.status != 200:
            err = reply.error or {"type": ERROR_TYPES.get(reply.status, "api_error"), "message": f"fake error {reply.status}"}
            h.send_json(rec, reply.status, {"type": "error", "error": err, "request_id": "req_fake"}, reply.headers)
            return
        content = [dict(b) for b in reply.content]
        for b in content:
            if b.get("type") == "tool_use" and not b.get("id"):
                b["id"] = self.next_id("toolu_fake_")
        usage = {
            "input_tokens": _estimate(body.get("messages", [])),
            "output_tokens": _estimate(content),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        usage.update(reply.usage)
        message = {
            "id": self.next_id("msg_fake_"),
            "type": "message",
            "role": "assistant",
            "model": reply.model or body.get("model", "claude-fake"),
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        delay = self.latency_for(reply, usage.get("output_tokens") or 0)
        if body.get("stream"):
            self._stream(h, rec, message, reply, delay)
        else:
            self.sleep(delay)
            h.send_json(rec, 200, message, reply.headers)

    def _stream(self, h: _Handler, rec: RecordedRequest, message: dict[str, Any], reply: Reply, delay: float) -> None:
        events: list[tuple[str, dict[str, Any]]] = []
        for i, b in enumerate(message["content"]):
            kind = b["type"]
            if kind == "text":
                start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(b["text"])]
            elif kind == "tool_use":
                start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(json.dumps(b["input"]))]
            elif kind == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(b.get("thinking", ""))]
                deltas.append({"type": "signature_delta", "signature": b.get("signature", "sig_fake")})
            else:
                start, deltas = b, []
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        usage = message["usage"]
        start_msg = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
        first_delay = self.base_latency if reply.latency is None else reply.latency
        first_delay = min(first_delay, delay)
        per_event = (delay - first_delay) / max(1, len(events))
        self.sleep(first_delay)
        h.start_sse(rec, reply.headers)
        h.sse("message_start", {"type": "message_start", "message": start_msg})
        if reply.stream_error is not None:
            h.sse("error", {"type": "error", "error": reply.stream_error})
            h.end_chunks()
            return
        h.sse("ping", {"type": "ping"})
        for name, data in events:
            self.sleep(per_event)
            h.sse(name, data)
        final_usage = {"output_tokens": usage.get("output_tokens")}
        h.sse(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": final_usage},
        )
        h.sse("message_stop", {"type": "message_stop"})
        h.end_chunks()


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    """A fresh fake per test; script it with `anthropic_server.push(...)` or set `.handler`."""
    with FakeAnthropicServer() as srv:
        yield srv
