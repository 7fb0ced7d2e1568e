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

`request.stream` true (the lead's calls) -> `"stream": true` with `stream_options.include_usage`:
the chunks are assembled into one response (`StreamAssembler`); the timeout is per read, so a long
answer may stream for minutes. A stream is a reply only once `data: [DONE]` arrived: one that
stalls past the timeout, drops mid-body or ends early is a transient error (retried), never a
partial reply.
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
from .retry import INCOMPLETE, TransientError, is_retryable_status, parse_retry_after, transport_transient

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
            calls = [
                {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": json.dumps(b.input)}}
                for b in m.content
                if isinstance(b, ToolUseBlock)
            ]
            # content may be null only beside tool calls: an empty turn is sent as ""
            msg: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or (None if calls else "")}
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
        if request.stream:
            body = {**body, "stream": True, "stream_options": {"include_usage": True}}
            return await self._with_retries(request, lambda: self._attempt_stream(body))
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
            raise self._status_error(resp)
        try:
            payload = resp.json()
        except ValueError:
            raise ModelError(f"{self.name}: response is not JSON: {resp.text[:200]!r}") from None
        return response_from_api(payload, self.name)

    async def _attempt_stream(self, body: dict[str, Any]) -> ModelResponse:
        """One streamed call: the timeout is per read (an idle limit), not for the whole answer."""
        url = f"{self.base_url}/chat/completions"
        assembler = StreamAssembler(self.name)
        try:
            async with self._get_client().stream("POST", url, json=body) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    raise self._status_error(resp)
                async for line in resp.aiter_lines():
                    if line.startswith("data:"):
                        assembler.feed(line[len("data:"):].strip())
                        if assembler.done:
                            break
        except httpx.TransportError as err:
            raise transport_transient(err, timed_out=isinstance(err, httpx.TimeoutException),
                                      timeout=self.timeout) from None
        if not assembler.done:
            raise TransientError(INCOMPLETE, "the stream ended before data: [DONE]")
        return response_from_api(assembler.payload(), self.name)

    def _status_error(self, resp: httpx.Response) -> Exception:
        detail = _error_detail(resp)
        if resp.status_code in (401, 403):
            return ModelAuthError(f"{self.name}: {self.base_url} refused the credentials (HTTP {resp.status_code}: {detail})")
        if is_retryable_status(resp.status_code):
            return TransientError(resp.status_code, detail, parse_retry_after(dict(resp.headers)))
        return ModelError(f"{self.name}: HTTP {resp.status_code}: {detail}")


class StreamAssembler:
    """`chat.completion.chunk`s folded into the payload a non-streamed call returns: content
    pieces joined, tool calls assembled by index (id and name once, arguments in fragments), the
    finish reason, the usage chunk; `done` once `data: [DONE]` arrived."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.done = False

    def feed(self, data: str) -> None:
        if data == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            raise TransientError(INCOMPLETE, f"a stream chunk is not JSON: {data[:200]!r}") from None
        if not isinstance(chunk, dict):
            raise TransientError(INCOMPLETE, f"a stream chunk is not an object: {data[:200]!r}")
        if chunk.get("error"):  # servers report a failure mid-stream this way
            err = chunk["error"]
            raise TransientError("stream_error", str(err.get("message") if isinstance(err, dict) else err)[:300])
        self.model = chunk.get("model") or self.model
        self.usage = chunk.get("usage") or self.usage
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) == 0:
                self._add(choice)

    def _add(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta") or {}
        if delta.get("content"):
            self.content.append(str(delta["content"]))
        for call in delta.get("tool_calls") or []:
            slot = self.calls.setdefault(call.get("index", len(self.calls)),
                                         {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
            fn = call.get("function") or {}
            slot["id"] = call.get("id") or slot["id"]
            slot["function"]["name"] = fn.get("name") or slot["function"]["name"]
            slot["function"]["arguments"] += fn.get("arguments") or ""
        self.finish_reason = choice.get("finish_reason") or self.finish_reason

    def payload(self) -> dict[str, Any]:
        calls = [self.calls[i] for i in sorted(self.calls)]
        message = {"role": "assistant", "content": "".join(self.content) or None, "tool_calls": calls}
        finish = self.finish_reason or ("tool_calls" if calls else "stop")  # [DONE] came: the reply is whole
        return {"model": self.model, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": self.usage}


def _error_detail(resp: httpx.Response) -> str:
    try:
        err = resp.json().get("error")
    except (ValueError, AttributeError):
        return resp.text[:300]
    if isinstance(err, dict):
        return str(err.get("message") or err)[:300]
    return str(err)[:300]
