"""The Claude adapter when the wire misbehaves: nothing listening, and streamed tool input that is
not usable JSON. The answer is always a `ModelError` the agent records (a subagent fails, its
siblings go on), never a raw exception from the SDK and never a tool call with made-up input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from subagents.model import Message, ModelError, ModelRequest, TextBlock, ToolSpec
from subagents.models.claude import AnthropicModel
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

SEARCH = ToolSpec("search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}})


def request(**kw: Any) -> ModelRequest:
    return ModelRequest(system="s", messages=[Message("user", [TextBlock("Research trio.")])], tools=[SEARCH], **kw)


def streamed_tool_input(raw: str) -> Reply:
    return Reply(content=[{"type": "tool_use", "id": "toolu_1", "name": "search", "input": raw}], stop_reason="tool_use")


async def test_nothing_listening_is_retried_then_reported() -> None:
    with FakeAnthropicServer() as srv:
        url = srv.base_url  # closed on leaving the block: connections are refused
    notices: list[dict[str, Any]] = []
    model = AnthropicModel("claude-test", api_key="k", base_url=url, max_retries=2, backoff_base=0.01, timeout=5)
    with pytest.raises(ModelError, match="giving up after 3 attempts; last error: connection_error"):
        await model.complete(request(on_retry=lambda n: notices.append(dataclasses.asdict(n))))
    assert [(n["status"], n["attempt"]) for n in notices] == [("connection_error", 1), ("connection_error", 2)]


@pytest.mark.parametrize("raw", ['{"q": tri}', "null"])
async def test_streamed_tool_input_that_is_not_json_is_a_model_error(raw: str) -> None:
    with FakeAnthropicServer() as srv:
        srv.push(*[streamed_tool_input(raw) for _ in range(3)])
        model = AnthropicModel("claude-test", api_key="k", base_url=srv.base_url, max_retries=2, backoff_base=0.01)
        with pytest.raises(ModelError, match="JSON"):
            await model.complete(request(stream=True))


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_input_that_is_not_an_object_is_a_model_error(stream: bool) -> None:
    raw = '["not", "an", "object"]'
    with FakeAnthropicServer() as srv:
        srv.push(*[streamed_tool_input(raw) if stream else
                   Reply(content=[{"type": "tool_use", "id": "toolu_1", "name": "search", "input": ["not", "an"]}],
                         stop_reason="tool_use") for _ in range(3)])
        model = AnthropicModel("claude-test", api_key="k", base_url=srv.base_url, max_retries=2, backoff_base=0.01)
        with pytest.raises(ModelError, match="not a JSON object"):
            await model.complete(request(stream=stream))


async def test_streamed_tool_input_cut_off_is_not_run_as_an_empty_call() -> None:
    with FakeAnthropicServer() as srv:
        srv.push(*[streamed_tool_input('{"q": "tri') for _ in range(3)])
        model = AnthropicModel("claude-test", api_key="k", base_url=srv.base_url, max_retries=2, backoff_base=0.01)
        try:
            response = await model.complete(request(stream=True))
        except ModelError:
            return
    assert response.tool_uses()[0].input == {"q": "tri"}, response.tool_uses()
