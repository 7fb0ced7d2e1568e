"""Terms: the words and identifiers a question is about, and the same normal forms for any text.

An identifier is kept whole (`__import__`, `csv.DictReader`, `lru_cache`, `zip()`), so it is not
confused with the word inside it; an all-capitals word (`CSV`, `DELETE`) or an inner capital
(`TaskGroup`) marks a name. Words that are stop words in English but content in programming
documentation (`self`, `is`, `with`, `WHERE`) count when the question treats them as names:
quoted, in capitals, or followed by "statement", "keyword", "operator" and the like.
"""

from __future__ import annotations

import locale
import math
import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Iterable, Mapping

from functools import lru_cache

from ..stemming import stem_word
from ..text import ABBREVIATIONS, STOPWORDS, has_operator, operators_in


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem: "raised", "raises", "raise" all give "rais"."""
    return stem_word(word.lower())

# A question's tokens: quoted code, identifiers (dotted, dunder, qualified by "::", with a call), numbers, operators.
TOKEN = re.compile(r"`[^`]+`|[^\W\d_][\w.]*::[^\W\d_]\w*(?:\.[^\W\d]\w*)*(?:\(\))?|[^\W\d_]+(?:-[^\W_]+)+|\.?@?_*[^\W\d_][\w]*(?:\.[^\W\d]\w*)*(?:\([^()\s]{0,12}(?: [^()\s]{1,12})?\)|\[[^\]\s]{0,20}\])?\*?"
                   r"|\d+(?:\.\d+)*|:=|==|!=|\+=|//|\*\*|->")
_CALL = re.compile(r"\([^()]*\)$|\[[^\]]*\]$")
_WORDISH = re.compile(r"[^\W\d_]+")
_PARTS = re.compile(r"[^\W_]+")

# Words of a question that ask rather than name (they never decide what a passage is about).
FILLER = frozenset("""
want wants wanted need needs needed way ways easiest easy best usual usually actually exactly really possible
thing things something anything someone somebody lot lots able going go goes kind kinds sort type types
correct proper properly good simple simplest quick quickly right typically
differ differs different difference differences compared comparing versus
should would could can might must may does did do done make makes made let lets keep keeps
instead rather also still even though every time times fine okay ok see idea doesn don isn didn won aren wasn
shouldn wouldn couldn mustn needn hasn haven hadn weren mightn got like
""".split()) - {"type", "types", "sort", "standard"}
# English stop words, less those that are names in programming documentation ("list")
STOP = (STOPWORDS - {"list"}) | FILLER
# Stop words that name something in programming documentation when used as a name.
KEYWORDS = frozenset("""
self is in not and or for with if else elif from import as none true false del pass yield return lambda global
nonlocal try except finally raise assert async await while break continue class def where having on all any
null between like union order group by limit offset into values set default
""".split())
_NAMING_NEXT = frozenset("statement statements keyword keywords clause clauses block blocks operator operators "
                         "expression expressions loop loops guard".split())
# Keywords that are also ordinary English words ("is", "in", "with"): written in lower case, a text mentions
# one only where it is used as the keyword — named so ("the is operator", "operators is and is not"), quoted,
# or between operands ("x is y", "a in b"); "the sequence is exhausted" does not mention `is`, nor does "the
# operator is defined" (after a naming word only a plural names keywords: "the operators is and is not").
WORD_KEYWORDS = KEYWORDS & STOP
_KW = "|".join(sorted(WORD_KEYWORDS, key=len, reverse=True))
_NAMING = "|".join(sorted(_NAMING_NEXT, key=len, reverse=True))
_NAMING_PLURAL = "|".join(sorted((w for w in _NAMING_NEXT if w.endswith("s")), key=len, reverse=True))
_KEYWORD_USE = re.compile(rf"`({_KW})`|['\"“‘]({_KW})['\"”’]|\b(?:{_NAMING_PLURAL})\s+({_KW})\b|\b({_KW})\s+(?:{_NAMING})\b|"
                          rf"(?<![\w.])[a-z]\s+({_KW})\s+(?:not\s+)?[a-z](?![\w(])")


def keyword_form(word: str) -> str:
    """The form of a word keyword used as the keyword (`keyword_uses`), never the word's own stem."""
    return f"`{word}`"


def keyword_uses(text: str) -> set[str]:
    return {keyword_form(next(g for g in m.groups() if g)) for m in _KEYWORD_USE.finditer(text)}


class TermKind(StrEnum):
    WORD = "word"  # an ordinary content word
    NAME = "name"  # a proper name, acronym or CamelCase word: the question is about it by name
    IDENT = "ident"  # a code identifier: dotted, with underscores, a call, quoted code
    NUMBER = "number"  # a number or version
    SYMBOL = "symbol"  # an operator (:=, ==)


@dataclass(frozen=True)
class Term:
    text: str  # as written
    key: str  # the search engine's form: lower-case parts joined by spaces ("csv dictreader")
    forms: frozenset[str]  # normal forms that count as a mention in a text
    kind: TermKind

    @property
    def named(self) -> bool:
        """A name, identifier or version: a text that never mentions it cannot be about it."""
        return self.kind in (TermKind.NAME, TermKind.IDENT, TermKind.NUMBER)

    @property
    def plain_number(self) -> bool:
        """A whole number ("-7 // 2 gives -4"): an example's value or a count, not a version ("3.11")."""
        return self.kind is TermKind.NUMBER and "." not in self.text

    @property
    def word_keyword(self) -> bool:
        """A keyword that is an English word ("for", "with", "ALL"), asked about as the keyword (`_ident_forms`)."""
        return self.forms == {keyword_form(self.text.lower())}


_ACRONYM_PLURAL = re.compile(r"[A-Z][A-Z0-9]+s")  # "CTEs", "APIs", "UUIDs": no stemmer strips the "s" of capitals


def _word_forms(word: str) -> set[str]:
    w = word.lower()
    if _ACRONYM_PLURAL.fullmatch(word):
        return {stem(w), stem(w[:-1])}
    return {stem(w)}


def called_name(ident: str) -> str:
    """An identifier without its call's arguments, as written: "repr" of "repr()", "sorted" of "sorted(x)"."""
    return _CALL.sub("", ident.strip("`"))


_QUALIFIED = re.compile(r"\.|::")


def qualified_parts(ident: str) -> list[str]:
    """An identifier's parts: "os.path.join" -> os, path, join; R's and C++'s "tools::file_ext" -> tools, file_ext
    (after "::" a name is whole, dots and all: R's "foreign::read.dta" -> foreign, read.dta)."""
    return ident.split("::") if "::" in ident else _QUALIFIED.split(ident)


def _ident_forms(ident: str) -> set[str]:
    """An identifier whole (a starred keyword keeps its star: `except*` is not the word "except", whose
    stem "exceptions" shares), and a dotted name (or one qualified by "::") by its last part."""
    if ident.lower() in WORD_KEYWORDS and (ident.islower() or ident.isupper()):  # "is", "ALL": only as the keyword
        return {keyword_form(ident.lower())}
    w = called_name(ident.lower()).lstrip("@.")
    forms = {w}
    parts = qualified_parts(w)
    if len(parts) > 1 and not w[0].isdigit():
        last = parts[-1]
        if len(last) > 2:
            forms.add(last)
    return forms


_PAIR = re.compile(r"\b([A-Za-z]{3,})\s+(?=([A-Za-z]{3,})\b)")


def text_forms(text: str) -> set[str]:
    """Every normal form a text offers for matching: stems of words, identifiers whole and by
    their last dotted part, operators as written, and two adjacent words joined ("class method"
    offers "classmethod"). Memoised: a run looks at the same passages many times."""
    return set(_text_forms(text))


@lru_cache(maxsize=8192)
def _text_forms(text: str) -> frozenset[str]:
    pairs = {a.lower() + b.lower() for a, b in _PAIR.findall(text)}
    out: set[str] = pairs | {stem(p) for p in pairs}
    for m in TOKEN.finditer(text):
        tok = m.group(0).strip("`")
        if not tok:
            continue
        if not tok[0].isalnum() and tok[0] not in "_@." or tok in (":=", "==", "!=", "+=", "//", "**", "->"):
            out.add(tok)
            continue
        if "-" in tok and not _is_ident(tok):
            out |= _hyphen_forms(tok)
            for part in tok.split("-"):
                out |= _word_forms(part)
        elif _is_ident(tok):
            out |= _ident_forms(tok)
            for part in _PARTS.findall(tok):
                out.add(stem(part.lower()))
        else:
            out |= _word_forms(tok)
            if len(tok) > 1 and tok.isupper():  # a keyword as written ("HAVING"), not only its stem ("have")
                out.add(keyword_form(tok.lower()) if tok.lower() in WORD_KEYWORDS else tok.lower())
    return frozenset(out | keyword_uses(text))


def _hyphen_forms(tok: str) -> set[str]:
    w = tok.lower()
    forms = {w, w.replace("-", "")}
    last = w.rsplit("-", 1)[1]
    if len(last) > 3 and not last.isdigit():
        forms.add(stem(last))
    return forms


_LETTERS_DIGITS = re.compile(r"[a-z]{2,}\d+")  # a package or function named with a number: ggplot2, log10, md5


def _is_ident(tok: str) -> bool:
    return (tok.startswith(".") or "_" in tok or "::" in tok or tok.endswith((")", "]", "*")) or tok.startswith("@")
            or ("." in tok and not tok[0].isdigit() and not tok.endswith(".")) or bool(_LETTERS_DIGITS.fullmatch(tok)))


_EXTENSION = re.compile(r"(?:\.[a-z][a-z0-9]{0,3})+")


def is_extension(text: str) -> bool:
    """A file name's extension (".gz", ".tar.gz"): a kind of file, which pages may name by its format ("gzip")."""
    return bool(_EXTENSION.fullmatch(text.strip("`")))


_FILE_NAME = re.compile(r"[\w-]+" + _EXTENSION.pattern, re.I)


def is_file_name(text: str) -> bool:
    """A file's name with its extension ("service.py", "report.csv.gz")."""
    return bool(_FILE_NAME.fullmatch(text.strip("`")))


def _kind(tok: str, first: bool) -> TermKind:
    bare = tok.strip("`")
    if re.fullmatch(r"\d+(?:\.\d+)*", bare):
        return TermKind.NUMBER
    if bare in (":=", "==", "!=", "+=", "//", "**", "->"):
        return TermKind.SYMBOL
    if tok.startswith("`") or _is_ident(bare):
        return TermKind.IDENT
    if "-" in bare:
        alpha = [p for p in bare.split("-") if p.isalpha()]
        if alpha and all(p.isupper() for p in alpha):  # "TPC-C", "UTF-8"
            return TermKind.NAME
        # each part capitalised inside a sentence, a hyphenated word is a name ("DB-Engines"; not "CPU-heavy")
        return TermKind.NAME if not first and alpha and all(p[0].isupper() for p in alpha) else TermKind.WORD
    if len(bare) >= 2 and (bare.isupper() or re.search(r"[a-z][A-Z]", bare)):
        return TermKind.NAME
    if bare[0].isupper() and not first and bare.lower() not in STOP and bare.lower() not in LANGUAGES:
        return TermKind.NAME  # (a language's name is capitalised as English writes it, no product's: "in German")
    return TermKind.WORD


def make_term(tok: str, kind: TermKind) -> Term:
    bare = tok.strip("`").strip()
    if kind is TermKind.SYMBOL:
        forms = {bare}
    elif kind in (TermKind.IDENT,):
        forms = _ident_forms(bare) if " " not in bare else {stem(p.lower()) for p in _PARTS.findall(bare)}
    elif kind is TermKind.NUMBER:
        forms = {bare}
    elif "-" in bare:
        forms = _hyphen_forms(bare)
    else:
        forms = _word_forms(bare)
    key = " ".join(p.lower() for p in _PARTS.findall(bare))
    return Term(bare, key, frozenset(forms), kind)


# a character's escape glued to the text it starts ("comes out as '\\ufeffname'"): a value's characters, whose letters
# are no word ("ufeffname"); an escape standing alone ("what is '\\x00'?") is left as it is
_ESCAPED = re.compile(r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2})(?=[A-Za-z])")
# a folder the asker names by its name ("skip .git folders", "the node_modules directory"): their files' layout
_FOLDERS = frozenset({"folder", "folders", "directory", "directories", "dir", "dirs"})
_KIND_OF_SYMBOL = frozenset({"operator", "operators", "symbol", "sign", "token"})
_CONTRACTED = frozenset({"re", "ve", "ll", "d", "s", "t", "m"})
_AFTER_SYMBOL = re.compile(r"(?:^|\s)[`'\"]?[^\w\s`'\"]{1,4}[`'\"]?\s+$")


def extract_terms(text: str, *, sentence: bool = True) -> list[Term]:
    """The content terms of a question or objective, in order, without repeats. A capital opening a
    `sentence` says nothing; in a list of terms (`sentence=False`, a lead's "about: Poetry") it marks a name."""
    text = _ESCAPED.sub(lambda m: " " * len(m.group(0)), text)  # offsets kept
    toks = [(m.group(0), m.start()) for m in TOKEN.finditer(text)]
    out: dict[frozenset[str], Term] = {}
    templates = format_templates(text)
    grouped = [m.span() for m in _GROUPED_NUMBER.finditer(text)] + numbered_examples(text) \
        + [m.span() for m in _DATE_TIME.finditer(text)] + [m.span() for m in _ADDRESS.finditer(text)]
    literals = call_literals(text)
    mine = own_names(text)
    letters: dict[str, str] = {}  # lone letters, kept only when nothing else is asked
    for i, (tok, start) in enumerate(toks):
        if any(a <= start < b for a, b in grouped):
            continue  # "like 1,234,567": a number written out to show its format, whose groups are no numbers asked
        if tok.strip("`") in mine:
            continue  # the asker's own table, column or function: no page's subject
        if (tok[:1].isupper() or "." in tok or "_" in tok) and any(a <= start < b for a, b in literals):
            continue  # "ZoneInfo('Europe/Berlin')", "open('config.toml')", "@patch('myapp.db.Client')": a place, a
            # file or a path passed to a call is the asker's value ('rb' of `open(f, 'rb')` says how: kept)
        if tok.lower().rstrip(".") in _LATIN:
            continue  # "e.g.", "i.e.": an abbreviation of prose, no identifier
        if _a_unit(toks, i, text):
            continue  # "a 200 GB table": a quantity's unit
        if _counts_as_a_number(tok, start, text):
            continue  # "retries a failing command N times", "skips the first N rows": a count, no name
        if tok.lower() in _CONTRACTED and text[max(0, start - 1):start] in ("'", "’") and start > 1 \
                and text[start - 2].isalpha():
            continue  # "they're", "you've", "we'll": the tail of a contraction, no word (nor Python's `re`)
        bare = tok.strip("`")
        low = bare.lower().rstrip("*")
        first = sentence and (i == 0 or bool(re.search(r"[.?!:]\s*$", text[:start])))
        nxt = toks[i + 1][0].lower() if i + 1 < len(toks) else ""
        quoted = tok.startswith("`") or bool(re.search(r"['\"]$", text[:start]))
        if _narrates(toks, i, text):
            continue  # "I wrote def f(...) and ...": what the asker did, not what the question is about
        if _defined_here(toks, i, text):  # "I wrote def f(items=[])": f is the asker's own name, no page's subject
            if _DEFAULTED.match(text, start + (tok.index("(") if "(" in tok else len(tok))):
                out.setdefault(frozenset({stem("default")}), make_term("default", TermKind.WORD))  # what `items=[]` is
            continue
        if low in STOP and not _is_ident(bare):
            named = low in KEYWORDS and (quoted or (bare.isupper() and len(bare) > 1) or nxt in _NAMING_NEXT)
            if not named:
                continue
            kind = TermKind.IDENT
        elif bare.isupper() and _LABEL.match(text, start + len(tok)):  # "FATAL: password authentication failed":
            kind = TermKind.WORD  # a message's severity, which no page about the message need name
        elif any(a <= start < b for a, b in templates):  # "YYYY-MM-DD", "HH24:MI": a value's shape, shown by
            kind = TermKind.WORD  # pages as an example of it (never in a heading), no name
        elif placeholder(tok) or nxt in _FOLDERS and re.search(r"[._/]", bare):  # "mylist$val", "myapp.db.Client",
            kind = TermKind.WORD  # ".git folders": the asker's own name, which no page need name (though examples
            # use such names too: searched for, never required)
        else:
            kind = _kind(tok, first)
        if kind is TermKind.WORD and (len(low) < 2 or not _WORDISH.search(low)):
            if len(low) == 1 and low.isalpha() and not first:  # (a capital opening a query, "R", is no question's)
                letters.setdefault(low, bare)
            continue
        if kind is TermKind.WORD and low in _KIND_OF_SYMBOL and _AFTER_SYMBOL.search(text[:start]):
            continue  # "the -> operator": the symbol is asked about, "operator" only says what it is
        term = make_term(tok, kind)
        if term.key or kind is TermKind.SYMBOL:
            out.setdefault(term.forms, term)
    for op in operators_in(text):  # any operator standing alone ("->>", "::", "@>"), not only Python's
        out.setdefault(frozenset({op}), make_term(op, TermKind.SYMBOL))
    if not out:  # "what is q?", "what does -v do?": a lone letter is the only name such a question has
        for letter in letters.values():
            term = make_term(letter, TermKind.IDENT)
            out.setdefault(term.forms, term)
    # a symbol the words were cut from a longer one ("->" of "->>") is not asked about unless it stands alone too
    return [t for t in out.values() if t.kind is not TermKind.SYMBOL or has_operator(t.text, text)
            or not any(o.kind is TermKind.SYMBOL and t.text in o.text and o.text != t.text for o in out.values())]


EXAMPLE_OPENERS = r"like|such\s+as|e\.g\.|for\s+example|for\s+instance"  # what introduces an instance of a thing
# what introduces instances of a kind in running text ("programs such as newsyslog and logrotate", "e.g. Kerberos"); not
# `EXAMPLE_OPENERS`, whose "like" also compares ("works like grep") and which was measured for quoted examples
INSTANCE_OPENERS = r"such\s+as|e\.\s?g\.,?|for\s+example,?|including"
_EXAMPLES = re.compile(rf"\b(?:{EXAMPLE_OPENERS}),?\s+"
                       r"((?:[\"'`][^\"'`\s]+[\"'`](?:\s*(?:,|or|and|,\s*and|,\s*or)\s*(?=[\"'`]))?)+)", re.I)
_NUMBERED = re.compile(r"[\"'`]([A-Za-z_][\w.]*\d[\w.]*)[\"'`]")


def quoted_examples(text: str) -> list[tuple[int, int]]:
    """The spans of the quoted words given as examples ("a typo such as 'stauts'", "an error like 'KeyError'")."""
    return [m.span() for e in _EXAMPLES.finditer(text) for m in _QUOTED_WORD.finditer(text, e.start(1), e.end(1))]


def example_words(text: str) -> set[str]:
    """The quoted words a text gives as examples, without their quotes ("stauts" of "a typo such as 'stauts'")."""
    return {text[a + 1:b - 1] for a, b in quoted_examples(text)}


_QUOTED_WORD = re.compile(r"[\"'`][^\"'`\s]+[\"'`]")
_MADE_UP = re.compile(r"(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[\w-]+")  # letters and digits: an id, a key, a token
# a quoted literal of several words given as an instance ("a string like 'session=abc123; theme=dark'")
_EXAMPLE_LITERAL = re.compile(rf"\b(?:{EXAMPLE_OPENERS}),?\s+(?:the\s+)?([\"'`])([^\"'`\n]{{1,80}}?)\1", re.I)


def in_example_literal(name: str, text: str) -> bool:
    """A made-up value (letters and digits, "abc123") every mention of which is inside a quoted literal the text gives
    as an instance ("a string like 'session=abc123; theme=dark'"): the asker's data, not a name they ask about. (The
    names of code given as an instance, "like 'type Pair[T] = tuple[T, T]'", are what it is written in.)"""
    return bool(_MADE_UP.fullmatch(name)) and only_inside(name, text, _EXAMPLE_LITERAL)


# a string literal given to code: after an operator, an opening bracket or an upper-case keyword ("LIKE '%@%'",
# "sep=';'"); not a quoted name a sentence asks about ("What does the '->>' operator do?")
_CODE_STRING = re.compile(r"(?:[=(,]|\b[A-Z]{2,})\s*(['\"])([^'\"\n]{1,40}?)\1")


def in_code_string(name: str, text: str) -> bool:
    """A name of symbols alone ("%@%") every mention of which is inside a string literal the question's code gives
    (`_CODE_STRING`): the asker's value, a pattern or a separator, which no manual names."""
    return not re.search(r"[^\W_]", name) and only_inside(name, text, _CODE_STRING)


def only_inside(name: str, text: str, literal: re.Pattern[str]) -> bool:
    """Every mention of the name stands inside the body (the second group) of a literal the pattern finds."""
    spans = [m.span(2) for m in literal.finditer(text)]
    spots = standing(name, text)
    return bool(spans) and bool(spots) and all(any(a <= at < b for a, b in spans) for at in spots)


_QUOTED_DATUM = re.compile(r"(?<![\w'\"`])(['\"])([^\W\d_]+)\1(?![\w'\"`])")


def _folded(word: str) -> str:
    """The word without its case and accents ("Hôtel" → "hotel")."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).casefold()


@lru_cache(maxsize=256)
def variant_values(text: str) -> frozenset[str]:
    """Words the asker quotes as data in variants that differ only by case or accents ("so 'hôtel' and 'hotel'
    match", "'Alice' and 'alice' must collide"): values showing what is asked (accents, case), not its subject."""
    quoted = {m.group(2) for m in _QUOTED_DATUM.finditer(text)}
    return frozenset(w for w in quoted if any(v != w and _folded(v) == _folded(w) for v in quoted))


# a way the asker does without, named after "instead of", "rather than" or "without" ("instead of editing the config
# file", "rather than the estimates in the statistics views", "without wrapping everything in EXPLAIN ANALYZE"), up to
# the clause's end; only a doing (a gerund) or a thing with its article: "got numbers instead of Dates" says what
# they expected, "instead of 1" a value (and a way needs two words of content: `declined_ways`)
_DECLINED_WAY = re.compile(r"\b(?:instead\s+of|rather\s+than|without)\s+"
                           r"((?:(?!\w*thing\b|string\b)\w+ing|the|an?)\s+[^,.;:?!()]*?)"
                           r"(?=\s+(?:and|but|so|or|because|since|while|until)\b|[,.;:?!()]|$)", re.I)


@lru_cache(maxsize=256)
def declined_ways(text: str) -> tuple[tuple[int, int], ...]:
    """Where the question names a way the asker does without (`_DECLINED_WAY`): its words say what is not asked. A
    doing alone ("instead of recomputing them", "without blocking") is what they want to avoid, so it says what they
    ask for: a way names the doing and what it is done to or with ("without sorting the whole list")."""
    return tuple(m.span(1) for m in _DECLINED_WAY.finditer(text) if len(extract_terms(m.group(1), sentence=False)) >= 2)


def standing(name: str, text: str, flags: int = 0) -> list[int]:
    """Where the name stands in the text as a whole word (not inside a longer word or a dotted name)."""
    return [m.start() for m in re.finditer(rf"(?<![\w.]){re.escape(name)}(?![\w])", text, flags)]


def only_declined(term: Term, text: str) -> bool:
    """Every mention of the term is in a way the asker does without (`declined_ways`; a name they do without, "without
    pandas", is `undocumented.declined`)."""
    ways = declined_ways(text)
    if not ways:
        return False
    spots = standing(term.text.strip("`"), text, re.I)
    return bool(spots) and all(any(a <= at < b for a, b in ways) for at in spots)


# a date or a time written out ("2023-04-01T12:30:00+02:00", "2024-01-31"): a value, whose parts are no names
_DATE_TIME = re.compile(r"(?<![\w.-])\d{4}-\d{2}-\d{2}"
                        r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])")


def numbered_examples(text: str) -> list[tuple[int, int]]:
    """The spans of quoted numbered names given as examples ("names like "score_1", "score_2""): instances of what is
    asked about, made up by the asker, which no page names."""
    return [(a, b) for a, b in quoted_examples(text) if _NUMBERED.fullmatch(text, a, b)]


# the names of human languages, from the C library's locale aliases ("german" → de_DE)
LANGUAGES = frozenset(k for k, v in locale.locale_alias.items() if k.isalpha() and len(k) > 3 and "_" in v)
_ADDRESS = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?![\w.])")  # an IPv4 address or network: a value
_WRITTEN_CALL = re.compile(r"[\w\]]\((?:[^()]|\([^()]*\))*\)")
_LITERAL = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def call_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the calls a text writes out with their arguments ("format_string('%.2f', 1234.5)")."""
    return [m.span() for m in _WRITTEN_CALL.finditer(text)]


def call_literals(text: str) -> list[tuple[int, int]]:
    """The spans of the string literals a call the text writes out is passed ("ZoneInfo('Europe/Berlin')")."""
    return [m.span() for a, b in call_spans(text) for m in _LITERAL.finditer(text, a, b)]


_GROUPED_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])")  # 1,234,567 (not "f(1,2)")
_TEMPLATE = re.compile(r"(?<![\w-])[A-Za-z]{1,4}\d{0,2}(?:[-:/.][A-Za-z]{1,4}\d{0,2})+(?![\w-])")
_PLACEHOLDER = re.compile(r"([A-Za-z])\1+\d{0,2}")  # YYYY, DD, HH24, ss


_DIRECTIVES = re.compile(r"(?<![^\s'\"`(])[^\s'\"`(),;]*%[A-Za-z][^\s'\"`(),;]*")  # "postgresql-%a.log", "%Y-%m-%d"


def format_templates(text: str) -> list[tuple[int, int]]:
    """Where the text writes a date or time format in its placeholders ("YYYY-MM-DD", "HH24:MI", "hh:mm"):
    letters joined by separators, one part at least a repeated letter; or a pattern of %-directives ("log files
    named postgresql-%a.log"), whose pieces ("a.log") are no names."""
    return [m.span() for m in _TEMPLATE.finditer(text)
            if any(_PLACEHOLDER.fullmatch(p) for p in re.split(r"[-:/.]", m.group()))] \
        + [m.span() for m in _DIRECTIVES.finditer(text)]


_LABEL = re.compile(r":\s+[a-z][\w'-]*(?:\s+[\w'\"-]+){2,}")  # after an all-capitals word: a message's label
# ("ERROR: duplicate key value ..."), not a name a short phrase explains ("JSON: a format")

# Verbs an asker tells what happened with, after a sentence's opening "I" (besides a longer one in -ed, "I noticed";
# not "embed", "need"): "I wrote", "I get"
_NARRATION = frozenset("""wrote write tried try got get ran run made make have had see saw use used keep kept found
added know knew thought think set put did do am was""".split())


def _narrates(toks: list[tuple[str, int]], i: int, text: str) -> bool:
    """The verb right after a sentence that opens with "I" ("I wrote …", "I tried …", "I noticed …"): the asker's
    account, whose objects are the question's content; "how do I sort" asks for the action and is kept."""
    if i == 0 or toks[i - 1][0] != "I":
        return False
    (_, at), (tok, start) = toks[i - 1], toks[i]
    before = text[:at]
    opens = not before.strip() or bool(re.search(r"[.?!:;]\s*$", before))
    low = tok.lower()
    told = low in _NARRATION or (low.endswith("ed") and not low.endswith("eed") and len(low) > 5)
    return opens and text[at + 1:start].isspace() and told


_BINDS = frozenset({"def", "class"})
_DEFAULTED = re.compile(r"\((?:[^()=]*,)?\s*\w+\s*=(?!=)")  # a parameter given a default value in a def's list


_THINGS = (r"(?:tables?|columns?|functions?|variables?|files?|class(?:es)?|modules?|databases?|schemas?|indexe?s?|views?|"
           r"objects?|lists?|dict(?:ionary|ionaries|s)?|frames?|vectors?|fields?|keys?|types?|scripts?|packages?|programs?|"
           r"projects?|apps?|directory|directories|folders?|users?|roles?|sequences?|triggers?|procedures?)")
_OWN_NAME = re.compile(rf"\b(?:my|our|(?:I|we)\s+(?:have|had|created|made|defined|wrote|use)\s+(?:an?|the))\s+"
                       rf"(?:[\w-]+\s+){{0,2}}?{_THINGS}\s+(?:(?:called|named)\s+[\"'`]?"
                       rf"(?P<a>[A-Za-z_]\w*(?:\.\w+)*)|as\s+[\"'`](?P<b>[A-Za-z_]\w*(?:\.\w+)*)[\"'`])", re.I)


@lru_cache(maxsize=4096)
def zipf(word: str) -> float:
    """How often English uses the word (wordfreq's Zipf scale: 3 is once per million words)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), "en")


_LATIN = frozenset(a.lower() for a in ABBREVIATIONS)  # "e.g.", "i.e.", "vs.": prose, no identifiers
_MY = re.compile(r"my_?([A-Za-z]{2,})", re.I)
PLACEHOLDER_ZIPF = 3.5  # "my" and a word English uses at least this often: a placeholder ("mylist"; not "mysql", "mypy")
WORD_ZIPF = 2.0  # … unless the whole is itself a word English uses ("myself", "myth")


def placeholder(tok: str) -> bool:
    """A name made of "my" and an everyday word ("mylist", "myapp", "MyClass", "my_table"), or a qualified name or code
    holding one ("myapp.db.Client", `from myapp.db import Client`): the asker's own thing, which no page names."""
    return any(m is not None and zipf(m.group(1)) >= PLACEHOLDER_ZIPF and zipf(part) < WORD_ZIPF
               for part in re.findall(r"[A-Za-z][A-Za-z_]*", tok) for m in [_MY.fullmatch(part)])


# a lone capital letter where a number would stand: "N times", "the first N rows", "every K seconds"
_TIMES_AFTER = re.compile(r"\s+times\b")
_COUNTED_AFTER = re.compile(r"\s+[a-z]+s\b")  # what is counted, in the plural
_COUNT_BEFORE = re.compile(r"\b(?:first|last|top|every|next|previous|up\s+to|at\s+most|at\s+least)\s+$", re.I)


def _counts_as_a_number(tok: str, start: int, text: str) -> bool:
    """A lone capital letter standing for a count ("retries N times", "skips the first N rows"): the asker's number,
    no name a page must hold."""
    if len(tok) != 1 or not tok.isupper():
        return False
    after = text[start + 1:]
    return bool(_TIMES_AFTER.match(after) or _COUNT_BEFORE.search(text[:start]) and _COUNTED_AFTER.match(after))


_UNIT = re.compile(r"[A-Za-z]{1,3}")  # GB, MB, TiB, ms: a quantity's unit, as short as units are written


def _a_unit(toks: list[tuple[str, int]], i: int, text: str) -> bool:
    """A capitalised unit right after a number that no name precedes ("a 200 GB table", "180MB"): the unit of the
    asker's quantity, no name of the documents ("PostgreSQL 15 JSON": 15 is a version, JSON is asked about)."""
    tok, start = toks[i]
    m = re.search(r"(?<![\w.])\d+(?:\.\d+)?\s?$", text[:start])
    if not m or not _UNIT.fullmatch(tok) or not any(c.isupper() for c in tok):
        return False
    named = re.search(r"\b[A-Z][\w+#-]*\s+$", text[:m.start()])  # "PostgreSQL 15": a version, not a quantity
    return named is None


# what the asker has ("I have an employees table with a manager_id column"): an identifier of theirs, written before
# what it is, in the same clause
_OWNER = r"(?:my|our|(?:I|we)\s+(?:have|had|created|made|defined|wrote|keep|store))"  # what opens such a clause
_OWN_CLAUSE = re.compile(rf"\b{_OWNER}\s+"
                         rf"(?:[\w-]+\s+){{0,5}}?(?P<c>[A-Za-z]\w*_\w*[A-Za-z0-9])\s+{_THINGS}\b", re.I)
# … or a class of theirs, named with an everyday word, whose objects they have ("my app creates millions of tiny
# Point objects"; not "our Redis instance": `own_names` keeps a name English does not use as a word)
_OWN_CLASS = re.compile(rf"\b(?i:{_OWNER})\s+"
                        rf"(?:[\w-]+\s+){{0,5}}?(?P<k>[A-Z][a-z]+)\s+(?:objects?|instances?)\b")
OWN_CLASS_ZIPF = 4.0  # a class named with a word English uses this often ("Point", "Order") is the asker's
_VALUES = r"(?:status(?:es)?|states?|labels?|categor(?:y|ies)|tags?|levels?)"
# a quoted identifier given as the asker's data ("a new 'on_hold' status", "the 'legacy' label"; not a setting's or a
# module's name, "the 'auto_explain' module")
_QUOTED_VALUE = re.compile(rf"[\"'`](?P<v>[A-Za-z_][\w.-]*)[\"'`]\s+{_VALUES}\b", re.I)


def own_names(text: str) -> set[str]:
    """The names the asker gives their own things ("my table as "OrderItems"", "I have a column called qty", "I have
    an employees table with a manager_id column", "a new 'on_hold' status"): no page names them, whatever it says
    about what the question asks ("the function called print" is a page's, "the pg_stat_io view" one it may lack)."""
    return {m.group("a") or m.group("b") for m in _OWN_NAME.finditer(text)} \
        | {m.group("c") for m in _OWN_CLAUSE.finditer(text)} | {m.group("v") for m in _QUOTED_VALUE.finditer(text)} \
        | {m.group("k") for m in _OWN_CLASS.finditer(text) if zipf(m.group("k")) >= OWN_CLASS_ZIPF}


def _defined_here(toks: list[tuple[str, int]], i: int, text: str) -> bool:
    """The token is the name a question's own code defines (`def f(...)`, `class Point:`): code written
    with the keyword in lower case, the name right after it and its parameters or colon right after
    the name ("a class method" names no code)."""
    if i == 0:
        return False
    (prev, start), (tok, at) = toks[i - 1], toks[i]
    code = tok.endswith(")") or text[at + len(tok):at + len(tok) + 1] in ("(", ":")
    return prev in _BINDS and text[start + len(prev):at].isspace() and code


DOMAIN_SHARE = 0.1  # a name in at least this share of the passages (and DOMAIN_MIN) is the corpus's own subject
DOMAIN_MIN = 5
LETTER_DOMAIN_SHARE = 0.5  # a single letter (R, C) in at least this share of the passages is the corpus's subject
EVERYDAY_MIN_PASSAGES = 1000  # a corpus this large at least says which names its own text is written in
RARE_SHARE = 0.003  # a term in at most this share of the passages, and in no title, is mentioned in passing


@dataclass
class Weights:
    """Term weights from document frequencies (corpus statistics when the search tool gives them,
    else frequencies among the retrieved passages)."""

    passages: int = 0
    df: dict[str, int] = field(default_factory=dict)
    titled: dict[str, int] = field(default_factory=dict)  # passages naming the term in a title or heading

    def add(self, passages: int, term_passages: Mapping[str, int], term_titles: Mapping[str, int] | None = None) -> None:
        self.passages = max(self.passages, passages)
        for k, v in term_passages.items():
            self.df[k] = v
        for k, v in (term_titles or {}).items():
            self.titled[k] = v

    def domain(self, term: Term) -> bool:
        """A proper name in a large share of the corpus ("Python" in Python's documentation): the
        corpus's own subject, never what one question is about. A single letter must be in most passages
        (R in R's manuals): letters are variables' names too (c in a fifth of Python's passages)."""
        df = self.df.get(term.key)
        share = DOMAIN_SHARE if len(term.key) > 1 else LETTER_DOMAIN_SHARE
        return term.kind is TermKind.NAME and df is not None and df >= max(DOMAIN_MIN, share * self.passages)

    def everyday(self, term: Term) -> bool:
        """A name or keyword in a tenth of a large corpus's passages or more ("WHERE" in PostgreSQL's manual, 1 in 9):
        the vocabulary the corpus is written in. A claim that leaves it out answers no less: no gap to fill on its
        own. (Statistics of a few retrieved passages, not of a corpus, tell nothing of the kind.)"""
        df = self.df.get(term.key)
        return term.kind in (TermKind.NAME, TermKind.IDENT) and len(term.key) > 1 and df is not None \
            and self.passages >= EVERYDAY_MIN_PASSAGES and df >= DOMAIN_SHARE * self.passages

    def incidental(self, term: Term) -> bool:
        """Mentioned only in passing: in a few passages, and no title or heading names it."""
        df, titled = self.df.get(term.key), self.titled.get(term.key)
        # a name in no passage as written ("TaskGroup" where the text says "task groups") is not
        # one mentioned in passing: whether it is there at all is for the text to show
        return (df is not None and df >= 1 and titled == 0
                and df <= max(1.0, RARE_SHARE * self.passages))

    def known(self, term: Term) -> bool:
        return term.key in self.df

    def absent(self, term: Term) -> bool:
        """The corpus statistics say no passage contains the term."""
        return self.df.get(term.key) == 0

    def idf(self, term: Term) -> float:
        if term.kind is TermKind.SYMBOL:
            return 2.0
        n = self.passages or 1000
        df = self.df.get(term.key)
        if df is None:
            df = max(1, n // 100)  # unknown: an ordinary word
        return math.sqrt(max(0.04, math.log((n + 1) / (df + 1))))  # damped: a rare user word must not dominate


def weight(term: Term, weights: Weights) -> float:
    w = weights.idf(term)
    if term.kind is TermKind.IDENT:
        w *= 1.4
    elif term.kind is TermKind.NAME:
        w *= 1.2
    return w


# an identifier with marks at an end (R's `*tmp*` and `%in%`, `**kwargs`): the text's tokens lose its marks, the
# more so in quotes of another kind ("‘*tmp*‘" reads as "tmp*"), so it is looked for as written
_MARKED = re.compile(r"^[^\w`\s]|[^\w`\s)\]]$")


# a lower-case name made by a naming convention's prefix (`do_deploy`, `help_status`): the text names the family
# ("a do_*() method"), not each name a program gives its own methods
_FAMILY_MEMBER = re.compile(r"([a-z][a-z0-9]*_)[a-z0-9_]*[a-z0-9]")


def mentions(term: Term, forms: set[str], raw: str = "") -> bool:
    if term.kind is TermKind.SYMBOL:  # in the text as written, or among its forms (an index entry ":= (colon equals)")
        return term.text in forms or has_operator(term.text, raw)
    if term.forms & forms:
        return True
    if term.kind is not TermKind.IDENT or not raw:
        return False
    if _MARKED.search(term.text):
        return written(term.text, raw)
    family = _FAMILY_MEMBER.fullmatch(term.text)
    return bool(family) and written(family.group(1) + "*", raw)


def written(name: str, raw: str) -> bool:
    """The name as written in the text, no word character (nor a dot of a longer name) glued to either end."""
    return name in raw and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", raw) is not None


def covered(terms: Iterable[Term], forms: set[str], raw: str = "") -> list[Term]:
    return [t for t in terms if mentions(t, forms, raw)]
