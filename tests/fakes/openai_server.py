"""A real HTTP server on 127.0.0.1 speaking OpenAI chat completions (POST /v1/chat/completions).

    with FakeOpenAIServer([chat("hi"), chat_tools(("search", {"q": "x"}))]) as srv:
        model = OpenAIModel("llama3", base_url=srv.base_url)   # base_url ends in /v1

Same machinery as the Anthropic fake (tests/fakes/http_base.py): scripted queue, then
`handler(request_json) -> ChatReply`, dry -> 400 and `srv.dry += 1`; faults via `status`,
`headers`, `hang`, `latency`; every request recorded in `srv.requests`.

Requests are validated first (tests/fakes/openai_rules.py: required fields, message shapes,
tool-message pairing, tools, tool_choice, stream_options); a refused request gets a 400 with the
real error body {"error": {"message", "type", "param", "code"}} (`code` a string or null), uses
no scripted reply and is kept in `srv.refusals`. `FakeOpenAIServer(api_key="...")` also requires
`Authorization: Bearer <key>`.

With `"stream": true` the reply is streamed as the API streams it: `data: {chat.completion.chunk}`
lines (first delta carries the role, then content pieces, then each tool call: id and name, its
arguments in fragments), a chunk with `finish_reason`, a usage chunk (`choices: []`) when
`stream_options.include_usage` is true, then `data: [DONE]`. Stream faults: `stall(reply,
seconds, after=n)` and `cut(reply, after=n, clean=False)` (a cut never sends `[DONE]`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import pytest

from . import openai_rules
from .http_base import (  # noqa: F401  (cut / stall re-exported for tests)
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

# status -> (error type, code) as OpenAI sends them (https://platform.openai.com/docs/guides/error-codes)
ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", None),
}


@dataclass
class ChatReply(Fault):
    content: str | None = None
    # {"name", "arguments": str | dict, "id"?}; a str is sent as is (so tests can send broken JSON)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = "stop"
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None


def chat(content: str, *, finish_reason: str = "stop", **usage: Any) -> ChatReply:
    return ChatReply(content=content, finish_reason=finish_reason, usage=usage)


def chat_tools(*calls: tuple[str, Any] | dict[str, Any], content: str | None = None, finish_reason: str = "tool_calls") -> ChatReply:
    tc = [c if isinstance(c, dict) else {"name": c[0], "arguments": c[1]} for c in calls]
    return ChatReply(content=content, tool_calls=tc, finish_reason=finish_reason)


def chat_error(status: int, *, retry_after: float | None = None, message: str | None = None,
               type: str | None = None, code: str | None = None) -> ChatReply:
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    default_type, default_code = ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    return ChatReply(status=status, headers=headers, error={
        "message": message or f"fake error {status}", "type": type or default_type, "param": None, "code": code or default_code,
    })


def _invalid(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


class FakeOpenAIServer(FakeHTTPServer):
    endpoint = "/v1/chat/completions"

    def __init__(self, replies: Iterable[Any] = (), handler: Any = None, *, api_key: str | None = None,
                 validate: bool = True, **kw: Any) -> None:
        self.api_key = api_key  # None: no credential needed (Ollama and other local servers)
        self.validate = validate
        super().__init__(replies, handler, **kw)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def answer(self, h: _Handler, rec: RecordedRequest) -> None:
        if self.validate:
            refusal = openai_rules.validate(rec.headers, rec.body, api_key=self.api_key)
            if refusal is not None:
                self.refuse(rec, refusal.message)
                h.send_json(rec, refusal.status, refusal.body())
                return
        body = rec.body if isinstance(rec.body, dict) else {}
        try:
            reply = self.take_reply(body)
        except Dry:
            h.send_json(rec, 400, _invalid("fake server ran dry: no scripted reply left"))
            return
        except HandlerFailed as err:
            h.send_json(rec, 400, _invalid(str(err)))
            return
        if isinstance(reply, dict):
            reply = ChatReply(**reply)
        rec.reply = reply
        self.sleep(reply.hang)
        if reply.status != 200:
            err = reply.error or chat_error(reply.status).error
            h.send_json(rec, reply.status, {"error": err}, reply.headers)
            return
        message = self._message(reply)
        usage = self._usage(body, message, reply)
        delay = self.latency_for(reply, usage["completion_tokens"])
        meta = {"id": self.next_id("chatcmpl-fake"), "created": int(time.time()), "model": reply.model or body.get("model", "fake")}
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(h, rec, meta, message, reply, usage if include_usage else None, delay)
            return
        self.sleep(delay)
        payload = {**meta, "object": "chat.completion",
                   "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}], "usage": usage}
        h.send_json(rec, 200, payload, reply.headers)

    def _message(self, reply: ChatReply) -> dict[str, Any]:
        calls = []
        for c in reply.tool_calls:
            args = c.get("arguments", {})
            calls.append({
                "id": c.get("id") or self.next_id("call_fake_"),
                "type": "function",
                "function": {"name": c["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
            })
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        return message

    @staticmethod
    def _usage(body: dict[str, Any], message: dict[str, Any], reply: ChatReply) -> dict[str, Any]:
        usage = {"prompt_tokens": max(1, len(json.dumps(body.get("messages", []))) // 4),
                 "completion_tokens": max(1, len(json.dumps(message)) // 4)}
        usage.update(reply.usage)
        usage["total_tokens"] = (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
        return usage

    def _stream(self, h: _Handler, rec: RecordedRequest, meta: dict[str, Any], message: dict[str, Any],
                reply: ChatReply, usage: dict[str, Any] | None, delay: float) -> None:
        chunks = stream_chunks(meta, message, reply.finish_reason, usage)
        frames = [encode_sse(None, c) for c in chunks] + [encode_sse(None, "[DONE]")]
        first_delay = min(self.base_latency if reply.latency is None else reply.latency, delay)
        self.sleep(first_delay)
        h.start_sse(rec, reply.headers)
        self.play_stream(h, rec, frames, reply, (delay - first_delay) / max(1, len(frames) - 1))


def stream_chunks(meta: dict[str, Any], message: dict[str, Any], finish_reason: str | None,
                  usage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The chat.completion.chunk objects for `message`, as the API streams them
    (https://platform.openai.com/docs/api-reference/chat-streaming): with include_usage, every
    chunk has `"usage": null` and a last chunk has `"choices": []` and the usage."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
    deltas += [{"content": piece} for piece in _pieces(message.get("content") or "")]
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call["function"]
        deltas.append({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                       "function": {"name": fn["name"], "arguments": ""}}]})
        deltas += [{"tool_calls": [{"index": i, "function": {"arguments": frag}}]} for frag in _pieces(fn["arguments"])]
    out = [_chunk(meta, d, None, usage is not None) for d in deltas]
    out.append(_chunk(meta, {}, finish_reason, usage is not None))
    if usage is not None:
        out.append({**meta, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    return out


def _chunk(meta: dict[str, Any], delta: dict[str, Any], finish_reason: str | None, with_usage: bool) -> dict[str, Any]:
    chunk = {**meta, "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}
    if with_usage:
        chunk["usage"] = None
    return chunk


def _pieces(s: str, n: int = 3) -> list[str]:
    if not s:
        return []
    size = max(1, -(-len(s) // n))
    return [s[i: i + size] for i in range(0, len(s), size)]


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv
