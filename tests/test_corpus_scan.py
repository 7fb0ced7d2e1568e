"""Corpus corners: over-long blocks are split without losing text, and the scan refuses what it
must not open (too large, not a regular file, a name that is not UTF-8, a dangling link), and
decoding honours UTF-16 byte order marks."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from subagents.corpus import CorpusIndex, ScanOptions
from subagents.corpus.chunking import Block, Document, chunk_document, split_long
from subagents.corpus.scan import Binary, Undecodable, decode, scan_root


def squash(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------- splitting an over-long block


def test_a_short_block_is_one_piece() -> None:
    assert split_long("short text", 100) == ["short text"]
    assert split_long("x" * 100, 100) == ["x" * 100]


def test_an_over_long_block_is_cut_at_line_breaks_first() -> None:
    lines = [f"line {i} " + "word " * 8 for i in range(20)]
    block = "\n".join(line.strip() for line in lines)
    pieces = split_long(block, 200)
    assert len(pieces) > 1 and all(len(p) <= 200 for p in pieces)
    for p in pieces:  # whole lines only
        assert all(line in block.split("\n") for line in p.split("\n"))
    assert "\n".join(pieces) == block


def test_an_over_long_line_is_cut_at_spaces_in_the_second_half() -> None:
    words = [f"w{i:03d}" for i in range(300)]  # 5 characters each
    pieces = split_long(" ".join(words), 100)
    assert all(50 <= len(p) <= 100 for p in pieces[:-1]) and len(pieces[-1]) <= 100
    assert all(not p.startswith(" ") and not p.endswith(" ") for p in pieces)
    assert " ".join(pieces).split() == words  # no word cut, none lost


def test_a_line_without_spaces_is_cut_hard() -> None:
    assert [len(p) for p in split_long("x" * 250, 100)] == [100, 100, 50]
    # a space too early in the line (before half the limit) does not make a tiny piece
    assert [len(p) for p in split_long("ab " + "y" * 197, 100)] == [100, 100]


def test_pieces_after_a_long_line_start_fresh_and_blank_pieces_are_dropped() -> None:
    pieces = split_long("intro line\n" + "z" * 150 + "\nouttro line", 100)
    assert pieces == ["intro line", "z" * 100, "z" * 50 + "\nouttro line"]
    assert split_long("x" * 100 + "\n   ", 100) == ["x" * 100]


def test_chunks_of_a_document_with_an_over_long_paragraph_stay_under_the_limit() -> None:
    para = " ".join(f"Sentence {i} about gearbox maintenance and oil." for i in range(60))
    doc = Document("Gearboxes", [Block("Gearboxes", 1), Block("Oil", 2), Block("Short intro."), Block(para)])
    chunks = chunk_document(doc, max_chars=400)
    assert len(chunks) > 3 and all(len(c.text) <= 400 for c in chunks)
    assert squash(" ".join(c.text for c in chunks)) == squash("Short intro. " + para)
    assert {c.heading for c in chunks} == {"Gearboxes > Oil"}


# ---------------------------------------------------------------- what the scan refuses


def reasons(root: Path, **opts: object) -> dict[str, str]:
    res = scan_root(os.path.realpath(root), ScanOptions(**opts))
    return dict(res.other)


def test_an_oversize_file_is_listed_not_read(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 101)
    (tmp_path / "fits.txt").write_text("x" * 100)
    res = scan_root(str(tmp_path), ScanOptions(max_bytes=100))
    assert res.other == [("big.txt", "larger than 100 bytes")]
    assert [c.relpath for c in res.files] == ["fits.txt"] and res.files[0].size == 100


def test_a_fifo_is_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.txt")  # opening it for reading would block the indexer forever
    assert reasons(tmp_path) == {"pipe.txt": "not a regular file"}


def test_a_file_name_that_is_not_utf8_is_listed_not_read(tmp_path: Path) -> None:
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.txt"), "w") as fh:
        fh.write("latin-1 name")
    (tmp_path / "fine.txt").write_text("ok")
    res = scan_root(str(tmp_path), ScanOptions())
    assert res.other == [("caf?.txt", "file name is not valid UTF-8")]
    assert [c.relpath for c in res.files] == ["fine.txt"]


def test_a_dangling_link_cannot_be_stated(tmp_path: Path) -> None:
    (tmp_path / "gone.txt").symlink_to(tmp_path / "missing.txt")
    assert reasons(tmp_path) == {"gone.txt": "cannot stat: No such file or directory"}


def test_the_index_goes_on_past_every_refused_file(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "huge.md").write_text("# Huge\n\n" + "word " * 200)
    (root / "ok.md").write_text("# Fine\n\nquokkaword lives here\n")
    (root / "utf16.md").write_bytes(codecs.BOM_UTF16_LE + "# Wide\n\nwombatword too\n".encode("utf-16-le"))
    with CorpusIndex.open(root, cache_dir=tmp_path / "cache", options=ScanOptions(max_bytes=500)) as ix:
        stats = ix.update()
        assert stats.skipped_other == 1 and stats.indexed == 2 and stats.files_seen == 3
        assert dict(stats.problems) == {"huge.md": "larger than 500 bytes"}
        assert ix.search("quokkaword")[0].path == "ok.md"
        assert ix.search("wombatword")[0].title == "Wide"


# ---------------------------------------------------------------- decoding


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")])
def test_utf16_with_a_byte_order_mark_is_decoded(bom: bytes, codec: str) -> None:
    text = "# Überschrift\n\nNUL bytes everywhere in UTF-16, and that is fine.\n"
    assert decode(bom + text.encode(codec), "markdown") == text


def test_broken_utf16_and_other_undecodable_bytes() -> None:
    with pytest.raises(Undecodable, match="invalid UTF-16 after a UTF-16 byte order mark"):
        decode(codecs.BOM_UTF16_LE + "abc".encode("utf-16-le") + b"\x00", "text")  # odd length
    with pytest.raises(Binary, match="NUL bytes"):
        decode(b"plain\x00text", "text")
    assert decode(codecs.BOM_UTF8 + "bom".encode(), "text") == "bom"
    with pytest.raises(Undecodable, match="^not valid UTF-8$"):
        decode("caf\u00e9".encode("latin-1"), "text")  # no charset to fall back on outside HTML
    html = '<meta charset="iso-8859-1"><p>caf\u00e9</p>'.encode("latin-1")
    assert "caf\u00e9" in decode(html, "html")
    with pytest.raises(Undecodable, match="nor its declared charset"):
        decode(b'<meta charset="no-such-codec"><p>caf\xe9</p>', "html")
