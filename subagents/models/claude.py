"""The Anthropic Messages API adapter: the only module that imports `anthropic`.

- Retries are ours (the SDK client runs with max_retries=0) so each one is visible: 429, 408,
  409, 5xx incl. 529, connection errors and timeouts are retried with capped exponential
  backoff + jitter, honouring retry-after(-ms); each retry is reported through
  the request's `on_retry` (recorded as `model_retry`). 401/403 -> ModelAuthError, no retry;
  other 4xx -> ModelError; retries exhausted -> ModelError naming the last status.
- Prompt caching: `cache_control: ephemeral` on the last tool, the last system block and the
  last block of the last message (the growing conversation is written to the cache and read
  back on the next turn), plus the last block of the previous user turn — where the previous
  call put its breakpoint — so the read hits even when a turn adds many blocks. At most 4.
- `request.stream` true -> messages.stream(...) and the final message assembled
  from the SSE events (for the lead's long synthesis: no total deadline, only an idle one).
  A stream is a reply only once `message_stop` arrived with a stop reason: a stream that
  stalls past the timeout, drops mid-body, or ends early is a transient error (retried), never
  a partial reply (a cut `delegate` input must not run as a plan).
- Text the API refuses to take back is not sent back: whitespace-only text blocks (Claude emits
  "\n\n" before a tool_use) are dropped, and a final assistant turn (resent after pause_turn)
  loses its trailing whitespace.
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
from typing import Any

import anthropic
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

API_KEY_ENV = "ANTHROPIC_API_KEY"  # named in error messages; the entry point reads it
DEFAULT_BASE_URL = "https://api.anthropic.com"
EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
# error types an SSE `error` event may carry mid-stream, mapped to the status they stand for
_STREAM_ERROR_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500, "timeout_error": 504}


def _sdk_http_errors(name: str) -> tuple[type[Exception], ...]:
    """An exception class of the HTTP clients the SDK may use (`httpx2` in anthropic 2.x, `httpx`
    before): a stream that stalls or drops while being read raises them unwrapped."""
    found = []
    for module in ("httpx", "httpx2"):
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            pass
    return tuple(found)


@functools.lru_cache(maxsize=1)
def _shared_ssl_context() -> Any:
    """The SDK's default TLS context, built once per process (None: let the SDK build its own).
    Loading the CA bundle takes ~0.1 s and every run builds new clients (a connection pool cannot
    outlive the trio run that opened it)."""
    try:
        base = next(c for c in anthropic.DefaultAsyncHttpxClient.__mro__ if not c.__module__.startswith("anthropic"))
        return importlib.import_module(base.__module__.split(".")[0]).create_ssl_context()
    except (StopIteration, ImportError, AttributeError, TypeError):
        return None


_TRANSPORT_ERRORS = _sdk_http_errors("TransportError")  # timeouts, dropped connections, broken bodies
_TIMEOUT_ERRORS = _sdk_http_errors("TimeoutException")


# ---------------------------------------------------------------- request translation


def block_to_api(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ToolResultBlock):
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": block.content}
        if block.is_error:
            out["is_error"] = True
        return out
    raise ModelError(f"cannot send block of type {type(block).__name__}")


def message_to_api(message: Message, *, final: bool = False) -> dict[str, Any]:
    """The API rejects empty and whitespace-only text blocks, and a final assistant turn ending in
    whitespace; a message left empty gets a visible placeholder."""
    content = [block_to_api(b) for b in message.content if not (isinstance(b, TextBlock) and not b.text.strip())]
    if final and message.role == "assistant" and content and content[-1]["type"] == "text":
        content[-1]["text"] = content[-1]["text"].rstrip()
    return {"role": message.role, "content": content or [{"type": "text", "text": "(empty)"}]}


def tool_choice_to_api(choice: ToolChoice) -> dict[str, Any]:
    if choice.mode is ToolChoiceMode.TOOL:
        return {"type": "tool", "name": choice.name}
    return {"type": choice.mode.value}


def build_params(request: ModelRequest, model: str) -> dict[str, Any]:
    """Keyword arguments for messages.create / messages.stream, with cache breakpoints placed."""
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [message_to_api(m, final=i == len(request.messages) - 1) for i, m in enumerate(request.messages)],
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system}]
    if request.tools:
        params["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools]
        params["tool_choice"] = tool_choice_to_api(request.tool_choice)
    place_cache_breakpoints(params)
    return params


def place_cache_breakpoints(params: dict[str, Any]) -> int:
    """Mark cache breakpoints in `params` (in place): last tool, last system block, last block
    of the last message, last block of the previous user message. Returns how many."""
    targets: list[dict[str, Any]] = []
    if params.get("tools"):
        targets.append(params["tools"][-1])
    if params.get("system"):
        targets.append(params["system"][-1])
    messages = params.get("messages") or []
    if messages and messages[-1]["content"]:
        targets.append(messages[-1]["content"][-1])
        last_role = messages[-1]["role"]
        # the previous call ended at the user message before the latest assistant turn
        for m in reversed(messages[:-1]):
            if m["role"] == last_role and m["content"]:
                targets.append(m["content"][-1])
                break
    placed = 0
    for t in targets[:MAX_BREAKPOINTS]:
        t["cache_control"] = dict(EPHEMERAL)
        placed += 1
    return placed


# ---------------------------------------------------------------- response translation


def response_from_api(message: Any, fallback_model: str) -> ModelResponse:
    blocks: list[Block] = []
    for b in message.content:
        kind = getattr(b, "type", None)
        if kind == "text":
            blocks.append(TextBlock(text=b.text))
        elif kind == "tool_use":
            if not isinstance(b.input, dict):
                raise ModelError(f"{fallback_model}: unusable response: the input of tool call {b.name!r} "
                                 f"is not a JSON object ({type(b.input).__name__})")
            blocks.append(ToolUseBlock(id=b.id, name=b.name, input=dict(b.input)))
        # thinking / redacted_thinking / server tool blocks are not part of our seam: skipped
    u = message.usage
    usage = Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=u.output_tokens or 0,
        cache_creation_input_tokens=getattr(u, "cache_creation_input_tokens", None) or 0,
        cache_read_input_tokens=getattr(u, "cache_read_input_tokens", None) or 0,
    )
    return ModelResponse(
        content=blocks,
        stop_reason=StopReason.parse(message.stop_reason),
        usage=usage,
        model=getattr(message, "model", None) or fallback_model,
    )


def _strict_tool_input(raw: str) -> Any:
    """A streamed tool input exactly as sent: `{"q": "tri` (cut off) is an error, not `{}` or
    `{"q": "tri"}` as the SDK's lenient parser makes of it. No fragments at all is an empty input."""
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"a streamed tool input is not valid JSON ({err.msg} at {err.pos}): {raw[:80]!r}") from None


# ---------------------------------------------------------------- the model


class AnthropicModel(PooledAdapter):
    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        limiter: RateLimiter | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        max_backoff: float = 30.0,
        backoff_base: float = 0.5,
    ) -> None:
        key = api_key
        if not key:
            raise ModelAuthError(
                f"{API_KEY_ENV} is not set: export it to use Claude models "
                "(or run offline with --lead-model extractive --subagent-model extractive)"
            )
        super().__init__(model, limiter=limiter, timeout=timeout, max_retries=max_retries,
                         max_backoff=max_backoff, backoff_base=backoff_base)
        self._api_key = key
        # explicit, so the SDK never falls back to reading the environment itself
        self._base_url = base_url or DEFAULT_BASE_URL

    def __repr__(self) -> str:  # never shows the key
        return f"AnthropicModel({self.name!r}, base_url={self._base_url!r})"

    def _new_client(self) -> anthropic.AsyncAnthropic:
        ctx = _shared_ssl_context()
        http = {} if ctx is None else {"http_client": anthropic.DefaultAsyncHttpxClient(verify=ctx)}
        return anthropic.AsyncAnthropic(api_key=self._api_key, base_url=self._base_url, max_retries=0,
                                        timeout=self.timeout, **http)

    async def _close_client(self, client: anthropic.AsyncAnthropic) -> None:
        await client.close()

    def _billed_tokens(self, usage: Usage) -> int:
        return usage.input_tokens + usage.cache_creation_input_tokens + usage.output_tokens  # cache reads are not

    async def complete(self, request: ModelRequest) -> ModelResponse:
        params = build_params(request, self.name)
        return await self._with_retries(request, lambda: self._attempt(copy.deepcopy(params), request.stream))

    async def _attempt(self, params: dict[str, Any], stream: bool) -> ModelResponse:
        client = self._get_client()
        try:
            if stream:
                message = await self._streamed(client, params)
            else:
                with trio.fail_after(self.timeout):
                    message = await client.messages.create(**params)
        except trio.TooSlowError:
            raise TransientError("timeout", f"no answer within {self.timeout:g}s") from None
        except anthropic.APITimeoutError:
            raise TransientError("timeout", f"no answer within {self.timeout:g}s") from None
        except anthropic.APIConnectionError as err:
            raise TransientError("connection_error", str(err) or type(err).__name__) from None
        except anthropic.APIStatusError as err:
            raise self._classify(err) from None
        except anthropic.AnthropicError as err:
            raise ModelError(f"{self.name}: {type(err).__name__}: {err}") from None
        except _TRANSPORT_ERRORS as err:  # raised raw by the SDK's HTTP client while a stream is read
            raise transport_transient(err, timed_out=isinstance(err, _TIMEOUT_ERRORS), timeout=self.timeout) from None
        except ValueError as err:  # e.g. a streamed tool input that is not JSON
            raise ModelError(f"{self.name}: unusable response: {err}") from None
        if message.stop_reason is None:  # a reply always ends with its stop reason
            raise TransientError(INCOMPLETE, "the reply arrived without a stop reason")
        return response_from_api(message, self.name)

    async def _streamed(self, client: anthropic.AsyncAnthropic, params: dict[str, Any]) -> Any:
        """The final message of a stream that ran to `message_stop`, else TransientError.
        The SDK's timeout is per read here: a long synthesis may stream for minutes."""
        async with client.messages.stream(**params) as s:
            ended = False
            tool_inputs: dict[int, list[str]] = {}  # block index -> the raw input JSON as streamed
            async for event in s:
                ended = ended or event.type == "message_stop"
                if event.type == "content_block_start" and event.content_block.type == "tool_use":
                    tool_inputs[event.index] = []
                elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    tool_inputs.setdefault(event.index, []).append(event.delta.partial_json)
            if not ended:
                raise TransientError(INCOMPLETE, "the stream ended before message_stop")
            message = await s.get_final_message()
        for index, parts in tool_inputs.items():  # the SDK parses partial JSON leniently: check it strictly
            message.content[index].input = _strict_tool_input("".join(parts))
        return message

    def _classify(self, err: anthropic.APIStatusError) -> Exception:
        status = err.status_code
        kind = getattr(err, "type", None)
        detail = getattr(err, "api_message", None) or str(err)
        if status < 400 and kind in _STREAM_ERROR_STATUS:  # an `error` event inside a 200 stream
            status = _STREAM_ERROR_STATUS[kind]
        label = f"{kind}: {detail}" if kind else detail
        if status in (401, 403):
            return ModelAuthError(
                f"{self.name}: the Anthropic API refused the credentials (HTTP {status} {label}); "
                f"check {API_KEY_ENV}"
            )
        if is_retryable_status(status):
            return TransientError(status, label, parse_retry_after(dict(err.response.headers)))
        return ModelError(f"{self.name}: HTTP {status} {label}")
