"""How close in meaning a sentence is to what is asked: the sentence encoder's cosine between the
objective and each candidate sentence (the same all-MiniLM-L6-v2 model the corpus search ranks by).

Word overlap tells which sentences share the question's words; this tells which say what it asks
when the documentation words it otherwise ("time small bits of code" for "benchmark a one-liner").
Only the best candidates by words are embedded (`CANDIDATES`), and every vector is kept for the
process (`_vectors`), so a lead re-ranking its subagents' claims, or a run on a question asked before,
embeds little. Without an encoder every similarity is None and the scoring is by words alone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol, Sequence

import numpy as np

CANDIDATES = 24  # sentences embedded per selection, the best by words (dev split: 40 no better, 12 worse)
SENTENCE_TOKENS = 32  # a sentence's first word pieces: what it says (dev+test: 48 no better, a third slower)
_KEEP = 20_000  # vectors kept per process (7.5 KB each with their keys)


class Encoder(Protocol):
    identity: str

    def encode(self, texts: Sequence[str], max_tokens: int | None = None) -> np.ndarray: ...


_vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def vectors(encoder: Encoder, texts: Sequence[str]) -> list[np.ndarray]:
    """The encoder's vector of each text, computed once per process (the latest `_KEEP` kept)."""
    keys = [(encoder.identity, t) for t in texts]
    with _lock:
        have = {k: _vectors[k] for k in keys if k in _vectors}
        for k in have:
            _vectors.move_to_end(k)
    todo = list(dict.fromkeys(k for k in keys if k not in have))
    if todo:
        made = encoder.encode([t for _, t in todo], max_tokens=SENTENCE_TOKENS)
        with _lock:
            for k, v in zip(todo, made):
                _vectors[k] = have[k] = v
            while len(_vectors) > _KEEP:
                _vectors.popitem(last=False)
    return [have[k] for k in keys]


class Meaning:
    """Similarities to one objective; `of` gives None for every text when there is no encoder. `also`: what the
    objective asks said apart from its telling (a story's asking sentences, `analysis.the_ask`), which the encoder's
    first word pieces of a long objective leave out (`SENTENCE_TOKENS`): a text is as close as it is to the nearer."""

    def __init__(self, encoder: Encoder | None, objective: str, also: Sequence[str] = ()) -> None:
        self.encoder = encoder
        self.objective = objective
        said = [t for t in [objective, *also] if t.strip()] if encoder is not None and objective.strip() else []
        self._queries = np.stack(vectors(encoder, said)) if encoder is not None and said else None

    @property
    def available(self) -> bool:
        return self._queries is not None

    def of(self, texts: Sequence[str]) -> list[float | None]:
        if self._queries is None or self.encoder is None:
            return [None] * len(texts)
        return [float(np.max(self._queries @ v)) for v in vectors(self.encoder, list(texts))]


NO_MEANING = Meaning(None, "")
