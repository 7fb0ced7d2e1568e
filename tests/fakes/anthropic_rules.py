"""Request validation for the fake Messages API: what the real POST /v1/messages refuses.

Each `check_*` function covers one group of rules and raises `Refusal` with the status, error
type and message the real API sends (the messages are copied from real API answers quoted in
public bug reports, named next to each rule; where no real wording was found the message says so
with "(fake)"). Only what the real API certainly refuses is refused: e.g. consecutive messages of
the same role are accepted, because the API merges them ("Consecutive user or assistant turns in
your request will be combined into a single turn", API reference, messages parameter:
https://docs.anthropic.com/en/api/messages).

Sources, cited below by their short name:
  [ref]      API reference, Create a Message: https://docs.anthropic.com/en/api/messages
  [errors]   error shapes: https://docs.anthropic.com/en/api/errors
  [tooluse]  https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls
  [caching]  https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
"""

from __future__ import annotations

import re
from typing import Any

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
MAX_CACHE_BREAKPOINTS = 4
TOOL_CHOICE_TYPES = ("auto", "any", "tool", "none")


class Refusal(Exception):
    def __init__(self, message: str, *, status: int = 400, type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.type, self.message = status, type, message

    def body(self) -> dict[str, Any]:
        # [errors]: {"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}
        return {"type": "error", "error": {"type": self.type, "message": self.message}, "request_id": "req_fake_refused"}


def validate(headers: dict[str, str], body: Any, *, api_key: str | None = None) -> Refusal | None:
    """The first rule `body` (parsed JSON) with `headers` (lower-cased names) breaks, or None."""
    try:
        check_credentials(headers, api_key)
        check_version_header(headers)
        check_top_level(body)
        check_system(body.get("system"))
        check_messages(body["messages"])
        check_tool_pairing(body["messages"])
        check_final_assistant(body["messages"])
        check_tools(body.get("tools"))
        check_tool_choice(body.get("tool_choice"), body.get("tools"))
        check_cache_breakpoints(body)
    except Refusal as refusal:
        return refusal
    return None


# ---------------------------------------------------------------- headers


def check_credentials(headers: dict[str, str], api_key: str | None) -> None:
    """[ref] "x-api-key: required". The anthropic SDK installed here (2.x) sends the key as
    `Authorization: Bearer <key>` instead (anthropic/_client.py, `_api_key_auth`), so either is a
    credential. Wording: 401 {"type":"authentication_error","message":"invalid x-api-key"}
    (eyaltoledano/claude-task-master#222)."""
    auth = headers.get("authorization", "")
    key = headers.get("x-api-key") or (auth[len("Bearer "):] if auth.startswith("Bearer ") else None)
    if not key:
        raise Refusal("x-api-key header is required", status=401, type="authentication_error")
    if api_key is not None and key != api_key:
        raise Refusal("invalid x-api-key", status=401, type="authentication_error")


def check_version_header(headers: dict[str, str]) -> None:
    """[ref] "anthropic-version: required" (https://docs.anthropic.com/en/api/versioning); wording
    from envoyproxy/ai-gateway#1909."""
    if not headers.get("anthropic-version"):
        raise Refusal("anthropic-version: header is required")


# ---------------------------------------------------------------- top-level fields


def check_top_level(body: Any) -> None:
    """[ref] model (string, 1-256 chars), max_tokens (integer >= 1) and messages are required;
    wording: "max_tokens: Field required", "messages: at least one message is required"
    (langgenius/dify#25953)."""
    if not isinstance(body, dict):
        raise Refusal("The request body is not valid JSON (fake)")
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            raise Refusal(f"{name}: Field required")
    model = body["model"]
    if not isinstance(model, str) or not model:
        raise Refusal("model: String should have at least 1 character")
    max_tokens = body["max_tokens"]
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise Refusal("max_tokens: Input should be a valid integer")
    if max_tokens < 1:
        raise Refusal("max_tokens: Input should be greater than or equal to 1")
    if not isinstance(body["messages"], list):
        raise Refusal("messages: Input should be a valid list")
    if not body["messages"]:
        raise Refusal("messages: at least one message is required")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise Refusal("stream: Input should be a valid boolean")


def check_system(system: Any) -> None:
    """[ref] system is a string or a list of text blocks; "there is no "system" role"."""
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise Refusal("system: Input should be a valid string or list")
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise Refusal(f"system.{i}: Input should be a text block")
        check_text(block, "system")


# ---------------------------------------------------------------- messages and blocks


def check_messages(messages: list[Any]) -> None:
    """[ref] each message is {role: "user" | "assistant", content: string | blocks}. Wording of
    the empty-content rule: "messages.1: all messages must have non-empty content except for the
    optional final assistant message" (danny-avila/LibreChat#3372)."""
    last = len(messages) - 1
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise Refusal(f"messages.{i}: Input should be a valid dictionary")
        if m.get("role") not in ("user", "assistant"):
            raise Refusal(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = m.get("content")
        if not isinstance(content, (str, list)):
            raise Refusal(f"messages.{i}.content: Input should be a valid string or list")
        if not content and not (i == last and m["role"] == "assistant"):
            raise Refusal(f"messages.{i}: all messages must have non-empty content except for the optional final assistant message")
        for j, block in enumerate(content if isinstance(content, list) else []):
            check_block(block, f"messages.{i}.content.{j}")


def check_block(block: Any, path: str) -> None:
    """Block shapes ([ref], content block params): text needs non-blank text; tool_use needs an
    id, a name and an `input` object; tool_result needs a tool_use_id and string-or-blocks content."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise Refusal(f"{path}: Input should be a valid content block")
    kind = block["type"]
    if kind == "text":
        check_text(block, "messages")
    elif kind == "tool_use":
        for name in ("id", "name"):
            if not isinstance(block.get(name), str) or not block[name]:
                raise Refusal(f"{path}.tool_use.{name}: Field required")
        if not isinstance(block.get("input"), dict):
            raise Refusal(f"{path}.tool_use.input: Input should be a valid dictionary")
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
            raise Refusal(f"{path}.tool_result.tool_use_id: Field required")
        content = block.get("content", "")
        if not isinstance(content, (str, list)):
            raise Refusal(f"{path}.tool_result.content: Input should be a valid string or list")
        for k, inner in enumerate(content if isinstance(content, list) else []):
            if isinstance(inner, dict) and inner.get("type") == "text":
                check_text(inner, "messages")
            elif not isinstance(inner, dict) or inner.get("type") not in ("image", "document", "search_result"):
                raise Refusal(f"{path}.tool_result.content.{k}: Input should be a text, image or document block")


def check_text(block: dict[str, Any], where: str) -> None:
    """Wording: "messages: text content blocks must be non-empty" (anthropics/claude-code#53473),
    "messages: text content blocks must contain non-whitespace text" (anthropics/claude-code#23440)."""
    text = block.get("text")
    if not isinstance(text, str):
        raise Refusal(f"{where}: text content blocks must have a string `text` (fake)")
    if not text:
        raise Refusal(f"{where}: text content blocks must be non-empty")
    if not text.strip():
        raise Refusal(f"{where}: text content blocks must contain non-whitespace text")


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def check_tool_pairing(messages: list[dict[str, Any]]) -> None:
    """[tooluse]: "Tool result blocks must immediately follow their corresponding tool use blocks
    in the message history" and "the tool_result blocks must come FIRST in the content array".
    Wording of both refusals: anthropics/claude-code#5989 (missing results) and
    router-for-me/CLIProxyAPI#497 (a result without its tool_use); [tooluse] names the first one
    for results that come after text."""
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            _check_uses_answered(messages, i)
        else:
            _check_results_expected(messages, i)


def _check_uses_answered(messages: list[dict[str, Any]], i: int) -> None:
    uses = [b["id"] for b in _blocks(messages[i]) if b.get("type") == "tool_use"]
    if not uses or i + 1 == len(messages):
        return  # a trailing assistant turn with tool_use: the API's rule is not certain, so allowed
    leading: set[str] = set()
    for b in _blocks(messages[i + 1]) if messages[i + 1]["role"] == "user" else []:
        if b.get("type") != "tool_result":
            break
        leading.add(b["tool_use_id"])
    missing = [u for u in uses if u not in leading]
    if missing:
        raise Refusal(
            f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        )


def _check_results_expected(messages: list[dict[str, Any]], i: int) -> None:
    prev = messages[i - 1] if i else None
    offered = {b["id"] for b in _blocks(prev) if b.get("type") == "tool_use"} if prev and prev["role"] == "assistant" else set()
    for j, b in enumerate(_blocks(messages[i])):
        if b.get("type") == "tool_result" and b["tool_use_id"] not in offered:
            raise Refusal(
                f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {b['tool_use_id']}. "
                "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            )


def check_final_assistant(messages: list[dict[str, Any]]) -> None:
    """A final assistant turn is a prefill ([ref]: "the response content will continue immediately
    from the content in that message"); wording: "messages: final assistant content cannot end
    with trailing whitespace" (tailcallhq/forgecode#1872)."""
    last = messages[-1]
    blocks = _blocks(last) if last["content"] else []
    if last["role"] == "assistant" and blocks and blocks[-1].get("type") == "text":
        text = blocks[-1].get("text", "")
        if text != text.rstrip():
            raise Refusal("messages: final assistant content cannot end with trailing whitespace")


# ---------------------------------------------------------------- tools


def check_tools(tools: Any) -> None:
    """[ref] custom tools: name, optional description, input_schema (a JSON Schema object). The
    name pattern is the one the API enforces today: "tools.0.custom.name: String should match
    pattern '^[a-zA-Z0-9_-]{1,128}$'" (home-assistant/core#147760); older docs said {1,64}.
    Tools with a `type` other than "custom" (server tools) are not checked."""
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Refusal("tools: Input should be a valid list")
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise Refusal(f"tools.{i}: Input should be a valid dictionary")
        if tool.get("type", "custom") != "custom":
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise Refusal(f"tools.{i}.custom.name: String should match pattern '{TOOL_NAME.pattern}'")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise Refusal(f"tools.{i}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise Refusal(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        if name in seen:
            raise Refusal("tools: Tool names must be unique.")
        seen.add(name)


def check_tool_choice(choice: Any, tools: Any) -> None:
    """[ref] tool_choice is {"type": "auto" | "any" | "tool" | "none"}; "tool" names one of
    `tools` (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use)."""
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in TOOL_CHOICE_TYPES:
        raise Refusal("tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'")
    if choice["type"] == "tool":
        names = {t.get("name") for t in tools or [] if isinstance(t, dict)}
        if not isinstance(choice.get("name"), str):
            raise Refusal("tool_choice.tool.name: Field required")
        if choice["name"] not in names:
            raise Refusal(f"tool_choice: tool {choice['name']!r} is not one of the provided tools (fake)")


# ---------------------------------------------------------------- prompt caching


def check_cache_breakpoints(body: dict[str, Any]) -> None:
    """[caching] "You can define up to 4 cache breakpoints"; counted over tools, system and every
    message block (tool_result content included). Wording: "A maximum of 4 blocks with
    cache_control may be provided. Found 5." (tghamm/Anthropic.SDK#50)."""
    marked = [b for b in _cacheable(body) if isinstance(b, dict) and "cache_control" in b]
    for b in marked:
        if not isinstance(b["cache_control"], dict) or b["cache_control"].get("type") != "ephemeral":
            raise Refusal("cache_control: Input tag does not match the expected tag: 'ephemeral'")
    if len(marked) > MAX_CACHE_BREAKPOINTS:
        raise Refusal(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marked)}.")


def _cacheable(body: dict[str, Any]) -> list[Any]:
    out: list[Any] = list(body.get("tools") or [])
    if isinstance(body.get("system"), list):
        out += body["system"]
    for m in body["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            out.append(b)
            if isinstance(b, dict) and isinstance(b.get("content"), list):
                out += b["content"]
    return out
