"""A real HTTP server on 127.0.0.1 speaking OpenAI chat completions (POST /v1/chat/completions).

    with FakeOpenAIServer([chat("hi"), chat_tools(("search", {"q": "x"}))]) as srv:
        model = OpenAIModel("llama3", base_url=srv.base_url)   # base_url ends in /v1

Same machinery as the Anthropic fake (tests/fakes/anthropic_server.py): scripted queue, then
`handler(request_json) -> ChatReply`, dry -> 400 and `srv.dry += 1`; faults via `status`,
`headers`, `hang`, `latency`; every request recorded in `srv.requests`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import pytest

from .anthropic_server import Dry, FakeHTTPServer, HandlerFailed, Fault, RecordedRequest, _Handler


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


def chat_error(status: int, *, retry_after: float | None = None, message: str | None = None) -> ChatReply:
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return ChatReply(status=status, headers=headers, error={"message": message or f"fake error {status}", "type": "fake", "code": status})


class FakeOpenAIServer(FakeHTTPServer):
    endpoint = "/v1/chat/completions"

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def answer(self, h: _Handler, rec: RecordedRequest) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        try:
            reply = self.take_reply(body)
        except Dry:
            h.send_json(rec, 400, {"error": {"message": "fake server ran dry: no scripted reply left", "type": "invalid_request_error"}})
            return
        except HandlerFailed as err:
            h.send_json(rec, 400, {"error": {"message": str(err), "type": "invalid_request_error"}})
            return
        if isinstance(reply, dict):
            reply = ChatReply(**reply)
        rec.reply = reply
        self.sleep(reply.hang)
        if reply.status != 200:
            h.send_json(rec, reply.status, {"error": reply.error or {"message": f"fake error {reply.status}"}}, reply.headers)
            return
        calls = []
        for c in reply.tool_calls:
            args = c.get("arguments", {})
            calls.append(
                {
                    "id": c.get("id") or self.next_id("call_fake_"),
                    "type": "function",
                    "function": {"name": c["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
                }
            )
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        completion = max(1, len(json.dumps(message)) // 4)
        usage = {"prompt_tokens": max(1, len(json.dumps(body.get("messages", []))) // 4), "completion_tokens": completion}
        usage.update(reply.usage)
        usage["total_tokens"] = (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
        payload = {
            "id": self.next_id("chatcmpl-fake"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": usage,
        }
        self.sleep(self.latency_for(reply, usage["completion_tokens"]))
        h.send_json(rec, 200, payload, reply.headers)


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv
