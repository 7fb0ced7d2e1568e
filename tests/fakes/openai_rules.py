"""Request validation for the fake chat-completions API: what POST /v1/chat/completions refuses.

Each `check_*` covers one group of rules and raises `Refusal`; its body has the real shape
{"error": {"message", "type", "param", "code"}} with `code` a string or null, never a number
(https://platform.openai.com/docs/guides/error-codes; the openai SDK reads these four keys,
openai/_exceptions.py APIError). Messages are the real API's wording where a public bug report
quotes it (named next to each rule); "(fake)" marks our own wording. Only what OpenAI certainly
refuses is refused; Ollama, vLLM and llama.cpp accept a superset of some of these (e.g. a dangling
tool call) but a client that passes here works with all of them.

Sources, cited below by their short name:
  [ref]   https://platform.openai.com/docs/api-reference/chat/create
  [fc]    https://platform.openai.com/docs/guides/function-calling
"""

from __future__ import annotations

import re
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # [ref] tools[].function.name


class Refusal(Exception):
    def __init__(self, message: str, *, param: str | None = None, code: str | None = None,
                 status: int = 400, type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message, self.param, self.code, self.status, self.type = message, param, code, status, type

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def validate(headers: dict[str, str], body: Any, *, api_key: str | None = None) -> Refusal | None:
    """The first rule the request breaks, or None."""
    try:
        check_credentials(headers, api_key)
        check_top_level(body)
        check_messages(body["messages"])
        check_tool_pairing(body["messages"])
        check_tools(body.get("tools"))
        check_tool_choice(body.get("tool_choice"), body.get("tools"))
        check_stream_options(body)
    except Refusal as refusal:
        return refusal
    return None


def check_credentials(headers: dict[str, str], api_key: str | None) -> None:
    """Only when the fake was given a key (a local server such as Ollama takes none). Wording:
    "Incorrect API key provided: ...", code "invalid_api_key" (OpenAI 401 answers)."""
    if api_key is None:
        return
    if headers.get("authorization") != f"Bearer {api_key}":
        raise Refusal("Incorrect API key provided (fake key check).", status=401, code="invalid_api_key")


def check_top_level(body: Any) -> None:
    """[ref] model and messages are required; max_tokens, if given, is an integer >= 1."""
    if not isinstance(body, dict):
        raise Refusal("We could not parse the JSON body of your request. (fake)")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Refusal("you must provide a model parameter")
    if "messages" not in body:
        raise Refusal("Missing required parameter: 'messages'.", param="messages", code="missing_required_parameter")
    if not isinstance(body["messages"], list) or not body["messages"]:
        raise Refusal("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                      param="messages", code="empty_array")
    for name in ("max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise Refusal(f"Invalid '{name}': integer below minimum value. Expected a value >= 1, but got {value!r} instead.",
                          param=name, code="integer_below_min_value")


def check_messages(messages: list[Any]) -> None:
    """[ref] message shapes by role: an assistant message needs `content` unless it has
    `tool_calls`; a tool message needs `tool_call_id`; tool_calls need id, type "function",
    function.name and function.arguments (a JSON string)."""
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            role = m.get("role") if isinstance(m, dict) else None
            raise Refusal(f"Invalid value: {role!r}. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
                          param=f"messages[{i}].role", code="invalid_value")
        if m["role"] == "assistant":
            _check_assistant(m, i)
        elif m.get("content") is None:
            raise Refusal(f"Missing required parameter: 'messages[{i}].content'.", param=f"messages[{i}].content",
                          code="missing_required_parameter")
        if m["role"] == "tool" and not isinstance(m.get("tool_call_id"), str):
            raise Refusal(f"Missing required parameter: 'messages[{i}].tool_call_id'.", param=f"messages[{i}].tool_call_id",
                          code="missing_required_parameter")


def _check_assistant(m: dict[str, Any], i: int) -> None:
    calls = m.get("tool_calls")
    if m.get("content") is None and not calls:
        # wording: OpenAI's answer to {"role": "assistant", "content": null} without tool_calls
        raise Refusal("Invalid value for 'content': expected a string, got null.", param=f"messages.[{i}].content")
    for k, call in enumerate(calls or []):
        where = f"messages[{i}].tool_calls[{k}]"
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            raise Refusal(f"Missing required parameter: '{where}.id'.", param=f"{where}.id", code="missing_required_parameter")
        if call.get("type") != "function" or not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise Refusal(f"Missing required parameter: '{where}.function'.", param=f"{where}.function",
                          code="missing_required_parameter")
        if not isinstance(fn.get("arguments"), str):
            got = type(fn.get("arguments")).__name__
            raise Refusal(f"Invalid type for '{where}.function.arguments': expected a string, but got {got} instead.",
                          param=f"{where}.function.arguments", code="invalid_type")


def check_tool_pairing(messages: list[dict[str, Any]]) -> None:
    """[fc]: the results of an assistant message's tool calls come back as `tool` messages, one per
    tool_call_id, right after it. Wording of both refusals: "Invalid parameter: messages with role
    'tool' must be a response to a preceeding message with 'tool_calls'." (param
    "messages.[3].role", code null: miurla/morphic#136) and "An assistant message with 'tool_calls'
    must be followed by tool messages responding to each 'tool_call_id'. The following
    tool_call_ids did not have response messages: ..." (aliasrobotics/cai#111)."""
    pending: list[str] = []  # calls of the last assistant message not answered yet
    offered: set[str] = set()  # every call id of that assistant message
    owner = -1  # its index
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            if m["tool_call_id"] not in offered:
                raise Refusal("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                              param=f"messages.[{i}].role")
            pending = [c for c in pending if c != m["tool_call_id"]]
            continue
        _refuse_unanswered(pending, owner)
        calls = [c["id"] for c in m.get("tool_calls") or []] if m["role"] == "assistant" else []
        pending, offered, owner = list(calls), set(calls), i
    _refuse_unanswered(pending, owner)


def _refuse_unanswered(pending: list[str], owner: int) -> None:
    if pending:
        raise Refusal("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                      f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}",
                      param=f"messages.[{owner}].role")


def check_tools(tools: Any) -> None:
    """[ref] tools are {"type": "function", "function": {"name", "description"?, "parameters"?}};
    the name "must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64"."""
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Refusal("Invalid type for 'tools': expected an array.", param="tools", code="invalid_type")
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            raise Refusal(f"Missing required parameter: 'tools[{i}].function'.", param=f"tools[{i}].function",
                          code="missing_required_parameter")
        if not isinstance(fn.get("name"), str) or not FUNCTION_NAME.match(fn["name"]):
            raise Refusal(f"Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string that matches "
                          "the pattern '^[a-zA-Z0-9_-]+$'.", param=f"tools[{i}].function.name", code="invalid_value")
        params = fn.get("parameters")
        if params is not None and (not isinstance(params, dict) or params.get("type", "object") != "object"):
            raise Refusal(f"Invalid schema for function '{fn['name']}': schema must be a JSON Schema of 'type: \"object\"'.",
                          param=f"tools[{i}].function.parameters", code="invalid_function_parameters")


def check_tool_choice(choice: Any, tools: Any) -> None:
    """[ref] tool_choice is "none" | "auto" | "required" | {"type": "function", "function": {"name"}},
    and only allowed when `tools` are given."""
    if choice is None:
        return
    if not tools:
        raise Refusal("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                      param="tool_choice")
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise Refusal(f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and 'required'.",
                          param="tool_choice", code="invalid_value")
        return
    name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) and choice.get("type") == "function" else None
    if not isinstance(name, str):
        raise Refusal("Missing required parameter: 'tool_choice.function'.", param="tool_choice.function",
                      code="missing_required_parameter")
    if name not in {(t.get("function") or {}).get("name") for t in tools}:
        raise Refusal(f"Invalid value for 'tool_choice': function '{name}' is not one of 'tools' (fake).", param="tool_choice")


def check_stream_options(body: dict[str, Any]) -> None:
    """[ref] stream_options: "Only set this when you set stream: true"."""
    if body.get("stream_options") is not None and not body.get("stream"):
        raise Refusal("The 'stream_options' parameter is only allowed when 'stream' is enabled.", param="stream_options")
