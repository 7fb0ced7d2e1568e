"""One corpus root indexed into SQLite FTS5.

The index lives outside the corpus, in `<cache_dir>/corpus/<sha256(realpath)[:16]>/index.sqlite`
(`cache_dir` is the configured cache root, by default ~/.cache/research-agents).
Tables: `files` (relpath, mtime_ns, size, sha1, status), `chunks` (id = FTS rowid, file, chunk
number, heading path), `fts` (title, headings, body, and the words of the body's camel-case names,
`query.name_parts`; 'porter unicode61'; ranked by bm25(10, 5, 1, 1)) and, with an embedding model,
`vectors` (one per chunk, `vectors.py`). The files' update is one transaction: files whose mtime and size are unchanged are not read, files whose
content hash is unchanged are not re-extracted, vanished files are dropped. Then the passages
without a vector are embedded, batch by batch (each batch committed: an interrupt keeps the rest).

Threads: one connection opened with check_same_thread=False, every use under a lock. search()
and read() take milliseconds and may be called directly from async code; update() can take
seconds, so run it before agents start (or in a worker thread).

Processes: several runs may open one index at once. Opening (check, rebuild, schema) and
updating happen under an exclusive lock file beside the database (`index.sqlite.lock`, flock),
so the first run indexes and the others wait, then find the files known; an update also reads
the known files inside its write transaction. Searches never wait (WAL). An index that is not a
database, fails `PRAGMA quick_check`, or is shorter than its header says (a truncated file) is
only a cache: it is deleted and rebuilt.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


try:
    import fcntl
except ImportError:  # not POSIX: SQLite's own write lock is all there is
    fcntl = None  # type: ignore[assignment]

from .chunking import Chunk, chunk_document
from ..text import has_operator, operators_in
from .query import Match, name_parts, to_fts_query
from .records import CorpusError, IndexHit, IndexStage, IndexStats, NoSearchableWords, Passage, PassageNotFound, PassageRead
from .scan import Binary, Candidate, ScanOptions, Undecodable, extract, is_inside, scan_root
from .thesaurus import COMMON_SHARE, IndexEntry, defines, entry_score, keyword_alone, stems, words_of
from .embedding import TextEncoder
from .vectors import DDL as VECTORS_DDL, VectorStore, bump_generation

SCHEMA = "corpus-10"  # bump when the schema or the extraction changes: the index is rebuilt
SNIPPET_TOKENS = 48
MAX_CONTEXT = 5
LOOKUP_ROWS = 400  # index entries matched by any query word, scored in Python
Progress = Callable[..., None]  # (done, total[, stage[, item]]): files examined, pages of a PDF (item: its path),
# then passages embedded (IndexStage)
RootProgress = Callable[..., None]  # (corpus root, done, total[, stage[, item]])
FileRow = tuple[int, str, int, int, str, str]  # id, relpath, mtime_ns, size, sha1, status

_DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
    id INTEGER PRIMARY KEY, relpath TEXT NOT NULL UNIQUE, mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL, sha1 TEXT NOT NULL, status TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',
    digest TEXT NOT NULL DEFAULT '');
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, chunk_no INTEGER NOT NULL, heading TEXT NOT NULL,
    anchors TEXT NOT NULL DEFAULT '', UNIQUE(file_id, chunk_no));
CREATE VIRTUAL TABLE fts USING fts5(title, headings, body, names, tokenize='porter unicode61');
INSERT INTO fts(fts, rank) VALUES('rank', 'bm25(10.0, 5.0, 1.0, 1.0)');
CREATE TABLE entries(
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, term TEXT NOT NULL, target TEXT NOT NULL, anchor TEXT NOT NULL);
CREATE INDEX entries_file ON entries(file_id);
CREATE VIRTUAL TABLE entries_fts USING fts5(term, content='entries', content_rowid='id', tokenize='porter unicode61');
""" + VECTORS_DDL + ";\n"

_SEARCH = f"""
SELECT f.relpath, c.chunk_no, f.title, c.heading, s.body, s.snip, s.rank
FROM (SELECT rowid AS rid, body, snippet(fts, 2, '', '', ' … ', {SNIPPET_TOKENS}) AS snip, rank
      FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?) AS s
JOIN chunks c ON c.id = s.rid JOIN files f ON f.id = c.file_id
ORDER BY s.rank
"""

OVERFETCH = 3  # literal matches fetched per result wanted: some use the operator only inside a longer one

_SEARCH_LITERAL = """
SELECT f.relpath, c.chunk_no, f.title, c.heading, fts.body, '', -({uses}) AS rank
FROM fts JOIN chunks c ON c.id = fts.rowid JOIN files f ON f.id = c.file_id
WHERE {literal} ORDER BY rank, c.id LIMIT ?
"""

_READ = """
SELECT c.chunk_no, c.heading, f.title, fts.body
FROM files f JOIN chunks c ON c.file_id = f.id JOIN fts ON fts.rowid = c.id
WHERE f.relpath = ? AND c.chunk_no BETWEEN ? AND ? ORDER BY c.chunk_no
"""

_RANK = "SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?"
_ROWS = """
SELECT c.id, f.relpath, c.chunk_no, f.title, c.heading, fts.body FROM chunks c JOIN files f ON f.id = c.file_id
JOIN fts ON fts.rowid = c.id WHERE c.id IN ({marks})
"""
_SNIPPETS = f"""
SELECT rowid, snippet(fts, 2, '', '', ' … ', {SNIPPET_TOKENS}) FROM fts WHERE fts MATCH ? AND rowid IN ({{marks}})
"""

_WS = re.compile(r"\s+")
# another file `o`, indexed, with the bytes or the extracted text of the file `d`
_TWIN_OF_D = "o.status = 'ok' AND o.id != d.id AND (o.sha1 = d.sha1 OR (d.digest != '' AND o.digest = d.digest))"


def _pages_progress(progress: Progress, relpath: str) -> Callable[[int, int], None]:
    return lambda done, total: progress(done, total, IndexStage.PAGES, relpath)


def text_digest(title: str, chunks: list[Chunk], entries: list[IndexEntry]) -> str:
    """What a file reads as, hashed: two files that differ only in bytes no reader sees (a PDF's id) match."""
    h = hashlib.sha1(title.encode())
    for c in chunks:
        h.update(f"\x00{c.heading}\x01{c.keys}\x01{c.text}\x01{c.anchors}".encode())
    for e in entries:
        h.update(f"\x02{e.term}\x01{e.target}\x01{e.anchor}".encode())
    return h.hexdigest()


_PAGE_ANCHOR = re.compile(r"(?<!\S)page=(\d+)(?!\S)")  # a PDF block's anchor (pdf_text.py)


def _around(body: str, ops: list[str], width: int = 300) -> str:
    """A snippet of a passage around the first operator it contains."""
    at = min((i for i in (body.find(op) for op in ops) if i >= 0), default=0)
    start = max(0, at - width // 2)
    return _plain(("… " if start else "") + body[start:start + width])


def _showing(snippet: str, body: str, ops: list[str]) -> str:
    """The words' snippet when it shows an operator the query names, else one around the first operator: a hit
    for "->> jsonb" must show its "->>" (the words' snippet was centred on "jsonb")."""
    return snippet if any(has_operator(op, snippet) for op in ops) else _around(body, ops)


def _opening(body: str, width: int = 300) -> str:
    """A snippet of a passage found by meaning (no matched word to centre on): its opening words."""
    text = _plain(body)
    if len(text) <= width:
        return text
    return text[:width].rsplit(" ", 1)[0] + " …"


_SUBJECT = re.compile(r"\s*([A-Za-z_][\w.]*)")
OPENING_CHARS = 600  # where a page says that its subject is deprecated
SUCCESSOR_CHARS = 250  # and, after that, what replaces it
_SUCCESSOR = re.compile(r"\bin\s+favou?r\s+of\b|\bcontinue[sd]?\s+with\b|\binstead\b|\balternative\b|\breplacement\b|"
                        r"\breplaced\s+(?:with|by)\b|\bsuperseded\s+by\b")


def deprecated_subject(title: str, opening: str) -> str:
    """The subject of a page (its title's first word) when the page's opening says that it ("The optparse module",
    "This module", "distutils") is deprecated and names what replaces it; else "" (another module named deprecated
    there is not its subject)."""
    m = _SUBJECT.match(title)
    if not m:
        return ""
    subject = re.escape(m.group(1))
    said = re.search(rf"(?:\b[Tt]his\s+(?:module|package)|(?<![\w.]){subject}(?:\s+(?:module|package))?)\s+is\s+"
                     rf"deprecated\b", opening[:OPENING_CHARS])
    if not said:
        return ""
    # what replaces it, said right after ("… in favor of importlib", "Please use asyncio instead", "The mimetypes
    # module provides an alternative"); a page deprecated with no successor named is still the one that documents
    # what it does ("The imghdr module determines the type of image …")
    return m.group(1) if _SUCCESSOR.search(opening[said.end(): said.end() + SUCCESSOR_CHARS]) else ""


def default_cache_dir() -> Path:
    """~/.cache/research-agents (the entry point passes the configured cache root)."""
    return Path.home() / ".cache" / "research-agents"


def resolve_root(root: Path | str) -> Path:
    """The real path of a corpus root, or CorpusError with a one-line reason."""
    p = Path(root).expanduser()
    if not p.exists():
        raise CorpusError(f"corpus root does not exist: {p}")
    if not p.is_dir():
        raise CorpusError(f"corpus root is not a directory: {p}")
    if not os.access(p, os.R_OK | os.X_OK):
        raise CorpusError(f"corpus root is not readable: {p}")
    return Path(os.path.realpath(p))


def root_tag_for(real_root: Path) -> str:
    """'<basename>-<4 hex of sha1(realpath)>': readable, and distinct for same-named roots."""
    name = re.sub(r"[^\w.\-]+", "_", real_root.name) or "root"
    return f"{name}-{hashlib.sha1(str(real_root).encode()).hexdigest()[:4]}"


def index_path_for(real_root: Path, cache_dir: Path | None = None) -> Path:
    key = hashlib.sha256(str(real_root).encode()).hexdigest()[:16]
    return (cache_dir or default_cache_dir()) / "corpus" / key / "index.sqlite"


def _plain(text: str) -> str:
    return _WS.sub(" ", text).strip()


class IndexDamaged(Exception):
    """The index file is not a usable database (it is rebuilt)."""


_DAMAGED = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


@contextmanager
def writer_lock(db_path: Path) -> Iterator[None]:
    """Exclusive across processes and threads: one opener or updater of `db_path` at a time."""
    if fcntl is None:
        yield
        return
    fd = os.open(f"{db_path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes
        yield
    finally:
        os.close(fd)


def _truncated(db_path: Path) -> bool:
    """The file is shorter than the page count its header records (when that count is valid). Not judged while
    a WAL holds pages: another process's checkpoint (a run closing its last connection) writes the header's page
    first and extends the file after, so the file alone looks truncated for a moment; deleting the index then
    broke the runs using it ("disk I/O error"). SQLite's own check, which reads through the WAL, still runs."""
    try:
        if os.path.getsize(f"{db_path}-wal") > 0:
            return False
    except OSError:
        pass
    try:
        with open(db_path, "rb") as fh:
            header = fh.read(100)
        size = os.path.getsize(db_path)
    except OSError:
        return False
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return size > 0 and len(header) < 100
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages, counter, valid_for = (int.from_bytes(header[i:i + 4], "big") for i in (28, 24, 92))
    return counter == valid_for and pages > 0 and size < pages * page_size


_sound: dict[str, tuple[object, ...]] = {}  # db path -> the file's state when quick_check last passed
SETTLED_NS = 1_000_000_000


def _files_state(db_path: Path) -> tuple[object, ...] | None:
    """(inode, size, ctime) of the database file; None while its WAL holds pages not yet written back (the
    file alone does not say what the index holds) or while the file changed less than `SETTLED_NS` ago (a
    write in the same clock tick as the check would leave the same ctime: the "racy git" problem)."""
    try:
        if os.path.getsize(f"{db_path}-wal") > 0:
            return None
    except OSError:
        pass
    try:
        st = os.stat(db_path)
    except OSError:
        return None
    if time.time_ns() - st.st_ctime_ns < SETTLED_NS:
        return None
    return st.st_ino, st.st_size, st.st_ctime_ns


def _check_sound(db: sqlite3.Connection, db_path: Path) -> None:
    """IndexDamaged unless SQLite's quick_check passes. It reads the whole file (~80 ms for the Python
    docs), so a pass is remembered for the process while the files are as they were then."""
    key, state = str(db_path), _files_state(db_path)
    if state is not None and _sound.get(key) == state:
        return
    verdict = db.execute("PRAGMA quick_check(1)").fetchone()
    if not verdict or verdict[0] != "ok":
        _sound.pop(key, None)
        raise IndexDamaged(f"{db_path} failed its check: {verdict[0] if verdict else 'no answer'}")
    if state is not None:
        _sound[key] = state


def remove_index_files(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)


class CorpusIndex:
    def __init__(self, root: Path, db_path: Path, options: ScanOptions, encoder: TextEncoder | None = None) -> None:
        """Connect and bring the schema up to date; call under `writer_lock(db_path)`.
        IndexDamaged when the file is not a sound database. With an `encoder`, update() embeds passages."""
        self.root = root
        self.encoder = encoder
        self.root_tag = root_tag_for(root)
        self.db_path = db_path
        self.options = options
        self._lock = threading.Lock()
        self._df: dict[str, int] = {}  # term -> passages containing it (reset by update)
        self._tf: dict[str, int] = {}  # term -> passages whose title or headings contain it
        self._superseded: dict[int, str] = {}  # file id -> its subject if its opening says it is deprecated, else ""
        if _truncated(db_path):
            raise IndexDamaged(f"{db_path} is shorter than its header says (truncated)")
        self._db = sqlite3.connect(db_path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            _check_sound(self._db, db_path)
            self._ensure_schema()
            self.vectors = VectorStore(self._db, self._lock, db_path)
        except sqlite3.DatabaseError as e:
            self._db.close()
            if getattr(e, "sqlite_errorname", "") in _DAMAGED:
                raise IndexDamaged(f"{db_path}: {e}") from None
            raise
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def open(cls, root: Path | str, cache_dir: Path | None = None, *, options: ScanOptions | None = None,
             encoder: TextEncoder | None = None) -> CorpusIndex:
        """Open (creating if needed) the index of `root`; a damaged index is rebuilt. Does not scan:
        call update()."""
        real = resolve_root(root)
        db_path = index_path_for(real, Path(cache_dir).expanduser() if cache_dir else None)
        if is_inside(os.path.realpath(db_path), str(real)):
            raise CorpusError(f"the index cache {db_path.parent} would be inside the corpus {real}; choose another --cache-dir")
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            with writer_lock(db_path):
                try:
                    return cls(real, db_path, options or ScanOptions(), encoder)
                except IndexDamaged:  # only a cache: rebuild it
                    remove_index_files(db_path)
                return cls(real, db_path, options or ScanOptions(), encoder)
        except (OSError, sqlite3.Error, IndexDamaged) as e:
            raise CorpusError(f"cannot open the index cache {db_path}: {e}") from None

    def _schema_current(self) -> bool:
        have = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type IN ('table')")}
        if "meta" not in have:
            return False
        row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        return bool(row and row[0] == SCHEMA)

    def _ensure_schema(self) -> None:
        with self._lock:
            db = self._db
            if self._schema_current():
                if db.execute("SELECT 1 FROM meta WHERE key = 'generation'").fetchone() is None:
                    bump_generation(db)  # an index made before generations were kept: give it one
                return
            db.execute("BEGIN IMMEDIATE")
            try:
                if not self._schema_current():  # checked again under the write lock
                    # every table of whatever schema was there (another version may have had other tables);
                    # virtual tables first: dropping one drops its shadow tables
                    tables = db.execute("SELECT name, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%' ORDER BY 2 DESC").fetchall()
                    for name, _ in tables:
                        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone():
                            db.execute(f'DROP TABLE "{name}"')
                    for stmt in _DDL.strip().split(";\n"):
                        db.execute(stmt)
                    db.execute("INSERT INTO meta VALUES ('schema', ?), ('root', ?)", (SCHEMA, str(self.root)))
                    bump_generation(db)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # -- indexing -----------------------------------------------------------------------------

    def update(self, progress: Progress | None = None) -> IndexStats:
        """Bring the index in line with the files on disk; never stops on a bad file."""
        t0 = time.perf_counter()
        stats = IndexStats()
        scan = scan_root(str(self.root), self.options)
        stats.skipped_outside = len(scan.outside)
        stats.skipped_other = len(scan.other)
        for rel in scan.outside:
            stats.note(rel, "symlink resolving outside the corpus root: not read")
        for rel, why in scan.other:
            stats.note(rel, why)
        stats.files_seen = len(scan.files) + stats.skipped_outside + stats.skipped_other
        with writer_lock(self.db_path), self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            before = db.total_changes
            try:  # the known files are read inside the write transaction: another run may just have indexed
                known = {r[1]: r for r in db.execute("SELECT id, relpath, mtime_ns, size, sha1, status FROM files")}
                next_id = (db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]) + 1
                total = len(scan.files)
                # the shortest path first: of files with the same text, the one indexed ("refman.pdf", not
                # "fullrefman.pdf"; "notes.md", not "copy-of-notes.md")
                for i, cand in enumerate(sorted(scan.files, key=lambda c: (len(c.relpath), c.relpath)), 1):
                    pages = None if progress is None else _pages_progress(progress, cand.relpath)
                    next_id = self._update_file(cand, known.pop(cand.relpath, None), next_id, stats, pages=pages)
                    if progress:
                        progress(i, total)
                for row in known.values():
                    self._drop_file(row[0])
                    stats.removed += 1
                next_id = self._orphaned_copies(scan.files, next_id, stats)
                if db.total_changes != before:
                    bump_generation(db)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            stats.passages = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            self._df.clear()
            self._tf.clear()
            self._superseded.clear()
            self.vectors.invalidate()
        if self.encoder is not None:
            with writer_lock(self.db_path):
                stats.embedded = self.vectors.embed_missing(
                    self.encoder, None if progress is None else lambda d, t: progress(d, t, IndexStage.EMBEDDING))
            stats.vectors = self.vectors.count()
        stats.seconds = time.perf_counter() - t0
        return stats

    def _copy_of(self, relpath: str, sha1: str, digest: str = "") -> str | None:
        """Another indexed file with the same bytes, or (`digest`) the same extracted text."""
        row = self._db.execute("SELECT relpath FROM files WHERE status = 'ok' AND relpath != ? AND (sha1 = ? OR "
                               "(? != '' AND digest = ?)) ORDER BY relpath LIMIT 1",
                               (relpath, sha1, digest, digest)).fetchone()
        return row[0] if row else None

    def _orphaned_copies(self, files: list[Candidate], next_id: int, stats: IndexStats) -> int:
        """Copies whose indexed twin changed or went: each is indexed itself now (one of several copies)."""
        rows = self._db.execute(
            "SELECT id, relpath, mtime_ns, size, sha1, status FROM files d WHERE status = 'duplicate' AND NOT EXISTS "
            f"(SELECT 1 FROM files o WHERE {_TWIN_OF_D}) ORDER BY length(relpath), relpath").fetchall()
        by_path = {c.relpath: c for c in files}
        for row in rows:
            cand = by_path.get(row[1])
            if cand is None:
                continue
            stats.skipped_duplicate -= 1  # (counted as a copy a moment ago)
            stats.problems[:] = [p for p in stats.problems if p[0] != cand.relpath]
            next_id = self._update_file(cand, row, next_id, stats, force=True)
        return next_id

    def _count(self, status: str, stats: IndexStats) -> None:
        if status == "ok":
            stats.unchanged += 1
        elif status == "binary":
            stats.skipped_binary += 1
        elif status == "undecodable":
            stats.skipped_undecodable += 1
        elif status == "duplicate":
            stats.skipped_duplicate += 1
        else:
            stats.skipped_other += 1

    def _drop_file(self, file_id: int) -> None:
        self._drop_content(file_id)
        self._db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _drop_content(self, file_id: int) -> None:
        """A file's passages and index entries (an external-content FTS table is told what it held)."""
        db = self._db
        db.execute("DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,))
        db.execute("DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,))
        db.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        db.execute("INSERT INTO entries_fts(entries_fts, rowid, term) SELECT 'delete', id, term FROM entries "
                   "WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM entries WHERE file_id = ?", (file_id,))

    def _update_file(self, cand: Candidate, row: FileRow | None, next_id: int, stats: IndexStats,
                     force: bool = False, pages: Callable[[int, int], None] | None = None) -> int:
        db = self._db
        if not force and row is not None and row[2] == cand.mtime_ns and row[3] == cand.size:
            self._count(row[5], stats)
            return next_id
        try:
            with open(cand.path, "rb") as fh:
                data = fh.read(self.options.max_bytes + 1)
        except OSError as e:
            if row is not None:
                self._drop_file(row[0])
            stats.skipped_other += 1
            stats.note(cand.relpath, f"unreadable: {e.strerror or e}")
            return next_id
        sha1 = hashlib.sha1(data).hexdigest()
        if not force and row is not None and row[4] == sha1:  # touched, not changed
            db.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?", (cand.mtime_ns, cand.size, row[0]))
            self._count(row[5], stats)
            return next_id
        chunks, entries, title, status, digest = [], [], "", "ok", ""
        name = cand.relpath.rsplit("/", 1)[-1]
        twin = self._copy_of(cand.relpath, sha1)  # the same bytes under another name: not even read
        try:
            if twin is None:
                doc = extract(data, cand.kind, name, cand.relpath, pages=pages)
                chunks, entries, title = chunk_document(doc), doc.entries, doc.title or name
                digest = text_digest(title, chunks, entries)
                twin = self._copy_of(cand.relpath, sha1, digest)  # refman.pdf, fullrefman.pdf: 58 bytes apart
            if twin is not None:
                status, chunks, entries = "duplicate", [], []
                stats.note(cand.relpath, f"the same content as {twin}, which is indexed")
        except Binary:
            status = "binary"
            stats.note(cand.relpath, "binary: NUL bytes in the first 8 KiB")
        except Undecodable as e:
            status = "undecodable"
            stats.note(cand.relpath, str(e))
        except Exception as e:  # a parser bug must not stop indexing
            status = "error"
            stats.note(cand.relpath, f"failed to extract: {type(e).__name__}: {e}")
        if row is not None:
            file_id = row[0]
            self._drop_content(file_id)
            db.execute(
                "UPDATE files SET mtime_ns=?, size=?, sha1=?, status=?, title=?, digest=? WHERE id=?",
                (cand.mtime_ns, cand.size, sha1, status, title, digest, file_id),
            )
        else:
            file_id = db.execute(
                "INSERT INTO files(relpath, mtime_ns, size, sha1, status, title, digest) VALUES (?,?,?,?,?,?,?)",
                (cand.relpath, cand.mtime_ns, cand.size, sha1, status, title, digest),
            ).lastrowid
        if status == "ok":
            stats.indexed += 1
            self._add_entries(file_id, entries)
            ids = range(next_id, next_id + len(chunks))
            db.executemany(
                "INSERT INTO chunks(id, file_id, chunk_no, heading, anchors) VALUES (?,?,?,?,?)",
                [(cid, file_id, n, c.heading, c.anchors) for n, (cid, c) in enumerate(zip(ids, chunks))],
            )
            db.executemany(
                "INSERT INTO fts(rowid, title, headings, body, names) VALUES (?,?,?,?,?)",
                [(cid, title, c.keys, c.text, name_parts(f"{c.keys} {c.text}")) for cid, c in zip(ids, chunks)],
            )
            return next_id + len(chunks)
        self._count(status, stats)
        return next_id

    def _add_entries(self, file_id: int, entries: list[IndexEntry]) -> None:
        """An index page's entries (`thesaurus`): terms that name pages, never passages themselves."""
        db = self._db
        for e in entries:
            rid = db.execute("INSERT INTO entries(file_id, term, target, anchor) VALUES (?,?,?,?)",
                             (file_id, e.term, e.target, e.anchor)).lastrowid
            db.execute("INSERT INTO entries_fts(rowid, term) VALUES (?,?)", (rid, e.term))

    # -- querying -----------------------------------------------------------------------------

    def passage_id(self, relpath: str, chunk_no: int) -> str:
        return f"{self.root_tag}/{relpath}#{chunk_no}"

    def search(self, query: str, k: int = 8, match: Match = Match.ANY) -> list[Passage]:
        """Best `k` passages for a natural-language query (CorpusError if it has no content words and
        names no operator); with `Match.ALL`, only passages holding every one of its words."""
        ops = operators_in(query)
        if ops:
            return self._search_operators(query, ops, k, match)
        return self.search_fts(to_fts_query(query, match), k)

    def _search_operators(self, query: str, ops: list[str], k: int, match: Match = Match.ANY) -> list[Passage]:
        """A query naming operators ("what does ->> return?"): the full-text index drops punctuation, so the
        passages that contain one as written come first, ranked by the query's words (by how often they use
        it, when the query has no other word); then the words' own best passages."""
        try:
            fts: str | None = to_fts_query(query, match)
        except NoSearchableWords:
            fts = None
        literal = " OR ".join("instr(body, ?) > 0" for _ in ops)
        uses = " + ".join("(length(body) - length(replace(body, ?, ''))) / length(?)" for _ in ops)
        with self._lock:
            if fts is not None:
                rows = self._db.execute(_SEARCH.replace("WHERE fts MATCH ?", f"WHERE fts MATCH ? AND ({literal})"),
                                        (fts, *ops, OVERFETCH * max(1, k))).fetchall()
            else:
                rows = self._db.execute(_SEARCH_LITERAL.format(literal=literal, uses=uses),
                                        (*ops, *[x for op in ops for x in (op, op)], OVERFETCH * max(1, k))).fetchall()
        hits = [Passage(self.passage_id(rel, n), title, heading, rel, body, _showing(_plain(snip), body, ops), -rank)
                for rel, n, title, heading, body, snip, rank in rows
                if any(has_operator(op, body) for op in ops)][:k]  # (":=" inside "::=" is no use of it)
        if fts is not None and len(hits) < k and match is Match.ANY:  # (all: the operator is one of its words)
            seen = {h.passage_id for h in hits}
            hits += [h for h in self.search_fts(fts, k) if h.passage_id not in seen][: k - len(hits)]
        return hits

    def search_fts(self, fts_query: str, k: int = 8) -> list[Passage]:
        """Run an FTS5 MATCH expression as is."""
        with self._lock:
            rows = self._db.execute(_SEARCH, (fts_query, max(1, k))).fetchall()
        return [
            Passage(self.passage_id(rel, n), title, heading, rel, body, _plain(snip), -rank)
            for rel, n, title, heading, body, snip, rank in rows
        ]

    def rank_fts(self, fts_query: str, k: int) -> list[tuple[int, float]]:
        """The best `k` passages of an FTS5 MATCH expression as (chunk id, negated BM25): ranks only."""
        with self._lock:
            return [(rid, -rank) for rid, rank in self._db.execute(_RANK, (fts_query, max(1, k))).fetchall()]

    def passages_by_id(self, ids: list[int], fts_query: str | None = None) -> dict[int, Passage]:
        """Passages by chunk id; with `fts_query`, a matching passage's snippet is centred on its matches
        (else its opening words)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(_ROWS.format(marks=marks), ids).fetchall()
            snips = dict(self._db.execute(_SNIPPETS.format(marks=marks), (fts_query, *ids)).fetchall()) \
                if fts_query else {}
        return {cid: Passage(self.passage_id(rel, n), title, heading, rel, body,
                             _plain(snips[cid]) if snips.get(cid) else _opening(body))
                for cid, rel, n, title, heading, body in rows}

    def superseded(self, ids: list[int]) -> dict[int, str]:
        """Of these chunk ids, those on a page whose opening says its subject is deprecated ("The optparse module is
        deprecated …; development will continue with the argparse module"), each with that subject (the first word
        of the page's title, "optparse"). Known per page until the next update."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            files = dict(self._db.execute(f"SELECT id, file_id FROM chunks WHERE id IN ({marks})", ids).fetchall())
            todo = sorted(set(files.values()) - set(self._superseded))
            if todo:
                rows = self._db.execute(
                    f"SELECT c.file_id, f.title, fts.body FROM chunks c JOIN files f ON f.id = c.file_id JOIN fts "
                    f"ON fts.rowid = c.id WHERE c.chunk_no = 0 AND c.file_id IN ({','.join('?' * len(todo))})",
                    todo).fetchall()
                for fid in todo:
                    self._superseded[fid] = ""
                for fid, title, body in rows:
                    self._superseded[fid] = deprecated_subject(title, body)
        return {cid: self._superseded[fid] for cid, fid in files.items() if self._superseded.get(fid)}

    def parse_id(self, passage_id: str) -> tuple[str, int]:
        """(relpath, chunk_no) of one of this index's ids; CorpusError when malformed."""
        tag, _, rest = passage_id.partition("/")
        rel, sep, num = rest.rpartition("#")
        if tag != self.root_tag or not sep or not rel or not num.isdigit():
            raise CorpusError(f"malformed passage id {passage_id!r}: expected '{self.root_tag}/<path>#<n>'")
        parts = rel.split("/")
        if rel.startswith("/") or "\x00" in rel or any(p in ("", ".", "..") for p in parts):
            raise CorpusError(f"refused passage id {passage_id!r}: the path must be relative, without '..'")
        return rel, int(num)

    def read(self, passage_id: str, context: int = 1) -> PassageRead:
        """A passage in full with `context` neighbouring chunks each side; served from the index."""
        rel, n = self.parse_id(passage_id)
        context = max(0, min(context, MAX_CONTEXT))
        with self._lock:
            rows = self._db.execute(_READ, (rel, n - context, n + context)).fetchall()
        mine = next((r for r in rows if r[0] == n), None)
        if mine is None:
            raise PassageNotFound(f"no passage {passage_id!r} in the corpus (search first, then read an id it returned)")
        _, heading, title, text = mine
        before = "\n\n".join(r[3] for r in rows if r[0] < n)
        after = "\n\n".join(r[3] for r in rows if r[0] > n)
        return PassageRead(Passage(passage_id, title, heading, rel, text, _plain(text)[:300]), before, after)

    def copies(self) -> dict[str, str]:
        """Files not indexed because another file holds the same text: relpath -> the relpath indexed."""
        with self._lock:
            return dict(self._db.execute(f"SELECT d.relpath, min(o.relpath) FROM files d JOIN files o ON {_TWIN_OF_D} "
                                         "WHERE d.status = 'duplicate' GROUP BY d.relpath"))

    def pages_of(self, passage_id: str) -> tuple[int, ...]:
        """The pages a passage of a PDF is on, first to last (1-based, as `file.pdf#page=N` counts);
        () for other files."""
        rel, n = self.parse_id(passage_id)
        if not rel.lower().endswith(".pdf"):
            return ()
        with self._lock:
            row = self._db.execute("SELECT c.anchors FROM chunks c JOIN files f ON f.id = c.file_id "
                                   "WHERE f.relpath = ? AND c.chunk_no = ?", (rel, n)).fetchone()
        pages = sorted({int(p) for p in _PAGE_ANCHOR.findall(row[0])}) if row else []
        return tuple(range(pages[0], pages[-1] + 1)) if pages else ()

    def term_passages(self, terms: list[str]) -> dict[str, int]:
        """How many passages contain each term (a word or a phrase, as `query_terms` gives them):
        document frequencies for weighting terms. Cached until the next update."""
        missing = [t for t in terms if t not in self._df]
        with self._lock:
            for t in missing:
                phrase = '"' + t.replace('"', " ") + '"'
                try:
                    self._df[t] = self._db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)).fetchone()[0]
                except sqlite3.OperationalError:  # nothing searchable in the term
                    self._df[t] = 0
        return {t: self._df[t] for t in terms}

    def term_titles(self, terms: list[str]) -> dict[str, int]:
        """How many passages have each term in their title or headings (anchor names included): a
        term the documentation gives a page or a section to, not one it mentions in passing."""
        missing = [t for t in terms if t not in self._tf]
        with self._lock:
            for t in missing:
                phrase = '{title headings} : "' + t.replace('"', " ") + '"'
                try:
                    self._tf[t] = self._db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)).fetchone()[0]
                except sqlite3.OperationalError:
                    self._tf[t] = 0
        return {t: self._tf[t] for t in terms}

    def lookup(self, query: str, k: int = 3) -> list[IndexHit]:
        """The documentation's own index read for a query: the entries every word of which the query
        holds ("copying files" for "copy a file"), best first (`thesaurus.entry_score`), each as the
        passage its link points to — the anchored section, else the page's passage best matching the
        query. Empty when the corpus has no index page."""
        words = words_of(query)  # stem -> word as written
        symbols = operators_in(query) or ([] if words else keyword_alone(query))
        if symbols:
            return self._symbol_lookup(symbols, words, k)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', " ").replace(".", " ") + '"' for w in words.values())
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT e.term, e.target, e.anchor FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid "
                    "WHERE entries_fts MATCH ? ORDER BY entries_fts.rank LIMIT ?", (match, LOOKUP_ROWS)).fetchall()
            except sqlite3.OperationalError:
                return []
        if not rows:
            return []
        n = self.passage_count()
        df = self.term_passages([w.replace(".", " ") for w in words.values()])
        count = {stem: df[w.replace(".", " ")] for stem, w in words.items()}
        idf = {stem: math.log((n + 1) / (c + 1)) for stem, c in count.items()}
        common = {stem for stem, c in count.items() if c > COMMON_SHARE * n}
        scored = sorted(((entry_score(term, idf, common), term, target, anchor) for term, target, anchor in rows),
                        key=lambda x: (-x[0], not defines(x[1], x[3])))
        hits: list[IndexHit] = []
        seen: set[str] = set()
        for score, term, target, anchor in scored:
            if score <= 0 or len(hits) >= k:
                break
            passage = self._passage_at(target, anchor, match)
            if passage is not None and passage.passage_id not in seen:
                seen.add(passage.passage_id)
                hits.append(IndexHit(term, passage, score))
        return hits

    def _symbol_lookup(self, symbols: list[str], words: dict[str, str], k: int) -> list[IndexHit]:
        """Entries for operators the query names (":=", "**", "->"), or for a keyword that is a stop word
        asked about alone ("is"): the index lists them as written (":= (colon equals)", "** in function
        calls", "is operator"); those sharing more of the query's words first."""
        rows: list[tuple[str, str, str]] = []
        with self._lock:
            for sym in symbols:  # the symbol as the entry, heading it ("** in function calls") or under a word ("operator **")
                esc = sym.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                rows += self._db.execute(
                    "SELECT term, target, anchor FROM entries WHERE term = ? OR term LIKE ? ESCAPE '\\' "
                    "OR term LIKE ? ESCAPE '\\' ORDER BY length(term) LIMIT ?",
                    (sym, f"{esc} %", f"% {esc}", LOOKUP_ROWS)).fetchall()
        query_stems = set(words)
        scored = sorted(rows, key=lambda r: (-len(set(stems(r[0])) & query_stems), len(r[0])))
        hits: list[IndexHit] = []
        seen: set[str] = set()
        for term, target, anchor in scored:
            if len(hits) >= k:
                break
            named = " OR ".join(f'"{w}"' for w in words_of(term).values()) or '"operator"'
            passage = self._passage_at(target, anchor, named)
            if passage is not None and passage.passage_id not in seen:
                seen.add(passage.passage_id)
                hits.append(IndexHit(term, passage, 1.0 + len(set(stems(term)) & query_stems)))
        return hits

    def _passage_at(self, relpath: str, anchor: str, match: str) -> Passage | None:
        with self._lock:
            row = None
            if anchor:
                row = self._db.execute(
                    "SELECT c.chunk_no FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.relpath = ? "
                    "AND (' ' || c.anchors || ' ') LIKE ? ORDER BY c.chunk_no LIMIT 1",
                    (relpath, f"% {anchor} %")).fetchone()
            if row is None:  # the page's passage best matching the query (its passages' ids are one range)
                span = self._db.execute("SELECT min(c.id), max(c.id) FROM chunks c JOIN files f ON f.id = c.file_id "
                                        "WHERE f.relpath = ?", (relpath,)).fetchone()
                if span and span[0] is not None:
                    row = self._db.execute(
                        "SELECT c.chunk_no FROM fts JOIN chunks c ON c.id = fts.rowid WHERE fts MATCH ? "
                        "AND fts.rowid BETWEEN ? AND ? ORDER BY fts.rank LIMIT 1", (match, *span)).fetchone()
        if row is None:
            return None
        try:
            return self.read(self.passage_id(relpath, row[0]), context=0).passage
        except CorpusError:
            return None

    def passage_count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM chunks").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> CorpusIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
