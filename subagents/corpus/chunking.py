"""Documents as a flat list of blocks, and the chunker that turns them into passages.

Every extractor (HTML, Markdown, reST, plain text) produces a `Document`: a title and a sequence
of `Block`s, each either a heading (level 1-6) or a paragraph-like run of body text. The chunker
groups consecutive body blocks under the same heading path into passages of at most `max_chars`,
splitting only at block (paragraph) boundaries unless a single block is itself too long.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_CHARS = 1500
HEADING_SEP = " > "


@dataclass(frozen=True, slots=True)
class Block:
    text: str
    level: int = 0  # 1..6 for a heading, 0 for body text
    key: str = ""  # an anchor name (e.g. a Sphinx object id "asyncio.TaskGroup"), weighted like a heading
    anchors: tuple[str, ...] = ()  # element ids at or just before the block (link targets: "page.html#id")


@dataclass(slots=True)
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
    entries: list[Any] = field(default_factory=list)  # an index page: its `thesaurus.IndexEntry`s, no blocks


@dataclass(frozen=True, slots=True)
class Chunk:
    heading: str  # heading path, "Coroutines and Tasks > Task Groups"
    keys: str  # what the FTS `headings` column holds: headings below the title, plus anchor names
    text: str
    anchors: str = ""  # the element ids inside the passage (and of the heading that opens it), space-separated


def split_long(text: str, max_chars: int = MAX_CHARS) -> list[str]:
    """Split one over-long block at line breaks, then at spaces, then hard, into <= max_chars pieces."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    cur = ""
    for line in text.split("\n"):
        while len(line) > max_chars:
            cut = line.rfind(" ", max_chars // 2, max_chars)
            cut = cut if cut > 0 else max_chars
            if cur:
                pieces.append(cur)
                cur = ""
            pieces.append(line[:cut].rstrip())
            line = line[cut:].lstrip()
        if cur and len(cur) + 1 + len(line) > max_chars:
            pieces.append(cur)
            cur = line
        else:
            cur = f"{cur}\n{line}" if cur else line
    if cur.strip():
        pieces.append(cur)
    return [p for p in pieces if p.strip()]


def chunk_document(doc: Document, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """Group body blocks into passages that never cross a heading and never exceed `max_chars`."""
    chunks: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    parts: list[str] = []
    keys: list[str] = []
    anchors: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal size
        if parts:
            heading = HEADING_SEP.join(t for _, t in stack)
            # the title has its own (heavier) column: do not count it twice
            inner = [t for i, (_, t) in enumerate(stack) if i or t != doc.title]
            key_text = " ".join(inner + keys)
            chunks.append(Chunk(heading, key_text, "\n\n".join(parts), " ".join(dict.fromkeys(anchors))))
            anchors.clear()
        parts.clear()
        keys.clear()
        size = 0

    for block in doc.blocks:
        if block.level:
            flush()
            anchors.extend(block.anchors)  # a heading's ids name the passage it opens
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.text))
            continue
        for i, piece in enumerate(split_long(block.text, max_chars)):
            if parts and size + 2 + len(piece) > max_chars:
                flush()
            if i == 0:
                anchors.extend(block.anchors)
            parts.append(piece)
            size += len(piece) + 2
        if block.key and block.key not in keys:
            keys.append(block.key)
    flush()
    return chunks
