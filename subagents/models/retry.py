"""The retry policy of the provider adapters.

`with_retries` is the one retry loop both adapters use: an attempt raises `TransientError`
for what is worth retrying (429, 408, 409, 5xx incl. 529, connection errors, timeouts);
anything else propagates at once. Every retry is reported to the caller through the request's
`on_retry` (the agent's event stream records it as `model_retry`).
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Mapping, TypeVar

import trio

from ..model import ModelError, RetryNotice
from .ratelimit import RateLimiter

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every status >= 500 (529 = overloaded)
INCOMPLETE = "incomplete_stream"  # the status of a reply that ended before its end marker


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


class TransientError(Exception):
    """An attempt failed in a way worth retrying. `status` is the HTTP status, or
    "timeout" / "connection_error" / "incomplete_stream" (a reply cut before its end marker)."""

    def __init__(self, status: int | str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail
        self.retry_after = retry_after


def transport_transient(err: Exception, *, timed_out: bool, timeout: float) -> TransientError:
    """A transport failure (an HTTP client's timeout or broken connection) as a retryable error."""
    if timed_out:
        return TransientError("timeout", f"no data within {timeout:g}s ({type(err).__name__})")
    return TransientError("connection_error", f"{type(err).__name__}: {err}" if str(err) else type(err).__name__)


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


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    what: str,
    on_retry: Callable[[RetryNotice], None] | None = None,
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
            if on_retry is not None:
                on_retry(RetryNotice(model=what, status=err.status, attempt=n + 1, wait=round(wait, 3),
                                     error=err.detail[:300]))
            await trio.sleep(wait)
    assert last is not None
    attempts = policy.max_retries + 1
    raise ModelError(
        f"{what}: giving up after {attempts} attempt{'s' if attempts != 1 else ''}; "
        f"last error: {_describe_status(last.status)}: {last.detail}"
    ) from last


def _describe_status(status: int | str) -> str:
    return f"HTTP {status}" if isinstance(status, int) else str(status)
