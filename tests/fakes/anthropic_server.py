"""A real HTTP server on 127.0.0.1 speaking the Anthropic Messages API, for tests and benchmarks.

    with FakeAnthropicServer([text("hello"), error(429, retry_after=0), text("again")]) as srv:
        model = AnthropicModel("claude-test", api_key="sk-test", base_url=srv.base_url)
        ...
        srv.requests[0].body["messages"]   # what went over the wire

Requests are validated first, like the real API (tests/fakes/anthropic_rules.py: credentials and
anthropic-version headers, required fields, block shapes, tool_use/tool_result pairing, tool
definitions, tool_choice, at most 4 cache breakpoints): a request the real API refuses gets the
real status and error body (400 invalid_request_error, 401 authentication_error), consumes no
scripted reply, and its message is kept in `srv.refusals` and `RecordedRequest.refused`.
`FakeAnthropicServer(api_key="...")` also refuses any other key; `validate=False` turns the
rules off (for a test of the client's own handling of a malformed request only).

Replies come from the scripted queue first (`replies=` / `push`), then from `handler`
(a callable: request JSON -> Reply or a dict of Reply fields; it runs in a server thread, so
keep it thread-safe), so an end-to-end test can answer by inspecting the
request. With neither left the server answers 400 "fake server ran dry" (not retried by
clients) and counts it in `dry`: running dry is an error, never a silent default. A handler
that raises is answered with a 400 naming the exception, also kept in `handler_errors`.

Faults: any status with headers (`error(429, retry_after=0)`, `error(529)`), `hang(seconds)`
(sleeps longer than the client's timeout), `Reply.stream_error` (an SSE `error` event after
message_start), `stall(reply, seconds, after=n)` (a stream that goes silent after n events,
connection open), `cut(reply, after=n, clean=False)` (a stream whose connection closes after n
events, before message_stop; see tests/fakes/http_base.py), and latency: `base_latency` seconds +
output tokens / `tokens_per_second` (streamed replies spread their deltas over that time).

Every request is recorded as a `RecordedRequest` (method, path, lower-cased headers, parsed
JSON body, arrival / finish times from time.monotonic(), status sent, whether it streamed,
whether the client went away, whether it was refused, stalled or cut).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import pytest

from . import anthropic_rules
from .http_base import (  # noqa: F401  (re-exported: tests and the OpenAI fake import them from here)
    Dry,
    FakeHTTPServer,
    Fault,
    HandlerFailed,
    RecordedRequest,
    _Handler,
    cut,
    encode_sse,
    stall,
)

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
    {"type": "tool_use", "id", "name", "input"}, {"type": "thinking", "thinking", "signature"}. A tool_use
    `input` given as a str is streamed as it is, so a test can send JSON the SDK cannot parse."""

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

    def __init__(
        self,
        replies: Iterable[Any] = (),
        handler: Any = None,
        *,
        api_key: str | None = None,
        validate: bool = True,
        **kw: Any,
    ) -> None:
        self.api_key = api_key  # None: any non-empty key is accepted
        self.validate = validate
        super().__init__(replies, handler, **kw)

    @property
    def base_url(self) -> str:
        return self.origin

    def answer(self, h: _Handler, rec: RecordedRequest) -> None:
        if self.validate:
            refusal = anthropic_rules.validate(rec.headers, rec.body, api_key=self.api_key)
            if refusal is not None:
                self.refuse(rec, refusal.message)
                h.send_json(rec, refusal.status, refusal.body())
                return
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
        message = self._message(body, reply)
        delay = self.latency_for(reply, message["usage"].get("output_tokens") or 0)
        if body.get("stream"):
            self._stream(h, rec, message, reply, delay)
        else:
            self.sleep(delay)
            h.send_json(rec, 200, message, reply.headers)

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
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
        return {
            "id": self.next_id("msg_fake_"),
            "type": "message",
            "role": "assistant",
            "model": reply.model or body.get("model", "claude-fake"),
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _stream(self, h: _Handler, rec: RecordedRequest, message: dict[str, Any], reply: Reply, delay: float) -> None:
        """SSE as the API streams it: message_start, ping, per block content_block_start /
        _delta / _stop, message_delta (stop_reason, output usage), message_stop
        (https://docs.anthropic.com/en/docs/build-with-claude/streaming)."""
        usage = message["usage"]
        start_msg = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
        frames = [encode_sse("message_start", {"type": "message_start", "message": start_msg})]
        if reply.stream_error is not None:
            frames.append(encode_sse("error", {"type": "error", "error": reply.stream_error}))
        else:
            frames.append(encode_sse("ping", {"type": "ping"}))
            frames += [encode_sse(name, data) for name, data in _block_events(message["content"])]
            frames.append(encode_sse("message_delta", {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens")},
            }))
            frames.append(encode_sse("message_stop", {"type": "message_stop"}))
        first_delay = min(self.base_latency if reply.latency is None else reply.latency, delay)
        self.sleep(first_delay)
        h.start_sse(rec, reply.headers)
        self.play_stream(h, rec, frames, reply, (delay - first_delay) / max(1, len(frames) - 1))


def _block_events(content: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    for i, b in enumerate(content):
        kind = b["type"]
        if kind == "text":
            start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(b["text"])]
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            raw = b["input"] if isinstance(b["input"], str) else json.dumps(b["input"])  # a str: sent as is (broken JSON)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(b.get("thinking", ""))]
            deltas.append({"type": "signature_delta", "signature": b.get("signature", "sig_fake")})
        else:
            start, deltas = b, []
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    return events


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    """A fresh fake per test; script it with `anthropic_server.push(...)` or set `.handler`."""
    with FakeAnthropicServer() as srv:
        yield srv
