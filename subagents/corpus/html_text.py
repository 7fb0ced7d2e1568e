"""HTML to a `Document` with lxml: headings, paragraphs, code, definition lists, list items and
tables as text; scripts, styles, navigation and Sphinx chrome dropped.

The content root is the first `<main>`, `<article>` or `<div role="main">`, else `<body>`; inside
it, chrome (nav, forms, `role=navigation`, Sphinx sidebar/related/footer/headerlinks/toctrees) is
skipped while walking, so no separate tree-wide pass is needed. The title is the first <h1> when
the <title> starts with it (the rest of <title> is site chrome such as
"— Python 3.11 documentation"), else the <title>, else the first <h1>.
"""

from __future__ import annotations

import re

from lxml import etree

from .chunking import Block, Document
from .thesaurus import index_entries

CHROME_CLASSES = frozenset(
    "sphinxsidebar related footer headerlink toctree-wrapper mobile-nav menu-wrapper "
    "navheader navfooter".split()  # (DocBook's Prev | Up | Next bars: the PostgreSQL manual)
)
_DROP_TAGS = frozenset(
    "script style noscript template nav svg form iframe button select textarea footer head title meta link "
    "img br hr input area map object embed audio video canvas source track".split()
)
_DROP_ROLES = frozenset(("navigation", "search"))
_EMPTY = frozenset(("hr", "br", "img"))
_INLINE = frozenset(
    "a abbr b bdi bdo big cite code data del dfn em font i ins kbd label mark q s samp small span strike "
    "strong sub sup time tt u var wbr".split()
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_LEAF = frozenset("p dt caption figcaption summary address legend".split())
_WS = re.compile(r"\s+")
_PARSER = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True)


def _text(el: etree._Element) -> str:
    return "".join(el.itertext())


def _clean(text: str) -> str:
    return _WS.sub(" ", text.replace("\u00b6", "")).strip()


def _is_chrome(el: etree._Element) -> bool:
    if el.tag in _DROP_TAGS or el.get("role") in _DROP_ROLES:
        return True
    cls = el.get("class")
    return bool(cls) and not CHROME_CLASSES.isdisjoint(cls.split())


def _cell(cell: etree._Element) -> str:
    """A cell's text; a cell of paragraphs (a PostgreSQL function table's: signatures, description,
    examples) one line per paragraph, so a reader tells the signature from what it does."""
    paras = [_clean(_text(c)) for c in cell if isinstance(c.tag, str) and c.tag in ("p", "div", "pre")]
    if len(paras) >= 2 and not _clean(cell.text or "") and all(not _clean(c.tail or "") for c in cell):
        return "\n".join(p for p in paras if p)
    return _clean(_text(cell))


def _table(el: etree._Element) -> list[str]:
    """The caption and each row: cells joined by " | " (a one-cell row of paragraphs on several lines)."""
    rows = []
    cap = el.find("caption")
    if cap is not None:
        rows.append(_clean(_text(cap)))
    for tr in el.iter("tr"):
        cells = [c for c in tr if c.tag in ("td", "th")]
        if len(cells) == 1:
            rows.append(_cell(cells[0]))
            continue
        rows.append(" | ".join(t for t in (_clean(_text(c)) for c in cells) if t))
    return [r for r in rows if r]


class _Walker:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.ids: list[str] = []  # element ids met since the last block: they anchor the next one

    def add(self, text: str, level: int = 0, key: str = "", term: bool = False) -> None:
        if text:
            self.blocks.append(Block(text, level, key, tuple(dict.fromkeys(self.ids)), term))
            self.ids.clear()

    def body(self, text: str, key: str = "", term: bool = False) -> None:
        self.add(text, 0, key, term)

    def anchor(self, el: etree._Element, inside: bool = False) -> None:
        """Note `el`'s id (and, for an element read as one block, the ids inside it)."""
        for node in el.iter() if inside else (el,):
            if isinstance(node.tag, str) and node.get("id"):
                self.ids.append(node.get("id"))

    def container(self, el: etree._Element) -> None:
        buf: list[str] = []
        if el.text:
            buf.append(el.text)
        for child in el:
            tag = child.tag
            if isinstance(tag, str) and not _is_chrome(child):
                if tag in _INLINE:
                    self.anchor(child, inside=True)
                    buf.append(_text(child))
                else:
                    if buf:
                        self.body(_clean("".join(buf)))
                        buf.clear()
                    self.block(child, tag)
            elif tag in _EMPTY:
                self.anchor(child)  # <hr id="index-0">: a link target, though it shows nothing
            if child.tail:
                buf.append(child.tail)
        if buf:
            self.body(_clean("".join(buf)))

    def block(self, el: etree._Element, tag: str) -> None:
        level = _HEADINGS.get(tag)
        self.anchor(el, inside=bool(level) or tag in _LEAF or tag in ("pre", "table"))
        if level:
            self.add(_clean(_text(el)), level)
        elif tag == "pre":
            self.body(_text(el).replace("\u00b6", "").strip("\n").rstrip())
        elif tag in _LEAF:
            self.body(_clean(_text(el)), el.get("id", "") if tag == "dt" else "", tag == "dt")
        elif tag == "table":
            for row in _table(el):  # a block each: a passage ends between rows, never inside one
                self.body(row)
        elif tag == "li":
            start = len(self.blocks)
            self.container(el)
            if len(self.blocks) > start and not self.blocks[start].level:
                first = self.blocks[start]
                self.blocks[start] = Block(f"- {first.text}", 0, first.key, first.anchors, first.term)
        else:
            self.container(el)


def _content_root(tree: etree._Element) -> etree._Element:
    for el in tree.iter("main", "article", "div"):
        if el.tag != "div" or el.get("role") == "main":
            return el
    body = tree.find("body")
    return body if body is not None else tree


def _title(tree: etree._Element, blocks: list[Block]) -> str:
    t = tree.find("head/title")
    if t is None:
        t = tree.find(".//title")
    title = _clean(_text(t)) if t is not None else ""
    h1 = next((b.text for b in blocks if b.level == 1), "")
    if h1 and (not title or title.startswith(h1)):
        return h1
    return title


def html_to_document(data: bytes | str, fallback_title: str = "", page: str = "") -> Document:
    """Parse HTML into a Document. Bytes must be UTF-8: decode other charsets to str first. An index
    page (`thesaurus.index_entries`; `page` is its path from the corpus root) gives its entries
    instead of blocks."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        return Document(fallback_title)
    tree = etree.fromstring(data, parser=_PARSER)
    if tree is None:  # nothing lxml could parse
        return Document(fallback_title)
    root = _content_root(tree)
    entries = index_entries(root, page or fallback_title)
    if entries is not None:
        h1 = root.find(".//h1")
        title = _title(tree, [Block(_clean(_text(h1)), 1)] if h1 is not None else [])
        return Document(title or fallback_title, [], entries)
    walker = _Walker()
    walker.container(root)
    return Document(_title(tree, walker.blocks) or fallback_title, walker.blocks)
