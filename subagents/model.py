"""The model seam: one request in (system, messages, tools, limits, a typed context), one response
out (content blocks, stop reason, usage). Every provider adapter implements `Model`.

Blocks mirror the Anthropic Messages API shapes because they are a superset of what the
other providers need; adapters translate at their edge. A model decides from typed fields only:
`request.context` says who is asking (role, allowed tools, limits, the delegation or the findings
so far); no model parses prompt prose or error wording.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol, Union, runtime_checkable

if TYPE_CHECKING:
    from .context import RequestContext


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


class ToolChoiceMode(StrEnum):
    AUTO = "auto"  # the model decides
    ANY = "any"  # it must call some tool
    NONE = "none"  # it must not call a tool
    TOOL = "tool"  # it must call the named tool


@dataclass(frozen=True)
class ToolChoice:
    mode: ToolChoiceMode = ToolChoiceMode.AUTO
    name: str | None = None  # with mode TOOL

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", ToolChoiceMode(self.mode))
        if (self.mode is ToolChoiceMode.TOOL) != bool(self.name):
            raise ValueError("a tool name goes with mode 'tool', and only with it")

    @classmethod
    def auto(cls) -> "ToolChoice":
        return cls(ToolChoiceMode.AUTO)

    @classmethod
    def any(cls) -> "ToolChoice":
        return cls(ToolChoiceMode.ANY)

    @classmethod
    def none(cls) -> "ToolChoice":
        return cls(ToolChoiceMode.NONE)

    @classmethod
    def tool(cls, name: str) -> "ToolChoice":
        return cls(ToolChoiceMode.TOOL, name)

    def __str__(self) -> str:
        return self.name if self.mode is ToolChoiceMode.TOOL and self.name else self.mode.value


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

    def total(self) -> int:
        """Every token kind: input, output, cache writes and cache reads (what budgets count)."""
        return (self.input_tokens + self.output_tokens + self.cache_creation_input_tokens
                + self.cache_read_input_tokens)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class StopReason(StrEnum):
    """Why a model ended its reply (provider values mapped onto the Messages API's)."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    PAUSE_TURN = "pause_turn"
    REFUSAL = "refusal"
    CONTEXT_EXCEEDED = "model_context_window_exceeded"
    OTHER = "other"

    @classmethod
    def parse(cls, value: str | None) -> "StopReason":
        if not value:
            return cls.END_TURN
        try:
            return cls(value)
        except ValueError:
            return cls.OTHER


@dataclass(frozen=True)
class RetryNotice:
    """An adapter is about to retry a call (reported to the calling agent's event stream)."""

    model: str
    status: int | str  # HTTP status, or "timeout" / "connection_error"
    attempt: int
    wait: float
    error: str


@dataclass
class ModelRequest:
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 4096
    tool_choice: ToolChoice = field(default_factory=ToolChoice)
    context: "RequestContext | None" = None
    stream: bool = False  # adapters: stream the reply (long outputs: no total deadline, only an idle one)
    on_retry: Callable[[RetryNotice], None] | None = None


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
