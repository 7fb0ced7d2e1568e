"""The real anthropic SDK against a fake Messages API server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest
import trio

from subagents.models.claude import AnthropicModel
from subagents.model import (
    Message,
    ModelAuthError,
    ModelError,
    ModelRequest,
    RetryNotice,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from subagents.models.ratelimit import RateLimiter
from subagents.models.resolve import ModelConfigError, ModelFactory, ModelSettings, Provider, default_models, resolve_model
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, error, hang, text, tool_use
from tests.fakes.anthropic_server import anthropic_server  # noqa: F401  (fixture)

KEY = "sk-ant-test-secret-0001"
SEARCH = ToolSpec("search", "Search the web.", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
FETCH = ToolSpec("fetch", "Fetch a URL.", {"type": "object", "properties": {"url": {"type": "string"}}})


def make(srv: FakeAnthropicServer, **kw: Any) -> AnthropicModel:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("timeout", 5.0)
    return AnthropicModel("claude-test", api_key=KEY, base_url=srv.base_url, **kw)


def req(*messages: Message, **kw: Any) -> ModelRequest:
    msgs = list(messages) or [Message("user", [TextBlock("What is trio?")])]
    return ModelRequest(system=kw.pop("system", "You are a researcher."), messages=msgs, **kw)


def recorder() -> tuple[list[tuple[str, dict[str, Any]]], Any]:
    """An `on_retry` that keeps what each retry notice said."""
    events: list[tuple[str, dict[str, Any]]] = []
    return events, lambda n: events.append(("model_retry", dataclasses.asdict(n)))


async def test_plain_text_and_usage(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(
        text("Trio is a library.", input_tokens=11, output_tokens=5, cache_creation_input_tokens=7, cache_read_input_tokens=None)
    )
    r = await make(anthropic_server).complete(req())
    assert r.text() == "Trio is a library."
    assert r.stop_reason == "end_turn"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (11, 5)
    assert (r.usage.cache_creation_input_tokens, r.usage.cache_read_input_tokens) == (7, 0)
    assert r.model == "claude-test"
    wire = anthropic_server.requests[0]
    assert wire.path == "/v1/messages"
    assert wire.body["model"] == "claude-test" and wire.body["max_tokens"] == 4096
    assert wire.body["system"][0]["text"] == "You are a researcher."
    assert "tools" not in wire.body and "tool_choice" not in wire.body
    assert "stream" not in wire.body or not wire.body["stream"]


@pytest.mark.parametrize("stop", ["max_tokens", "stop_sequence", "pause_turn", "refusal", "model_context_window_exceeded"])
async def test_stop_reason_passed_through(anthropic_server: FakeAnthropicServer, stop: str) -> None:
    anthropic_server.push(text("partial", stop_reason=stop))
    assert (await make(anthropic_server).complete(req())).stop_reason == stop


async def test_two_tool_uses_parsed_in_order(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(tool_use(("search", {"q": "trio nursery"}), ("fetch", {"url": "https://x.org"}), text="Let me look."))
    r = await make(anthropic_server).complete(req(tools=[SEARCH, FETCH]))
    assert r.stop_reason == "tool_use"
    assert r.text() == "Let me look."
    uses = r.tool_uses()
    assert [(u.name, u.input) for u in uses] == [("search", {"q": "trio nursery"}), ("fetch", {"url": "https://x.org"})]
    assert uses[0].id != uses[1].id and all(u.id.startswith("toolu_") for u in uses)


async def test_streaming_assembles_final_message(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(
        Reply(
            content=[
                {"type": "thinking", "thinking": "considering", "signature": "sig"},
                {"type": "text", "text": "A long synthesis with several pieces."},
                {"type": "tool_use", "name": "search", "input": {"q": "a \"quoted\" query", "n": [1, 2]}},
            ],
            stop_reason="tool_use",
            usage={"input_tokens": 40, "output_tokens": 33, "cache_read_input_tokens": 12},
        )
    )
    r = await make(anthropic_server).complete(req(tools=[SEARCH], stream=True))
    wire = anthropic_server.requests[0]
    assert wire.body["stream"] is True and wire.streamed
    assert [b.type for b in r.content] == ["text", "tool_use"]  # thinking skipped
    assert r.text() == "A long synthesis with several pieces."
    assert r.tool_uses()[0].input == {"q": 'a "quoted" query', "n": [1, 2]}
    assert r.stop_reason == "tool_use"
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cache_read_input_tokens) == (40, 33, 12)


async def test_thinking_blocks_skipped_in_json(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(Reply(content=[{"type": "thinking", "thinking": "hmm", "signature": "s"}, {"type": "text", "text": "ok"}]))
    r = await make(anthropic_server).complete(req())
    assert r.content == [TextBlock("ok")]


async def test_429_then_success_honours_retry_after(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(error(429, retry_after=0.4), text("done"))
    events, log = recorder()
    r = await make(anthropic_server).complete(req(on_retry=log))
    assert r.text() == "done"
    assert [k for k, _ in events] == ["model_retry"]
    data = events[0][1]
    assert data["status"] == 429 and data["attempt"] == 1 and data["wait"] == pytest.approx(0.4)
    first, second = anthropic_server.requests
    assert second.arrived - first.finished >= 0.35


async def test_retry_after_ms_preferred(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(error(529, retry_after=30, retry_after_ms=50), text("ok"))
    seen: list[RetryNotice] = []
    start = time.monotonic()
    assert (await make(anthropic_server).complete(req(on_retry=seen.append))).text() == "ok"
    assert time.monotonic() - start < 5
    assert seen[0].status == 529 and seen[0].wait == pytest.approx(0.05)


async def test_529_until_retries_run_out(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(*[error(529) for _ in range(3)])
    events, log = recorder()
    with pytest.raises(ModelError) as info:
        await make(anthropic_server, max_retries=2).complete(req(on_retry=log))
    assert not isinstance(info.value, ModelAuthError)
    assert "529" in str(info.value) and "3 attempts" in str(info.value)
    assert len(anthropic_server.requests) == 3
    assert [d["attempt"] for _, d in events] == [1, 2]


async def test_5xx_and_overloaded_stream_event_are_retried(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(
        error(500), Reply(stream_error={"type": "overloaded_error", "message": "Overloaded"}), text("finally")
    )
    events, log = recorder()
    r = await make(anthropic_server).complete(req(stream=True, on_retry=log))
    assert r.text() == "finally"
    assert [d["status"] for _, d in events] == [500, 529]


async def test_hung_response_times_out_quickly(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(hang(30), hang(30))
    events, log = recorder()
    start = time.monotonic()
    with pytest.raises(ModelError) as info:
        await make(anthropic_server, timeout=0.3, max_retries=1).complete(req(on_retry=log))
    assert time.monotonic() - start < 3
    assert "timeout" in str(info.value)
    assert events[0][1]["status"] == "timeout"
    assert len(anthropic_server.requests) == 2


async def test_hung_stream_times_out(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(hang(30))
    start = time.monotonic()
    with pytest.raises(ModelError, match="timeout"):
        await make(anthropic_server, timeout=0.3, max_retries=0).complete(req(stream=True))
    assert time.monotonic() - start < 3


@pytest.mark.parametrize("status, kind, match", [(401, ModelAuthError, "ANTHROPIC_API_KEY"),
                                                (403, ModelAuthError, "ANTHROPIC_API_KEY"),
                                                (400, ModelError, "400.*prompt is too long")])
async def test_client_errors_are_not_retried(anthropic_server: FakeAnthropicServer, status: int, kind: type,
                                             match: str) -> None:
    anthropic_server.push(error(status, message="prompt is too long"), text("never"))
    with pytest.raises(kind, match=match) as info:
        await make(anthropic_server).complete(req())
    assert len(anthropic_server.requests) == 1
    assert (type(info.value) is ModelAuthError) == (status != 400)


def conversation() -> list[Message]:
    return [
        Message("user", [TextBlock("Research trio.")]),
        Message("assistant", [TextBlock("Searching."), ToolUseBlock("toolu_1", "search", {"q": "trio"})]),
        Message("user", [ToolResultBlock("toolu_1", "results…"), TextBlock("")]),
        Message("assistant", [ToolUseBlock("toolu_2", "fetch", {"url": "https://t.org"})]),
        Message("user", [ToolResultBlock("toolu_2", "404 not found", is_error=True)]),
    ]


def breakpoints(body: dict[str, Any]) -> list[str]:
    found = []
    for i, t in enumerate(body.get("tools", [])):
        if "cache_control" in t:
            found.append(f"tools[{i}]")
    for i, s in enumerate(body.get("system", [])):
        if "cache_control" in s:
            found.append(f"system[{i}]")
    for i, m in enumerate(body["messages"]):
        for j, b in enumerate(m["content"]):
            if "cache_control" in b:
                found.append(f"messages[{i}][{j}]")
    return found


async def test_cache_control_placement_on_the_wire(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(text("ok"), text("ok"))
    model = make(anthropic_server)
    await model.complete(req(*conversation(), tools=[SEARCH, FETCH]))
    body = anthropic_server.requests[0].body
    # last tool, system, last block of the last message, last block of the previous user turn
    assert breakpoints(body) == ["tools[1]", "system[0]", "messages[2][0]", "messages[4][0]"]
    assert all(b == {"type": "ephemeral"} for b in [body["tools"][1]["cache_control"], body["system"][0]["cache_control"]])
    # the empty text block was not sent; tool results keep is_error
    assert body["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "results…", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][4]["content"][0]["is_error"] is True
    assert body["messages"][1]["content"][1] == {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "trio"}}
    # a first turn (one message) gets three breakpoints
    await model.complete(req(tools=[SEARCH]))
    assert breakpoints(anthropic_server.requests[1].body) == ["tools[0]", "system[0]", "messages[0][0]"]


@pytest.mark.parametrize(
    "choice, wire",
    [("auto", {"type": "auto"}), ("any", {"type": "any"}), ("none", {"type": "none"}), ("fetch", {"type": "tool", "name": "fetch"})],
)
async def test_tool_choice_mapping(anthropic_server: FakeAnthropicServer, choice: str, wire: dict[str, Any]) -> None:
    anthropic_server.push(text("ok"))
    tc = ToolChoice.tool(choice) if choice == "fetch" else ToolChoice(choice)
    await make(anthropic_server).complete(req(tools=[SEARCH, FETCH], tool_choice=tc))
    body = anthropic_server.requests[0].body
    assert body["tool_choice"] == wire
    assert body["tools"][0] == {"name": "search", "description": "Search the web.", "input_schema": SEARCH.input_schema}


async def test_concurrent_calls_overlap() -> None:
    """One model object serves parallel agents: its calls are not serialised (the limiter's part is in
    test_retry_limiter.py)."""
    with FakeAnthropicServer(handler=lambda body: text("ok"), base_latency=0.3) as srv:
        model = make(srv)
        async with trio.open_nursery() as n:
            for _ in range(3):
                n.start_soon(model.complete, req())
    assert srv.max_overlap() == 3


async def test_env_key_and_base_url(monkeypatch: pytest.MonkeyPatch, anthropic_server: FakeAnthropicServer) -> None:
    from lead_agent.settings import resolve_settings

    # the entry point reads the key and the URL once; the SDK is handed both and never reads the environment
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # not this one: `environ` is what counts
    settings = resolve_settings({"question": "q"}, use_config_file=False,
                                environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": anthropic_server.base_url})
    anthropic_server.push(text("via env"))
    model = ModelFactory(settings.models).model("claude-test")
    assert KEY not in repr(model)
    assert (await model.complete(req())).text() == "via env"
    headers = anthropic_server.requests[0].headers
    assert KEY in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def test_missing_key_fails_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # the adapter never reads the environment itself
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicModel("claude-test", api_key="")


# ---------------------------------------------------------------- provider resolution


def test_resolve_without_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # keys come from the entry point, not the environment
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY") as info:
        resolve_model("claude-haiku-4-5")
    assert "\n" not in str(info.value)
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        resolve_model("my-proxy-model", ModelSettings(provider=Provider.ANTHROPIC))


def test_resolve_unknown_provider_and_model() -> None:
    from subagents.models.resolve import parse_provider

    with pytest.raises(ModelConfigError, match="unknown provider 'gemini'"):
        parse_provider("gemini")
    with pytest.raises(ModelConfigError, match="unknown model 'gpt-7'"):
        resolve_model("gpt-7")


@pytest.mark.parametrize("url", ["ftp://host/v1", "http://", "localhost:11434/v1", "not a url", "http://host:99999999/v1"])
def test_resolve_malformed_base_url(url: str) -> None:
    with pytest.raises(ModelConfigError, match="malformed base URL"):
        resolve_model("llama3", ModelSettings(provider=Provider.OPENAI, base_url=url))
    with pytest.raises(ModelConfigError, match="malformed base URL"):
        resolve_model("claude-haiku-4-5", ModelSettings(anthropic_api_key=KEY, base_url=url))


def test_resolve_refuses_credentials_in_the_base_url() -> None:
    with pytest.raises(ModelConfigError, match="must not contain credentials") as info:
        resolve_model("llama3", ModelSettings(provider=Provider.OPENAI, base_url="http://me:s3cret@localhost:11434/v1"))
    assert "s3cret" not in str(info.value)


def test_resolve_openai_needs_base_url() -> None:
    with pytest.raises(ModelConfigError, match="--base-url"):
        resolve_model("llama3", ModelSettings(provider=Provider.OPENAI))


def test_resolve_builds_adapters_with_shared_limiter() -> None:
    from subagents.models.openai_compat import OpenAIModel

    factory = ModelFactory(ModelSettings(anthropic_api_key=KEY, requests_per_minute=50, timeout=7.0, max_retries=1,
                                         base_url=None))
    a = factory.model("claude-haiku-4-5")
    b = factory.model("claude-opus-4-6")
    assert isinstance(a, AnthropicModel) and a.is_language_model and a.name == "claude-haiku-4-5"
    assert isinstance(a.limiter, RateLimiter) and a.limiter is b.limiter
    assert a.timeout == 7.0 and a.policy.max_retries == 1
    openai = ModelFactory(ModelSettings(provider=Provider.OPENAI, base_url="http://localhost:11434/v1/",
                                        requests_per_minute=50))
    o = openai.model("llama3")
    assert isinstance(o, OpenAIModel) and o.base_url == "http://localhost:11434/v1" and o.limiter is not None


def test_default_models() -> None:
    from lead_agent.settings import resolve_settings

    assert default_models(ModelSettings()) == ("extractive", "extractive")
    lead, sub = default_models(ModelSettings(anthropic_api_key=KEY))
    assert lead.startswith("claude-opus") and sub.startswith("claude-haiku")

    def models(env: dict[str, str]) -> tuple[Any, Any]:
        s = resolve_settings({"question": "q"}, environ=env, use_config_file=False)
        return s.lead_model, s.subagent_model

    assert models({"ANTHROPIC_API_KEY": KEY, "RESEARCH_LEAD_MODEL": "claude-sonnet-4-5"})[0] == "claude-sonnet-4-5"
    assert models({"RESEARCH_SUBAGENT_MODEL": "claude-haiku-4-5"}) == ("extractive", "claude-haiku-4-5")


async def test_aclose_and_reuse(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.push(text("one"), text("two"))
    model = make(anthropic_server)
    assert (await model.complete(req())).text() == "one"
    await model.aclose()
    assert (await model.complete(req())).text() == "two"  # a fresh client after close
    await model.aclose()
