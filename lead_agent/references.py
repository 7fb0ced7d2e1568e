"""How a report names and links a source: the document title and section heading (never an internal
passage id), a `file://` link to the corpus file with the section's anchor when the HTML has one,
or the page URL for web sources.

The corpus tools record each passage's root (its real path), relative path and heading path in
the source's `meta`; the anchor is looked up once per cited file by matching the heading text
against the file's HTML headings (the heading's id, an anchor inside it, or its section's id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from subagents.sources import Source, SourceKind

SEP = " › "
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class SourceLink:
    label: str  # "Built-in Types › Sequence Types — list, tuple, range › Lists"
    href: str | None  # file:///…/stdtypes.html#lists, https://…, or None when no target is known
    where: str  # "library/stdtypes.html", "example.org"


def _norm(text: str) -> str:
    return _WS.sub(" ", text.replace("\u00b6", "").replace("#", "")).strip().lower()


@lru_cache(maxsize=256)
def _anchors(path: str, mtime_ns: int) -> dict[str, str]:
    """Heading text (normalised) → anchor id, for every h1–h6 of an HTML file that has one."""
    from lxml import etree, html

    try:
        tree = html.parse(path, parser=html.HTMLParser(encoding="utf-8", no_network=True))
    except (OSError, etree.ParserError, ValueError):
        return {}
    out: dict[str, str] = {}
    for h in tree.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        key = _norm("".join(h.itertext()))
        if not key or key in out:
            continue
        anchor = h.get("id") or next((a.get("id") or a.get("name") for a in h.iter("a")
                                      if a.get("id") or a.get("name")), None)
        parent = h.getparent()
        while anchor is None and parent is not None and parent.tag in ("section", "div"):
            anchor = parent.get("id")
            parent = parent.getparent() if anchor is None and parent.tag == "div" else None
        if anchor:
            out[key] = anchor
    return out


def html_anchor(file: Path, heading: str) -> str | None:
    """The anchor of the section titled `heading` (the last part of a heading path) in an HTML file."""
    if file.suffix.lower() not in (".html", ".htm", ".xhtml"):
        return None
    try:
        mtime = file.stat().st_mtime_ns
    except OSError:
        return None
    return _anchors(str(file), mtime).get(_norm(heading))


def _label(title: str, heading: str) -> str:
    parts = [p.strip() for p in heading.split(">") if p.strip()] if heading else []
    if title and (not parts or parts[0] != title):
        parts.insert(0, title)
    return SEP.join(parts) or title


def source_link(src: Source) -> SourceLink:
    meta = src.meta or {}
    heading = str(meta.get("heading") or "")
    if src.kind is SourceKind.WEB:
        url = str(meta.get("url") or src.locator.split("#passage-")[0])
        if meta.get("page") is not None:
            url = f"{url.split('#')[0]}#page={meta['page']}"
        host = urlsplit(url).netloc or url
        return SourceLink(_label(src.title or host, heading), url if url.startswith(("http://", "https://")) else None,
                          host)
    rel = str(meta.get("path") or src.locator or src.key)  # the corpus tools always record the path
    root = meta.get("root")
    href = None
    if root and meta.get("path"):
        file = Path(str(root)) / rel
        href = file.as_uri()
        last = heading.split(">")[-1].strip() if heading else ""
        anchor = html_anchor(file, last) if last else None
        if isinstance(meta.get("page"), int):  # a PDF's page (viewers open file.pdf#page=N there)
            anchor = f"page={meta['page']}"
            rel = f"{rel}#{anchor}"
        if anchor:
            href += f"#{anchor}"
    return SourceLink(_label(src.title, heading) or rel, href, rel)  # an untitled source is named by where it is


def _md_text(text: str) -> str:
    return re.sub(r"([\[\]\\*_`<>])", r"\\\1", text)


def reference_line(n: int, src: Source) -> str:
    """`1. [Title › Section](<file:///…#anchor>) — `library/x.html` (S4)` (the id ties it to sources.json)."""
    link = source_link(src)
    label = _md_text(link.label)
    shown = f"[{label}](<{link.href}>)" if link.href else label
    return f"{n}. {shown} — `{link.where.replace('`', '')}` ({src.id})"


__all__ = ["SourceLink", "html_anchor", "reference_line", "source_link"]
