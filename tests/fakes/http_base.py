"""What the model-API fakes share: a threaded HTTP/1.1 server on 127.0.0.1, a scripted reply queue,
a record of every request, and the faults every reply can carry (status, hang, latency, and for
streamed replies a stall or a cut).

Stream faults (see `stall` and `cut`):

* stall: after `stall_after` events the server stops sending for `stall` seconds while keeping the
  connection open, then goes on. A client with an idle (read) timeout shorter than that gives up.
* cut: after `cut_after` events the connection is closed before the stream's end (the Anthropic
  `message_stop` event, the OpenAI `data: [DONE]` line). By default the TCP connection is dropped
  mid-body (no terminating zero-length chunk: the client sees an incomplete chunked body);
  `cut_clean=True` ends the HTTP body properly, so only the protocol's own end marker is missing.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Self, TypeVar


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
    refused: str | None = None  # the validation message, when the fake refused the request
    stalled: bool = False  # a scripted stall happened in this stream
    cut: bool = False  # the stream was cut before its end marker

    @property
    def duration(self) -> float | None:
        return None if self.finished is None else self.finished - self.arrived


@dataclass
class Fault:
    """What every reply spec can also do: a status with headers, a hang, its own latency, and
    (streamed replies only) a stall or a cut."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None  # error body for status != 200 (a default is derived)
    hang: float = 0.0  # seconds to sleep before answering at all
    latency: float | None = None  # overrides the server's latency model for this reply
    stall_after: int = 1  # streams: events sent before the stall ...
    stall: float = 0.0  # ... and how long nothing is sent (connection kept open); 0: no stall
    cut_after: int | None = None  # streams: events sent before the connection is closed early
    cut_clean: bool = False  # True: the HTTP body ends properly at the cut; False: dropped mid-body


F = TypeVar("F", bound=Fault)


def stall(reply: F, seconds: float = 30.0, *, after: int = 1) -> F:
    """A streamed `reply` that goes silent for `seconds` after `after` events, connection open."""
    reply.stall, reply.stall_after = seconds, after
    return reply


def cut(reply: F, *, after: int = 1, clean: bool = False) -> F:
    """A streamed `reply` whose connection is closed after `after` events, before its end marker."""
    reply.cut_after, reply.cut_clean = after, clean
    return reply


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
        self.refusals: list[str] = []  # validation messages of refused requests, in order
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

    def refuse(self, rec: RecordedRequest, message: str) -> None:
        rec.refused = message
        with self._lock:
            self.refusals.append(message)

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

    def play_stream(self, h: "_Handler", rec: RecordedRequest, frames: list[bytes], fault: Fault, per_frame: float) -> None:
        """Write `frames` (encoded SSE events) as chunks after `h.start_sse`, honouring the fault's
        stall and cut. The last frame is the stream's end marker: a cut never sends it."""
        cut_at = None if fault.cut_after is None else max(0, min(fault.cut_after, len(frames) - 1))
        stall_at = max(0, min(fault.stall_after, len(frames) - 1)) if fault.stall > 0 else None
        for i, frame in enumerate(frames):
            if i == cut_at:
                self._cut(h, rec, clean=fault.cut_clean)
                return
            if i == stall_at:
                rec.stalled = True
                self.sleep(fault.stall)
            elif i:
                self.sleep(per_frame)
            h.chunk(frame)
        h.end_chunks()

    def _cut(self, h: "_Handler", rec: RecordedRequest, *, clean: bool) -> None:
        rec.cut = True
        h.close_connection = True
        if clean:
            h.end_chunks()
            return
        try:  # no terminating chunk: the client reads an incomplete chunked body, then EOF
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def answer(self, h: "_Handler", rec: RecordedRequest) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- HTTP plumbing
    def _handler_class(self) -> type["_Handler"]:
        server = self

        class Handler(_Handler):
            fake = server

        return Handler


def encode_sse(event: str | None, data: Any) -> bytes:
    """One server-sent event: `event:` line (if named), `data:` line (JSON, or a raw str), blank line."""
    payload = data if isinstance(data, str) else json.dumps(data)
    return ((f"event: {event}\n" if event else "") + f"data: {payload}\n\n").encode()


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
            method=self.command,
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
        self.chunk(encode_sse(event, data))

    def chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
