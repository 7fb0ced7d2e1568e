"""Corpus faults: many runs indexing one fresh corpus at once, a damaged index file, a deep tree."""

from __future__ import annotations

import os
import time
import sqlite3
from pathlib import Path

import pytest

from subagents.corpus import Corpus, index_path_for

from .conftest import write_widget_corpus

RUNS = 8
QUESTION = "How are the gears of a widget aligned?"


def index_rows(db: Path) -> tuple[list[str], int, int]:
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        files = [r[0] for r in con.execute("SELECT relpath FROM files ORDER BY relpath")]
        chunks = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
        fts = con.execute("SELECT count(*) FROM fts").fetchone()[0]
    finally:
        con.close()
    return files, chunks, fts


def test_eight_api_runs_in_threads_indexing_one_fresh_corpus_all_succeed(tmp_path: Path) -> None:
    import threading

    import trio

    from lead_agent.api import research

    corpus, cache = tmp_path / "docs", tmp_path / "cache"
    write_widget_corpus(corpus, 60)
    results: dict[int, object] = {}

    def one(i: int) -> None:
        try:
            results[i] = trio.run(lambda: research(QUESTION, corpus=[corpus], runs_dir=tmp_path / f"runs{i}",
                                                   cache_dir=cache, use_config_file=False, environ={}))
        except Exception as e:  # noqa: BLE001
            results[i] = e

    threads = [threading.Thread(target=one, args=(i,)) for i in range(RUNS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = {i: r for i, r in results.items() if isinstance(r, Exception)}
    assert not errors
    db = index_path_for(Path(os.path.realpath(corpus)), cache)
    files, chunks, fts = index_rows(db)
    assert len(files) == 60 and chunks == fts > 0


def _open_after(barrier: object, results: object, corpus: Path, cache: Path) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    try:
        with Corpus.open([corpus], cache_dir=cache) as c:
            results.put(c.passage_count())  # type: ignore[attr-defined]
    except Exception as e:  # noqa: BLE001  (reported to the test)
        results.put(f"{type(e).__name__}: {e}")  # type: ignore[attr-defined]


def test_eight_processes_indexing_one_fresh_corpus_at_once(tmp_path: Path) -> None:
    # separate processes (the lock file works across them), released together by a barrier
    import multiprocessing

    corpus, cache = tmp_path / "docs", tmp_path / "cache"
    write_widget_corpus(corpus, 60)
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(RUNS), ctx.Queue()
    procs = [ctx.Process(target=_open_after, args=(barrier, results, corpus, cache)) for _ in range(RUNS)]
    for p in procs:
        p.start()
    counts = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    _, chunks, fts = index_rows(index_path_for(Path(os.path.realpath(corpus)), cache))
    assert counts == [chunks] * RUNS and chunks == fts > 0


# ---------------------------------------------------------------- a damaged index is only a cache


def _indexed(tmp_path: Path) -> tuple[Path, Path, Path, int]:
    corpus, cache = tmp_path / "docs", tmp_path / "cache"
    write_widget_corpus(corpus, 30)
    with Corpus.open([corpus], cache_dir=cache) as c:
        n = c.passage_count()
    db = index_path_for(Path(os.path.realpath(corpus)), cache)
    assert db.is_file() and not Path(f"{db}-wal").exists()  # closed cleanly: everything is in the main file
    return corpus, cache, db, n


def _works(corpus: Path, cache: Path, n: int) -> None:
    with Corpus.open([corpus], cache_dir=cache) as c:
        assert c.passage_count() == n
        hits = c.search("gears of widget 17 aligned", k=3)
        assert hits and hits[0].path == "part5/page00017.md"


@pytest.mark.parametrize("keep", [0.5, 0.97])
def test_truncated_index_is_rebuilt(tmp_path: Path, keep: float) -> None:
    corpus, cache, db, n = _indexed(tmp_path)
    with open(db, "r+b") as fh:
        fh.truncate(int(db.stat().st_size * keep))
    _works(corpus, cache, n)


def test_a_file_that_looks_short_while_a_checkpoint_writes_it_back_is_not_truncated(tmp_path: Path) -> None:
    # a run closing its last connection checkpoints the WAL into the file, header page first: a second run
    # opening the index then must not take the file for truncated and delete it under the runs using it
    from subagents.corpus.index import _truncated

    _, _, db, _ = _indexed(tmp_path)
    with open(db, "r+b") as fh:
        fh.truncate(db.stat().st_size // 2)
    assert _truncated(db)  # the file alone: truncated
    Path(f"{db}-wal").write_bytes(b"\0" * 4096)  # pages still in the WAL, being written back
    assert not _truncated(db)


def test_index_with_a_damaged_page_is_rebuilt(tmp_path: Path) -> None:
    corpus, cache, db, n = _indexed(tmp_path)
    size = db.stat().st_size
    with open(db, "r+b") as fh:  # garbage over every page but the first (the header stays valid)
        for offset in range(4096, size, 4096):
            fh.seek(offset + 8)
            fh.write(b"\xde\xad\xbe\xef" * 16)
    _works(corpus, cache, n)


def test_damage_after_a_sound_opening_in_the_same_process_is_still_found(tmp_path: Path) -> None:
    """The integrity check passed once is remembered for the process while the file is unchanged: a
    page damaged after that opening (same size) must still be found at the next one."""
    corpus, cache, db, n = _indexed(tmp_path)
    time.sleep(1.1)  # older than a clock tick: the check's pass is remembered
    _works(corpus, cache, n)
    _works(corpus, cache, n)
    size = db.stat().st_size
    with open(db, "r+b") as fh:  # the last pages only: opening reads the first ones and would fail anyway
        for offset in range(size // 2 // 4096 * 4096, size, 4096):
            fh.seek(offset + 8)
            fh.write(b"\xde\xad\xbe\xef" * 16)
    assert db.stat().st_size == size
    time.sleep(1.1)  # the damage, too, is older than a clock tick: only the file's changed state tells
    _works(corpus, cache, n)


# ---------------------------------------------------------------- a deep tree


def test_corpus_nested_1200_directories_deep(tmp_path: Path) -> None:
    corpus = tmp_path / "deep"
    deepest = corpus
    corpus.mkdir()
    for _ in range(1200):  # Path.mkdir(parents=True) and os.makedirs recurse themselves
        deepest = deepest / "d"
        deepest.mkdir()
    (corpus / "top.md").write_text("# Top\n\nThe top page talks about shallow water.\n")
    (deepest / "bottom.md").write_text("# Bottom\n\nThe bottom page talks about the abyssal plain.\n")
    try:
        with Corpus.open([corpus], cache_dir=tmp_path / "cache") as c:
            assert c.stats[next(iter(c.stats))].indexed == 2
            (hit,) = c.search("abyssal plain", k=1)
        assert hit.path == "/".join(["d"] * 1200) + "/bottom.md"
    finally:  # shutil.rmtree (pytest's clean-up) recurses too: take the tree down from the bottom
        (deepest / "bottom.md").unlink()
        while deepest != corpus:
            deepest.rmdir()
            deepest = deepest.parent
