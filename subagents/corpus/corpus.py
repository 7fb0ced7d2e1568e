"""Several corpus roots searched as one.

With an embedding model a search is hybrid: the BM25 list and the list of passages closest in
meaning (cosine of sentence-embedding vectors) are fused by reciprocal rank, so a question worded
unlike the documentation ("grab what it prints") still reaches the passage that answers it
("capture_output"), and an exact identifier still ranks its entry first. Every result carries its
cosine with the query (`Passage.semantic`).
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections import OrderedDict
from itertools import zip_longest
from pathlib import Path
from typing import Hashable, Sequence, TypeVar

import numpy as np

from .embedding import TextEncoder
from .index import CorpusIndex, RootProgress, resolve_root
from ..text import operators_in
from .query import Match, to_fts_query
from .records import CorpusError, IndexHit, IndexingInterrupted, IndexStats, Passage, PassageNotFound, PassageRead
from .scan import KINDS, ScanOptions


class Corpus:
    """Search merges results of every root by score; read dispatches on the id's root tag.

    BM25 scores come from per-root statistics, so merging across roots is an approximation that
    is good enough for ranking a handful of candidates.
    """

    def __init__(self, indexes: Sequence[CorpusIndex], stats: dict[str, IndexStats] | None = None,
                 encoder: TextEncoder | None = None) -> None:
        self.indexes = list(indexes)
        self.encoder = encoder
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()  # query -> vector, the latest few
        self._queries_lock = threading.Lock()
        self.stats: dict[str, IndexStats] = dict(stats or {})  # by root tag, from the last update
        self._by_tag = {ix.root_tag: ix for ix in self.indexes}

    @classmethod
    def open(
        cls,
        roots: Sequence[Path | str],
        cache_dir: Path | None = None,
        progress: RootProgress | None = None,
        *,
        options: ScanOptions | None = None,
        encoder: TextEncoder | None = None,
    ) -> Corpus:
        """Validate every root, then open and update each index (with an `encoder`, passages without a
        vector are embedded). CorpusError on a missing root, a file given as a root, or a root without a
        single indexable passage."""
        if not roots:
            raise CorpusError("no corpus roots given")
        real: list[Path] = []
        for r in roots:
            p = resolve_root(r)
            if p not in real:
                real.append(p)
        corpus = cls([], encoder=encoder)
        try:
            for root in real:
                ix = CorpusIndex.open(root, cache_dir, options=options, encoder=encoder)
                corpus._add(ix)
                try:
                    stats = ix.update(None if progress is None else functools.partial(progress, str(root)))
                except KeyboardInterrupt:  # said with the root it stopped in
                    raise IndexingInterrupted(str(root)) from None
                corpus.stats[ix.root_tag] = stats
                if stats.passages == 0:
                    raise CorpusError(_nothing_indexed(root, stats))
        except BaseException:
            corpus.close()
            raise
        return corpus

    def _add(self, ix: CorpusIndex) -> None:
        self.indexes.append(ix)
        self._by_tag[ix.root_tag] = ix

    def passage_count(self) -> int:
        return sum(ix.passage_count() for ix in self.indexes)

    @property
    def semantic(self) -> bool:
        """Searches rank by meaning as well as by words (an embedding model, and vectors to rank)."""
        return self.encoder is not None and any(ix.vectors.matrix().keys for ix in self.indexes)

    def search(self, query: str, k: int = 8, match: Match = Match.ANY) -> list[Passage]:
        """The `k` passages best matching `query`; with `Match.ALL`, only passages holding every word of it
        (ranked by words and meaning among them)."""
        vec = self._query_vector(query)
        if operators_in(query):  # passages with the operator as written first, in each root's own order
            per_root = [ix.search(query, k, match) for ix in self.indexes]
            return self._with_similarity([p for group in zip_longest(*per_root) for p in group if p is not None][:k], vec)
        fts = to_fts_query(query, match)  # CorpusError for a query without content words
        if vec is None:
            hits = [p for ix in self.indexes for p in ix.search_fts(fts, k)]
            hits.sort(key=lambda p: p.score, reverse=True)
            return hits[:k]
        return self._hybrid(query, fts, vec, k, within_words=match is Match.ALL)

    def _hybrid(self, query: str, fts: str, vec: np.ndarray, k: int, within_words: bool = False) -> list[Passage]:
        """The BM25 ranking and the ranking by meaning fused (`fuse`); only the best `k` are read. `within_words`:
        the ranking by meaning holds only passages the words matched (a search for passages with every word)."""
        pool = max(k, POOL)
        lexical = sorted(((i, cid, s) for i, ix in enumerate(self.indexes) for cid, s in ix.rank_fts(fts, pool)),
                         key=lambda x: -x[2])[:pool]
        close = self._closest_among(vec, lexical) if within_words else sorted(
            ((i, cid, s) for i, ix in enumerate(self.indexes) for cid, s in ix.vectors.nearest(vec, pool)),
            key=lambda x: -x[2])[:pool]
        ranked = self._superseded_last(query, fuse([[(i, cid) for i, cid, _ in lexical], [(i, cid) for i, cid, _ in close]],
                                                   [1.0, DENSE_WEIGHT], len(lexical) + len(close)))
        keep = LEXICAL_KEEP if names_exact(query) else 0
        best = with_best_matches(ranked, [(i, cid) for i, cid, _ in lexical][:keep], k)
        words = {(i, cid) for i, cid, _ in lexical}
        by_key: dict[tuple[int, int], Passage] = {}
        for i, ix in enumerate(self.indexes):
            mine = [cid for j, cid in best if j == i]
            got = ix.passages_by_id([c for c in mine if (i, c) not in words])
            got.update(ix.passages_by_id([c for c in mine if (i, c) in words], fts))
            for cid, sim in zip(mine, ix.vectors.similarity_of_ids(vec, mine)):
                if cid in got:
                    got[cid].semantic = sim
                    by_key[(i, cid)] = got[cid]
        out = []
        for key, score in best.items():
            if key in by_key:
                by_key[key].score = round(score, 6)
                out.append(by_key[key])
        return out

    def _superseded_last(self, query: str, ranked: dict[Key, float]) -> dict[Key, float]:
        """The fused ranking with the passages of pages whose subject is deprecated weighed down (`SUPERSEDED`;
        the optparse page below argparse's for a question on command-line options), unless the query names
        that subject (`names_subject`)."""
        out = dict(ranked)
        for i, ix in enumerate(self.indexes):
            for cid, subject in ix.superseded([cid for j, cid in ranked if j == i]).items():
                if not names_subject(query, subject):
                    out[(i, cid)] *= SUPERSEDED
        order = {key: n for n, key in enumerate(ranked)}
        return {key: out[key] for key in sorted(out, key=lambda key: (-out[key], order[key]))}

    def _closest_among(self, vec: np.ndarray, hits: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
        """The (root, chunk id) hits ranked by meaning instead, those without a vector left out."""
        out = []
        for i, ix in enumerate(self.indexes):
            mine = [cid for j, cid, _ in hits if j == i]
            out += [(i, cid, sim) for cid, sim in zip(mine, ix.vectors.similarity_of_ids(vec, mine)) if sim is not None]
        return sorted(out, key=lambda x: -x[2])

    def _query_vector(self, query: str) -> np.ndarray | None:
        if self.encoder is None or not self.semantic:
            return None
        with self._queries_lock:
            vec = self._queries.get(query)
            if vec is not None:
                self._queries.move_to_end(query)
                return vec
        vec = self.encoder.encode([query])[0]
        with self._queries_lock:
            self._queries[query] = vec
            while len(self._queries) > 256:
                self._queries.popitem(last=False)
        return vec

    def _with_similarity(self, hits: list[Passage], vec: np.ndarray | None) -> list[Passage]:
        if vec is None:
            return hits
        for ix in self.indexes:
            mine = [p for p in hits if p.passage_id.partition("/")[0] == ix.root_tag]
            for p, sim in zip(mine, ix.vectors.similarity(vec, [(p.path, _chunk_no(p)) for p in mine])):
                p.semantic = sim
        return hits

    def term_passages(self, terms: list[str]) -> dict[str, int]:
        """Passages containing each term, over every root (document frequencies)."""
        counts = dict.fromkeys(terms, 0)
        for ix in self.indexes:
            for t, n in ix.term_passages(terms).items():
                counts[t] += n
        return counts

    def term_titles(self, terms: list[str]) -> dict[str, int]:
        """Passages with each term in their title or headings, over every root."""
        counts = dict.fromkeys(terms, 0)
        for ix in self.indexes:
            for t, n in ix.term_titles(terms).items():
                counts[t] += n
        return counts

    def lookup(self, query: str, k: int = 3) -> list[IndexHit]:
        """The entries of the documentation's own index pages that a query asks for (`CorpusIndex.lookup`),
        each passage with its similarity in meaning to the query."""
        hits = [h for ix in self.indexes for h in ix.lookup(query, k)]
        hits.sort(key=lambda h: -h.score)
        self._with_similarity([h.passage for h in hits[:k]], self._query_vector(query))
        return hits[:k]

    def read(self, passage_id: str, context: int = 1) -> PassageRead:
        tag = passage_id.partition("/")[0]
        ix = self._by_tag.get(tag)
        if ix is None:
            known = ", ".join(sorted(self._by_tag)) or "(none)"
            raise PassageNotFound(f"no passage {passage_id!r}: unknown corpus root {tag!r} (roots: {known})")
        return ix.read(passage_id, context)

    def root_of(self, passage_id: str) -> Path | None:
        """The real path of the root a passage id belongs to (None for an unknown root tag)."""
        ix = self._by_tag.get(passage_id.partition("/")[0])
        return ix.root if ix is not None else None

    def pages_of(self, passage_id: str) -> tuple[int, ...]:
        """The PDF pages a passage is on, first to last; () for other files and unknown roots."""
        ix = self._by_tag.get(passage_id.partition("/")[0])
        try:
            return ix.pages_of(passage_id) if ix is not None else ()
        except CorpusError:
            return ()

    def close(self) -> None:
        for ix in self.indexes:
            ix.close()

    def __enter__(self) -> Corpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



POOL = 50  # passages each ranking contributes to the fusion
RRF_K = 60  # reciprocal rank fusion: a passage scores sum weight / (RRF_K + rank) over the lists it is in
LEXICAL_KEEP = 3  # for a query naming something exactly (`names_exact`), BM25's best this many are always kept
SUPERSEDED = 0.5  # a passage of a page whose subject is deprecated: its fused score is weighed by this
DENSE_WEIGHT = 2.0  # the ranking by meaning counts twice (the gold page in the top 3: dev split 0.70 -> 0.80; alone 0.82)


Key = TypeVar("Key", bound=Hashable)


def _nothing_indexed(root: Path, stats: IndexStats) -> str:
    """Why a root gave no passage, and, when its files are links to another folder, which folder to give."""
    exts = " ".join(sorted(KINDS))
    why = f" ({stats.files_seen} candidate files, none with text)" if stats.files_seen else ""
    if stats.skipped_outside and stats.skipped_outside == stats.files_seen:
        targets = [os.path.realpath(root / rel) for rel, reason in stats.problems if "outside" in reason]
        folder = os.path.commonpath(targets) if targets else ""
        folder = folder if not os.path.isfile(folder) else os.path.dirname(folder)
        why = (f" (its {stats.skipped_outside} candidate files are symlinks resolving outside it, which are never read;"
               f" index the folder they point to instead: {folder})")
    return f"corpus root contains no indexable file ({exts}): {root}{why}"


def fuse(rankings: list[list[Key]], weights: list[float], k: int) -> dict[Key, float]:
    """Weighted reciprocal rank fusion (Cormack et al. 2009): the best `k` items of several rankings with
    their fused scores, best first; ties keep the order in which the rankings first list them."""
    score: dict[Key, float] = {}
    order: dict[Key, int] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, key in enumerate(ranking):
            score[key] = score.get(key, 0.0) + weight / (RRF_K + rank)
            order.setdefault(key, len(order))
    best = sorted(score, key=lambda key: (-score[key], order[key]))[:k]
    return {key: score[key] for key in best}


_EXACT = re.compile(r"`[^`]+`|\b\w+\(|\b[A-Za-z_]\w*\.[A-Za-z_]\w*|\b\w*_\w+\b|\b\d+(?:\.\d+)+\b|\b[a-z]+[A-Z]\w*|"
                    r"\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\b")


def names_subject(query: str, subject: str) -> bool:
    """The query names a page's subject, or a word it is made from ("telnet" of telnetlib, "uuencode" of uu): the
    page is what is asked about, deprecated or not."""
    name = subject.lower()
    return any(w == name or len(w) >= 3 and (name.startswith(w) or w.startswith(name))
               for w in re.findall(r"[a-z0-9_.]+", query.lower()))


def names_exact(query: str) -> bool:
    """The query names something that must be matched as written: an identifier (`s.split()`, `json.dumps`,
    `max_connections`, `TaskGroup`), a version or number (`0.2`, `3.11`), a keyword in capitals (`VACUUM`)."""
    return bool(_EXACT.search(query))


def with_best_matches(ranked: dict[Key, float], kept: list[Key], k: int) -> dict[Key, float]:
    """The best `k` of a fused ranking, the `kept` among them whatever their rank (the passages that match
    the query's words best: an exact name or number is never crowded out by passages merely close in
    meaning), best first."""
    top = list(ranked)[:k]
    missing = [key for key in kept if key not in top]
    if missing:
        top = [key for key in top if key in kept or key not in missing][: k - len(missing)] + missing
        top = [key for key in ranked if key in top]
    return {key: ranked[key] for key in top}


def _chunk_no(p: Passage) -> int:
    tail = p.passage_id.rsplit("#", 1)[-1]
    return int(tail) if tail.isdigit() else -1
