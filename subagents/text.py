"""Small text utilities shared by the extractive model, the corpus search and the citation check: word terms,
stop words, a light suffix stemmer and a sentence splitter. Deterministic and dependency-free."""

from __future__ import annotations

import functools
import re

STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is isn it its itself just let
me more most my myself no nor not now of off on once only or other our ours ourselves out over own same
she should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves via per vs versus etc eg ie using use used get gets one two
explain describe tell show give list compare comparison difference differences happen happens happened
""".split())

WORD = re.compile(r"[^\W\d_]\w*(?:\.[^\W\d]\w*)*|\d+(?:\.\d+)*")  # Unicode letters; dotted names whole
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")


def stem(word: str) -> str:
    w = word.lower()
    if len(w) <= 4:
        return w
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)] + ("y" if suf in ("ies", "ied") else "")
            break
    return w


def words(text: str) -> list[str]:
    """Word tokens; dotted names (asyncio.TaskGroup) are kept whole and also split."""
    out = []
    for m in WORD.finditer(text):
        tok = m.group(0)
        out.append(tok)
        if "." in tok and not tok[0].isdigit():
            out.extend(tok.split("."))
        for part in (tok.split(".") if "." in tok else [tok]):
            camel = _CAMEL.findall(part) if part.isascii() else []
            if len(camel) > 1:
                out.extend(camel)
    return out


def content_terms(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w.lower() not in STOPWORDS and len(w) > 1}


def content_term_list(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for w in words(text):
        if w.lower() not in STOPWORDS and len(w) > 1:
            seen.setdefault(stem(w), None)
    return list(seen)


# abbreviations whose full stop ends no sentence
ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf", "viz", "approx", "Mr", "Dr", "No")
_ABBREV = re.compile(rf"\b(?:{'|'.join(map(re.escape, ABBREVIATIONS))})\.$", re.I)


def sentences(text: str) -> list[str]:
    """Split prose into sentences; code-ish lines and list items stay whole."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        if not block:
            continue
        parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])", block)
        buf = ""
        for p in parts:
            buf = f"{buf} {p}".strip() if buf else p
            if _ABBREV.search(buf):
                continue
            out.append(buf)
            buf = ""
        if buf:
            out.append(buf)
    return out


_OPERATOR = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=[`'\"(]))([^\w\s`'\"()\[\]{},;]{1,3})(?=$|\s|[`'\")?,.])")
_PATH_AFTER = re.compile(r"\.?[\w~]")  # "~/.pgpass", "./configure": a path's start, no operator
_PROSE_MARKS = frozenset("? ! . : - -- — – ... ?! ?? !!".split())


def operators_in(question: str) -> list[str]:
    """The operators a question names, standing alone (":=", "**", "->", "@"): what it asks about when
    it asks "what does := do?". Sentence punctuation and dashes are not operators."""
    found = [m.group(1) if len(m.group(1)) == 1 else m.group(1).rstrip("?!.,") for m in _OPERATOR.finditer(question)
             if not (m.group(1).endswith("/") and _PATH_AFTER.match(question, m.end()))]
    found += _INFIX.findall(question)  # R's own infix operators, "%||%", "%in%", "%*%"
    return list(dict.fromkeys(op for op in found if op and op not in _PROSE_MARKS))


_INFIX = re.compile(r"(?<![\w%])%[^%\s]{1,6}%(?![\w%])")


_OPERATOR_CHARS = re.escape("!#$%&*+-./:;<=>?@\\^|~")


@functools.lru_cache(maxsize=256)
def _standing(op: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![{_OPERATOR_CHARS}]){re.escape(op)}(?![{_OPERATOR_CHARS}])")


def has_operator(op: str, text: str) -> bool:
    """The text uses the operator itself, not a longer one containing it (":=" is not in "::=", "->>" not in
    "<->>"); "10**2" and "(||)" do use theirs."""
    return op in text and bool(_standing(op).search(text))
