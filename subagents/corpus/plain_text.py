"""Markdown, reStructuredText and plain text to a `Document`.

Deliberately light: headings and paragraphs are what matter for retrieval. Markdown: ATX ('#')
and setext headings, fenced code kept verbatim as a block of its own, without its fences (a '# comment'
inside a fence is not a heading),
links reduced to their text. reST: underlined (optionally overlined) headings, levels in order of
first appearance of each adornment style; `:role:`text`` and ``literal`` reduced to their text.
Plain text: paragraphs only; the title is the first line when it is short, else the file name.
"""

from __future__ import annotations

import re

from .chunking import Block, Document

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_RST_ADORN = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
_RST_ROLE = re.compile(r":[\w:+.-]+:`([^`]*?)(?:\s*<[^>]*>)?`")
_RST_LITERAL = re.compile(r"``([^`]+)``")
_RST_TARGET = re.compile(r"^\.\. _[^:]*:\s*\S*\s*$")


def _paragraphs(lines: list[str]) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    for line in lines:
        if line.strip():
            cur.append(line.rstrip())
        elif cur:
            out.append("\n".join(cur))
            cur = []
    if cur:
        out.append("\n".join(cur))
    return out


class _Builder:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.lines: list[str] = []

    def flush(self) -> None:
        for p in _paragraphs(self.lines):
            self.blocks.append(Block(p.strip("\n")))
        self.lines = []

    def code(self, lines: list[str]) -> None:
        """A fenced block's lines, as they are (blank lines too), without its fences: code, like HTML's <pre>."""
        text = "\n".join(lines).strip("\n")
        if text.strip():
            self.blocks.append(Block(text))

    def heading(self, level: int, text: str) -> None:
        self.flush()
        text = text.strip()
        if text:
            self.blocks.append(Block(text, min(level, 6)))


def _first_h1(blocks: list[Block]) -> str:
    return next((b.text for b in blocks if b.level == 1), "") or next((b.text for b in blocks if b.level), "")


def markdown_to_document(text: str, fallback_title: str) -> Document:
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i, l in enumerate(lines[1:], 1) if l.strip() in ("---", "...")), None)
        if end is not None:
            lines = lines[end + 1 :]
    b = _Builder()
    fence = ""
    code: list[str] = []
    for line in lines:
        if fence:
            if line.strip().startswith(fence):
                fence = ""
                b.code(code)
                code = []
            else:
                code.append(line)
            continue
        m = _FENCE.match(line)
        if m:
            b.flush()
            fence = m.group(1)[0] * 3
            continue
        m = _ATX.match(line)
        if m:
            b.heading(len(m.group(1)), m.group(2))
            continue
        m = _SETEXT.match(line)
        if m:
            prev = b.lines[-1].strip() if b.lines else ""
            if prev and (len(b.lines) == 1 or not b.lines[-2].strip()):
                b.lines.pop()
                b.heading(1 if m.group(1)[0] == "=" else 2, prev)
                continue
            if not prev:  # a thematic break, not text
                continue
        b.lines.append(_MD_LINK.sub(r"\1", line))
    b.code(code)  # (a fence never closed runs to the end of the file)
    b.flush()
    return Document(_first_h1(b.blocks) or fallback_title, b.blocks)


def _level(styles: list[tuple[str, bool]], style: tuple[str, bool]) -> int:
    if style not in styles:
        styles.append(style)
    return styles.index(style) + 1


def rst_to_document(text: str, fallback_title: str) -> Document:
    lines = text.splitlines()
    b = _Builder()
    styles: list[tuple[str, bool]] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < n else ""
        title = line.strip()
        # overline + title + underline
        if _RST_ADORN.match(line) and i + 2 < n and lines[i + 1].strip() and _RST_ADORN.match(lines[i + 2]) \
                and lines[i + 2].strip()[0] == line.strip()[0]:
            b.heading(_level(styles, (line.strip()[0], True)), lines[i + 1].strip())
            i += 3
            continue
        if title and not line[0].isspace() and _RST_ADORN.match(nxt) and len(nxt.strip()) >= min(len(title), 4) \
                and not _RST_ADORN.match(line) and (not b.lines or not b.lines[-1].strip()):
            b.heading(_level(styles, (nxt.strip()[0], False)), title)
            i += 2
            continue
        if not _RST_TARGET.match(line):
            b.lines.append(_RST_LITERAL.sub(r"\1", _RST_ROLE.sub(r"\1", line)))
        i += 1
    b.flush()
    return Document(_first_h1(b.blocks) or fallback_title, b.blocks)


def text_to_document(text: str, fallback_title: str) -> Document:
    b = _Builder()
    b.lines = text.splitlines()
    b.flush()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return Document(first if 0 < len(first) <= 100 else fallback_title, b.blocks)
