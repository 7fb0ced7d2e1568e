"""A user's words and the words documentation says the same thing with ("a scratch folder": "a temporary
directory"). The sentence encoder bridges some paraphrases; these, measured, it does not (all-MiniLM-L6-v2
puts "rmdir() doesn't allow deleting a directory" closer to "a scratch folder deleted automatically" than
"the temporary directory and all its contents are removed").

A pair counts only where the corpus itself shows it (`prefers`): the user's word rare there, the
documentation's word common. A corpus that says "folder" keeps "folder" as it is.
"""

from __future__ import annotations

from .terms import Term, TermKind, Weights, make_term

# a user's word -> the words manuals say it with (general computing usage, no one corpus's)
DOC_WORDS: dict[str, tuple[str, ...]] = {
    "folder": ("directory",), "folders": ("directories",), "subfolder": ("subdirectory",),
    "scratch": ("temporary",), "temp": ("temporary",), "throwaway": ("temporary",),
    "erase": ("delete", "remove"), "wipe": ("delete", "clear"), "trash": ("delete",),
    "kill": ("terminate",), "abort": ("cancel",), "halt": ("terminate",),
    "remember": ("cache",), "memoize": ("cache",), "memoise": ("cache",), "recomputing": ("cache",),
    "app": ("application",), "apps": ("applications",),
    "console": ("terminal",), "switch": ("flag", "option"), "toggle": ("flag", "option"),
    "glue": ("concatenate", "join"), "chop": ("split", "truncate"), "trim": ("strip",),
    "grab": ("get",), "nap": ("sleep",), "pause": ("sleep",),
    "dedupe": ("duplicates",), "deduplicate": ("duplicates",),
    "crash": ("exception", "error"), "crashes": ("exception", "error"),
}
PREFER_RATIO = 4  # the documentation's word in at least this many times the user's word's passages
RARE_SHARE = 0.01  # a user's word in at most this share of the passages may be said otherwise (before counts)


def doc_words(term: Term) -> tuple[str, ...]:
    return DOC_WORDS.get(term.text.lower(), ()) if term.kind is TermKind.WORD else ()


def said_otherwise(term: Term, weights: Weights) -> bool:
    """The corpus may say this word otherwise: it has documentation words for it and is rare there."""
    df = weights.df.get(term.key)
    return bool(doc_words(term)) and df is not None and df <= RARE_SHARE * max(1, weights.passages)


def prefers(term: Term, weights: Weights) -> list[Term]:
    """The documentation's words for the term that the corpus uses far more often than the term itself."""
    df = weights.df.get(term.key, 0)
    out = []
    for w in doc_words(term):
        d = make_term(w, TermKind.WORD)
        if weights.df.get(d.key, 0) >= PREFER_RATIO * max(1, df):
            out.append(d)
    return out


def reworded(query: str, terms: list[Term], weights: Weights) -> str:
    """The query with each word the corpus may say otherwise replaced by the documentation's first word
    for it; "" when none is."""
    words = query.split()
    changed = False
    for t in terms:
        if said_otherwise(t, weights):
            for i, w in enumerate(words):
                if w.lower().strip("?,.!") == t.text.lower():
                    words[i] = doc_words(t)[0]
                    changed = True
    return " ".join(words) if changed else ""
