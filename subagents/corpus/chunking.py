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
TERM_BREAK = 500  # a definition term starts a new passage once the one being built holds this many characters
HEADING_SEP = " > "


@dataclass(frozen=True, slots=True)
class Block:
    text: str
    level: int = 0  # 1..6 for a heading, 0 for body text
    key: str = ""  # an anchor name (e.g. a Sphinx object id "asyncio.TaskGroup"), weighted like a heading
    anchors: tuple[str, ...] = ()  # element ids at or just before the block (link targets: "page.html#id")
    term: bool = False  # a term a definition list names (<dt>): it heads the blocks after it


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


def _heads(part: tuple[str, str, tuple[str, ...], bool]) -> bool:
    """A definition term, or a short line introducing what follows ("Example:")."""
    text, _, _, term = part
    return term or (len(text) < 300 and text.rstrip().endswith(":"))


def chunk_document(doc: Document, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """Group body blocks into passages that never cross a heading and never exceed `max_chars`.
    A term a definition list names (an API signature, a `<dt>`) or a line introducing what follows
    ("Example:") is never left at the end of a passage: it moves to the next one, with what it heads.
    A definition term also opens a passage of its own when the one being built is past `TERM_BREAK`: an
    API entry's signature and description then open a passage, where its ranking by meaning (which reads
    a passage's opening) sees them, instead of trailing a passage about the entry before."""
    chunks: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    parts: list[tuple[str, str, tuple[str, ...], bool]] = []  # (text, key, anchors, term) of the passage being built
    opening: list[str] = []  # ids of the heading that opens it
    size = 0

    def flush() -> None:
        nonlocal size
        if parts:
            heading = HEADING_SEP.join(t for _, t in stack)
            # the title has its own (heavier) column: do not count it twice
            inner = [t for i, (_, t) in enumerate(stack) if i or t != doc.title]
            keys = list(dict.fromkeys(k for _, k, _, _ in parts if k))
            anchors = dict.fromkeys([*opening, *(a for _, _, ids, _ in parts for a in ids)])
            chunks.append(Chunk(heading, " ".join(inner + keys), "\n\n".join(t for t, _, _, _ in parts),
                                " ".join(anchors)))
            opening.clear()
        parts.clear()
        size = 0

    for block in doc.blocks:
        if block.level:
            flush()
            opening.extend(block.anchors)  # a heading's ids name the passage it opens
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.text))
            continue
        if block.term and size >= TERM_BREAK and not _heads(parts[-1]):
            flush()  # (a term right after a term is one entry with several signatures)
        for i, piece in enumerate(split_long(block.text, max_chars)):
            if parts and size + 2 + len(piece) > max_chars:
                carried: list[tuple[str, str, tuple[str, ...], bool]] = []
                while len(parts) > 1 and _heads(parts[-1]):  # a term goes along with its description
                    carried.insert(0, parts.pop())
                flush()
                parts.extend(carried)
                size = sum(len(c[0]) + 2 for c in carried)
            parts.append((piece, block.key if i == 0 else "", block.anchors if i == 0 else (), block.term and i == 0))
            size += len(piece) + 2
    flush()
    return chunks
