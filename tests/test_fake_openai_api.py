"""The fake chat-completions API, through httpx (the client the OpenAI adapter uses): it refuses
what OpenAI refuses with OpenAI's error shape, and streams as OpenAI streams.

The streaming tests read the SSE body with plain httpx and check what a streaming client relies
on: `data:` lines of chat.completion.chunk objects, the role in the first delta, tool calls
keyed by `index` with id and name once and the arguments in fragments, one chunk with
finish_reason, the usage chunk (`choices: []`) only when asked for, and `data: [DONE]` last.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.fakes.openai_server import ChatReply, FakeOpenAIServer, chat, chat_error, chat_tools, cut, stall

SEARCH = {"type": "function", "function": {"name": "search", "description": "Search.",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}


def call(id: str, name: str = "search", arguments: Any = '{"q": "x"}') -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def body(**kw: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], **kw}


@pytest.fixture
def srv():
    with FakeOpenAIServer() as s:
        yield s


async def post(srv: FakeOpenAIServer, payload: Any, **kw: Any) -> httpx.Response:
    async with httpx.AsyncClient(timeout=kw.pop("timeout", 5.0)) as c:
        return await c.post(srv.base_url + "/chat/completions", json=payload, **kw)


async def refused(srv: FakeOpenAIServer, payload: Any) -> dict[str, Any]:
    r = await post(srv, payload)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["type"] == "invalid_request_error"
    assert err["code"] is None or isinstance(err["code"], str)
    assert srv.requests[-1].refused == err["message"]
    return err


# ---------------------------------------------------------------- error shape


@pytest.mark.parametrize("status, code", [(401, "invalid_api_key"), (404, "model_not_found"), (429, "rate_limit_exceeded"), (500, None)])
async def test_scripted_errors_have_the_real_shape(srv: FakeOpenAIServer, status: int, code: str | None) -> None:
    srv.push(chat_error(status, message="nope"))
    r = await post(srv, body())
    assert r.status_code == status
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"] == "nope" and err["code"] == code


async def test_key_is_checked_when_the_fake_has_one() -> None:
    with FakeOpenAIServer([chat("ok")], api_key="sk-oa") as s:
        r = await post(s, body(), headers={"authorization": "Bearer sk-other"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
        r = await post(s, body(), headers={"authorization": "Bearer sk-oa"})
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "ok"


# ---------------------------------------------------------------- refusals


async def test_required_fields(srv: FakeOpenAIServer) -> None:
    assert (await refused(srv, {"messages": [{"role": "user", "content": "hi"}]}))["message"] == "you must provide a model parameter"
    err = await refused(srv, {"model": "m"})
    assert (err["param"], err["code"]) == ("messages", "missing_required_parameter")
    err = await refused(srv, body(messages=[]))
    assert (err["param"], err["code"]) == ("messages", "empty_array")
    err = await refused(srv, body(max_tokens=0))
    assert (err["param"], err["code"]) == ("max_tokens", "integer_below_min_value")


async def test_unknown_role(srv: FakeOpenAIServer) -> None:
    err = await refused(srv, body(messages=[{"role": "model", "content": "hi"}]))
    assert err["param"] == "messages[0].role" and err["code"] == "invalid_value"


async def test_tool_message_without_a_preceding_tool_call(srv: FakeOpenAIServer) -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
                {"role": "tool", "tool_call_id": "call_1", "content": "r"}]
    err = await refused(srv, body(messages=messages))
    assert err["message"] == ("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                              "message with 'tool_calls'.")
    assert err["param"] == "messages.[2].role" and err["code"] is None


async def test_tool_message_answering_an_older_assistant(srv: FakeOpenAIServer) -> None:
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call("call_1")]},
                {"role": "tool", "tool_call_id": "call_1", "content": "r"},
                {"role": "user", "content": "more"},
                {"role": "tool", "tool_call_id": "call_1", "content": "again"}]
    assert (await refused(srv, body(messages=messages, tools=[SEARCH])))["param"] == "messages.[4].role"


@pytest.mark.parametrize("after", [[{"role": "user", "content": "next"}], []])
async def test_every_tool_call_must_be_answered(srv: FakeOpenAIServer, after: list[dict[str, Any]]) -> None:
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call("call_1"), call("call_2")]},
                {"role": "tool", "tool_call_id": "call_1", "content": "r"}, *after]
    err = await refused(srv, body(messages=messages, tools=[SEARCH]))
    assert err["message"] == ("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                              "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2")
    assert err["param"] == "messages.[1].role"


async def test_answered_tool_calls_are_accepted(srv: FakeOpenAIServer) -> None:
    srv.push(chat("done"))
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call("call_1"), call("call_2")]},
                {"role": "tool", "tool_call_id": "call_2", "content": "r2"},
                {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
                {"role": "user", "content": "go on"}]
    r = await post(srv, body(messages=messages, tools=[SEARCH], tool_choice="auto"))
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "done"


async def test_assistant_message_needs_content_or_tool_calls(srv: FakeOpenAIServer) -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}, {"role": "user", "content": "?"}]
    err = await refused(srv, body(messages=messages))
    assert err["message"] == "Invalid value for 'content': expected a string, got null."
    assert err["param"] == "messages.[1].content"


async def test_tool_call_arguments_must_be_a_string(srv: FakeOpenAIServer) -> None:
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call("call_1", arguments={"q": "x"})]},
                {"role": "tool", "tool_call_id": "call_1", "content": "r"}]
    err = await refused(srv, body(messages=messages, tools=[SEARCH]))
    assert err["param"] == "messages[1].tool_calls[0].function.arguments" and err["code"] == "invalid_type"


async def test_tools_and_tool_choice(srv: FakeOpenAIServer) -> None:
    bad_name = {"type": "function", "function": {"name": "web.search"}}
    assert (await refused(srv, body(tools=[bad_name])))["param"] == "tools[0].function.name"
    err = await refused(srv, body(tool_choice="required"))
    assert err["message"] == "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
    assert (await refused(srv, body(tools=[SEARCH], tool_choice="any")))["code"] == "invalid_value"
    err = await refused(srv, body(tools=[SEARCH], tool_choice={"type": "function", "function": {"name": "fetch"}}))
    assert err["param"] == "tool_choice"


async def test_stream_options_need_stream(srv: FakeOpenAIServer) -> None:
    err = await refused(srv, body(stream_options={"include_usage": True}))
    assert err["param"] == "stream_options"


# ---------------------------------------------------------------- streaming


async def read_stream(srv: FakeOpenAIServer, payload: dict[str, Any], **kw: Any) -> tuple[list[Any], list[str]]:
    """The `data:` payloads of the response (parsed JSON, or the raw string), and every line."""
    datas: list[Any] = []
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=kw.pop("timeout", 5.0)) as c:
        async with c.stream("POST", srv.base_url + "/chat/completions", json=payload) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            async for line in r.aiter_lines():
                lines.append(line)
                if line.startswith("data: "):
                    raw = line[len("data: "):]
                    datas.append(raw if raw == "[DONE]" else json.loads(raw))
    return datas, lines


async def test_stream_text_chunks_and_done(srv: FakeOpenAIServer) -> None:
    srv.push(chat("Trio is a structured concurrency library."))
    datas, lines = await read_stream(srv, body(stream=True))
    assert datas[-1] == "[DONE]"
    assert all(line == "" or line.startswith("data: ") for line in lines)  # no named events
    chunks = datas[:-1]
    assert all(c["object"] == "chat.completion.chunk" and c["model"] == "gpt-test" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert all("usage" not in c for c in chunks)  # only with stream_options.include_usage
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "Trio is a structured concurrency library."
    assert len([c for c in chunks if c["choices"][0]["delta"].get("content")]) > 1  # really in pieces
    finishes = [c["choices"][0]["finish_reason"] for c in chunks]
    assert finishes[-1] == "stop" and set(finishes[:-1]) == {None}
    assert chunks[-1]["choices"][0]["delta"] == {}


async def test_stream_tool_calls_by_index_with_fragmented_arguments(srv: FakeOpenAIServer) -> None:
    srv.push(chat_tools(("search", {"q": "trio nurseries"}), ("search", {"q": "cancel scopes", "k": 3})))
    datas, _ = await read_stream(srv, body(stream=True, tools=[SEARCH]))
    calls: dict[int, dict[str, Any]] = {}
    fragments: dict[int, int] = {}
    for c in datas[:-1]:
        for tc in c["choices"][0]["delta"].get("tool_calls") or []:
            slot = calls.setdefault(tc["index"], {"id": None, "name": None, "arguments": ""})
            if "id" in tc:
                assert slot["id"] is None, "id is sent once, in the call's first chunk"
                slot["id"], slot["name"] = tc["id"], tc["function"]["name"]
                assert tc["type"] == "function"
            slot["arguments"] += tc["function"].get("arguments", "")
            fragments[tc["index"]] = fragments.get(tc["index"], 0) + 1
    assert sorted(calls) == [0, 1]
    assert [json.loads(calls[i]["arguments"]) for i in (0, 1)] == [{"q": "trio nurseries"}, {"q": "cancel scopes", "k": 3}]
    assert all(calls[i]["id"].startswith("call_") and calls[i]["name"] == "search" for i in (0, 1))
    assert calls[0]["id"] != calls[1]["id"]
    assert all(n > 2 for n in fragments.values())  # the arguments came in several pieces
    assert datas[-2]["choices"][0]["finish_reason"] == "tool_calls"


async def test_stream_usage_chunk_only_when_asked(srv: FakeOpenAIServer) -> None:
    srv.push(ChatReply(content="ok", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    datas, _ = await read_stream(srv, body(stream=True, stream_options={"include_usage": True}))
    assert datas[-1] == "[DONE]"
    last = datas[-2]
    assert last["choices"] == [] and last["usage"] == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    assert all(c["usage"] is None for c in datas[:-2])
    assert datas[-3]["choices"][0]["finish_reason"] == "stop"


async def test_non_streaming_reply_is_unchanged(srv: FakeOpenAIServer) -> None:
    srv.push(chat_tools(("search", {"q": "x"}), content="Looking."))
    r = await post(srv, body(tools=[SEARCH]))
    payload = r.json()
    assert payload["object"] == "chat.completion"
    message = payload["choices"][0]["message"]
    assert message["content"] == "Looking." and json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"q": "x"}


async def test_stream_cut_mid_body(srv: FakeOpenAIServer) -> None:
    srv.push(cut(chat("a reply that never ends"), after=2))
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        await read_stream(srv, body(stream=True))
    assert srv.requests[0].cut


async def test_clean_cut_has_no_done(srv: FakeOpenAIServer) -> None:
    srv.push(cut(chat("a reply that never ends"), after=3, clean=True))
    datas, _ = await read_stream(srv, body(stream=True))
    assert "[DONE]" not in datas and len(datas) == 3
    assert all(c["choices"][0]["finish_reason"] is None for c in datas)


async def test_stalled_stream_trips_a_read_timeout(srv: FakeOpenAIServer) -> None:
    srv.push(stall(chat("slow"), 30, after=1))
    start = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        await read_stream(srv, body(stream=True), timeout=0.4)
    assert time.monotonic() - start < 5 and srv.requests[0].stalled
