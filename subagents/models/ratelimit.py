"""Request pacing shared by every model call of a run.

`RateLimiter` is two token buckets (requests per minute, tokens per minute), refilled
continuously; `acquire` waits (trio) until both allow, in arrival order. After a call the
adapter `record`s the real token count so an under-estimate is paid back by later callers.
A 429 with `retry-after` can `hold` the whole run, so parallel agents stop hammering at once.
"""

from __future__ import annotations

import math

import trio


class _Bucket:
    def __init__(self, per_minute: float) -> None:
        if not math.isfinite(per_minute) or per_minute <= 0:
            raise ValueError(f"a rate limit must be a positive finite number (got {per_minute!r})")
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

    def _buckets(self) -> list[_Bucket]:
        return [b for b in (self._requests, self._tokens) if b is not None]

    async def acquire(self, estimated_tokens: int = 0) -> None:
        """Wait until one request and `estimated_tokens` tokens fit, then take them.

        Callers are served first come, first served; an estimate larger than the whole
        per-minute budget waits for a full bucket instead of forever.
        """
        if self._lock is None:
            self._lock = trio.Lock()
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
