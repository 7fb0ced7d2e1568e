"""Gold-answer match and gold-source hits, with no model.

Answers: `answers` holds alternatives; inside one alternative "; " separates parts that a complete
answer must all contain. Text is normalised the SQuAD way, except that punctuation becomes a space
(so `shutil.copy2()` and "shutil copy2" agree): Unicode NFKC, lower case, typographic quotes and
dashes made plain, punctuation to spaces, articles dropped, whitespace collapsed.

- `contains`: 1.0 when some alternative has every part in the report (as whole words), else 0.0;
  `parts`: the best alternative's share of parts found.
- `f1`: token F1 of each part against the report sentence that matches it best, averaged over the
  parts of an alternative, best alternative (a long report against a short answer would make a
  whole-report F1 meaningless).

Only the report's prose is matched: headings (the title repeats the question), the offline notice,
and the generated sections (references, citation check, what is missing, open questions) are not.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

GENERATED_SECTIONS = ("references", "citation check", "what is missing", "open questions")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\u00a0": " "})
_MARKER = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]|\[S\d+(?:\s*[,;]\s*S\d+)*\]")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_PLAIN).lower()
    text = re.sub(r"[^\w\s]|_", " ", text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    return normalise(text).split()


def answer_parts(answer: str) -> list[str]:
    return [p.strip() for p in answer.split("; ") if p.strip()]


def report_prose(report: str) -> str:
    """The report without headings, quotes of the offline notice, generated sections and markers."""
    keep: list[str] = []
    skipping = False
    for line in report.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            title = stripped.lstrip("#").strip().lower()
            skipping = stripped.startswith("## ") and title in GENERATED_SECTIONS
            continue
        if skipping or stripped.startswith(">"):
            continue
        keep.append(_MARKER.sub(" ", line))
    return "\n".join(keep)


def sentences(text: str) -> list[str]:
    return [s for line in text.splitlines() for s in re.split(r"(?<=[.!?])\s+", line) if s.strip()]


def f1(candidate: Sequence[str], gold: Sequence[str]) -> float:
    common = Counter(candidate) & Counter(gold)
    same = sum(common.values())
    if not same:
        return 0.0
    precision, recall = same / len(candidate), same / len(gold)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class AnswerMatch:
    contains: float  # 1.0: some alternative fully contained
    parts: float  # the best alternative's share of parts contained
    f1: float  # best alternative: mean over its parts of the best sentence's token F1


def match_answers(report: str, answers: Iterable[str]) -> AnswerMatch | None:
    """None when there is no gold answer (unanswerable or unannotated questions)."""
    alternatives = [answer_parts(a) for a in answers if answer_parts(a)]
    if not alternatives:
        return None
    prose = report_prose(report)
    haystack = f" {normalise(prose)} "
    sents = [tokens(s) for s in sentences(prose)]
    best = AnswerMatch(0.0, 0.0, 0.0)
    for parts in alternatives:
        found = [f" {normalise(p)} " in haystack for p in parts if normalise(p)]
        share = sum(found) / len(found) if found else 0.0
        part_f1 = [max((f1(s, tokens(p)) for s in sents if s), default=0.0) for p in parts if tokens(p)]
        score = sum(part_f1) / len(part_f1) if part_f1 else 0.0
        best = AnswerMatch(max(best.contains, 1.0 if found and all(found) else 0.0), max(best.parts, share),
                           max(best.f1, score))
    return best


def source_matches(gold: str, locators: Iterable[str]) -> bool:
    """A gold source (a path relative to the corpus root, or a URL) against a run's source locators:
    corpus passage paths match on the path (a fragment ignored), URLs on the URL without fragment; a gold
    page of a PDF (`R-intro.pdf#page=17`) only a locator on that page, when the locator names pages."""
    g, _, fragment = gold.partition("#")
    g = g.rstrip("/").lower()
    page = fragment if fragment.startswith("page=") else ""
    for loc in locators:
        path, _, loc_fragment = loc.partition("#")
        l = path.rstrip("/").lower()
        if (l == g or l.endswith("/" + g.lstrip("/"))) and (
                not page or not loc_fragment.startswith("page=") or loc_fragment == page):
            return True
    return False


def gold_hit(gold_sources: Sequence[str], locators: Iterable[str]) -> float | None:
    """Share of gold sources among the locators (None when the question names none)."""
    if not gold_sources:
        return None
    locs = list(locators)
    return sum(source_matches(g, locs) for g in gold_sources) / len(gold_sources)
