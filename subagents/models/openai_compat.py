"""OpenAI-compatible chat completions adapter over httpx (OpenAI, Ollama, vLLM, llama.cpp …).

POST {base_url}/chat/completions. Our blocks map as: system -> first "system" message;
tool_use -> assistant `tool_calls` (arguments as a JSON string); tool_result -> "tool"
messages (tool_call_id), emitted before any user text of the same turn; tools ->
{"type": "function", "function": {name, description, parameters}}.

Unparsable tool-call arguments become ToolUseBlock(input={"_raw": <the string>}): the call
still pairs with a tool result, the tool's argument validation then fails with an `is_error`
result the model can read and correct, instead of the whole turn failing.

`max_tokens` is sent as "max_tokens" (what Ollama / vLLM / llama.cpp accept). Same retry
policy as the Anthropic adapter (see retry.with_retries).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import trio

from ..model import (
    Block,
    Message,
    ModelAuthError,
    ModelError,
    ModelRequest,
    ModelResponse,
    StopReason,
    TextBlock,
    ToolChoice,
    ToolChoiceMode,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from .pooled import PooledAdapter
from .ratelimit import RateLimiter
from .retry import TransientError, is_retryable_status, parse_retry_after

FINISH_REASONS = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.REFUSAL,
}


def messages_to_api(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        texts = [b.text for b in m.content if isinstance(b, TextBlock) and b.text]
        if m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
            calls = [
                {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": json.dumps(b.input)}}
                for b in m.content
                if isinstance(b, ToolUseBlock)
            ]
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
            continue
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                content = f"ERROR: {b.content}" if b.is_error else b.content
                out.append({"role": "tool", "tool_call_id": b.tool_use_id, "content": content})
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def tool_choice_to_api(choice: ToolChoice) -> Any:
    if choice.mode is ToolChoiceMode.ANY:
        return "required"
    if choice.mode is ToolChoiceMode.TOOL:
        return {"type": "function", "function": {"name": choice.name}}
    return choice.mode.value


def build_body(request: ModelRequest, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": messages_to_api(request.system, request.messages),
        "max_tokens": request.max_tokens,
    }
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
            for t in request.tools
        ]
        body["tool_choice"] = tool_choice_to_api(request.tool_choice)
    return body


def _parse_arguments(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return args
    if not args:
        return {}
    try:
        parsed = json.loads(args)
    except (TypeError, ValueError):
        return {"_raw": str(args)}
    return parsed if isinstance(parsed, dict) else {"_raw": str(args)}


def response_from_api(payload: dict[str, Any], fallback_model: str) -> ModelResponse:
    try:
        choice = payload["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError):
        raise ModelError(f"{fallback_model}: response has no choices: {str(payload)[:200]}") from None
    blocks: list[Block] = []
    if message.get("content"):
        blocks.append(TextBlock(text=str(message["content"])))
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        blocks.append(
            ToolUseBlock(
                id=call.get("id") or f"call_{i}",
                name=fn.get("name", ""),
                input=_parse_arguments(fn.get("arguments")),
            )
        )
    finish = choice.get("finish_reason")
    stop = FINISH_REASONS.get(finish) or StopReason.parse(finish)
    if any(isinstance(b, ToolUseBlock) for b in blocks) and stop is StopReason.END_TURN:
        stop = StopReason.TOOL_USE  # Ollama reports "stop" alongside tool calls
    u = payload.get("usage") or {}
    cached = ((u.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
    usage = Usage(
        input_tokens=max(0, (u.get("prompt_tokens") or 0) - cached),
        output_tokens=u.get("completion_tokens") or 0,
        cache_read_input_tokens=cached,
    )
    return ModelResponse(content=blocks, stop_reason=stop, usage=usage, model=payload.get("model") or fallback_model)


class OpenAIModel(PooledAdapter):
    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        limiter: RateLimiter | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        max_backoff: float = 30.0,
        backoff_base: float = 0.5,
    ) -> None:
        super().__init__(model, limiter=limiter, timeout=timeout, max_retries=max_retries,
                         max_backoff=max_backoff, backoff_base=backoff_base)
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r}, base_url={self.base_url!r})"

    def _new_client(self) -> httpx.AsyncClient:
        headers = {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        return httpx.AsyncClient(timeout=self.timeout, headers=headers)

    async def _close_client(self, client: httpx.AsyncClient) -> None:
        await client.aclose()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = build_body(request, self.name)
        return await self._with_retries(request, lambda: self._attempt(body))

    async def _attempt(self, body: dict[str, Any]) -> ModelResponse:
        url = f"{self.base_url}/chat/completions"
        try:
            with trio.fail_after(self.timeout):
                resp = await self._get_client().post(url, json=body)
        except (trio.TooSlowError, httpx.TimeoutException):
            raise TransientError("timeout", f"no answer within {self.timeout:g}s") from None
        except httpx.TransportError as err:
            raise TransientError("connection_error", f"{type(err).__name__}: {err}") from None
        if resp.status_code >= 400:
            detail = _error_detail(resp)
            if resp.status_code in (401, 403):
                raise ModelAuthError(f"{self.name}: {self.base_url} refused the credentials (HTTP {resp.status_code}: {detail})")
            if is_retryable_status(resp.status_code):
                raise TransientError(resp.status_code, detail, parse_retry_after(dict(resp.headers)))
            raise ModelError(f"{self.name}: HTTP {resp.status_code}: {detail}")
        try:
            payload = resp.json()
        except ValueError:
            raise ModelError(f"{self.name}: response is not JSON: {resp.text[:200]!r}") from None
        return response_from_api(payload, self.name)


def _error_detail(resp: httpx.Response) -> str:
    try:
        err = resp.json().get("error")
    except (ValueError, AttributeError):
        return resp.text[:300]
    if isinstance(err, dict):
        return str(err.get("message") or err)[:300]
    return str(err)[:300]
