"""What to read in full after the searches: breadth first, then precision.

The searches' results are fused twice by reciprocal rank: per passage (how high each passage came
over all queries) and per page (how many of a page's passages came, and how high — a page that
several queries and several of its passages point to is about the question, not a page that
mentions a word once). Candidates are then reranked by how much of the objective their title,
headings and snippet cover (weighted by the corpus's term statistics), with a bonus when the title
or headings name the subject, and one passage per page is read, best pages first.
"""

from __future__ import annotations

from dataclasses import dataclass

from .evidence import Evidence, Passage
from .selection import Focus
from .terms import Term, TermKind, mentions, text_forms, weight

PAGE_DECAY = 0.5  # the j-th passage of a page adds PAGE_DECAY**j of its rank to the page


def page_of(p: Passage) -> str:
    return p.passage_id.rsplit("#", 1)[0] if p.passage_id else p.url or p.source_id


def page_support(ev: Evidence) -> dict[str, float]:
    """Per page: its passages' fused ranks, the best counting fully, each next one less."""
    by_page: dict[str, list[float]] = {}
    for p in ev.passages.values():
        if p.rank > 0:
            by_page.setdefault(page_of(p), []).append(p.rank)
    return {page: sum(r * PAGE_DECAY ** j for j, r in enumerate(sorted(rs, reverse=True)))
            for page, rs in by_page.items()}


@dataclass
class Candidate:
    passage: Passage
    score: float


def _share(terms: list[tuple[Term, float]], forms: set[str], raw: str) -> float:
    total = sum(w for _, w in terms) or 1.0
    return sum(w for t, w in terms if mentions(t, forms, raw)) / total


def rank_candidates(focus: Focus, ev: Evidence) -> list[Candidate]:
    """Every retrieved passage, best first, for reading."""
    terms = [(t, weight(t, ev.weights)) for t in (focus.terms or focus.context)]
    subject = [(t, weight(t, ev.weights)) for t in focus.question.subject or focus.about
               if t.kind is not TermKind.SYMBOL]
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
        prior = 0.5 * p.rank / top_rank + 0.5 * support.get(page_of(p), 0.0) / top_page
        out.append(Candidate(p, prior * (0.4 + cover) * (1 + 0.6 * named)))
    out.sort(key=lambda c: -c.score)
    return out


def pick_reads(focus: Focus, ev: Evidence, n: int) -> list[Passage]:
    """Up to `n` passages to read, one per page, best first."""
    picks: list[Passage] = []
    pages: set[str] = set()
    for c in rank_candidates(focus, ev):
        page = page_of(c.passage)
        if page in pages:
            continue
        pages.add(page)
        picks.append(c.passage)
        if len(picks) >= n:
            break
    return picks
