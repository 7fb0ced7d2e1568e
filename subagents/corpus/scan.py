"""Finding, reading and decoding corpus files, without ever leaving the root.

The walk never follows symlinked directories (one pointing outside the root is counted as
"outside"; one pointing inside is skipped too, since its files are reached directly). A
symlinked file is read only when its real path lies inside the root's real path. Hidden names
and build-artefact directories are skipped by default (`ScanOptions`).
"""

from __future__ import annotations

import codecs
import fnmatch
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Callable

from .chunking import Document
from .html_text import html_to_document
from .plain_text import markdown_to_document, rst_to_document, text_to_document

KINDS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text",
         ".pdf": "pdf"}
# Sphinx writes `_sources/*.rst.txt` (a duplicate of every page), `_static`, `_images`, `_downloads`.
DEFAULT_SKIP_DIRS = frozenset({"_sources", "_static", "_images", "_downloads", "__pycache__", "node_modules"})
# Sphinx's module index: a table of links, noise for retrieval. (Back-of-book index pages, Sphinx's
# genindex*.html among them, are recognised by their structure and kept as a thesaurus: thesaurus.py.)
DEFAULT_SKIP_FILES = ("py-modindex.html",)
MAX_BYTES = 32 * 1024 * 1024
BINARY_SNIFF = 8192


@dataclass(frozen=True)
class ScanOptions:
    skip_dirs: frozenset[str] = DEFAULT_SKIP_DIRS
    skip_files: tuple[str, ...] = DEFAULT_SKIP_FILES  # fnmatch patterns on the file name
    skip_hidden: bool = True  # names starting with '.'
    max_bytes: int = MAX_BYTES


@dataclass(frozen=True, slots=True)
class Candidate:
    relpath: str  # '/'-separated, relative to the root
    path: str  # what to open: the file, or a symlink's real path (checked to be inside the root)
    kind: str
    mtime_ns: int
    size: int


@dataclass
class ScanResult:
    files: list[Candidate] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # relpaths of symlinks resolving outside
    other: list[tuple[str, str]] = field(default_factory=list)  # (relpath, reason) not readable as a file


def is_inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _rel(path: str, root: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def scan_root(root: str, opts: ScanOptions) -> ScanResult:
    """Walk `root` (a real path) and list the candidate files; nothing is opened here.
    Iterative (an explicit stack, no recursion): a tree of any depth is walked, in the order of a
    sorted top-down walk (a directory's files, then each subdirectory in turn)."""
    res = ScanResult()
    stack = [root]
    while stack:
        dirpath = stack.pop()
        try:
            dirnames, filenames = _listing(dirpath)
        except OSError as e:
            res.other.append((_rel(dirpath, root), f"cannot list directory: {e.strerror or e}"))
            continue
        subdirs = _subdirs(dirpath, dirnames, root, opts, res)
        for name in sorted(filenames):
            _add_file(dirpath, name, root, opts, res)
        stack.extend(os.path.join(dirpath, d) for d in reversed(subdirs))
    return res


def _listing(path: str) -> tuple[list[str], list[str]]:
    """(directory names, other names) of one directory, as os.walk splits them."""
    dirs, others = [], []
    with os.scandir(path) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else others).append(entry.name)
    return dirs, others


def _subdirs(dirpath: str, names: list[str], root: str, opts: ScanOptions, res: ScanResult) -> list[str]:
    """The subdirectories to descend into, sorted; symlinked directories are never followed."""
    keep = []
    for d in sorted(names):
        if (opts.skip_hidden and d.startswith(".")) or d in opts.skip_dirs:
            continue
        full = os.path.join(dirpath, d)
        if os.path.islink(full):
            if not is_inside(os.path.realpath(full), root):
                res.outside.append(_rel(full, root))
            continue
        keep.append(d)
    return keep


def _add_file(dirpath: str, name: str, root: str, opts: ScanOptions, res: ScanResult) -> None:
    kind = KINDS.get(os.path.splitext(name)[1].lower())
    if kind is None or (opts.skip_hidden and name.startswith(".")):
        return
    if any(fnmatch.fnmatchcase(name, p) for p in opts.skip_files):
        return
    full = os.path.join(dirpath, name)
    rel = _rel(full, root)
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        res.other.append((rel.encode("utf-8", "replace").decode(), "file name is not valid UTF-8"))
        return
    try:
        target = full
        if os.path.islink(full):
            target = os.path.realpath(full)
            if not is_inside(target, root):
                res.outside.append(rel)
                return
        st = os.stat(target)
    except OSError as e:
        res.other.append((rel, f"cannot stat: {e.strerror or e}"))
        return
    if not stat.S_ISREG(st.st_mode):
        res.other.append((rel, "not a regular file"))
    elif st.st_size > opts.max_bytes:
        res.other.append((rel, f"larger than {opts.max_bytes} bytes"))
    else:
        res.files.append(Candidate(rel, target, kind, st.st_mtime_ns, st.st_size))


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)


class Binary(Exception):
    pass


class Undecodable(Exception):
    pass


def decode(data: bytes, kind: str) -> str:
    """UTF-8 (a BOM is honoured, including UTF-16's); for HTML, else the declared <meta> charset."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise Undecodable("invalid UTF-16 after a UTF-16 byte order mark") from None
    if b"\x00" in data[:BINARY_SNIFF]:
        raise Binary("NUL bytes in the first 8 KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = _META_CHARSET.search(data[:4096]) if kind == "html" else None
    if m:
        try:
            codec = codecs.lookup(m.group(1).decode("ascii")).name
            if codec != "utf-8":
                return data.decode(codec)
        except (LookupError, UnicodeDecodeError):
            pass
    raise Undecodable("not valid UTF-8" + (" nor its declared charset" if m else ""))


def extract(data: bytes, kind: str, fallback_title: str, relpath: str = "",
            pages: Callable[[int, int], None] | None = None) -> Document:
    """Bytes of one file -> Document (`pages(done, total)`: a PDF's pages as they are read). Raises Binary or
    Undecodable; parser errors propagate."""
    if kind == "pdf":
        from .pdf_text import PdfUnreadable, pdf_to_document  # (pypdf loads only for a corpus holding a PDF)

        try:
            return pdf_to_document(data, fallback_title, pages)
        except PdfUnreadable as e:
            raise Undecodable(str(e)) from None
    text = decode(data, kind)
    if kind == "html":
        return html_to_document(text, fallback_title, relpath)
    if kind == "markdown":
        return markdown_to_document(text, fallback_title)
    if kind == "rst":
        return rst_to_document(text, fallback_title)
    return text_to_document(text, fallback_title)
