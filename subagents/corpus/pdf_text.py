"""PDF to a `Document`: lines rebuilt from positioned text runs, so a manual reads as headings,
paragraphs and code, each block anchored to the pages it is on (`page=N`, N counted from 1 as a
viewer's `file.pdf#page=N` does).

pypdf reports every text run with its position, font and size (`extract_text(visitor_text=…)`).
From those:
- **lines**: runs on one baseline, in the order the page draws them; a small raised run inside a
  line is a footnote mark (dropped), or an exponent after a digit (`2^31`);
- **headings**: from the outline (bookmarks) when the PDF has one — its entry is matched to the
  line it points at, whose wording (with the section number) becomes the heading, one level per
  outline depth; a short line set wholly in bold below them is a subheading ("Arguments",
  "Details"). Without an outline, lines in a larger type than the body are headings, one level per
  size;
- **paragraphs**: a line starts one after a gap wider than the body's line spacing, when it is
  indented past the line before and that one ended a sentence (a first-line indent), or when it is
  set left of an indented block (a list item); lines within one are joined, across a page break too,
  a hyphen at a line end removed unless the document spells the word with it elsewhere;
- **code**: consecutive lines set wholly in a monospaced font are one block, lines kept, indentation
  rebuilt from their positions;
- **footnotes** (smaller type below the body) come after the paragraph that runs past them;
- **dropped**: running heads and feet (a page's top or bottom line holding its page number, or
  recurring on many pages), and pages of a table of contents or a back-of-book index (most lines
  end with a page number).
The title is the document's metadata title, else the first page's largest type when it is larger than the
body's, else the file name.
"""

from __future__ import annotations

import io
import logging
import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from .chunking import Block, Document

_MONO = re.compile(r"mono|courier|typewriter|consol|inconsolata|code|fixed|cmtt|cmsltt|cmitt|lmtt|\btt|tt\d", re.I)
_BOLD = re.compile(r"bold|\bbd\b|-bd|medi|heavy|black|semibold|demi|cmbx|cmb\d", re.I)
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "st", "\ufb06": "st", "\u00ad": ""})
_SPACES = re.compile(r"\s{2,}")
_NORM = re.compile(r"[^0-9a-z]+")
_PAGE_REF = re.compile(r"(?:^|[\s.,])(\d{1,4}|[ivxlc]{1,6})(?:\s*[-–]\s*\d{1,4})?\s*$", re.I)
_LEADER = ". . . ."
_NOTE_MARK = re.compile(r"^(?:\d{1,3}|[*†‡§¶])(?:\s|$)")  # a footnote's number (or sign) opening its line
_NUMBERING = re.compile(r"(?:chapter|appendix|part|section)?[0-9a-z]?[0-9]{0,8}")  # before a heading, normalised
_NUMBER = re.compile(r"[-+−]?\d+(?:[.,]\d+)*%?")
_HYPHENATED = re.compile(r"([A-Za-z]{2,})-$")
_WORD_START = re.compile(r"^([a-z]{2,})")
_SENTENCE_END = re.compile(r"[.!?:;]['’”)]*$")
_ITEM = re.compile(r"^(?:[•◦▪‣·∗*–—-]\s|\(?[0-9]{1,2}[.)]\s|\(?[a-z][.)]\s)")
MAX_TITLE = 150
MAX_HEADING = 150
INDEX_PAGE_SHARE = 0.6  # a page most of whose lines end in a page number lists pages (contents, index)
INDEX_PAGE_LINES = 8
RUNNING_SHARE = 0.3  # a top or bottom line on this share of the pages (3 at least) is a running head or foot


# pypdf logs what it repairs in a damaged file ("EOF marker not found") as warnings, which would
# reach the terminal through logging's last-resort handler; a file it cannot read is reported anyway
logging.getLogger("pypdf").setLevel(logging.ERROR)


class PdfUnreadable(Exception):
    """An encrypted PDF no empty password opens."""


@dataclass(slots=True)
class _Run:
    x: float
    y: float
    size: float
    font: str
    text: str


@dataclass(slots=True)
class Line:
    page: int  # 1-based
    y: float
    x: float
    size: float
    runs: list[_Run] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The runs left to right; spaces collapsed but in code."""
        joined = "".join(r.text for r in sorted(self.runs, key=lambda r: r.x)).strip()
        return joined if self.mono else _SPACES.sub(" ", joined)

    def _share(self, pattern: re.Pattern[str]) -> float:
        chars = sum(len(r.text.strip()) for r in self.runs) or 1
        return sum(len(r.text.strip()) for r in self.runs if pattern.search(r.font)) / chars

    @property
    def mono(self) -> bool:
        return self._share(_MONO) >= 0.999

    @property
    def bold(self) -> bool:
        return self._share(_BOLD) >= 0.999


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    level: int  # 1 for a top-level bookmark
    title: str
    page: int  # 1-based
    top: float | None  # the y the bookmark points at, when it says


# ---------------------------------------------------------------- reading the PDF


def _open(data: bytes) -> Any:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except Exception:
            opened = 0
        if not opened:
            raise PdfUnreadable("encrypted PDF: a password is needed")
    return reader


def _page_lines(page: Any, number: int) -> list[Line]:
    """The page's lines in drawing order; a run joins the line on its baseline (or a recent one)."""
    lines: list[Line] = []

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        text = text.replace("\n", "").translate(_LIGATURES)
        if not text.strip():
            return
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        # the type's size on the page: the font's size times the text and page matrices' scale (Word and browsers
        # write "1 Tf" and scale the text matrix to 11; TeX writes "11 Tf" and a unit matrix)
        scale = math.sqrt(abs(tm[0] * tm[3] - tm[1] * tm[2]) * abs(cm[0] * cm[3] - cm[1] * cm[2])) or 1.0
        size = float(size) * scale if size else 0.0
        name = str(font.get("/BaseFont", "")) if font else ""
        run = _Run(x, y, size, name, text)
        for line in reversed(lines[-3:]):
            tol = 0.35 * max(line.size, size, 1.0)
            if abs(y - line.y) <= tol:
                line.runs.append(run)
                line.size = max(line.size, size)
                line.x = min(line.x, x)
                return
            if size < 0.85 * line.size and 0 < y - line.y <= line.size:
                last = max(line.runs, key=lambda r: r.x).text.rstrip()
                if last[-1:].isdigit() or last[-1:] in ")]":  # an exponent: 2^31
                    line.runs.append(_Run(x, line.y, size, name, "^" + text.strip()))
                return  # else a footnote mark raised above the line
        lines.append(Line(number, y, x, size, [run]))

    try:
        page.extract_text(visitor_text=visit)
    except Exception:  # one bad page must not lose the others
        return []
    return lines


def _outline(reader: Any) -> list[OutlineEntry]:
    out: list[OutlineEntry] = []

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:
                continue
            if page is None or page < 0:
                continue
            top = item.get("/Top")
            title = " ".join(str(item.title or "").split())
            if title:
                out.append(OutlineEntry(depth + 1, title, page + 1, float(top) if top is not None else None))

    try:
        walk(reader.outline, 0)
    except Exception:
        return []
    return out


def _labels(reader: Any, n: int) -> list[str]:
    try:
        labels = list(reader.page_labels)
    except Exception:
        labels = []
    return labels if len(labels) == n else [str(i + 1) for i in range(n)]


def _meta_title(reader: Any) -> str:
    try:
        meta = reader.metadata
        title = " ".join(str(meta.title).split()) if meta is not None and meta.title else ""
    except Exception:
        return ""
    return title if 0 < len(title) <= MAX_TITLE and title.lower() not in ("untitled", "title") else ""


# ---------------------------------------------------------------- what a page holds


def _norm(text: str) -> str:
    return _NORM.sub("", text.lower())


def lists_pages(lines: list[Line]) -> bool:
    """A table of contents or a back-of-book index: most lines end with a page number."""
    texts = [ln.text for ln in lines if ln.text]
    if len(texts) < INDEX_PAGE_LINES:
        return False
    listing = sum(1 for t in texts if (_PAGE_REF.search(t) and len(t) > 3) or _LEADER in t)
    return listing >= INDEX_PAGE_SHARE * len(texts)


def footnotes(lines: list[Line], body: float) -> tuple[list[Line], list[Line]]:
    """The page's lines and its footnotes apart: smaller type below its lowest line of body text (drawn there
    while a paragraph runs on to the next page, they must not cut it)."""
    prose = [ln.y for ln in lines if not ln.mono and abs(ln.size - body) < 0.5]
    if not prose:
        return lines, []
    bottom = min(prose)
    foot = [ln for ln in lines if ln.y < bottom and ln.size < 0.92 * body]
    return [ln for ln in lines if ln not in foot], foot


def _edges(lines: list[Line]) -> set[int]:
    """The page's top and bottom lines."""
    if not lines:
        return set()
    return {max(range(len(lines)), key=lambda k: lines[k].y), min(range(len(lines)), key=lambda k: lines[k].y)}


def _unnumbered(text: str) -> str:
    return _NORM.sub("", re.sub(r"\d+", "", text.lower()))


def repeated_edges(pages: list[list[Line]]) -> set[str]:
    """Top or bottom lines that recur, numbers aside, on a good share of the pages: a running head or foot
    ("Shared MIME-info Database" atop every page, "Page 3 of 17")."""
    seen: Counter[str] = Counter()
    for lines in pages:
        seen.update({_unnumbered(lines[i].text) for i in _edges(lines)} - {""})
    least = max(3, RUNNING_SHARE * len(pages))
    return {text for text, n in seen.items() if n >= least}


def _running(lines: list[Line], label: str, keep: set[int], repeated: set[str]) -> set[int]:
    """Indexes of the page's running head and foot: its top and bottom lines when they hold the page's
    label as a word of their own, are nothing but a page number, or recur atop or below many pages."""
    drop: set[int] = set()
    for i in _edges(lines):
        if i in keep:
            continue
        words = lines[i].text.split()
        if not words:
            continue
        if label in (words[0], words[-1]) or (len(words) == 1 and _PAGE_REF.fullmatch(words[0])) \
                or _unnumbered(lines[i].text) in repeated:
            drop.add(i)
    return drop


def _wrapped(lines: list[Line], i: int) -> bool:
    """Line i+1 goes on line i's heading: the same type, right below it."""
    if i + 1 >= len(lines):
        return False
    a, b = lines[i], lines[i + 1]
    return abs(a.size - b.size) < 0.5 and 0 < a.y - b.y <= 1.6 * a.size and a.bold == b.bold


def _match_outline(lines: list[Line], entry: OutlineEntry, taken: set[int]) -> tuple[int, int] | None:
    """(first line, lines) of what an outline entry points at: its wording, maybe with a section number
    before it or the topic's title after it, on one line or wrapped onto a second, at or below the
    entry's y (the closest)."""
    want = _norm(entry.title)
    if not want:
        return None
    best: tuple[float, int, int] | None = None
    for i, line in enumerate(lines):
        if i in taken:
            continue
        for span in (1, 2):
            if span == 2 and (i + 1 in taken or not _wrapped(lines, i)):
                continue
            text = " ".join(ln.text for ln in lines[i:i + span])
            have = _norm(text)
            numbered = have.endswith(want) and _NUMBERING.fullmatch(have[: len(have) - len(want)])
            titled = have.startswith(want) and len(text) <= MAX_HEADING and not _SENTENCE_END.search(text)
            if not have or not (have == want or numbered or titled):
                continue
            distance = 0.0 if entry.top is None else (entry.top - line.y if line.y <= entry.top + 2 else 1e6)
            if best is None or distance < best[0]:
                best = (distance, i, span)
            break
    return None if best is None else (best[1], best[2])


# ---------------------------------------------------------------- the document


@dataclass
class _Layout:
    size: float  # the body's type size
    leading: float  # the body's line spacing
    width: int  # characters in a full line of body text
    vocab: Counter[str]  # words as the document spells them, hyphenated ones included


def _layout(pages: list[list[Line]]) -> _Layout:
    """The body text's size, line spacing and line length, from its lines of prose (a reference manual's code
    listings, set tighter, must not set the spacing paragraphs are told apart by)."""
    sizes: Counter[float] = Counter()
    lengths: list[int] = []
    gaps: Counter[float] = Counter()
    vocab: Counter[str] = Counter()
    for lines in pages:
        prev: Line | None = None
        for line in lines:
            text = line.text
            vocab.update(w.lower() for w in re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*", text))
            if line.mono:
                prev = None
                continue
            sizes[round(line.size, 1)] += len(text)
            lengths.append(len(text))
            if prev is not None and abs(prev.size - line.size) < 0.5 and 0 < prev.y - line.y < 3 * line.size:
                gaps[round(prev.y - line.y, 1)] += 1
            prev = line
    size = sizes.most_common(1)[0][0] if sizes else 10.0
    leading = gaps.most_common(1)[0][0] if gaps else 1.2 * size
    width = sorted(lengths)[int(0.8 * len(lengths))] if lengths else 80
    return _Layout(size, leading, width, vocab)


def _join(left: str, right: str, vocab: Counter[str]) -> str:
    """Two lines of one paragraph: a hyphen at the line end goes unless the document writes the word
    with it ("trade-off") and never without it."""
    m = _HYPHENATED.search(left)
    w = _WORD_START.match(right)
    if m and w:
        whole = (m.group(1) + w.group(1)).lower()
        hyphened = f"{m.group(1)}-{w.group(1)}".lower()
        return left + right if vocab[hyphened] and not vocab[whole] else left[:-1] + right
    return f"{left} {right}"


def _code(lines: list[Line]) -> str:
    left = min(ln.x for ln in lines)
    width = 0.5 * (statistics.median(ln.size for ln in lines) or 10.0)
    return "\n".join(" " * max(0, round((ln.x - left) / width)) + ln.text for ln in lines)


def figure_residue(text: str) -> bool:
    """A plot's labels and tick marks read as text ("eruptions Relative Frequency 1.5 2.0 2.5 … Fn(x)"): mostly
    numbers, no sentence. Nothing a reader could quote."""
    words = text.split()
    numbers = sum(1 for w in words if _NUMBER.fullmatch(w))
    return len(words) >= 8 and numbers >= 0.5 * len(words) and not _SENTENCE_END.search(text)


def _pages(lines: list[Line]) -> tuple[str, ...]:
    """The anchors of a block: every page its lines are on (a paragraph may run onto the next page)."""
    return tuple(dict.fromkeys(f"page={ln.page}" for ln in lines))


class _Builder:
    def __init__(self, layout: _Layout) -> None:
        self.layout = layout
        self.blocks: list[Block] = []
        self.para: list[Line] = []
        self.code: list[Line] = []
        self.para_text = ""
        self.notes: list[Block] = []

    def footnotes(self, lines: list[Line]) -> None:
        """A page's footnotes, one block each ("28 but it is available …": a new one at each mark), held
        until the paragraph in progress ends."""
        notes: list[list[Line]] = []
        for ln in lines:
            prev = notes[-1][-1] if notes else None
            if prev is None or _NOTE_MARK.match(ln.text) or prev.y - ln.y > 1.8 * max(prev.size, ln.size):
                notes.append([])  # a mark, or a gap: the next note (or a plot's labels below the notes)
            notes[-1].append(ln)
        for note in notes:
            text = ""
            for ln in note:
                text = _join(text, ln.text, self.layout.vocab) if text else ln.text
            if not figure_residue(text):  # (a plot at the foot of a page is set small too)
                self.notes.append(Block(text, anchors=_pages(note)))
        if not self.para and not self.code:
            self.flush()

    def flush(self) -> None:
        if self.para and not figure_residue(self.para_text):
            self.blocks.append(Block(self.para_text, anchors=_pages(self.para)))
        if self.code:
            self.blocks.append(Block(_code(self.code), anchors=_pages(self.code)))
        self.blocks.extend(self.notes)  # a page's footnotes, once the paragraph running past them has ended
        self.notes = []
        self.para, self.code, self.para_text = [], [], ""

    def heading(self, level: int, text: str, page: int) -> None:
        self.flush()
        self.blocks.append(Block(text, min(max(level, 1), 6), anchors=(f"page={page}",)))

    def line(self, line: Line, prev: Line | None) -> None:
        lay = self.layout
        gap = (prev.y - line.y) if prev is not None and prev.page == line.page else None
        if line.mono:
            if self.para:
                self.flush()
            if self.code and gap is not None and gap > 2.5 * lay.leading:
                self.flush()
            self.code.append(line)
            return
        if self.code:
            self.flush()
        starts = not self.para or bool(_ITEM.match(line.text))
        if self.para and gap is not None:
            starts = starts or gap > lay.leading + max(1.5, 0.12 * lay.leading) or gap < 0
        if self.para and not starts:
            last = self.para[-1]
            ended = bool(_SENTENCE_END.search(self.para_text)) or len(last.text) < 0.6 * lay.width
            # a first-line indent after a line that ended its paragraph (a list item's next line is
            # indented past its bullet, after a full line)
            starts = line.x > last.x + 0.5 * line.size and ended
            starts = starts or (bool(_SENTENCE_END.search(self.para_text)) and len(last.text) < 0.6 * lay.width)
            # set left of an indented block (a list item, a quotation), not of a paragraph's indented first line
            starts = starts or line.x < last.x - 0.5 * line.size and (
                len(self.para) >= 2 or bool(_ITEM.match(self.para[0].text)))
        if starts:
            self.flush()
            self.para, self.para_text = [line], line.text
        else:
            self.para.append(line)
            self.para_text = _join(self.para_text, line.text, lay.vocab)


def _title(reader: Any, pages: list[list[Line]], body: float, fallback: str) -> str:
    """The metadata's title, else the largest type of the first page when it is larger than the body's."""
    meta = _meta_title(reader)
    if meta:
        return meta
    for lines in pages[:2]:
        shown = [ln for ln in lines if ln.text]
        if not shown:
            continue
        top = max(ln.size for ln in shown)
        words = " ".join(ln.text for ln in shown if abs(ln.size - top) < 0.5)
        if top > body + 0.5 and words and len(words) <= MAX_TITLE:
            return words
    return fallback


def _size_levels(pages: list[list[Line]], body: float) -> dict[float, int]:
    """Without an outline: the type sizes above the body's, largest first, as heading levels 1..4."""
    big = sorted({round(ln.size, 1) for lines in pages for ln in lines if ln.size >= 1.15 * body}, reverse=True)
    return {s: min(i + 1, 4) for i, s in enumerate(big)}


def pdf_to_document(data: bytes, fallback_title: str, progress: Callable[[int, int], None] | None = None) -> Document:
    """The bytes of a PDF -> Document (`progress(done, total)` after each page read). Raises PdfUnreadable for a
    locked PDF; parser errors propagate."""
    reader = _open(data)
    pages = []
    for n, p in enumerate(reader.pages, start=1):
        pages.append(_page_lines(p, n))
        if progress is not None:
            progress(n, len(reader.pages))
    labels = _labels(reader, len(pages))
    repeated = repeated_edges(pages)
    layout = _layout(pages)
    split = [footnotes(lines, layout.size) for lines in pages]
    pages, notes = [body for body, _ in split], [foot for _, foot in split]
    outline = _outline(reader)
    by_page: dict[int, list[OutlineEntry]] = {}
    for entry in outline:
        by_page.setdefault(entry.page, []).append(entry)
    sizes = {} if outline else _size_levels(pages, layout.size)
    title = _title(reader, pages, layout.size, fallback_title)
    b = _Builder(layout)
    level = 0  # of the last outline heading
    for number, lines in enumerate(pages, start=1):
        entries = by_page.get(number, [])
        if lists_pages(lines):
            continue
        headed: dict[int, OutlineEntry] = {}
        wrapped: set[int] = set()  # second lines of headings
        pending: list[OutlineEntry] = []
        for entry in entries:
            found = _match_outline(lines, entry, set(headed) | wrapped)
            if found is None:
                pending.append(entry)
            else:
                headed[found[0]] = entry
                wrapped.update(range(found[0] + 1, found[0] + found[1]))
        drop = _running(lines, labels[number - 1], set(headed) | wrapped, repeated)
        prev: Line | None = None
        for i, line in enumerate(lines):
            while pending and (pending[0].top is None or line.y < pending[0].top - 1):
                entry = pending.pop(0)  # a bookmark whose words no line holds: its own title heads the text
                if _norm(entry.title) != _norm(title):
                    b.heading(entry.level + 1, entry.title, number)
                level = entry.level + 1
            if i in drop or i in wrapped or not line.text:
                continue
            if i in headed:
                level = headed[i].level + 1
                text = line.text + (f" {lines[i + 1].text}" if i + 1 in wrapped else "")
                b.heading(level, text, number)
            elif sizes and round(line.size, 1) in sizes and len(line.text) <= MAX_HEADING and not line.mono:
                level = sizes[round(line.size, 1)]
                b.heading(level, line.text, number)
            elif (line.bold and (level or not outline) and len(line.text) <= 60 and not _SENTENCE_END.search(line.text)
                  and abs(line.size - layout.size) < 0.6 * layout.size):
                b.heading(min(level + 1, 6), line.text, number)  # a subheading below the last heading
            else:
                b.line(line, prev)
            prev = line
        for entry in pending:
            b.heading(entry.level + 1, entry.title, number)
        b.footnotes(notes[number - 1])
    b.flush()
    return Document(title, [blk for blk in b.blocks if blk.text.strip()])


__all__ = ["Line", "OutlineEntry", "PdfUnreadable", "lists_pages", "pdf_to_document"]
