"""The provider adapters against the strict fakes: requests the real APIs refuse, and stream
faults, in the shapes an agent loop produces them.

Each xfail(strict=True) test is a library bug: it shows the adapter sending what the real API
refuses, or mishandling a broken stream. When the bug is fixed the test passes and strict xfail
turns that into a failure: remove the marker then. Models are built with `resolve_model` (the
public factory) so these tests do not depend on where the adapter modules live.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from subagents.model import Message, ModelError, ModelRequest, ModelResponse, TextBlock, ToolResultBlock, ToolSpec
from subagents.models.resolve import ModelSettings, Provider, resolve_model
from tests.fakes.anthropic_server import FakeAnthropicServer, cut, stall, text, tool_use
from tests.fakes.openai_server import ChatReply, FakeOpenAIServer, chat

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


@pytest.mark.xfail(strict=True, reason="library bug: a whitespace-only text block the model returned (Claude often "
                   "emits '\\n\\n' before a tool_use) is sent back verbatim; the API answers 400 'messages: text content "
                   "blocks must contain non-whitespace text'. message_to_api drops only empty text blocks.")
async def test_whitespace_only_text_from_the_model_is_not_sent_back() -> None:
    with FakeAnthropicServer([tool_use(("search", {"q": "trio"}), text="\n\n"), text("Trio is a library.")]) as srv:
        model = claude(srv)
        first = await model.complete(request(first_turn()))
        use = first.tool_uses()[0]
        second = await model.complete(request(next_turn(first_turn(), first, [ToolResultBlock(use.id, "results")])))
        assert second.text() == "Trio is a library."
        assert not srv.refusals


@pytest.mark.xfail(strict=True, reason="library bug: after stop_reason 'pause_turn' agent_loop resends the conversation "
                   "ending with the assistant turn; a final assistant text that ends in whitespace is sent verbatim and "
                   "the API answers 400 'messages: final assistant content cannot end with trailing whitespace'.")
async def test_paused_turn_is_resent_without_trailing_whitespace() -> None:
    with FakeAnthropicServer([text("Searching the web for that.\n", stop_reason="pause_turn"), text("Done.")]) as srv:
        model = claude(srv)
        first = await model.complete(request(first_turn()))
        resumed = [*first_turn(), Message("assistant", first.content)]  # agent_loop: add the turn, call again
        assert (await model.complete(request(resumed))).text() == "Done."
        assert not srv.refusals


# ---------------------------------------------------------------- Anthropic: broken streams


@pytest.mark.xfail(strict=True, reason="library bug: a stream whose connection drops mid-body makes the SDK raise "
                   "httpx2.RemoteProtocolError while iterating; AnthropicModel._attempt does not catch it, so it escapes "
                   "complete() raw instead of being retried as a connection error (the lead streams every call).")
async def test_stream_cut_mid_body_is_retried() -> None:
    with FakeAnthropicServer([cut(text("A long synthesis."), after=3), text("A long synthesis.")]) as srv:
        r = await claude(srv).complete(request(first_turn(), stream=True))
    assert r.text() == "A long synthesis." and len(srv.requests) == 2 and srv.requests[0].cut


@pytest.mark.xfail(strict=True, reason="library bug: a stream that stalls longer than the timeout makes the SDK raise "
                   "httpx2.ReadTimeout while iterating; it escapes AnthropicModel.complete() raw instead of being "
                   "retried as a timeout.")
async def test_stalled_stream_is_retried_as_a_timeout() -> None:
    with FakeAnthropicServer([stall(text("Late."), 30, after=2), text("On time.")]) as srv:
        start = time.monotonic()
        r = await claude(srv, timeout=0.5).complete(request(first_turn(), stream=True))
    assert r.text() == "On time." and srv.requests[0].stalled
    assert time.monotonic() - start < 5


@pytest.mark.xfail(strict=True, reason="library bug: a stream that ends before message_delta/message_stop (body "
                   "closed cleanly mid-message) is accepted: the SDK returns the partial snapshot with stop_reason None "
                   "and response_from_api turns None into 'end_turn', so a truncated answer passes as complete.")
async def test_stream_ended_before_message_stop_is_not_a_complete_answer() -> None:
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


# ---------------------------------------------------------------- OpenAI-compatible: requests the API refuses


@pytest.mark.xfail(strict=True, reason="library bug: an assistant turn with no text and no tool calls (the model "
                   "answered with empty content; agent_loop stores it as [TextBlock('')]) is sent as "
                   "{'role': 'assistant', 'content': None}; OpenAI answers 400 \"Invalid value for 'content': expected a "
                   "string, got null.\" (the Anthropic adapter sends a placeholder instead).")
async def test_empty_assistant_turn_is_not_sent_as_null_content() -> None:
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
