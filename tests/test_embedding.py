"""The numpy forward pass of the embedding model against vectors sentence-transformers computed
(tests/data/minilm_reference.json: how they were made is recorded in the file)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from subagents.corpus.embedding import EmbeddingModelError, MiniLMEncoder, load_encoder

from .conftest import EMBEDDING_MODEL, needs_model

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text(encoding="utf-8"))
MODEL = EMBEDDING_MODEL


@needs_model
def test_vectors_agree_with_sentence_transformers() -> None:
    enc = load_encoder(MODEL, REFERENCE["max_tokens"])
    texts = [it["text"] for it in REFERENCE["items"]]
    got = enc.encode(texts)
    want = np.array([it["vector"] for it in REFERENCE["items"]], np.float32)
    assert got.shape == want.shape == (len(texts), 384)
    cos = (got * want).sum(1)
    assert cos.min() > 0.9999, cos  # the long text is cut at 128 word pieces like sentence-transformers cuts it
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


@needs_model
def test_a_text_gets_the_same_vector_alone_and_in_a_batch_of_other_lengths() -> None:
    enc = load_encoder(MODEL)
    texts = [it["text"] for it in REFERENCE["items"]] + ["", "x"]
    batch = enc.encode(texts)
    for i, t in enumerate(texts):
        assert float(enc.encode([t])[0] @ batch[i]) > 0.99999


@needs_model
def test_meaning_not_words_decides_closeness() -> None:
    enc = load_encoder(MODEL)
    q, near, far = enc.encode(["a scratch folder that vanishes when I am done",
                               "The temporary directory and its contents are removed on completion.",
                               "The folder icon is drawn in the toolbar when the window opens."])
    assert q @ near > q @ far + 0.1


def test_an_incomplete_model_directory_is_refused_with_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(EmbeddingModelError, match="missing tokenizer.json, model.safetensors"):
        MiniLMEncoder(tmp_path)


@needs_model
def test_a_damaged_weights_file_is_refused(tmp_path: Path) -> None:
    for f in ("config.json", "tokenizer.json"):
        (tmp_path / f).write_bytes((MODEL / f).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not json")
    with pytest.raises(EmbeddingModelError, match="cannot load"):
        MiniLMEncoder(tmp_path)
