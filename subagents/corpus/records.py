"""Plain data shared by the corpus modules: errors, update statistics, passages."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class CorpusError(ValueError):
    """A user mistake with a one-line explanation: a missing root, a file given as a root, a root
    with nothing indexable, a query with no searchable words, a malformed passage id."""


class NoSearchableWords(CorpusError):
    """A query with nothing to search once stop words are removed (it may still name an operator)."""


class PassageNotFound(CorpusError):
    """A well-formed passage id that names no passage in the index."""


class IndexingInterrupted(KeyboardInterrupt):
    """Ctrl-C (or a signal the caller turns into one) while a root was being indexed. The update was
    rolled back as a whole: the index holds what it held before, and the next open indexes the rest."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.root = root


class IndexStage(StrEnum):
    FILES = "files"  # files examined (extracted when new or changed)
    EMBEDDING = "embedding"  # passages given a vector for semantic ranking
    PAGES = "pages"  # pages of one PDF read (a manual of thousands takes a while), with the file's path


@dataclass
class IndexStats:
    """What one `update()` saw. `files_seen` counts every candidate entry (indexable extension,
    not hidden, not in a skipped dir) and equals indexed + unchanged + all skipped_* counts."""

    files_seen: int = 0
    indexed: int = 0  # added or changed, re-extracted
    unchanged: int = 0
    removed: int = 0  # previously tracked, gone (or now excluded) from the corpus
    skipped_binary: int = 0  # NUL bytes in the first 8 KiB
    skipped_undecodable: int = 0  # not UTF-8 (nor the charset an HTML file declares)
    skipped_outside: int = 0  # symlinked files or dirs resolving outside the root: never read
    skipped_other: int = 0  # too large, not a regular file, unreadable, failed to parse
    skipped_duplicate: int = 0  # the same bytes as another file of the root, which is indexed (once)
    passages: int = 0  # passages in the index after the update
    embedded: int = 0  # passages given a vector by this update
    vectors: int | None = None  # passages with a vector after the update (None: no embedding model)
    seconds: float = 0.0
    problems: list[tuple[str, str]] = field(default_factory=list)  # (relpath, reason), first 100

    def note(self, relpath: str, reason: str) -> None:
        if len(self.problems) < 100:
            self.problems.append((relpath, reason))

    def summary(self) -> str:
        skipped = (self.skipped_binary + self.skipped_undecodable + self.skipped_outside + self.skipped_other
                   + self.skipped_duplicate)
        return (
            f"{self.files_seen} files: {self.indexed} indexed, {self.unchanged} unchanged, "
            f"{self.removed} removed, {skipped} skipped; {self.passages} passages in {self.seconds:.2f}s"
        )


@dataclass
class Passage:
    passage_id: str  # "<root_tag>/<relpath>#<chunk_no>", stable while the file is unchanged
    title: str
    heading: str  # heading path, "Coroutines and Tasks > Task Groups"
    path: str  # relpath inside its root, '/'-separated
    text: str  # the full passage text
    snippet: str = ""  # ~300 chars of plain text around the best match
    score: float = 0.0  # higher is better (negated BM25, or the hybrid fusion's); for ordering one result list
    semantic: float | None = None  # cosine of the passage's and the query's vectors (None: no vectors)


@dataclass
class PassageRead:
    passage: Passage
    context_before: str  # text of the preceding chunk(s) of the same file, "" at the start
    context_after: str


@dataclass
class IndexHit:
    """An entry of the documentation's own index that a query asks for, and the passage it points to."""

    entry: str  # the index term, "copying files"
    passage: Passage
    score: float = 0.0
