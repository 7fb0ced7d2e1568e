"""The model seam: one request in (system, messages, tools, limits), one response out
(content blocks, stop reason, usage). Every provider adapter implements `Model`.

Blocks mirror the Anthropic Messages API shapes because they are a superset of what the
other providers need; adapters translate at their edge.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, Union, runtime_checkable


@dataclass
class TextBlock:
    text: str
    type: Literal["text"] = "text"


@dataclass
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"


@dataclass
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


Block = Union[TextBlock, ToolUseBlock, ToolResultBlock]


@dataclass
class Message:
    role: Literal["user", "assistant"]
    content: list[Block]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": [asdict(b) for b in self.content]}


@dataclass
class ToolSpec:
    """What a model is told about a tool."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class ModelRequest:
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 4096
    # "auto" (default), "any" (must call some tool), "none", or a tool name (must call it).
    tool_choice: str = "auto"
    # Hints for adapters (agent id, role, whether to stream). Never used to decide content.
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


StopReason = str  # "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn" | ...


@dataclass
class ModelResponse:
    content: list[Block]
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": [asdict(b) for b in self.content],
            "stop_reason": self.stop_reason,
            "usage": self.usage.to_dict(),
            "model": self.model,
        }


class ModelError(Exception):
    """A model call failed in a way the caller should report (after any retries)."""


class ModelAuthError(ModelError):
    """Credentials missing or rejected: retrying will not help; the run fails."""


@runtime_checkable
class Model(Protocol):
    """A provider adapter. `name` is the model id recorded in manifests and transcripts."""

    name: str
    # True when no language model is involved (the report says so).
    is_language_model: bool

    async def complete(self, request: ModelRequest) -> ModelResponse: ...


def block_from_dict(d: dict[str, Any]) -> Block:
    kind = d.get("type")
    if kind == "text":
        return TextBlock(text=d["text"])
    if kind == "tool_use":
        return ToolUseBlock(id=d["id"], name=d["name"], input=d.get("input") or {})
    if kind == "tool_result":
        return ToolResultBlock(
            tool_use_id=d["tool_use_id"], content=d.get("content", ""), is_error=bool(d.get("is_error"))
        )
    raise ValueError(f"unknown block type {kind!r}")
