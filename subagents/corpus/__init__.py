"""The local corpus: folders of .html/.htm/.md/.rst/.txt/.pdf indexed into SQLite FTS5 (and, with an
embedding model, passage vectors for ranking by meaning), and the `search_corpus` / `read_passage`
tools over it."""

from .corpus import Corpus
from .index import CorpusIndex, default_cache_dir, index_path_for, root_tag_for
from .query import Match, query_terms, to_fts_query
from .records import (CorpusError, IndexHit, IndexingInterrupted, IndexStage, IndexStats, NoSearchableWords,
                      Passage, PassageNotFound, PassageRead)
from .scan import DEFAULT_SKIP_DIRS, DEFAULT_SKIP_FILES, ScanOptions
from .tools import make_corpus_tools

__all__ = [
    "Corpus",
    "CorpusError",
    "NoSearchableWords",
    "CorpusIndex",
    "DEFAULT_SKIP_DIRS",
    "DEFAULT_SKIP_FILES",
    "IndexHit",
    "IndexStage",
    "IndexStats",
    "IndexingInterrupted",
    "Match",
    "Passage",
    "PassageNotFound",
    "PassageRead",
    "ScanOptions",
    "default_cache_dir",
    "index_path_for",
    "make_corpus_tools",
    "query_terms",
    "root_tag_for",
    "to_fts_query",
]
