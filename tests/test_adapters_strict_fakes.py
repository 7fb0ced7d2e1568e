"""The provider adapters against the strict fakes: requests the real APIs refuse, and stream
faults, in the shapes an agent loop produces them.

The tests whose docstring says "regression" were xfail(strict=True) tests, each showing the
adapter send what the real API refuses or mishandle a broken stream; the bugs are fixed and the
tests keep them fixed. Models are built with `resolve_model` (the public factory) so these tests
do not depend on where the adapter modules live.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from subagents.model import (Message, ModelError, ModelRequest, ModelResponse, RetryNotice, StopReason, TextBlock,
                             ToolResultBlock, ToolSpec)
from subagents.models.resolve import ModelSettings, Provider, resolve_model
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, cut, stall, text, tool_use
from tests.fakes.openai_server import ChatReply, FakeOpenAIServer, chat, chat_tools

SEARCH = ToolSpec("search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
FAST = {"timeout": 1.0, "max_retries": 1, "backoff_base": 0.01}


def claude(srv: FakeAnthropicServer, **extra: Any):
    return resolve_model("claude-test", ModelSettings(provider=Provider.ANTHROPIC, anthropic_api_key="sk-ant-fake",
                                                      base_url=srv.base_url, **{**FAST, **extra}))


def local(srv: FakeOpenAIServer, **extra: Any):
    return resolve_model("llama-test", ModelSettings(provider=Provider.OPENAI, base_url=srv.base_url, **{**FAST, **extra}))


def first_turn() -> list[Message]:
    return [Message("user", [TextBlock("Research trio.")])]


def next_turn(history: list[Message], response: ModelResponse, results: list[Any]) -> list[Message]:
    """What agent_loop appends after a response: the assistant turn as returned, then the results."""
    return [*history, Message("assistant", response.content or [TextBlock("")]), Message("user", results)]


def request(messages: list[Message], **kw: Any) -> ModelRequest:
    return ModelRequest(system="You research.", messages=messages, tools=[SEARCH], **kw)


# ---------------------------------------------------------------- Anthropic: requests the API refuses


async def test_whitespace_only_text_from_the_model_is_not_sent_back() -> None:
    """Regression (was a library bug): a whitespace-only text block the model returned (Claude often emits
    '\\n\\n' before a tool_use) is sent back verbatim; the API answers 400 'messages: text content blocks
    must contain non-whitespace text'. message_to_api drops only empty text blocks."""
    with FakeAnthropicServer([tool_use(("search", {"q": "trio"}), text="\n\n"), text("Trio is a library.")]) as srv:
        model = claude(srv)
        first = await model.complete(request(first_turn()))
        use = first.tool_uses()[0]
        second = await model.complete(request(next_turn(first_turn(), first, [ToolResultBlock(use.id, "results")])))
        assert second.text() == "Trio is a library."
        assert not srv.refusals


async def test_paused_turn_is_resent_without_trailing_whitespace() -> None:
    """Regression (was a library bug): after stop_reason 'pause_turn' agent_loop resends the conversation
    ending with the assistant turn; a final assistant text that ends in whitespace is sent verbatim and the
    API answers 400 'messages: final assistant content cannot end with trailing whitespace'."""
    with FakeAnthropicServer([text("Searching the web for that.\n", stop_reason="pause_turn"), text("Done.")]) as srv:
        model = claude(srv)
        first = await model.complete(request(first_turn()))
        resumed = [*first_turn(), Message("assistant", first.content)]  # agent_loop: add the turn, call again
        assert (await model.complete(request(resumed))).text() == "Done."
        assert not srv.refusals


# ---------------------------------------------------------------- Anthropic: broken streams


async def test_stream_cut_mid_body_is_retried() -> None:
    """Regression (was a library bug): a stream whose connection drops mid-body makes the SDK raise
    httpx2.RemoteProtocolError while iterating; AnthropicModel._attempt does not catch it, so it escapes
    complete() raw instead of being retried as a connection error (the lead streams every call)."""
    with FakeAnthropicServer([cut(text("A long synthesis."), after=3), text("A long synthesis.")]) as srv:
        r = await claude(srv).complete(request(first_turn(), stream=True))
    assert r.text() == "A long synthesis." and len(srv.requests) == 2 and srv.requests[0].cut


async def test_stalled_stream_is_retried_as_a_timeout() -> None:
    """Regression (was a library bug): a stream that stalls longer than the timeout makes the SDK raise
    httpx2.ReadTimeout while iterating; it escapes AnthropicModel.complete() raw instead of being retried as
    a timeout."""
    with FakeAnthropicServer([stall(text("Late."), 30, after=2), text("On time.")]) as srv:
        start = time.monotonic()
        r = await claude(srv, timeout=0.5).complete(request(first_turn(), stream=True))
    assert r.text() == "On time." and srv.requests[0].stalled
    assert time.monotonic() - start < 5


async def test_stream_ended_before_message_stop_is_not_a_complete_answer() -> None:
    """Regression (was a library bug): a stream that ends before message_delta/message_stop (body closed
    cleanly mid-message) is accepted: the SDK returns the partial snapshot with stop_reason None and
    response_from_api turns None into 'end_turn', so a truncated answer passes as complete."""
    with FakeAnthropicServer([cut(text("The full answer, in several pieces."), after=4, clean=True),
                              text("The full answer, in several pieces.")]) as srv:
        try:
            r = await claude(srv).complete(request(first_turn(), stream=True))
        except ModelError:
            return  # refusing the truncated stream is also correct
    assert r.text() == "The full answer, in several pieces.", f"truncated answer accepted: {r.text()!r} ({r.stop_reason})"


async def test_hang_then_good_stream_is_retried() -> None:
    # the fault the adapter does handle: no headers within the timeout
    from tests.fakes.anthropic_server import hang

    with FakeAnthropicServer([hang(30), text("ok")]) as srv:
        r = await claude(srv, timeout=0.3).complete(request(first_turn(), stream=True))
    assert r.text() == "ok" and len(srv.requests) == 2


PLAN = {"query_type": "breadth_first", "rationale": "one task per part",
        "tasks": [{"objective": f"Part {i}: what does the documentation say about it?", "tools": ["search"],
                   "budget": {"max_tool_calls": 4}} for i in range(1, 4)]}


async def test_tool_input_cut_mid_json_is_never_a_reply() -> None:
    # The delegate input arrives in three input_json_delta pieces; the body ends cleanly after the
    # second (frames: message_start, ping, block_start, delta, delta | delta, block_stop, ...).
    notices: list[RetryNotice] = []
    with FakeAnthropicServer([cut(tool_use(("delegate", PLAN)), after=5, clean=True),
                              tool_use(("delegate", PLAN))]) as srv:
        r = await claude(srv).complete(request(first_turn(), stream=True, on_retry=notices.append))
    assert srv.requests[0].cut and len(srv.requests) == 2
    assert [u.input for u in r.tool_uses()] == [PLAN] and r.stop_reason is StopReason.TOOL_USE
    assert [n.status for n in notices] == ["incomplete_stream"]


async def test_stream_missing_only_message_stop_is_not_a_reply() -> None:
    # `after` past the end cuts right before the last event: message_delta (with its stop reason) came
    with FakeAnthropicServer([cut(text("First answer."), after=100, clean=True), text("Second answer.")]) as srv:
        r = await claude(srv).complete(request(first_turn(), stream=True))
    assert srv.requests[0].cut and r.text() == "Second answer."


async def test_reply_without_a_stop_reason_is_retried() -> None:
    notices: list[RetryNotice] = []
    with FakeAnthropicServer([Reply(content=[{"type": "text", "text": "Half"}], stop_reason=None),
                              text("Whole.")]) as srv:
        r = await claude(srv).complete(request(first_turn(), on_retry=notices.append))
    assert r.text() == "Whole." and r.stop_reason is StopReason.END_TURN and len(srv.requests) == 2
    assert [n.status for n in notices] == ["incomplete_stream"]


async def test_broken_streams_exhaust_retries_into_a_model_error() -> None:
    with FakeAnthropicServer([cut(text("One."), after=3), cut(text("Two."), after=4, clean=True)]) as srv:
        with pytest.raises(ModelError, match="giving up after 2 attempts; last error: incomplete_stream"):
            await claude(srv).complete(request(first_turn(), stream=True))


# ---------------------------------------------------------------- OpenAI-compatible: broken streams


async def test_openai_stream_cut_mid_body_is_retried() -> None:
    notices: list[RetryNotice] = []
    with FakeOpenAIServer([cut(chat("A long synthesis."), after=3), chat("A long synthesis.")]) as srv:
        r = await local(srv).complete(request(first_turn(), stream=True, on_retry=notices.append))
    assert r.text() == "A long synthesis." and srv.requests[0].cut and len(srv.requests) == 2
    assert all(q.body["stream"] is True and q.streamed for q in srv.requests)
    assert [n.status for n in notices] == ["connection_error"]


async def test_openai_stalled_stream_is_retried_as_a_timeout() -> None:
    notices: list[RetryNotice] = []
    with FakeOpenAIServer([stall(chat("Late."), 30, after=2), chat("On time.")]) as srv:
        start = time.monotonic()
        r = await local(srv, timeout=0.5).complete(request(first_turn(), stream=True, on_retry=notices.append))
    assert r.text() == "On time." and srv.requests[0].stalled
    assert [n.status for n in notices] == ["timeout"]
    assert time.monotonic() - start < 5


async def test_openai_stream_ended_before_done_is_not_a_reply() -> None:
    # the tool call's arguments come in three fragments; the body ends cleanly after the second
    calls = chat_tools(("search", {"q": "structured concurrency in trio"}))
    with FakeOpenAIServer([cut(calls, after=4, clean=True),
                           chat_tools(("search", {"q": "structured concurrency in trio"}))]) as srv:
        r = await local(srv).complete(request(first_turn(), stream=True))
    assert srv.requests[0].cut and len(srv.requests) == 2
    assert [(u.name, u.input) for u in r.tool_uses()] == [("search", {"q": "structured concurrency in trio"})]
    assert r.stop_reason is StopReason.TOOL_USE


async def test_openai_stream_assembles_text_tool_calls_and_usage() -> None:
    reply = chat_tools(("search", {"q": "nurseries"}), ("search", {"q": "cancel scopes"}), content="Two searches.")
    reply.usage = {"prompt_tokens": 120, "completion_tokens": 30}
    with FakeOpenAIServer([reply]) as srv:
        r = await local(srv).complete(request(first_turn(), stream=True))
    assert srv.requests[0].body["stream_options"] == {"include_usage": True}
    assert r.text() == "Two searches." and r.stop_reason is StopReason.TOOL_USE
    assert [u.input for u in r.tool_uses()] == [{"q": "nurseries"}, {"q": "cancel scopes"}]
    assert len({u.id for u in r.tool_uses()}) == 2
    assert (r.usage.input_tokens, r.usage.output_tokens) == (120, 30)


# ---------------------------------------------------------------- OpenAI-compatible: requests the API refuses


async def test_empty_assistant_turn_is_not_sent_as_null_content() -> None:
    """Regression (was a library bug): an assistant turn with no text and no tool calls (the model answered
    with empty content; agent_loop stores it as [TextBlock('')]) is sent as {'role': 'assistant', 'content':
    None}; OpenAI answers 400 "Invalid value for 'content': expected a string, got null." (the Anthropic
    adapter sends a placeholder instead)."""
    with FakeOpenAIServer([ChatReply(content=None), chat("Here are the findings.")]) as srv:
        model = local(srv)
        first = await model.complete(request(first_turn()))
        assert first.content == []
        history = next_turn(first_turn(), first, [TextBlock("Please submit your findings now.")])
        assert (await model.complete(request(history))).text() == "Here are the findings."
        assert not srv.refusals


async def test_tool_turns_pass_the_pairing_rules() -> None:
    # several calls in one turn, results plus text in the next user turn: accepted by the strict fake
    with FakeOpenAIServer() as srv:
        srv.push(ChatReply(tool_calls=[{"name": "search", "arguments": {"q": "a"}}, {"name": "search", "arguments": {"q": "b"}}],
                           finish_reason="tool_calls"), chat("done"))
        model = local(srv)
        first = await model.complete(request(first_turn()))
        results = [ToolResultBlock(u.id, f"result {u.input['q']}") for u in first.tool_uses()] + [TextBlock("Go on.")]
        assert (await model.complete(request(next_turn(first_turn(), first, results)))).text() == "done"
    assert not srv.refusals
    assert [m["role"] for m in srv.requests[1].body["messages"]] == ["system", "user", "assistant", "tool", "tool", "user"]
