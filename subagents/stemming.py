"""The Snowball (Porter 2) English stemmer, safe to call from many threads at once.

A `snowballstemmer` stemmer object keeps its working word and cursor on itself, so one object
shared by runs in several threads (the Python API called from threads) mixes their words up and
fails with `IndexError`. Each thread gets its own stemmer; results are memoised process-wide
(a stem depends only on the word).

`snowballstemmer` hands out PyStemmer's C implementation of the same algorithm when it is installed
(a dependency: identical stems on the 37,822 distinct words of 800 Python and PostgreSQL pages, about
10x faster; a fresh process's run stems ~1,500 new words).
"""

from __future__ import annotations

import threading
from functools import lru_cache

import snowballstemmer

_LOCAL = threading.local()


def _stemmer() -> snowballstemmer.stemmer:
    stemmer = getattr(_LOCAL, "english", None)
    if stemmer is None:
        stemmer = _LOCAL.english = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=131072)
def stem_word(word: str) -> str:
    """The English stem of `word` as written (no case folding): "raised", "raises" → "rais"."""
    return _stemmer().stemWord(word)
