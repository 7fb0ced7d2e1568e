"""The OpenAI-compatible adapter (httpx) against a fake chat-completions server on 127.0.0.1."""

from __future__ import annotations

import dataclasses

import time
from typing import Any

import pytest

from subagents.model import (
    ToolChoice,
    Message,
    ModelAuthError,
    ModelError,
    ModelRequest,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from subagents.models.openai_compat import OpenAIModel
from tests.fakes.openai_server import ChatReply, FakeOpenAIServer, chat, chat_error, chat_tools
from tests.fakes.openai_server import openai_server  # noqa: F401  (fixture)

SEARCH = ToolSpec("search", "Search the web.", {"type": "object", "properties": {"q": {"type": "string"}}})


def make(srv: FakeOpenAIServer, **kw: Any) -> OpenAIModel:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("timeout", 5.0)
    return OpenAIModel("llama3.2", base_url=srv.base_url, **kw)


def history() -> list[Message]:
    return [
        Message("user", [TextBlock("Research trio.")]),
        Message("assistant", [TextBlock("Searching."), ToolUseBlock("call_a", "search", {"q": "trio"}), ToolUseBlock("call_b", "search", {"q": "anyio"})]),
        Message("user", [ToolResultBlock("call_a", "trio results"), ToolResultBlock("call_b", "boom", is_error=True), TextBlock("Go on.")]),
    ]


async def test_tool_calls_round_trip(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_tools(("search", {"q": "nurseries"}), ("search", '{"q": "cancel scopes"}'), content="More."))
    r = await make(openai_server).complete(ModelRequest(system="Be brief.", messages=history(), tools=[SEARCH], tool_choice=ToolChoice.any()))
    body = openai_server.requests[0].body
    assert openai_server.requests[0].path == "/v1/chat/completions"
    assert "authorization" not in openai_server.requests[0].headers  # Ollama: no key
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    calls = body["messages"][2]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"q": "trio"}', '{"q": "anyio"}']
    assert calls[0] == {"id": "call_a", "type": "function", "function": {"name": "search", "arguments": '{"q": "trio"}'}}
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_a", "content": "trio results"}
    assert body["messages"][4]["content"].startswith("ERROR:")
    assert body["messages"][5] == {"role": "user", "content": "Go on."}
    assert body["tools"] == [{"type": "function", "function": {"name": "search", "description": "Search the web.", "parameters": SEARCH.input_schema}}]
    assert body["tool_choice"] == "required" and body["max_tokens"] == 4096
    assert r.stop_reason == "tool_use" and r.text() == "More."
    assert [(u.name, u.input) for u in r.tool_uses()] == [("search", {"q": "nurseries"}), ("search", {"q": "cancel scopes"})]


@pytest.mark.parametrize(
    "choice, wire", [("auto", "auto"), ("none", "none"), ("search", {"type": "function", "function": {"name": "search"}})]
)
async def test_tool_choice_mapping(openai_server: FakeOpenAIServer, choice: str, wire: Any) -> None:
    openai_server.push(chat("ok"))
    await make(openai_server).complete(ModelRequest(system="", messages=history()[:1], tools=[SEARCH],
                                                    tool_choice=ToolChoice.tool(choice) if choice == "search" else ToolChoice(choice)))
    body = openai_server.requests[0].body
    assert body["tool_choice"] == wire
    assert body["messages"][0]["role"] == "user"  # no empty system message


@pytest.mark.parametrize(
    "finish, stop", [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "refusal"), (None, "end_turn")]
)
async def test_finish_reasons(openai_server: FakeOpenAIServer, finish: str | None, stop: str) -> None:
    openai_server.push(ChatReply(content="text", finish_reason=finish, usage={"prompt_tokens": 20, "completion_tokens": 3}))
    r = await make(openai_server).complete(ModelRequest(system="s", messages=history()[:1]))
    assert r.stop_reason == stop and r.text() == "text"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (20, 3)


async def test_tool_calls_with_finish_stop_are_tool_use(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_tools(("search", {"q": "x"}), finish_reason="stop"))  # Ollama does this
    r = await make(openai_server).complete(ModelRequest(system="s", messages=history()[:1], tools=[SEARCH]))
    assert r.stop_reason == "tool_use"


async def test_unparsable_arguments_are_kept_raw(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_tools(("search", '{"q": "unterminated')))
    r = await make(openai_server).complete(ModelRequest(system="s", messages=history()[:1], tools=[SEARCH]))
    assert r.tool_uses()[0].input == {"_raw": '{"q": "unterminated'}


async def test_cached_prompt_tokens_are_cache_reads(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(ChatReply(content="x", usage={"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 60}}))
    r = await make(openai_server).complete(ModelRequest(system="s", messages=history()[:1]))
    assert (r.usage.input_tokens, r.usage.cache_read_input_tokens, r.usage.output_tokens) == (40, 60, 5)


async def test_api_key_sent_as_bearer(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat("ok"))
    await make(openai_server, api_key="sk-oa-test").complete(ModelRequest(system="s", messages=history()[:1]))
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-oa-test"
    assert "sk-oa-test" not in repr(make(openai_server, api_key="sk-oa-test"))


async def test_429_then_success(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_error(429, retry_after=0.2), chat("ok"))
    events: list[dict[str, Any]] = []
    r = await make(openai_server).complete(ModelRequest(system="s", messages=history()[:1], on_retry=lambda n: events.append(dataclasses.asdict(n))))
    assert r.text() == "ok"
    assert events[0]["status"] == 429 and events[0]["wait"] == pytest.approx(0.2)
    first, second = openai_server.requests
    assert second.arrived - first.finished >= 0.15


async def test_5xx_until_retries_run_out(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_error(503), chat_error(502))
    with pytest.raises(ModelError, match="HTTP 502"):
        await make(openai_server, max_retries=1).complete(ModelRequest(system="s", messages=history()[:1]))
    assert len(openai_server.requests) == 2


async def test_auth_error_and_other_4xx(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_error(401, message="bad key"), chat_error(404, message="model not found"))
    model = make(openai_server)
    with pytest.raises(ModelAuthError, match="bad key"):
        await model.complete(ModelRequest(system="s", messages=history()[:1]))
    with pytest.raises(ModelError, match="404.*model not found"):
        await model.complete(ModelRequest(system="s", messages=history()[:1]))
    assert len(openai_server.requests) == 2


async def test_hang_times_out(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(ChatReply(content="late", hang=30))
    start = time.monotonic()
    with pytest.raises(ModelError, match="timeout"):
        await make(openai_server, timeout=0.3, max_retries=0).complete(ModelRequest(system="s", messages=history()[:1]))
    assert time.monotonic() - start < 3


async def test_connection_refused_is_retried_then_reported() -> None:
    with FakeOpenAIServer() as srv:
        url = srv.base_url
    events: list[dict[str, Any]] = []
    model = OpenAIModel("m", base_url=url, max_retries=1, backoff_base=0.01, timeout=2)
    with pytest.raises(ModelError, match="connection_error"):
        await model.complete(ModelRequest(system="s", messages=history()[:1], on_retry=lambda n: events.append(dataclasses.asdict(n))))
    assert events[0]["status"] == "connection_error"
