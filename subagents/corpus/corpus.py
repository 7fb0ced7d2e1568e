"""Several corpus roots searched as one."""

from __future__ import annotations

import functools
from itertools import zip_longest
from pathlib import Path
from typing import Sequence

from .index import CorpusIndex, RootProgress, resolve_root
from ..text import operators_in
from .query import to_fts_query
from .records import CorpusError, IndexHit, IndexingInterrupted, IndexStats, Passage, PassageNotFound, PassageRead
from .scan import KINDS, ScanOptions


class Corpus:
    """Search merges results of every root by score; read dispatches on the id's root tag.

    BM25 scores come from per-root statistics, so merging across roots is an approximation that
    is good enough for ranking a handful of candidates.
    """

    def __init__(self, indexes: Sequence[CorpusIndex], stats: dict[str, IndexStats] | None = None) -> None:
        self.indexes = list(indexes)
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
    ) -> Corpus:
        """Validate every root, then open and update each index. CorpusError on a missing root, a
        file given as a root, or a root without a single indexable passage."""
        if not roots:
            raise CorpusError("no corpus roots given")
        real: list[Path] = []
        for r in roots:
            p = resolve_root(r)
            if p not in real:
                real.append(p)
        corpus = cls([])
        try:
            for root in real:
                ix = CorpusIndex.open(root, cache_dir, options=options)
                corpus._add(ix)
                try:
                    stats = ix.update(None if progress is None else functools.partial(progress, str(root)))
                except KeyboardInterrupt:  # said with the root it stopped in
                    raise IndexingInterrupted(str(root)) from None
                corpus.stats[ix.root_tag] = stats
                if stats.passages == 0:
                    exts = " ".join(sorted(KINDS))
                    why = f" ({stats.files_seen} candidate files, none with text)" if stats.files_seen else ""
                    raise CorpusError(f"corpus root contains no indexable file ({exts}): {root}{why}")
        except BaseException:
            corpus.close()
            raise
        return corpus

    def _add(self, ix: CorpusIndex) -> None:
        self.indexes.append(ix)
        self._by_tag[ix.root_tag] = ix

    def passage_count(self) -> int:
        return sum(ix.passage_count() for ix in self.indexes)

    def search(self, query: str, k: int = 8) -> list[Passage]:
        if operators_in(query):  # passages with the operator as written first, in each root's own order
            per_root = [ix.search(query, k) for ix in self.indexes]
            return [p for group in zip_longest(*per_root) for p in group if p is not None][:k]
        fts = to_fts_query(query)  # CorpusError for a query without content words
        hits = [p for ix in self.indexes for p in ix.search_fts(fts, k)]
        hits.sort(key=lambda p: p.score, reverse=True)
        return hits[:k]

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
        """The entries of the documentation's own index pages that a query asks for (`CorpusIndex.lookup`)."""
        hits = [h for ix in self.indexes for h in ix.lookup(query, k)]
        hits.sort(key=lambda h: -h.score)
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

    def close(self) -> None:
        for ix in self.indexes:
            ix.close()

    def __enter__(self) -> Corpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

