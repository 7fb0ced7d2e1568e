"""Natural-language question -> FTS5 query.

FTS5's implicit AND finds nothing for most questions, so each remaining word is quoted and the
words are OR-ed; BM25 then favours passages that match more (and rarer) words. Compound tokens
("asyncio.TaskGroup", "create_task", "utf-8") become a phrase, OR-ed with their parts.
"""

from __future__ import annotations

import re
from enum import StrEnum

from .records import NoSearchableWords


class Match(StrEnum):
    """Which passages a search may return."""

    ANY = "any"  # those with any of the query's words, the ones with more (and rarer) words first
    ALL = "all"  # only those with every word of the query (stop words aside): where named things meet

MAX_TERMS = 24

# English stopwords (NLTK's list) plus question and request words.
STOPWORDS = frozenset(
    """a about above after again against ain all am an and any are aren as at be because been before
    being below between both but by can couldn d did didn do does doesn doing don down during each few
    for from further had hadn has hasn have haven having he her here hers herself him himself his how i
    if in into is isn it its itself just ll m ma me mightn more most mustn my myself needn no nor not now
    o of off on once only or other our ours ourselves out over own re s same shan she should shouldn so
    some such t than that the their theirs them themselves then there these they this those through to
    too under until up ve very was wasn we were weren what when where which while who whom why will with
    won wouldn y you your yours yourself yourselves
    could would might must shall may also whose whats hows anyone someone something anything
    please explain describe tell show give want need know like way ways get gets getting""".split()
)

_TOKEN = re.compile(r"\w+(?:[.\-]\w+)*")
_PART = re.compile(r"[^\W_]+")
_QUOTED = re.compile(r"`([^`]+)`")


_NAME_RUN = re.compile(r"\b[A-Z][\w+#]*(?:[ -][A-Z][\w+#]*)+\b")


def name_runs(question: str) -> list[str]:
    """Runs of capitalised words as the question writes them ("SQL Server", "Notes for Windows Users" gives
    "Windows Users"), lower-cased, a space between: phrases whose passage counts tell a name of several
    words the corpus holds from one it does not. A run opening the question is also taken without its first
    word, capitalised as any sentence's is ("Does Oracle Database …": "oracle database")."""
    out = []
    for m in _NAME_RUN.finditer(question):
        words = _PART.findall(m.group(0).lower())
        out.append(" ".join(words))
        if not question[:m.start()].strip(" \t\"'(") and len(words) > 2:
            out.append(" ".join(words[1:]))
    return list(dict.fromkeys(out))


def letter_names(question: str) -> list[str]:
    """Capital letters standing alone as names ("R", "C" in "R's C API"; never "I"), lower-cased: too short to
    search, but how many passages hold one says whether it is the corpus's own subject (R in R's manuals)."""
    return list(dict.fromkeys(m.group(1).lower() for m in _LETTER.finditer(question) if m.group(1) != "I"))


_LETTER = re.compile(r"(?<![\w.'’-])([A-Z])(?=['’]s\b|[^\w.'’-]|$)")


def _written_as_name(word: str, quoted: set[str], shouted: bool) -> bool:
    """A stopword the asker wrote as a name: in capitals in a question that is not all capitals
    ("WHERE", "HAVING", "IN": SQL keywords) or in backticks (`is`, `not`): the thing asked about,
    not a function word."""
    return len(word) > 1 and (word.isupper() and not shouted or word.lower() in quoted)


def query_terms(question: str) -> list[str]:
    """The searchable terms of a question: lowercased words and phrases, stopwords dropped (unless
    written as a name, see `_written_as_name`)."""
    terms: list[str] = []
    quoted = {w.lower() for q in _QUOTED.findall(question) for w in _PART.findall(q)}
    shouted = question.isupper() and len(question.split()) > 2  # "WHERE" alone is a keyword
    for original in _TOKEN.findall(question):
        token = original.lower()
        parts = _PART.findall(token)
        if len(parts) > 1:
            terms.append(" ".join(parts))
        named = {p.lower() for p in _PART.findall(original) if _written_as_name(p, quoted, shouted)}
        terms.extend(p for p in parts if (p not in STOPWORDS or p in named) and (len(p) > 1 or p.isdigit()))
    seen: dict[str, None] = dict.fromkeys(terms or _title_words(question) or letter_names(question)
                                          or _single_letters(question))
    return list(seen)[:MAX_TERMS]


def _single_letters(question: str) -> list[str]:
    """When nothing else is left: the letters standing alone that are no English word ("what is q?", "what does
    -v do?", "`x`"): too short to search beside other words, but the only name such a question has."""
    return [p for p in dict.fromkeys(_PART.findall(question.lower())) if len(p) == 1 and p not in STOPWORDS
            and not p.isdigit()]


_SENTENCE_START = re.compile(r"(?:^|[.?!:]\s+)$")


def _title_words(question: str) -> list[str]:
    """When nothing else is left: the capitalised words inside a sentence ("What is What Now?" asks
    about the section titled "What Now?"), a title made of common words."""
    out: list[str] = []
    if question.isupper():  # shouted: every word is in capitals
        return out
    for m in re.finditer(r"[^\W\d_]+", question):
        word = m.group(0)
        if word[0].isupper() and len(word) > 1 and not _SENTENCE_START.search(question[: m.start()]):
            out.append(word.lower())
    return out


def to_fts_query(question: str, match: Match = Match.ANY) -> str:
    terms = query_terms(question)
    if not terms:
        raise NoSearchableWords(
            f"query {question.strip()[:80]!r} has no searchable words once stopwords and question "
            "words are removed; use content words such as names, terms or identifiers"
        )
    return (" AND " if match is Match.ALL else " OR ").join(f'"{t}"' for t in terms)


_COMPOUND = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z]+[a-z0-9]*)+\b")
_WORD_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def name_parts(text: str) -> str:
    """The words that names written in camel case are made of, each name's once ("DictReader" ->
    "Dict Reader", "getLogger" -> "get Logger", "HTTPServer" -> "HTTP Server"): indexed beside the text,
    a question's "reader" and "dicts" find `csv.DictReader` though no word of the text is "reader"."""
    out: dict[str, None] = {}
    for name in dict.fromkeys(_COMPOUND.findall(text)):
        parts = _WORD_PART.findall(name)
        if len(parts) > 1:
            out[" ".join(parts)] = None
    return " ; ".join(out)

