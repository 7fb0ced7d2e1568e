"""What to read in full after the searches: breadth first, then precision.

The searches' results are fused twice by reciprocal rank: per passage (how high each passage came
over all queries) and per page (how many of a page's passages came, and how high — a page that
several queries and several of its passages point to is about the question, not a page that
mentions a word once). Candidates are then reranked by how much of the objective their title,
headings and snippet cover (weighted by the corpus's term statistics), with a bonus when the title
or headings name the subject (a larger one when the title opens with its name: the subject's own page,
"random — Generate pseudo-random numbers", "TRUNCATE"), and the best are read, a page's further passages
counting less than its first. The last read is kept for a passage one sentence of whose snippet states most of
the objective alone, when the ranking left it out (a row deep in a long reference page).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .evidence import Evidence, Passage, page_of, page_support, split_sentences
from .selection import Focus
from .terms import STOP, Term, mentions, stem, text_forms, weight

CLOSE_BONUS = 1.0  # the passage closest in meaning to the objective counts (1 + this) times (dev split: 2 no better)
SECOND_READ = 0.5  # a page already read: its next passage's score is weighed by this, per read
TITLE_BONUS = 0.5  # a page whose title opens with the subject's name counts (1 + this) times
DENSE_MIN = 0.6  # a snippet sentence stating this share of the objective (by weight) is worth a read of its own
ENTRY_CLOSE = 0.9  # an entry headed by a question (a FAQ's), this close in meaning against the closest: a read of its own
_FIRST_WORD = re.compile(r"\s*([A-Za-z_][\w.]*)")


@dataclass
class Candidate:
    passage: Passage
    score: float


def _share(terms: list[tuple[Term, float]], forms: set[str], raw: str) -> float:
    total = sum(w for _, w in terms) or 1.0
    return sum(w for t, w in terms if mentions(t, forms, raw)) / total


def _titled(title: str, term: Term) -> bool:
    """Whether a page's title opens with the term's name: the page is the term's own."""
    m = _FIRST_WORD.match(title)
    return bool(m) and mentions(term, text_forms(m.group(1)), m.group(1))


def rank_candidates(focus: Focus, ev: Evidence) -> list[Candidate]:
    """Every retrieved passage, best first, for reading."""
    terms = [(t, weight(t, ev.weights)) for t in (focus.terms or focus.context)]
    subject = [(t, weight(t, ev.weights)) for t in focus.subject(ev.weights)]
    support = page_support(ev)
    top_rank = max((p.rank for p in ev.passages.values()), default=0.0) or 1.0
    top_page = max(support.values(), default=0.0) or 1.0
    out = []
    for p in ev.passages.values():
        if p.full or p.rank <= 0:
            continue
        raw = f"{p.context} {p.text}"
        cover = _share(terms, text_forms(raw), raw)
        named = _share(subject, text_forms(p.context), p.context) if subject else 0.0
        titled = any(_titled(p.title, t) for t, _ in subject)
        prior = 0.5 * p.rank / top_rank + 0.5 * support.get(page_of(p), 0.0) / top_page
        out.append(Candidate(p, prior * (0.4 + cover) * (1 + 0.6 * named) * (1 + TITLE_BONUS * titled)
                             * (1 + CLOSE_BONUS * ev.closeness(p))))
    out.sort(key=lambda c: -c.score)
    return out


def _chunk(p: Passage) -> int:
    tail = p.passage_id.rsplit("#", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def _densest(terms: list[tuple[Term, float]], p: Passage) -> float:
    """The largest share of the weighted terms that one sentence of the passage's snippet states alone."""
    return max((_share(terms, text_forms(s), s) for s in split_sentences(p.text.strip("… "))), default=0.0)


def pick_reads(focus: Focus, ev: Evidence, n: int, readable: Callable[[Passage], bool]) -> list[Passage]:
    """Up to `n` passages to read (of those `readable` by the subagent's tools), best first; a page's second
    passage counts half as much as its first (its third a quarter), and a passage next to one already read is
    skipped (a read brings its neighbours along). The last read goes to the passage one of whose snippet's
    sentences states most of the objective (`DENSE_MIN`) best, unless it is picked or read along with a pick
    already: a table row or an entry deep in a long page ranks low among searches' results however well it
    answers ("pg_total_relation_size … Computes the total disk space used by the specified table, including all
    indexes and TOAST data"). And a read goes to the entry headed by a question (a FAQ's) that is closest in meaning
    to what is asked, when it is about as close as the closest passage (`ENTRY_CLOSE`): it answers a question like it,
    in words of its own ("What is the most efficient way to concatenate many strings together?" for "Why is
    building up a long string with += inside a loop slow?")."""
    cands = [c for c in rank_candidates(focus, ev) if readable(c.passage)]
    picks = _picks_by_rank(list(cands), n)
    if not picks:
        return picks
    terms = [(t, weight(t, ev.weights)) for t in (focus.terms or focus.context)]
    dense = {c.passage.source_id: _densest(terms, c.passage) for c in cands}
    best = ev.passages[max(dense, key=lambda sid: dense[sid])]
    entries = [c.passage for c in cands if c.passage.asks]
    entry = max(entries, key=ev.closeness, default=None) if ev.top_semantic() is not None else None  # (by meaning)
    reserved = ([best] if dense[best.source_id] >= DENSE_MIN else []) \
        + ([entry] if entry is not None and entry is not best and ev.closeness(entry) >= ENTRY_CLOSE else [])
    reserved = [r for r in reserved if not _read_along(r, picks[: n - len(reserved)])]
    return picks[: n - len(reserved)] + reserved


def _read_along(p: Passage, picks: list[Passage]) -> bool:
    """Picked, or next to a pick on its page (a read brings its neighbours along)."""
    return any(page_of(q) == page_of(p) and abs(_chunk(q) - _chunk(p)) <= 1 for q in picks)


def _picks_by_rank(cands: list[Candidate], n: int) -> list[Passage]:
    picks: list[Passage] = []
    chunks: dict[str, list[int]] = {}
    while cands and len(picks) < n:
        best = max(cands, key=lambda c: c.score * SECOND_READ ** len(chunks.get(page_of(c.passage), [])))
        cands.remove(best)
        page, no = page_of(best.passage), _chunk(best.passage)
        if any(abs(no - x) <= 1 for x in chunks.get(page, [])):
            continue
        chunks.setdefault(page, []).append(no)
        picks.append(best.passage)
    return picks


# ---------------------------------------------------------------- pseudo-relevance feedback

FEEDBACK_DOCS = 5  # the best candidates whose words suggest another query
FEEDBACK_TERMS = 3
_FEEDBACK_WORD = re.compile(r"[A-Za-z][A-Za-z_]{3,}")


def feedback_query(focus: Focus, ev: Evidence) -> str:
    """A further query (RM3-like): the subject, plus the words the best candidates share that the
    objective does not have, weighted by the candidates' scores; "" when they share none."""
    top = rank_candidates(focus, ev)[:FEEDBACK_DOCS]
    own = set().union(*(t.forms for t in focus.terms)) if focus.terms else set()
    score: dict[str, float] = {}
    docs: dict[str, int] = {}
    for c in top:
        words = {w.lower() for w in _FEEDBACK_WORD.findall(f"{c.passage.context} {c.passage.text}")}
        for w in words:
            if w in STOP or stem(w) in own or w in own:
                continue
            score[w] = score.get(w, 0.0) + c.score
            docs[w] = docs.get(w, 0) + 1
    shared = sorted((w for w in score if docs[w] >= 2), key=lambda w: (-score[w], w))[:FEEDBACK_TERMS]
    if not shared:
        return ""
    subject = " ".join(t.text for t in focus.subject(ev.weights)) or " ".join(t.text for t in focus.terms[:2])
    return f"{subject} {' '.join(shared)}".strip()
