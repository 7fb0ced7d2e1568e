"""Pricing, token estimates, context condensing and the rate limiter (under trio's MockClock)."""

from __future__ import annotations

import json

import pytest
import trio
from trio.testing import MockClock

from subagents.model import Message, ModelRequest, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock, Usage
from subagents.models.pricing import PRICING_FILE, add_costs, cost, price_for
from subagents.models.ratelimit import RateLimiter
from subagents.tokens import DROPPED_TEXT, condense_messages, estimate_message_tokens, estimate_request_tokens, estimate_tokens

# ---------------------------------------------------------------- pricing


def test_every_price_names_its_source_and_date() -> None:
    models = json.loads(PRICING_FILE.read_text())["models"]
    assert {"claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-3-5-haiku"} <= set(models)
    for name, e in models.items():
        assert e["source"] and e["as_of"], name
        assert {"input", "output", "cache_write", "cache_read"} <= set(e)


def test_cost_of_known_model() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=200_000, cache_creation_input_tokens=400_000, cache_read_input_tokens=2_000_000)
    # haiku 4.5: $1 in, $5 out, $1.25 5-minute cache write, $0.10 cache read per MTok
    assert cost(usage, "claude-haiku-4-5") == pytest.approx(1.0 + 1.0 + 0.5 + 0.2)
    assert cost(usage, "claude-haiku-4-5-20251001") == cost(usage, "claude-haiku-4-5")
    assert cost(Usage(input_tokens=1000, output_tokens=1000), "claude-opus-4-5") == pytest.approx(0.005 + 0.025)
    assert cost(Usage(input_tokens=10**6), "claude-3-5-haiku-20241022") == pytest.approx(0.8)
    assert cost(Usage(input_tokens=123, output_tokens=45), "extractive") == 0.0


def test_unknown_model_has_no_price() -> None:
    assert price_for("gpt-7") is None
    assert cost(Usage(input_tokens=10), "llama3.2") is None
    assert price_for("claude-opus-4") is not None  # alias of claude-opus-4-0
    assert price_for("claude-opus-4-9") is None  # never a guess from a family name


def test_add_costs() -> None:
    assert add_costs(0.5, 0.25) == pytest.approx(0.75)
    assert add_costs() == 0.0
    assert add_costs(0.5, None, 1.0) is None


# ---------------------------------------------------------------- tokens


def test_estimates() -> None:
    assert estimate_tokens("") == 0
    assert 5 <= estimate_tokens("The quick brown fox jumps over the lazy dog.") <= 15
    msgs = [Message("user", [TextBlock("hello there")])]
    bare = estimate_request_tokens(ModelRequest(system="sys", messages=msgs))
    schema = {"type": "object", "properties": {"query": {"type": "string", "description": "what to search"}}}
    with_tools = estimate_request_tokens(ModelRequest(system="sys", messages=msgs, tools=[ToolSpec("search", "Search the web.", schema)]))
    assert with_tools > bare > 0


def research_conversation(n: int, size: int = 6000) -> list[Message]:
    msgs = [Message("user", [TextBlock("Research the history of trio.")])]
    for i in range(n):
        msgs.append(Message("assistant", [TextBlock(f"step {i}"), ToolUseBlock(f"t{i}", "fetch", {"url": f"https://e.org/{i}"})]))
        msgs.append(Message("user", [ToolResultBlock(f"t{i}", f"page {i} " + "lorem ipsum dolor sit amet " * (size // 27))]))
    return msgs


def result_of(msgs: list[Message], i: int) -> ToolResultBlock:
    block = msgs[2 + 2 * i].content[0]
    assert isinstance(block, ToolResultBlock)
    return block


def test_condense_under_budget_is_a_no_op() -> None:
    msgs = research_conversation(2, size=100)
    out, notes = condense_messages(msgs, budget_tokens=100_000)
    assert notes == [] and [m.to_dict() for m in out] == [m.to_dict() for m in msgs]


def test_condense_oldest_first_and_keeps_last_exchanges() -> None:
    msgs = research_conversation(5)
    total = sum(estimate_message_tokens(m) for m in msgs)
    out, notes = condense_messages(msgs, budget_tokens=total - 1500, keep_last=2)
    assert "condensed: " in result_of(out, 0).content
    assert result_of(out, 0).content.startswith("page 0 lorem")
    assert "omitted to fit the context window" in result_of(out, 0).content
    for i in (3, 4):  # the last two exchanges are untouched
        assert result_of(out, i).content == result_of(msgs, i).content
    assert result_of(out, 4).content == result_of(msgs, 4).content
    assert notes and notes[0].startswith("condensed tool result t0 (fetch)")
    assert result_of(msgs, 0).content.startswith("page 0") and "condensed" not in result_of(msgs, 0).content  # input intact
    assert sum(estimate_message_tokens(m) for m in out) <= total - 1500


def test_condense_drops_when_condensing_is_not_enough_and_keeps_pairing() -> None:
    msgs = research_conversation(5)
    budget = sum(estimate_message_tokens(m) for m in msgs[-4:]) + 300
    out, notes = condense_messages(msgs, budget_tokens=budget, keep_last=2)
    assert result_of(out, 0).content == DROPPED_TEXT
    assert any(n.startswith("dropped tool result t0") for n in notes)
    uses = [b.id for m in out for b in m.content if isinstance(b, ToolUseBlock)]
    results = [b.tool_use_id for m in out for b in m.content if isinstance(b, ToolResultBlock)]
    assert uses == results == [f"t{i}" for i in range(5)]
    assert len(out) == len(msgs)


def test_condense_reports_when_budget_cannot_be_met() -> None:
    msgs = research_conversation(2)
    out, notes = condense_messages(msgs, budget_tokens=10, keep_last=2)
    assert [m.to_dict() for m in out] == [m.to_dict() for m in msgs]  # everything is protected
    assert notes and notes[-1].startswith("still over budget")


# ---------------------------------------------------------------- rate limiter & retry policy


async def test_request_bucket_paces_under_mock_clock(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(requests_per_minute=2)
    times = []
    for _ in range(4):
        await limiter.acquire()
        times.append(trio.current_time())
    assert times == pytest.approx([0, 0, 30, 60], abs=1e-6)


async def test_token_bucket_and_record_debt(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(tokens_per_minute=6000)  # 100 tokens / s
    await limiter.acquire(5000)
    await limiter.acquire(1000)
    assert trio.current_time() == pytest.approx(0)
    limiter.record(estimated_tokens=1000, actual_tokens=3000)  # under-estimated: 2000 tokens of debt
    await limiter.acquire(500)
    assert trio.current_time() == pytest.approx(25)  # (2000 debt + 500) / 100 per s
    await limiter.acquire(10**9)  # larger than the bucket: waits for a full bucket, not forever
    assert trio.current_time() == pytest.approx(25 + 60)


async def test_both_buckets_must_allow_and_callers_are_fifo(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(requests_per_minute=60, tokens_per_minute=600)  # 1 req/s, 10 tok/s
    order: list[tuple[int, float]] = []

    async def agent(i: int) -> None:
        await limiter.acquire(300)
        order.append((i, trio.current_time()))

    async with trio.open_nursery() as n:
        for i in range(4):
            n.start_soon(agent, i)
            await trio.sleep(0.001)
    assert [i for i, _ in order] == [0, 1, 2, 3]
    assert [t for _, t in order] == pytest.approx([0, 0.001, 30, 60], abs=0.01)


async def test_hold_pauses_everyone(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(requests_per_minute=1000)
    limiter.hold(12.5)
    await limiter.acquire()
    assert trio.current_time() == pytest.approx(12.5)


def test_unlimited_limiter_never_waits() -> None:
    """(The retry policy and retry-after parsing are tested in test_retry_limiter.py.)"""
    async def main() -> float:
        limiter = RateLimiter()
        for _ in range(1000):
            await limiter.acquire(10**6)
        return trio.current_time()

    assert trio.run(main, clock=MockClock(autojump_threshold=0)) == 0
