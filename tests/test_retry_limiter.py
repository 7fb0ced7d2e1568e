"""Retries and the run-wide limiter at their seam (`with_retries`, `RateLimiter`) under trio's
MockClock, and the adapters' use of the shared limiter against the fake APIs: every attempt
acquires it, the real usage is recorded, and a 429 holds every caller of the run."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import pytest
import trio
from trio.testing import MockClock

from subagents.model import Message, ModelError, ModelRequest, RetryNotice, TextBlock
from subagents.models.claude import AnthropicModel
from subagents.models.openai_compat import OpenAIModel
from subagents.models.ratelimit import RateLimiter
from subagents.models.retry import RetryPolicy, TransientError, is_retryable_status, parse_retry_after, with_retries
from tests.fakes.anthropic_server import FakeAnthropicServer, error, text
from tests.fakes.openai_server import FakeOpenAIServer, chat, chat_error

NO_JITTER = RetryPolicy(max_retries=3, base=1.0, max_backoff=8.0)


class Attempts:
    """An attempt that fails with the given errors in turn, then returns "ok"; records when it ran."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.times: list[float] = []

    async def __call__(self) -> str:
        self.times.append(trio.current_time())
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


# ---------------------------------------------------------------- the retry loop


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529, 599])
def test_retryable_statuses(status: int) -> None:
    assert is_retryable_status(status)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422, 499])
def test_statuses_not_worth_retrying(status: int) -> None:
    assert not is_retryable_status(status)


async def test_transient_errors_are_retried_after_the_policy_wait(autojump_clock: MockClock,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("subagents.models.retry.random.uniform", lambda a, b: b)  # no jitter: the ceiling
    attempt = Attempts(TransientError(500, "boom"), TransientError("timeout", "slow"), TransientError(529, "busy"))
    notices: list[RetryNotice] = []
    assert await with_retries(attempt, policy=NO_JITTER, what="m", on_retry=notices.append) == "ok"
    assert attempt.times == pytest.approx([0, 1, 3, 7])  # waits 1, 2, 4
    assert [(n.status, n.attempt, n.wait, n.error) for n in notices] == [
        (500, 1, 1.0, "boom"), ("timeout", 2, 2.0, "slow"), (529, 3, 4.0, "busy")]
    assert all(n.model == "m" for n in notices)


async def test_retry_after_is_honoured(autojump_clock: MockClock) -> None:
    attempt = Attempts(TransientError(429, "slow down", retry_after=7.5))
    assert await with_retries(attempt, policy=NO_JITTER, what="m") == "ok"
    assert attempt.times == pytest.approx([0, 7.5])


async def test_giving_up_names_the_attempts_and_the_last_error(autojump_clock: MockClock) -> None:
    attempt = Attempts(*[TransientError(503, f"down {i}") for i in range(4)])
    with pytest.raises(ModelError, match=r"^m: giving up after 4 attempts; last error: HTTP 503: down 3$") as info:
        await with_retries(attempt, policy=NO_JITTER, what="m")
    assert isinstance(info.value.__cause__, TransientError) and len(attempt.times) == 4
    one = Attempts(TransientError("connection_error", "refused"))
    with pytest.raises(ModelError, match=r"after 1 attempt; last error: connection_error: refused$"):
        await with_retries(one, policy=RetryPolicy(max_retries=0), what="m")


async def test_other_errors_propagate_at_once(autojump_clock: MockClock) -> None:
    attempt = Attempts(ModelError("HTTP 400: bad request"))
    with pytest.raises(ModelError, match="400"):
        await with_retries(attempt, policy=NO_JITTER, what="m")
    assert len(attempt.times) == 1


def test_policy_wait_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = RetryPolicy(max_retries=5, base=0.5, max_backoff=3.0)
    assert policy.wait(1, 2.0) == 2.0 and policy.wait(1, 0.0) == 0.0
    assert policy.wait(1, 500.0) == 60.0  # a bogus retry-after cannot stall a run
    assert RetryPolicy(max_backoff=90.0).wait(1, 500.0) == 90.0
    for pick, name in ((lambda a, b: b, "ceiling"), (lambda a, b: a, "floor")):
        monkeypatch.setattr("subagents.models.retry.random.uniform", pick)
        waits = [policy.wait(n, None) for n in range(1, 6)]
        ceilings = [0.5, 1.0, 2.0, 3.0, 3.0]
        assert waits == (ceilings if name == "ceiling" else [c / 2 for c in ceilings])


def test_parse_retry_after() -> None:
    assert parse_retry_after(None) is None and parse_retry_after({}) is None
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "-3"}) == 0.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "-5"}) == 0.0
    assert parse_retry_after({"retry-after-ms": "soon", "retry-after": "9"}) == 9.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 100 < parse_retry_after({"retry-after": later}) <= 120
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"x-other": "1"}) is None


# ---------------------------------------------------------------- the limiter in the retry loop


async def test_the_limiter_is_acquired_before_every_attempt(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(requests_per_minute=2)  # two at once, then one every 30 s
    attempt = Attempts(TransientError(500, "a", retry_after=0), TransientError(500, "b", retry_after=0))
    assert await with_retries(attempt, policy=NO_JITTER, what="m", limiter=limiter) == "ok"
    assert attempt.times == pytest.approx([0, 0, 30])


async def test_a_429_holds_every_caller_of_the_run(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(requests_per_minute=1000)
    first = Attempts(TransientError(429, "rate limited", retry_after=20))
    other = Attempts()

    async def later() -> None:
        await trio.sleep(1)  # another agent calls while the first waits out its 429
        await with_retries(other, policy=NO_JITTER, what="m", limiter=limiter)

    async with trio.open_nursery() as n:
        n.start_soon(lambda: with_retries(first, policy=NO_JITTER, what="m", limiter=limiter))
        n.start_soon(later)
    assert first.times == pytest.approx([0, 20]) and other.times == pytest.approx([20])


async def test_an_overload_slows_only_its_own_caller(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(requests_per_minute=1000)
    first = Attempts(TransientError(529, "overloaded", retry_after=20))
    other = Attempts()

    async def later() -> None:
        await trio.sleep(1)
        await with_retries(other, policy=NO_JITTER, what="m", limiter=limiter)

    async with trio.open_nursery() as n:
        n.start_soon(lambda: with_retries(first, policy=NO_JITTER, what="m", limiter=limiter))
        n.start_soon(later)
    assert first.times == pytest.approx([0, 20]) and other.times == pytest.approx([1])


async def test_hold_only_extends(autojump_clock: MockClock) -> None:
    limiter = RateLimiter()
    limiter.hold(10)
    limiter.hold(3)  # a shorter hold does not shorten the longer one
    limiter.hold(-5)
    await limiter.acquire()
    assert trio.current_time() == pytest.approx(10)


def test_hold_outside_trio_is_a_no_op_and_limits_must_be_positive() -> None:
    limiter = RateLimiter(requests_per_minute=10)
    limiter.hold(100)  # no trio run: nothing to hold

    async def main() -> float:
        await limiter.acquire()
        return trio.current_time()

    assert trio.run(main, clock=MockClock(autojump_threshold=0)) == 0
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(requests_per_minute=-1)


async def test_record_settles_only_the_difference(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(tokens_per_minute=600)  # 10 tokens/s, a bucket of 600
    await limiter.acquire(300)
    limiter.record(estimated_tokens=300, actual_tokens=300)  # the estimate was right: no debt
    await limiter.acquire(300)
    assert trio.current_time() == pytest.approx(0)
    limiter.record(estimated_tokens=300, actual_tokens=100)  # over-estimated: 200 paid back
    await limiter.acquire(200)
    assert trio.current_time() == pytest.approx(0)
    await limiter.acquire(100)
    assert trio.current_time() == pytest.approx(10)


# ---------------------------------------------------------------- the adapters use the run's limiter


class CountingLimiter(RateLimiter):
    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.acquired: list[int] = []
        self.recorded: list[tuple[int, int]] = []

    async def acquire(self, estimated_tokens: int = 0) -> None:
        self.acquired.append(estimated_tokens)
        await super().acquire(estimated_tokens)

    def record(self, estimated_tokens: int, actual_tokens: int) -> None:
        self.recorded.append((estimated_tokens, actual_tokens))
        super().record(estimated_tokens, actual_tokens)


def request() -> ModelRequest:
    return ModelRequest(system="You are a researcher.", messages=[Message("user", [TextBlock("What is trio? " * 50)])])


async def test_the_anthropic_adapter_acquires_for_every_attempt_and_records_usage() -> None:
    limiter = CountingLimiter(requests_per_minute=1000, tokens_per_minute=10**7)
    with FakeAnthropicServer() as srv:
        srv.push(error(529), text("ok", input_tokens=321, output_tokens=9))
        model = AnthropicModel("claude-test", api_key="k", base_url=srv.base_url, limiter=limiter, backoff_base=0.01)
        assert (await model.complete(request())).text() == "ok"
        await model.aclose()
    assert len(limiter.acquired) == 2 and limiter.acquired[0] > 100  # the request's estimated tokens
    assert limiter.recorded == [(limiter.acquired[0], 330)]


async def test_the_openai_adapter_acquires_for_every_attempt_and_records_usage() -> None:
    limiter = CountingLimiter(requests_per_minute=1000, tokens_per_minute=10**7)
    with FakeOpenAIServer() as srv:
        srv.push(chat_error(503), chat("ok", prompt_tokens=200, completion_tokens=5))
        model = OpenAIModel("llama3.2", base_url=srv.base_url, limiter=limiter, backoff_base=0.01)
        assert (await model.complete(request())).text() == "ok"
        await model.aclose()
    assert len(limiter.acquired) == 2 and limiter.acquired[0] > 100
    assert limiter.recorded == [(limiter.acquired[0], 205)]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_held_limiter_keeps_requests_off_the_wire(provider: str) -> None:
    limiter = RateLimiter()
    with (FakeAnthropicServer() if provider == "anthropic" else FakeOpenAIServer()) as srv:
        model: Any = (AnthropicModel("claude-test", api_key="k", base_url=srv.base_url, limiter=limiter)
                      if provider == "anthropic" else OpenAIModel("m", base_url=srv.base_url, limiter=limiter))
        limiter.hold(3600)
        with trio.move_on_after(0.3) as scope:
            await model.complete(request())
        await model.aclose()
    assert scope.cancelled_caught and srv.requests == []


async def test_what_a_retry_notice_says(autojump_clock: MockClock) -> None:
    attempt = Attempts(TransientError(429, "x" * 400, retry_after=1.23456))
    notices: list[RetryNotice] = []
    await with_retries(attempt, policy=NO_JITTER, what="m", on_retry=notices.append)
    assert notices[0].wait == 1.235 and notices[0].error == "x" * 300
    assert str(TransientError(429, "slow down")) == "429: slow down"


async def test_short_waits_and_holds_are_honoured_too(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(tokens_per_minute=6000)  # 100 tokens/s
    await limiter.acquire(6000)
    await limiter.acquire(50)  # half a second of refill
    assert trio.current_time() == pytest.approx(0.5)
    limiter.hold(0.25)
    await limiter.acquire()
    assert trio.current_time() == pytest.approx(0.75)


async def test_callers_that_do_not_estimate_take_no_tokens(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(tokens_per_minute=60)
    await limiter.acquire(60)  # the bucket is empty now
    await limiter.acquire()
    assert await with_retries(Attempts(), policy=NO_JITTER, what="m", limiter=limiter) == "ok"
    assert trio.current_time() == 0


async def test_a_limit_under_one_per_minute_is_a_limit(autojump_clock: MockClock) -> None:
    limiter = RateLimiter(requests_per_minute=0.5)
    await limiter.acquire()
    await limiter.acquire()
    assert trio.current_time() == pytest.approx(120)
    with pytest.raises(ValueError, match="^a rate limit must be a positive finite number"):
        RateLimiter(tokens_per_minute=-60)
