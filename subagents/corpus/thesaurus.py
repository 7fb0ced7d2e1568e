"""A documentation set's own index pages as a thesaurus: term -> the pages (and anchors) it names.

Generated documentation ships back-of-book indexes (Sphinx `genindex*.html`, DocBook
`bookindex.html`). They are recognised by their structure, not their file name: a page whose
entries (`<dt>`, `<li>`) are nearly all short phrases linking to other pages,
and top-level terms in alphabetical order (a table of contents follows the document's order and
stays a page). Such a page is never a passage (a list of links answers nothing); its entries
become index terms:

    Sphinx   <li><a href="library/shutil.html#index-0">copying files</a></li>
    DocBook  <dt>vacuum, <a href="routine-vacuuming.html">Routine Vacuuming</a></dt>
             <dt>auto-increment (see <a href="#ientry-id7822">serial</a>)</dt>

A term is the entry's own text outside its links (DocBook), else its first link's text (Sphinx);
a sub-entry is read with its parent's term ("copy_sign() (decimal.Decimal method)"); a "see"
reference to another entry of the same index takes that entry's targets.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from lxml import etree

from ..stemming import stem_word
from .query import STOPWORDS

MIN_ENTRIES = 30  # fewer linked entries than this: not an index
LINKED_SHARE = 0.8  # of the page's dt/li entries that must be short and linked
TEXT_SHARE = 0.5  # of the page's text that must be entry text
ORDERED_SHARE = 0.9  # of consecutive top-level terms in alphabetical order
MAX_TERM = 120  # characters of an entry's own text

_NESTED = frozenset(("ul", "ol", "dl", "dd"))
_SEE = re.compile(r"\s*\((?:see|see also)\b[^)]*\)\s*$", re.I)
_WS = re.compile(r"\s+")
_WORD = re.compile(r"\w+(?:\.\w+)*")  # identifiers whole: copy_file is not "copy file"


@dataclass(frozen=True)
class IndexEntry:
    term: str
    target: str  # relative path of the page it names, from the corpus root
    anchor: str  # the element id on that page ("" for the page as a whole)


def _clean(text: str) -> str:
    # (only trailing punctuation goes: an entry may start with an operator, ":= (colon equals)")
    return _WS.sub(" ", text.replace("\u00b6", "")).strip(" \n\t").rstrip(" ,;:")


def _own(el: etree._Element) -> tuple[str, list[etree._Element]]:
    """The entry's text and links, without its sub-entries."""
    parts: list[str] = [el.text or ""]
    links: list[etree._Element] = []
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if child.tag in _NESTED:
            parts.append(child.tail or "")
            continue
        if child.tag == "a" and child.get("href"):
            links.append(child)
        links += [a for a in child.iter("a") if a is not child and a.get("href")]
        parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return _clean("".join(parts)), links


def _parent(el: etree._Element) -> etree._Element | None:
    """The entry a sub-entry belongs to: the enclosing <li>, or the <dt> before the enclosing <dd>."""
    node = el.getparent()
    while node is not None:
        if node.tag == "li":
            return node
        if node.tag == "dd":
            prev = node.getprevious()
            while prev is not None and prev.tag != "dt":
                prev = prev.getprevious()
            return prev
        node = node.getparent()
    return None


def _has_subentries(el: etree._Element) -> bool:
    if any(isinstance(c.tag, str) and c.tag in _NESTED for c in el):
        return True
    nxt = el.getnext()
    return el.tag == "dt" and nxt is not None and nxt.tag == "dd"


def _term(el: etree._Element) -> str:
    """The entry's own words outside its links (DocBook "vacuum, <a>…</a>"), else its first
    link's text (Sphinx "<a>copying files</a>")."""
    parts = [el.text or ""]
    first_link = ""
    for child in el:
        if not isinstance(child.tag, str) or child.tag in _NESTED:
            parts.append(child.tail or "")
            continue
        if child.tag == "a" or child.find(".//a") is not None:
            first_link = first_link or "".join(child.itertext())
        else:
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    outside = _clean(_SEE.sub("", _clean("".join(parts))))
    if re.search(r"[^\W\d_]", outside) or outside and not first_link:  # (an operator heading its uses: "**")
        return outside
    return _clean(_SEE.sub("", _clean(first_link)))


def _target(href: str, page: str) -> tuple[str, str] | None:
    """(relative path, anchor) of a link on `page`, or None when it leaves the corpus."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None
    path = unquote(parts.path)
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(page), path)) if path else page
    if rel.startswith("../") or rel == "..":
        return None
    return rel, unquote(parts.fragment)


_NUMBERING = re.compile(r"^(?:[\dIVXLCA-Z]{1,4}\.)+\s*")


def _alphabetical(terms: list[str]) -> bool:
    """Most consecutive top-level terms in alphabetical order (section numbers aside): an index,
    not a table of contents (which follows the document's order)."""
    keys = [_NUMBERING.sub("", t).casefold() for t in terms]
    keys = [k for k in keys if k]
    pairs = list(zip(keys, keys[1:]))
    return bool(pairs) and sum(a <= b for a, b in pairs) >= ORDERED_SHARE * len(pairs)


def index_entries(root: etree._Element, page: str) -> list[IndexEntry] | None:
    """The entries of an index page (`root`: its content element; `page`: its path from the corpus
    root), or None when the page is not an index by its structure."""
    entries = [el for el in root.iter("dt", "li")]
    if len(entries) < MIN_ENTRIES:
        return None
    linked: list[tuple[etree._Element, str, list[etree._Element]]] = []
    allowed = int((1 - LINKED_SHARE) * len(entries))  # entries that may be something else
    for el in entries:
        text, links = _own(el)
        if text and len(text) <= MAX_TERM and (links or _has_subentries(el)):
            linked.append((el, text, links))
        elif allowed == 0:
            return None  # stop early: most pages are not indexes
        else:
            allowed -= 1
    with_links = [x for x in linked if x[2]]
    if len(with_links) < MIN_ENTRIES or len(linked) < LINKED_SHARE * len(entries):
        return None
    total = len(_clean("".join(root.itertext())))
    if sum(len(t) for _, t, _ in linked) < TEXT_SHARE * total:
        return None
    if not _alphabetical([_term(el) for el, _, _ in linked if _parent(el) is None]):
        return None
    return _entries(linked, page)


def _entries(linked: list[tuple[etree._Element, str, list[etree._Element]]], page: str) -> list[IndexEntry]:
    terms: dict[int, str] = {}
    by_id: dict[str, list[tuple[str, str]]] = {}
    pending: list[tuple[str, str]] = []  # (term, same-page fragment) "see" references
    out: list[IndexEntry] = []
    for el, _, links in linked:
        own = _term(el)
        parent = _parent(el)
        above = terms.get(id(parent), "") if parent is not None else ""
        if own.startswith("("):  # "(class in typing)" under "Counter (class in collections)"
            above = above.partition(" (")[0]
        full = _clean(f"{above} {own}")
        terms[id(el)] = full
        if not full:
            continue
        for a in links:
            target = _target(a.get("href", ""), page)
            if target is None:
                continue
            if target[0] == page:  # a reference to another entry of this index
                pending.append((full, target[1]))
                continue
            out.append(IndexEntry(full, *target))
            if el.get("id"):
                by_id.setdefault(el.get("id"), []).append(target)
    for term, fragment in pending:
        out += [IndexEntry(term, rel, anchor) for rel, anchor in by_id.get(fragment, [])]
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------- looking terms up

COMMON_SHARE = 0.2  # an entry made only of words in more than this share of the passages names nothing


def words_of(text: str) -> dict[str, str]:
    """Stem -> word as written (lower-case): Snowball English stems, stop words dropped,
    identifiers whole (a dotted one also by its last part). How entries and queries meet."""
    out: dict[str, str] = {}
    for w in _WORD.findall(text.lower()):
        if w in STOPWORDS:
            continue
        if "." in w:
            out.setdefault(w, w)
            last = w.rsplit(".", 1)[1]
            out.setdefault(last, last)
        else:
            out.setdefault(_stem(w) if w.isalpha() else w, w)
    return out


def keyword_alone(query: str) -> list[str]:
    """A query that is one stop word and nothing else ("is", "with"): a keyword asked about by name, to
    look up as written; [] otherwise."""
    word = query.strip().strip("`").lower()
    return [word] if word.isalpha() and word in STOPWORDS else []


def stems(text: str) -> list[str]:
    return list(words_of(text))


def _stem(word: str) -> str:
    return stem_word(word)


_CALL_HEADING = re.compile(r"^(\S+\(\))\s+(?=\S)")  # "repr() built-in function": a call heading its sub-entry


def entry_parts(term: str) -> tuple[str, str]:
    """(main part, qualifier) of an entry: the qualifier is in brackets ("copy() (dict method)"), or is
    the sub-entry under a call ("repr()" over "built-in function", joined as "repr() built-in function")."""
    main, _, qualifier = term.partition(" (")
    heading = _CALL_HEADING.match(main)
    if heading:
        return heading.group(1), f"{main[heading.end():]} {qualifier}".strip()
    return main, qualifier


def defines(term: str, anchor: str) -> bool:
    """The entry links to the definition of its own name, unqualified: the anchor is the name itself
    ("repr() built-in function" -> functions.html#repr; not "repr() (in module reprlib)" -> #reprlib.repr)."""
    name = entry_parts(term)[0].removesuffix("()")
    return bool(name) and anchor == name


def entry_score(term: str, idf: dict[str, float], common: set[str]) -> float:
    """How well a query (its stems with their IDF weights; `common`: those in more than COMMON_SHARE
    of the passages) asks for an entry: every word of the
    entry's main part must be in the query ("copying files" for "copy a file to a folder"); a
    qualifier (`entry_parts`: "(in module shutil)") adds what it shares. 0 when it does not match."""
    main, qualifier = entry_parts(term)
    words = stems(main)
    if not words or any(w not in idf for w in words) or all(w in common for w in words):
        return 0.0
    extra = {w for w in stems(qualifier) if w in idf and w not in words}
    return sum(idf[w] for w in dict.fromkeys(words)) + 0.5 * sum(idf[w] for w in extra)
