"""The fake Messages API refuses what the real one refuses, seen through the real anthropic SDK.

Each refusal test sends a request the real API answers with 400 (or 401) through
`anthropic.AsyncAnthropic(base_url=fake)` and checks the status, the error type and the message
(tests/fakes/anthropic_rules.py names the source of each rule). Requests the SDK cannot build
(no key, no anthropic-version header) go through httpx. The stream-fault tests consume the
fake's SSE stream with the SDK.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx
import pytest

from subagents.model import ModelError, ToolSpec
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, cut, stall, text, tool_use
from tests.fakes.anthropic_server import anthropic_server  # noqa: F401  (fixture)
from tests.test_anthropic_model import SEARCH as SEARCH_SPEC, make, req

KEY = "sk-ant-fake-0001"
MODEL = "claude-test"
SEARCH = {"name": "search", "description": "Search.", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}
EPHEMERAL = {"type": "ephemeral"}


def client(srv: FakeAnthropicServer, **kw: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=kw.pop("api_key", KEY), base_url=srv.base_url, max_retries=0, **kw)


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def txt(s: str, **kw: Any) -> dict[str, Any]:
    return {"type": "text", "text": s, **kw}


def use(id: str, name: str = "search", input: Any = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": {"q": "x"} if input is None else input}


def result(id: str, content: Any = "found") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id, "content": content}


def params(**kw: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": [user(txt("hi"))], **kw}


async def refusal(srv: FakeAnthropicServer, **kw: Any) -> str:
    """Send params(**kw) with the SDK; assert a 400 invalid_request_error; return its message."""
    async with client(srv) as c:
        with pytest.raises(anthropic.BadRequestError) as info:
            await c.messages.create(**params(**kw))
    err = info.value
    assert err.status_code == 400
    assert err.body["type"] == "error" and err.body["error"]["type"] == "invalid_request_error"
    assert srv.requests[-1].refused == err.body["error"]["message"]
    return err.body["error"]["message"]


async def accepted(srv: FakeAnthropicServer, **kw: Any) -> None:
    srv.push(text("ok"))
    async with client(srv) as c:
        message = await c.messages.create(**params(**kw))
    assert message.content[0].text == "ok" and srv.requests[-1].refused is None


@pytest.fixture
def srv():
    with FakeAnthropicServer() as s:
        yield s


# ---------------------------------------------------------------- headers


async def test_no_credentials_is_401_authentication_error(srv: FakeAnthropicServer) -> None:
    async with httpx.AsyncClient() as c:  # the SDK refuses to send a request without a key
        r = await c.post(srv.base_url + "/v1/messages", json=params(), headers={"anthropic-version": "2023-06-01"})
    assert r.status_code == 401
    assert r.json()["type"] == "error"
    assert r.json()["error"] == {"type": "authentication_error", "message": "x-api-key header is required"}


async def test_wrong_key_is_401_through_the_sdk() -> None:
    with FakeAnthropicServer([text("never")], api_key="sk-right") as s:
        async with client(s, api_key="sk-wrong") as c:
            with pytest.raises(anthropic.AuthenticationError) as info:
                await c.messages.create(**params())
        assert info.value.status_code == 401
        assert info.value.body["error"] == {"type": "authentication_error", "message": "invalid x-api-key"}
        assert len(s.replies) == 1  # a refused request takes no scripted reply
        async with client(s, api_key="sk-right") as c:
            assert (await c.messages.create(**params())).content[0].text == "never"


@pytest.mark.parametrize("headers", [{"x-api-key": KEY}, {"authorization": f"Bearer {KEY}"}])
async def test_anthropic_version_header_is_required(srv: FakeAnthropicServer, headers: dict[str, str]) -> None:
    async with httpx.AsyncClient() as c:
        r = await c.post(srv.base_url + "/v1/messages", json=params(), headers=headers)
    assert r.status_code == 400
    assert r.json()["error"] == {"type": "invalid_request_error", "message": "anthropic-version: header is required"}


# ---------------------------------------------------------------- required fields


async def test_missing_max_tokens(srv: FakeAnthropicServer) -> None:
    body = params()
    del body["max_tokens"]
    async with httpx.AsyncClient() as c:  # the SDK will not build this request
        r = await c.post(srv.base_url + "/v1/messages", json=body, headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"})
    assert r.status_code == 400 and r.json()["error"]["message"] == "max_tokens: Field required"


async def test_max_tokens_must_be_positive(srv: FakeAnthropicServer) -> None:
    assert await refusal(srv, max_tokens=0) == "max_tokens: Input should be greater than or equal to 1"


async def test_messages_must_not_be_empty(srv: FakeAnthropicServer) -> None:
    assert await refusal(srv, messages=[]) == "messages: at least one message is required"


async def test_empty_model_name(srv: FakeAnthropicServer) -> None:
    assert await refusal(srv, model="") == "model: String should have at least 1 character"


# ---------------------------------------------------------------- messages and blocks


async def test_system_is_not_a_message_role(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, messages=[{"role": "system", "content": "be brief"}, user(txt("hi"))])
    assert msg == "messages.0.role: Input should be 'user' or 'assistant'"


@pytest.mark.parametrize("content", ["", []])
async def test_empty_message_content(srv: FakeAnthropicServer, content: Any) -> None:
    msg = await refusal(srv, messages=[{"role": "user", "content": content}])
    assert msg == "messages.0: all messages must have non-empty content except for the optional final assistant message"


async def test_empty_text_block(srv: FakeAnthropicServer) -> None:
    assert await refusal(srv, messages=[user(txt(""))]) == "messages: text content blocks must be non-empty"


async def test_whitespace_only_text_block(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, messages=[user(txt("hi")), assistant(txt("\n\n"), use("toolu_1")), user(result("toolu_1"))],
                        tools=[SEARCH])
    assert msg == "messages: text content blocks must contain non-whitespace text"


async def test_tool_use_input_must_be_an_object(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, messages=[user(txt("hi")), assistant(use("toolu_1", input="q=x")), user(result("toolu_1"))],
                        tools=[SEARCH])
    assert msg == "messages.1.content.0.tool_use.input: Input should be a valid dictionary"


async def test_final_assistant_prefill_cannot_end_with_whitespace(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, messages=[user(txt("hi")), assistant(txt("The answer is "))])
    assert msg == "messages: final assistant content cannot end with trailing whitespace"


async def test_what_the_api_accepts_is_accepted(srv: FakeAnthropicServer) -> None:
    # consecutive same-role turns are merged by the API, a string content is one text block,
    # a final assistant turn is a prefill, text may follow tool results, a system prompt may be blocks
    await accepted(srv, messages=[user(txt("hi")), {"role": "user", "content": "and more"}])
    await accepted(srv, messages=[user(txt("hi")), assistant(txt("The answer is"))])
    await accepted(srv, messages=[user(txt("hi")), assistant(txt("Looking."), use("toolu_1")),
                                  user(result("toolu_1"), txt("Go on."))], tools=[SEARCH])
    await accepted(srv, system=[txt("Be brief.")], tools=[dict(SEARCH, name="x" * 100)])


# ---------------------------------------------------------------- tool_use / tool_result pairing


async def test_tool_result_without_tool_use(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, messages=[user(txt("hi")), assistant(txt("ok")), user(result("toolu_9"))])
    assert msg == ("messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. "
                   "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")


async def test_tool_use_not_answered_in_the_next_message(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, messages=[user(txt("hi")), assistant(use("toolu_1"), use("toolu_2")), user(result("toolu_1"))],
                        tools=[SEARCH])
    assert msg == ("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. "
                   "Each `tool_use` block must have a corresponding `tool_result` block in the next message.")


async def test_text_before_tool_result_is_refused(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, messages=[user(txt("hi")), assistant(use("toolu_1")), user(txt("Here:"), result("toolu_1"))],
                        tools=[SEARCH])
    assert msg.startswith("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.")


async def test_tool_result_must_answer_the_immediately_preceding_assistant(srv: FakeAnthropicServer) -> None:
    messages = [user(txt("hi")), assistant(use("toolu_1")), user(result("toolu_1")),
                assistant(txt("More?")), user(result("toolu_1"))]
    msg = await refusal(srv, messages=messages, tools=[SEARCH])
    assert msg.startswith("messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1.")


# ---------------------------------------------------------------- tools, tool_choice, caching


@pytest.mark.parametrize("name", ["web.search", "has space", "", "x" * 129])
async def test_tool_name_pattern(srv: FakeAnthropicServer, name: str) -> None:
    msg = await refusal(srv, tools=[dict(SEARCH, name=name)])
    assert msg == "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"


async def test_input_schema_must_be_an_object_schema(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, tools=[dict(SEARCH, input_schema={"type": "string"})])
    assert msg == "tools.0.custom.input_schema.type: Input should be 'object'"
    bare = {k: v for k, v in SEARCH.items() if k != "input_schema"}
    assert await refusal(srv, tools=[bare]) == "tools.0.custom.input_schema: Field required"


async def test_tool_names_must_be_unique(srv: FakeAnthropicServer) -> None:
    assert await refusal(srv, tools=[SEARCH, SEARCH]) == "tools: Tool names must be unique."


async def test_tool_choice_names_a_provided_tool(srv: FakeAnthropicServer) -> None:
    msg = await refusal(srv, tools=[SEARCH], tool_choice={"type": "tool", "name": "fetch"})
    assert msg.startswith("tool_choice: tool 'fetch' is not one of the provided tools")
    msg = await refusal(srv, tools=[SEARCH], tool_choice={"type": "required"})
    assert msg.startswith("tool_choice: Input tag does not match any of the expected tags")
    for choice in ({"type": "auto"}, {"type": "any"}, {"type": "none"}, {"type": "tool", "name": "search"}):
        await accepted(srv, tools=[SEARCH], tool_choice=choice)


async def test_at_most_four_cache_breakpoints(srv: FakeAnthropicServer) -> None:
    tools = [dict(SEARCH, cache_control=EPHEMERAL)]
    system = [txt("Be brief.", cache_control=EPHEMERAL)]
    # the fifth is inside a tool_result's content: nested blocks count too
    messages = [user(txt("a", cache_control=EPHEMERAL)), assistant(use("toolu_1")),
                user({"type": "tool_result", "tool_use_id": "toolu_1", "content": [txt("r", cache_control=EPHEMERAL)]},
                     txt("b", cache_control=EPHEMERAL))]
    msg = await refusal(srv, tools=tools, system=system, messages=messages)
    assert msg == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    messages[0] = user(txt("a"))
    await accepted(srv, tools=tools, system=system, messages=messages)


# ---------------------------------------------------------------- streaming through the SDK


async def test_stream_is_assembled_by_the_sdk(srv: FakeAnthropicServer) -> None:
    srv.push(tool_use(("search", {"q": "trio"}), text="Looking it up."))
    async with client(srv) as c:
        async with c.messages.stream(**params(tools=[SEARCH])) as s:
            kinds = [event.type async for event in s]
            message = await s.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"q": "trio"}


async def test_stalled_stream_trips_the_clients_read_timeout(srv: FakeAnthropicServer) -> None:
    srv.push(stall(text("a long answer"), 30, after=2))
    start = time.monotonic()
    async with client(srv, timeout=0.5) as c:
        with pytest.raises(Exception) as info:
            async with c.messages.stream(**params()) as s:
                await s.get_final_message()
    assert "Timeout" in type(info.value).__name__, repr(info.value)
    assert time.monotonic() - start < 5
    assert srv.requests[0].stalled and srv.requests[0].status == 200


async def test_stall_shorter_than_the_timeout_only_delays(srv: FakeAnthropicServer) -> None:
    srv.push(stall(text("late but whole"), 0.3, after=3))
    start = time.monotonic()
    async with client(srv, timeout=5) as c:
        async with c.messages.stream(**params()) as s:
            message = await s.get_final_message()
    assert message.content[0].text == "late but whole" and message.stop_reason == "end_turn"
    assert time.monotonic() - start >= 0.3


async def test_stream_cut_mid_body_is_a_transport_error(srv: FakeAnthropicServer) -> None:
    srv.push(cut(text("never finished"), after=3))
    async with client(srv) as c:
        with pytest.raises(Exception) as info:
            async with c.messages.stream(**params()) as s:
                await s.get_final_message()
    assert "incomplete chunked read" in str(info.value)
    assert srv.requests[0].cut


async def test_clean_cut_ends_the_stream_without_message_stop(srv: FakeAnthropicServer) -> None:
    srv.push(cut(text("never finished"), after=4, clean=True))
    async with client(srv) as c:
        async with c.messages.stream(**params()) as s:
            kinds = [event.type async for event in s]
    assert "message_stop" not in kinds and "message_delta" not in kinds
    assert kinds[:2] == ["message_start", "content_block_start"]


# ---------------------------------------------------------------- the fake's own test helpers (moved from test_anthropic_model.py)


async def test_dry_fake_is_an_error(anthropic_server: FakeAnthropicServer) -> None:
    with pytest.raises(ModelError, match="ran dry"):
        await make(anthropic_server).complete(req())
    assert anthropic_server.dry == 1


async def test_handler_decides_by_inspecting_request() -> None:
    def handler(body: dict[str, Any]) -> Reply:
        names = [t["name"] for t in body.get("tools", [])]
        return text("lead" if "delegate" in names else "subagent")

    with FakeAnthropicServer(handler=handler) as srv:
        model = make(srv)
        lead = await model.complete(req(tools=[ToolSpec("delegate", "d", {"type": "object"})]))
        sub = await model.complete(req(tools=[SEARCH_SPEC]))
    assert (lead.text(), sub.text()) == ("lead", "subagent")


async def test_failing_handler_is_reported_not_hidden() -> None:
    def handler(body: dict[str, Any]) -> Reply:
        raise KeyError("no rule for this request")

    with FakeAnthropicServer(handler=handler) as srv:
        with pytest.raises(ModelError, match="fake handler raised KeyError"):
            await make(srv).complete(req())
    assert srv.handler_errors == ["KeyError: 'no rule for this request'"]
