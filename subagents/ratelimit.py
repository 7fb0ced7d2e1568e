"""Request pacing shared by every model call of a run, and the retry policy of the adapters.

`RateLimiter` is two token buckets (requests per minute, tokens per minute), refilled
continuously; `acquire` waits (trio) until both allow, in arrival order. After a call the
adapter `record`s the real token count so an under-estimate is paid back by later callers.
A 429 with `retry-after` can `hold` the whole run, so parallel agents stop hammering at once.

`with_retries` is the one retry loop both adapters use: an attempt raises `TransientError`
for what is worth retrying (429, 408, 409, 5xx incl. 529, connection errors, timeouts);
anything else propagates at once. Every retry is reported through an optional `log`
callable as kind "model_retry".
"""

from __future__ import annotations

import email.utils
import inspect
import random
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, TypeVar

import trio

from .model import ModelError

T = TypeVar("T")
LogFn = Callable[[str, dict[str, Any]], Any]

RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every status >= 500 (529 = overloaded)


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


class _Bucket:
    def __init__(self, per_minute: float) -> None:
        if per_minute <= 0:
            raise ValueError("a rate limit must be positive")
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0  # units per second
        self.level = self.capacity
        self.updated: float | None = None

    def refill(self, now: float) -> None:
        if self.updated is not None:
            self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    def wait_for(self, amount: float) -> float:
        """Seconds until `amount` is available (0 when it is now)."""
        missing = min(amount, self.capacity) - self.level
        return 0.0 if missing <= 0 else missing / self.rate


class RateLimiter:
    """Shared by all agents of a run. `None` for a limit means unlimited."""

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None) -> None:
        self._requests = _Bucket(requests_per_minute) if requests_per_minute else None
        self._tokens = _Bucket(tokens_per_minute) if tokens_per_minute else None
        self._lock: trio.Lock | None = None  # created lazily: the limiter may be built outside trio
        self._held_until = 0.0
        self.waited_seconds = 0.0  # total time callers spent waiting here (for reports)

    def _buckets(self) -> list[_Bucket]:
        return [b for b in (self._requests, self._tokens) if b is not None]

    async def acquire(self, estimated_tokens: int = 0) -> None:
        """Wait until one request and `estimated_tokens` tokens fit, then take them.

        Callers are served first come, first served; an estimate larger than the whole
        per-minute budget waits for a full bucket instead of forever.
        """
        if self._lock is None:
            self._lock = trio.Lock()
        start = trio.current_time()
        async with self._lock:  # trio.Lock is fair: FIFO
            while True:
                now = trio.current_time()
                for b in self._buckets():
                    b.refill(now)
                wait = max([self._held_until - now, 0.0])
                if self._requests:
                    wait = max(wait, self._requests.wait_for(1))
                if self._tokens:
                    wait = max(wait, self._tokens.wait_for(estimated_tokens))
                if wait <= 0:
                    break
                await trio.sleep(wait)
            if self._requests:
                self._requests.level -= 1
            if self._tokens:
                self._tokens.level -= min(estimated_tokens, self._tokens.capacity)
        self.waited_seconds += trio.current_time() - start

    def record(self, estimated_tokens: int, actual_tokens: int) -> None:
        """Settle the difference between what `acquire` took and what the call really used.
        The bucket may go negative (debt): later callers then wait longer."""
        if self._tokens is not None:
            self._tokens.level -= actual_tokens - min(estimated_tokens, self._tokens.capacity)

    def hold(self, seconds: float) -> None:
        """The provider said 'slow down' (429 + retry-after): nobody acquires for `seconds`."""
        try:
            now = trio.current_time()
        except RuntimeError:  # outside trio: nothing to hold
            return
        self._held_until = max(self._held_until, now + max(0.0, seconds))


# ---------------------------------------------------------------- retries


class TransientError(Exception):
    """An attempt failed in a way worth retrying. `status` is the HTTP status, or
    "timeout" / "connection_error"."""

    def __init__(self, status: int | str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail
        self.retry_after = retry_after


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms`, else `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter: attempt n waits up to min(max_backoff, base * 2**(n-1)),
    jittered to [50 %, 100 %] of that. A server's retry-after is honoured as given (a retry
    sooner would be wasted), up to max(max_backoff, 60 s) so a bogus header cannot stall a run."""

    max_retries: int = 4
    base: float = 0.5
    max_backoff: float = 30.0

    def wait(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, max(self.max_backoff, 60.0))
        ceiling = min(self.max_backoff, self.base * (2 ** (retry - 1)))
        return ceiling * random.uniform(0.5, 1.0)


async def emit(log: LogFn | None, kind: str, data: dict[str, Any]) -> None:
    """Call an optional log callable; await it if it returns an awaitable. Never raises."""
    if log is None:
        return
    try:
        result = log(kind, data)
        if inspect.isawaitable(result):
            await result
    except Exception:  # a broken logger must not fail the model call
        pass


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    what: str,
    log: LogFn | None = None,
    limiter: RateLimiter | None = None,
    estimated_tokens: int = 0,
) -> T:
    """Run `attempt` until it succeeds, raises a non-transient error, or retries run out
    (then `ModelError` naming the last status). The limiter is acquired before every attempt."""
    last: TransientError | None = None
    for n in range(policy.max_retries + 1):
        if limiter is not None:
            await limiter.acquire(estimated_tokens)
        try:
            return await attempt()
        except TransientError as err:
            last = err
            if n == policy.max_retries:
                break
            wait = policy.wait(n + 1, err.retry_after)
            if limiter is not None and err.status == 429:
                limiter.hold(wait)
            await emit(
                log,
                "model_retry",
                {"model": what, "status": err.status, "attempt": n + 1, "wait": round(wait, 3), "error": err.detail[:300]},
            )
            await trio.sleep(wait)
    assert last is not None
    attempts = policy.max_retries + 1
    raise ModelError(
        f"{what}: giving up after {attempts} attempt{'s' if attempts != 1 else ''}; "
        f"last error: {_describe_status(last.status)}: {last.detail}"
    ) from last


def _describe_status(status: int | str) -> str:
    return f"HTTP {status}" if isinstance(status, int) else str(status)
