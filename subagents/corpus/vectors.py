"""Passage vectors beside the full-text index: one float16 row per passage (its title, headings and
first 128 word pieces), for semantic ranking.

`update()` embeds the passages that have no vector yet (new or changed files: a dropped file's
vectors go with its passages) in batches, each committed on its own, so an interrupted first
embedding keeps what it finished and the next update embeds the rest. The encoder's identity is
kept in `meta`: vectors of another model or setting are dropped and recomputed. Searches read the
vectors once into a matrix (11,000 passages: 17 MB) and rank by cosine with the query's vector.

Every write to the passages or their vectors gives `meta.generation` a new random token in its transaction
(`bump_generation`), so the matrix read by one opening of an index is kept for the process and
reused by the next opening while the generation is unchanged (a run reopens the index: reading and
converting the vectors again took ~100 ms a run).

A second vector for a passage's next 128 word pieces was measured and left out: the gold page in the
Answer unchanged over the 142 answerable questions of the shipped sets (104 either way), for twice the
indexing time.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .embedding import TextEncoder

DDL = "CREATE TABLE vectors(chunk_id INTEGER PRIMARY KEY, vec BLOB NOT NULL)"
BATCH = 128  # passages per committed batch: an interrupt loses at most one batch
EmbedProgress = Callable[[int, int], None]  # (passages embedded, passages to embed)

_MISSING = """
SELECT c.id, f.title, c.heading, fts.body FROM chunks c JOIN files f ON f.id = c.file_id JOIN fts ON fts.rowid = c.id
WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id) ORDER BY c.id
"""
_ALL = """
SELECT v.chunk_id, f.relpath, c.chunk_no, v.vec FROM vectors v JOIN chunks c ON c.id = v.chunk_id
JOIN files f ON f.id = c.file_id ORDER BY v.chunk_id
"""

_GENERATION = "SELECT (SELECT value FROM meta WHERE key = 'generation'), (SELECT value FROM meta WHERE key = 'encoder')"


def bump_generation(db: sqlite3.Connection) -> None:
    """Record that passages or vectors changed; call inside the write transaction that changed them.
    A random token, not a count: a rebuilt index must not meet the generation of the one it replaced."""
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', lower(hex(randomblob(8))))")


_matrices: dict[str, tuple[tuple[object, ...], "Matrix"]] = {}  # db path -> (generation, encoder), matrix
_matrices_lock = threading.Lock()


def passage_text(title: str, heading: str, body: str) -> str:
    """What a passage's vector is made of: its title and heading path first (they say what it is about)."""
    head = " ".join(x for x in (title.strip(), heading.strip()) if x)
    return f"{head}. {body}" if head else body


@dataclass
class Matrix:
    ids: list[int]  # chunk id per row
    keys: list[tuple[str, int]]  # (relpath, chunk_no) per row
    rows: dict[tuple[str, int], int]  # row by key
    row_of_id: dict[int, int]  # row by chunk id
    vectors: np.ndarray  # float32, unit rows

    def closeness(self, query: np.ndarray) -> np.ndarray:
        """Per passage: the cosine of its vector with the query's."""
        return self.vectors @ query


class VectorStore:
    """The `vectors` table of one index; every use of the connection under the index's lock."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock, db_path: Path | None = None) -> None:
        self._db = db
        self._lock = lock
        self._path = str(db_path) if db_path is not None else None  # the key of the process-wide matrix
        self._matrix: Matrix | None = None

    def count(self) -> int:
        """Passages with vectors."""
        with self._lock:
            return self._db.execute("SELECT count(*) FROM vectors").fetchone()[0]

    def invalidate(self) -> None:
        self._matrix = None

    def embed_missing(self, encoder: TextEncoder, progress: EmbedProgress | None = None) -> int:
        """Vectors for every passage without one; returns how many were made. Vectors of another encoder
        identity are dropped first. Each batch is its own transaction."""
        self._adopt(encoder.identity)
        with self._lock:
            have, passages = self._db.execute("SELECT (SELECT count(*) FROM vectors), (SELECT count(*) FROM chunks)"
                                              ).fetchone()
            todo = self._db.execute(_MISSING).fetchall() if have != passages else []
        done = 0
        for start in range(0, len(todo), BATCH):
            batch = todo[start:start + BATCH]
            vecs = encoder.encode([passage_text(t, h, b) for _, t, h, b in batch]).astype(np.float16)
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.executemany("INSERT OR REPLACE INTO vectors(chunk_id, vec) VALUES (?, ?)",
                                         [(cid, v.tobytes()) for (cid, *_), v in zip(batch, vecs)])
                    bump_generation(self._db)
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
            done += len(batch)
            if progress:
                progress(done, len(todo))
        if done:
            self._matrix = None
        return done

    def _adopt(self, identity: str) -> None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'encoder'").fetchone()
            if row and row[0] == identity:
                return
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM vectors")
                self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('encoder', ?)", (identity,))
                bump_generation(self._db)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._matrix = None

    def matrix(self) -> Matrix:
        """Every vector, read once per generation of the index and process (shared, read-only)."""
        m = self._matrix
        if m is not None:
            return m
        with self._lock:
            version = tuple(self._db.execute(_GENERATION).fetchone())
            kept = _matrices.get(self._path) if self._path and version[0] is not None else None
            if kept is not None and kept[0] == version:
                m = kept[1]
            else:
                m = _read_matrix(self._db.execute(_ALL).fetchall())
                if self._path and version[0] is not None:
                    with _matrices_lock:
                        _matrices[self._path] = (version, m)
        self._matrix = m
        return m

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The `k` passages closest to a query vector: (chunk id, cosine), closest first."""
        m = self.matrix()
        if not m.keys or m.vectors.shape[1] != query.shape[0] or k < 1:
            return []
        sims = m.closeness(query)
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.lexsort((top, -sims[top]))]  # by cosine, ties by index order: deterministic
        return [(m.ids[i], float(sims[i])) for i in top]

    def similarity_of_ids(self, query: np.ndarray, ids: list[int]) -> list[float | None]:
        """The cosine of each passage (by chunk id) with the query (None for a passage without a vector)."""
        m = self.matrix()
        if not m.keys or m.vectors.shape[1] != query.shape[0]:
            return [None] * len(ids)
        sims = m.closeness(query)
        return [float(sims[i]) if (i := m.row_of_id.get(c)) is not None else None for c in ids]

    def similarity(self, query: np.ndarray, keys: list[tuple[str, int]]) -> list[float | None]:
        """The cosine of each passage with the query (None for a passage without a vector)."""
        m = self.matrix()
        if not m.keys or m.vectors.shape[1] != query.shape[0]:
            return [None] * len(keys)
        sims = m.closeness(query)
        return [float(sims[i]) if (i := m.rows.get(k)) is not None else None for k in keys]


def _read_matrix(rows: list[tuple[int, str, int, bytes]]) -> Matrix:
    keys = [(rel, n) for _, rel, n, _ in rows]
    ids = [cid for cid, *_ in rows]
    vecs = np.frombuffer(b"".join(r[3] for r in rows), np.float16).reshape(len(rows), -1) if rows \
        else np.zeros((0, 0), np.float16)
    return Matrix(ids, keys, {k: i for i, k in enumerate(keys)}, {c: i for i, c in enumerate(ids)}, vecs.astype(np.float32))
