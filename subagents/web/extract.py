"""Turning a fetched response into a titled list of passages an agent can read and cite.

HTML goes through trafilatura. Why trafilatura: it is actively maintained, widely used for
corpus building, and evaluated on boilerplate removal (it drops navigation, sidebars, footers,
cookie banners and keeps the main text, with readability/jusText as built-in fallbacks); with
``output_format="markdown"`` and ``include_formatting=True`` it keeps headings as ``#`` lines,
which we use to cut passages at section boundaries and to label each passage with its heading.
It reads encodings itself and never touches the network when given the document. When it finds
nothing (very short pages) we fall back to the text of <main>/<article>/<body> without script,
style, nav, header, footer and aside.

PDF goes through pypdf, one page at a time, so passages carry page numbers. Plain text and
markdown are used as they are. Every other content type is refused with a message naming it.

Passages are ~1000–1500 characters, cut at paragraph and heading boundaries (a heading starts a
new passage once the current one holds `heading_min` characters); an over-long paragraph is cut
at sentence ends, then at whitespace. Each passage remembers the nearest heading above it.

All of this is synchronous and CPU-bound: the tools run it in a worker thread behind a limiter.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ..tools import ToolError, neutralise_markers

HTML_TYPES = ("text/html", "application/xhtml+xml")
PDF_TYPES = ("application/pdf", "application/x-pdf")
TEXT_TYPES = ("text/plain",)
MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
SUPPORTED_TYPES = HTML_TYPES + PDF_TYPES + TEXT_TYPES + MARKDOWN_TYPES


@dataclass
class Passage:
    index: int
    text: str
    heading: str | None = None
    page: int | None = None  # 1-based, PDFs only


@dataclass
class Page:
    url: str
    title: str
    content_type: str
    kind: str  # "html" | "pdf" | "text" | "markdown"
    passages: list[Passage] = field(default_factory=list)


def kind_for_content_type(media_type: str) -> str | None:
    """"html", "pdf", "text", "markdown"; "" for a missing type (sniff the body); None: refuse."""
    if not media_type:
        return ""
    if media_type in HTML_TYPES:
        return "html"
    if media_type in PDF_TYPES:
        return "pdf"
    if media_type in MARKDOWN_TYPES:
        return "markdown"
    if media_type in TEXT_TYPES:
        return "text"
    return None


def refuse_unsupported(media_type: str) -> None:
    """The fetcher's header check: raise before downloading a body we cannot read."""
    if kind_for_content_type(media_type) is None:
        raise ToolError(
            f"unsupported content type {media_type!r}: fetch_page reads HTML, PDF, plain text and "
            "markdown only"
        )


def sniff_kind(body: bytes) -> str:
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "pdf"
    if head.startswith((b"<!doctype html", b"<html", b"<?xml")) or b"<html" in head or b"<body" in head:
        return "html"
    if b"\x00" in body[:4096]:
        raise ToolError("the server sent no content type and the body looks binary; not read")
    return "text"


# ---------------------------------------------------------------------------------------------
# Text clean-up and splitting

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~<])")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def clean_heading(text: str) -> str:
    text = text.strip().rstrip("¶").strip()
    text = text.replace("`", "").replace("**", "")
    return re.sub(r"\s+", " ", text)[:200]


def _clean_markdown(md: str) -> str:
    md = _FRONT_MATTER.sub("", md, count=1)
    md = _MD_ESCAPE.sub(r"\1", md)
    lines = []
    for line in md.splitlines():
        line = line.rstrip()
        if line.endswith("¶"):
            line = line[:-1].rstrip()
        # trafilatura renders <dt>/<li> starting with a block as "- " on its own line
        if lines and lines[-1] in ("-", "- ", "*") and line.strip():
            lines[-1] = f"- {line.strip()}"
            continue
        lines.append(line)
    return "\n".join(lines).strip()


def _split_long(block: str, limit: int) -> list[str]:
    """Cut one over-long block at sentence ends, then lines, then whitespace."""
    pieces: list[str] = []
    cur = ""
    units = [u for u in _SENTENCE_END.split(block) if u]
    if len(units) <= 1:
        units = [u for u in block.split("\n") if u.strip()]
    for unit in units:
        while len(unit) > limit:
            cut = unit.rfind(" ", 0, limit)
            if cut < limit // 2:
                cut = limit
            head, unit = unit[:cut].rstrip(), unit[cut:].lstrip()
            if cur:
                pieces.append(cur)
                cur = ""
            pieces.append(head)
        if cur and len(cur) + 1 + len(unit) > limit:
            pieces.append(cur)
            cur = ""
        cur = f"{cur} {unit}" if cur else unit
    if cur:
        pieces.append(cur)
    return pieces


def split_passages(
    text: str,
    *,
    max_chars: int = 1500,
    heading_min: int = 400,
    markdown_headings: bool = True,
    heading: str | None = None,
) -> list[tuple[str | None, str]]:
    """Split text into (heading, passage) pairs at paragraph/heading boundaries."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
    out: list[tuple[str | None, str]] = []
    cur: list[str] = []
    cur_len = 0
    cur_heading = heading  # heading in force at the start of the current passage
    cur_only_headings = True  # the current passage holds nothing but heading lines so far
    running = heading  # nearest heading seen so far

    def flush() -> None:
        nonlocal cur, cur_len, cur_heading, cur_only_headings
        if cur and not cur_only_headings:
            out.append((cur_heading, "\n\n".join(cur)))
            cur, cur_len, cur_only_headings = [], 0, True
            cur_heading = running

    for block in blocks:
        m = _MD_HEADING.match(block.split("\n", 1)[0]) if markdown_headings else None
        if m:
            if cur_len >= heading_min:
                flush()
            running = clean_heading(m.group(2))
            if not cur or cur_only_headings:
                cur_heading = running
        pieces = [block] if len(block) <= max_chars else _split_long(block, max_chars)
        for piece in pieces:
            if cur and not cur_only_headings and cur_len + 2 + len(piece) > max_chars:
                flush()
            cur.append(piece)
            cur_len += len(piece) + (2 if cur_len else 0)
            if not (m and "\n" not in block):
                cur_only_headings = False
    if cur:
        if cur_only_headings:  # trailing headings with no text: keep them anyway
            cur_only_headings = False
        flush()
    return out


# ---------------------------------------------------------------------------------------------
# Per-type extraction


def _decode(body: bytes, charset: str | None) -> str:
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass
    if body.startswith(b"\xef\xbb\xbf"):
        return body[3:].decode("utf-8", errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace")


def _title_from_url(url: str) -> str:
    parts = urlsplit(url)
    name = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])
    return name or parts.netloc or url


def _fallback_html_text(html: str | bytes) -> tuple[str, str]:
    import lxml.html

    try:
        doc = lxml.html.fromstring(html)
    except Exception:  # lxml raises several types on junk
        return "", ""
    title = (doc.findtext(".//title") or "").strip()
    for bad in doc.xpath("//script|//style|//noscript|//template|//nav|//header|//footer|//aside"):
        bad.drop_tree()
    roots = doc.xpath("//main") or doc.xpath("//article") or doc.xpath("//body") or [doc]
    paras = []
    for root in roots:
        for el in root.iter("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "td", "blockquote"):
            t = re.sub(r"\s+", " ", el.text_content()).strip()
            if not t:
                continue
            if el.tag[0] == "h" and el.tag[1:].isdigit():
                t = "#" * int(el.tag[1:]) + " " + t
            paras.append(t)
        if not paras:
            paras.append(re.sub(r"[ \t]+", " ", root.text_content()).strip())
    return title, "\n\n".join(p for p in paras if p)


def extract_html(body: bytes, charset: str | None, url: str) -> tuple[str, str]:
    """(title, markdown text) of an HTML page's main content."""
    import trafilatura

    html: str | bytes = _decode(body, charset) if charset else body
    doc = trafilatura.extract_with_metadata(
        html,
        url=url,
        output_format="markdown",
        include_formatting=True,
        include_tables=True,
        include_comments=False,
        include_links=False,
        include_images=False,
    )
    text = _clean_markdown(doc.text) if doc is not None and doc.text else ""
    title = (doc.title or "").strip() if doc is not None else ""
    if len(text) < 40:
        fb_title, fb_text = _fallback_html_text(html)
        if len(fb_text) > len(text):
            text = fb_text
        title = title or fb_title
    return clean_heading(title) if title else "", text


def extract_pdf(body: bytes, max_pages: int) -> tuple[str, list[tuple[int, str]]]:
    """(title, [(page number, text), ...]) of a PDF."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")  # PasswordType.NOT_DECRYPTED (0) when a password is needed
            except Exception:
                opened = 0
            if not opened:
                raise ToolError("the PDF is encrypted and cannot be read")
        title = ""
        try:
            meta = reader.metadata
            if meta is not None and meta.title:
                title = str(meta.title).strip()
        except Exception:
            title = ""
        pages: list[tuple[int, str]] = []
        for n, page in enumerate(reader.pages, start=1):
            if n > max_pages:
                break
            try:
                text = page.extract_text() or ""
            except Exception:  # one bad page should not lose the others
                text = ""
            pages.append((n, text))
    except ToolError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as e:
        raise ToolError(f"could not read the PDF: {type(e).__name__}: {e}") from None
    return title, pages


def _first_line_title(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:150]
    return ""


def extract_page(
    *,
    url: str,
    content_type: str,
    charset: str | None,
    body: bytes,
    max_chars: int = 1500,
    heading_min: int = 400,
    max_pdf_pages: int = 300,
) -> Page:
    """Extract a fetched body. Raises ToolError for unsupported types and unreadable bodies."""
    kind = kind_for_content_type(content_type)
    if kind is None:
        refuse_unsupported(content_type)
    if kind == "":
        kind = sniff_kind(body)
    shown_type = content_type or f"(none; read as {kind})"
    passages: list[Passage] = []
    if kind == "pdf":
        title, pages = extract_pdf(body, max_pdf_pages)
        for page_no, text in pages:
            for heading, ptext in split_passages(
                text, max_chars=max_chars, heading_min=heading_min, markdown_headings=False
            ):
                passages.append(Passage(len(passages), neutralise_markers(ptext), heading, page_no))
        if not title:
            title = _first_line_title(pages[0][1]) if pages else ""
        if not passages:
            raise ToolError(f"no extractable text in the PDF at {url} (scanned images?)")
    else:
        if kind == "html":
            title, text = extract_html(body, charset, url)
            md = True
        else:
            text = _decode(body, charset).replace("\r\n", "\n").replace("\r", "\n")
            title = _first_line_title(text)
            md = kind == "markdown"
        for heading, ptext in split_passages(text, max_chars=max_chars, heading_min=heading_min, markdown_headings=md):
            passages.append(Passage(len(passages), neutralise_markers(ptext), heading))
        if not passages:
            raise ToolError(f"no readable text found at {url}")
    title = neutralise_markers(title or _title_from_url(url))
    return Page(url=url, title=title, content_type=shown_type, kind=kind, passages=passages)
