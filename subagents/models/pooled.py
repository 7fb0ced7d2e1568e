"""What the provider adapters share: one HTTP client per trio run (pooled sockets cannot outlive
the run that opened them) and calls retried under the run-wide rate limiter. Each concrete adapter
supplies its client, how to close it, one attempt, and which tokens its usage bills."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import trio

from ..model import ModelRequest, ModelResponse, Usage
from ..tokens import estimate_request_tokens
from .ratelimit import RateLimiter
from .retry import RetryPolicy, with_retries


class PooledAdapter:
    is_language_model = True

    def __init__(self, name: str, *, limiter: RateLimiter | None, timeout: float, max_retries: int,
                 max_backoff: float, backoff_base: float) -> None:
        self.name = name
        self.limiter = limiter
        self.timeout = timeout
        self.policy = RetryPolicy(max_retries=max_retries, base=backoff_base, max_backoff=max_backoff)
        self._client: Any = None
        self._client_token: object = None

    def _new_client(self) -> Any:
        raise NotImplementedError

    async def _close_client(self, client: Any) -> None:
        raise NotImplementedError

    def _billed_tokens(self, usage: Usage) -> int:
        """Tokens the provider counts against a tokens-per-minute limit."""
        return usage.input_tokens + usage.output_tokens

    def _get_client(self) -> Any:
        token = trio.lowlevel.current_trio_token()
        if self._client is None or self._client_token is not token:
            self._client = self._new_client()
            self._client_token = token
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool (call from the trio run that used the model)."""
        client, self._client = self._client, None
        if client is not None and self._client_token is trio.lowlevel.current_trio_token():
            await self._close_client(client)

    async def _with_retries(self, request: ModelRequest, attempt: Callable[[], Awaitable[ModelResponse]]) -> ModelResponse:
        estimate = estimate_request_tokens(request)
        response = await with_retries(attempt, policy=self.policy, what=self.name, on_retry=request.on_retry,
                                      limiter=self.limiter, estimated_tokens=estimate)
        if self.limiter is not None:
            self.limiter.record(estimate, self._billed_tokens(response.usage))
        return response
