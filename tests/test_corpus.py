"""The local corpus: extraction, incremental FTS5 index, safety rules, and the two agent tools."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from subagents.corpus import (
    Corpus,
    CorpusError,
    CorpusIndex,
    PassageNotFound,
    ScanOptions,
    index_path_for,
    make_corpus_tools,
    root_tag_for,
    to_fts_query,
)
from subagents.text import operators_in
from subagents.corpus import index as index_module
from subagents.corpus.chunking import MAX_CHARS
from subagents.model import ToolUseBlock
from subagents.sources import SourceRegistry
from subagents.tools import ToolContext, Toolbox

GUIDE_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Widget Guide &#8212; Acme 1.0 documentation</title>
<script>var sidebarjunk = "scriptjunk";</script><style>.x { color: red }</style></head>
<body>
<div class="related" role="navigation"><a href="index.html">relatedjunk navigation</a></div>
<nav class="menu"><ul><li><a href="#">navjunk Frobnicating widgets</a></li></ul></nav>
<div class="document"><div class="body" role="main">
<section id="widget-guide">
<h1>Widget Guide<a class="headerlink" href="#widget-guide">¶</a></h1>
<p>This guide explains widgets in general.</p>
<nav class="contents local"><ul><li><a href="#frobnicating-widgets">localtocjunk</a></li></ul></nav>
<div class="toctree-wrapper compound"><ul><li><a href="other.html">toctreejunk</a></li></ul></div>
<section id="frobnicating-widgets">
<h2>Frobnicating widgets<a class="headerlink" href="#frobnicating-widgets">¶</a></h2>
<p>Call <code>frob()</code> on a widget to align its gears with the <em>main shaft</em>.</p>
<dl class="py function"><dt class="sig" id="acme.frob">acme.frob(widget, strength=1)<a class="headerlink" href="#acme.frob">¶</a></dt>
<dd><p>Align the gears of <em>widget</em>.</p></dd></dl>
<pre>widget = acme.Widget()
acme.frob(widget)</pre>
<table><tr><th>strength</th><th>effect</th></tr><tr><td>1</td><td>gentle alignment</td></tr></table>
</section>
<section id="cleaning"><h2>Cleaning<a class="headerlink" href="#cleaning">¶</a></h2>
<ul><li>Use a dry cloth.</li><li><p>Never submerge gearboxes.</p></li></ul>
</section></section>
</div></div>
<div class="sphinxsidebar" role="navigation"><h3>sidebarjunk contents</h3></div>
<div class="footer">footerjunk copyright</div>
</body></html>
"""

NOTES_MD = """# Maintenance notes

General maintenance advice for the workshop.

## Sprocket lubrication

Sprockets need a drop of oil every week. Wipe off the excess.

```python
# not a heading: a comment in code
oil(sprocket)
```

## Misc

Someone once mentioned that you could frobnicate a widget by hand, but that is a long story
about a rainy afternoon in the workshop, with tea and biscuits and no documentation at all.
"""

MANUAL_RST = """============
Pump Manual
============

Read this before starting the pump.

Priming the pump
----------------

Open the valve and fill the :term:`chamber` with ``water`` first.

Troubleshooting
---------------

If the pump hums but nothing flows, it has lost its prime.
"""

README_TXT = "Readme for the tool shed\n\nKeys hang on the hook behind the door.\n\nThe ladder is borrowed.\n"


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root / "guide.html", GUIDE_HTML)
    write(root / "notes.md", NOTES_MD)
    write(root / "sub" / "manual.rst", MANUAL_RST)
    write(root / "readme.txt", README_TXT)
    write(root / "_sources" / "guide.rst.txt", "Frobnicating widgets duplicate sourcesdup\n")
    write(root / ".hidden" / "secret.md", "# Hidden\n\nhiddenword\n")
    write(root / "image.png", b"\x89PNG\x00\x00")  # not an indexable extension: ignored silently
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def all_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def open_index(root: Path, cache: Path, **kw: object) -> CorpusIndex:
    ix = CorpusIndex.open(root, cache, **kw)  # type: ignore[arg-type]
    return ix


# -- extraction and ranking -----------------------------------------------------------------


def test_search_ranks_heading_match_first_and_keeps_heading_path(corpus_dir: Path, cache: Path) -> None:
    with open_index(corpus_dir, cache) as ix:
        stats = ix.update()
        assert stats.indexed == 4 and stats.files_seen == 4
        hits = ix.search("How do I frobnicate widgets?")
        assert hits, "expected results"
        # notes.md mentions frobnicating a widget in a body; the guide has it as a heading
        assert hits[0].path == "guide.html"
        assert hits[0].heading == "Widget Guide > Frobnicating widgets"
        assert hits[0].title == "Widget Guide"  # site suffix of <title> dropped
        assert any(h.path == "notes.md" for h in hits)
        assert hits[0].score > min(h.score for h in hits)
        assert "frob" in hits[0].snippet.lower() and "<" not in hits[0].snippet
        assert hits[0].passage_id == f"{ix.root_tag}/guide.html#{hits[0].passage_id.rsplit('#')[1]}"


def test_title_weighting(corpus_dir: Path, cache: Path) -> None:
    write(corpus_dir / "pumps.md", "# Pump Manual appendix\n\nSee the main manual.\n")
    write(corpus_dir / "other.md", "# Unrelated\n\n" + "The word pump appears once in this long body. " * 3)
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        top = ix.search("pump", k=10)
        assert top[0].path in ("sub/manual.rst", "pumps.md")
        assert top[-1].path == "other.md"



def test_words_of_camel_case_names_are_searchable(tmp_path: Path, cache: Path) -> None:
    """A question's words find a class named by them run together: "dicts" finds DictReader, though no
    word of its text is "dict"."""
    root = tmp_path / "docs"
    write(root / "tables.md", "# Tables\n\n## Classes\n\nclass tables.DictReader(f): maps each row of f onto "
                              "its column names.\n")
    write(root / "other.md", "# Other\n\nRows of a table are kept in a list of rows; rows are seen in turn.\n")
    with open_index(root, cache) as ix:
        ix.update()
        hits = ix.search("rows as dicts")
        assert hits and hits[0].path == "tables.md"
        assert "DictReader" in hits[0].snippet and "Dict Reader" not in hits[0].snippet  # the text as written
        assert ix.search("DictReader")[0].path == "tables.md"

PLAIN_HTML = """<html><head><title>Plain page</title></head><body>
<nav>plainnavjunk</nav><script>plainscriptjunk()</script>
<div class="navheader"><table><tr><th>docbooknavjunk Chapter 1</th></tr><tr><td>Prev</td><td>Up</td><td>Next</td></tr></table></div>
<h2>Plain heading</h2><p>plainbody text</p>
<div class="navfooter"><table><tr><td>Prev</td><td>Home</td><td>docbookfooterjunk Next</td></tr></table></div>
<form><input name="q"> plainformjunk</form><footer>plainfooterjunk</footer>
</body></html>"""


def test_html_chrome_dropped_and_structure_kept(corpus_dir: Path, cache: Path) -> None:
    write(corpus_dir / "plain.html", PLAIN_HTML)
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        for junk in ("sidebarjunk", "scriptjunk", "relatedjunk", "navjunk", "footerjunk", "localtocjunk", "toctreejunk",
                     "plainnavjunk", "plainfooterjunk", "plainscriptjunk", "plainformjunk", "docbooknavjunk",
                     "docbookfooterjunk"):
            assert ix.search(junk) == [], junk
        plain = ix.search("plainbody")[0]  # a page without a main element: <body>, chrome dropped
        assert (plain.path, plain.title, plain.heading) == ("plain.html", "Plain page", "Plain heading")
        frob = next(h for h in ix.search("frob gears shaft") if h.path == "guide.html")
        text = ix.read(frob.passage_id).passage.text
        assert "¶" not in text
        assert "acme.frob(widget, strength=1)" in text  # dt
        assert "Align the gears of widget." in text  # dd
        assert "widget = acme.Widget()\nacme.frob(widget)" in text  # pre keeps its lines
        assert "strength | effect\n\n1 | gentle alignment" in text  # table rows, a block each
        cleaning = ix.search("dry cloth submerge gearboxes")[0]
        assert cleaning.heading == "Widget Guide > Cleaning"
        assert "- Use a dry cloth." in cleaning.text and "- Never submerge gearboxes." in cleaning.text


def test_markdown_rst_txt_headings(corpus_dir: Path, cache: Path) -> None:
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        oil = ix.search("sprocket oil")[0]
        assert (oil.path, oil.title, oil.heading) == ("notes.md", "Maintenance notes", "Maintenance notes > Sprocket lubrication")
        assert "# not a heading" in oil.text  # fenced code is not a heading
        prime = ix.search("pump prime hums")[0]
        assert (prime.path, prime.heading) == ("sub/manual.rst", "Pump Manual > Troubleshooting")
        valve = ix.search("valve chamber")[0]
        assert "fill the chamber with water" in valve.text  # reST roles and literals reduced to text
        keys = ix.search("ladder borrowed")[0]
        assert (keys.path, keys.title) == ("readme.txt", "Readme for the tool shed")


def test_long_document_is_chunked_at_paragraph_boundaries(corpus_dir: Path, cache: Path) -> None:
    paras = [f"Paragraph {i} about turbines" + " blade" * 60 for i in range(30)]
    write(corpus_dir / "long.md", "# Turbines\n\n" + "\n\n".join(paras) + "\n")
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        hits = ix.search("turbines", k=20)
        chunks = [h for h in hits if h.path == "long.md"]
        assert len(chunks) >= 5
        for h in chunks:
            assert len(h.text) <= MAX_CHARS
            for part in h.text.split("\n\n"):
                assert part in paras  # never cut inside a paragraph


def test_default_skips_and_override(corpus_dir: Path, cache: Path, tmp_path: Path) -> None:
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        assert ix.search("sourcesdup") == []
        assert ix.search("hiddenword") == []
    opts = ScanOptions(skip_dirs=frozenset(), skip_hidden=False)
    with open_index(corpus_dir, tmp_path / "cache2", options=opts) as ix:
        ix.update()
        assert [h.path for h in ix.search("sourcesdup")] == ["_sources/guide.rst.txt"]
        assert [h.path for h in ix.search("hiddenword")] == [".hidden/secret.md"]


# -- incremental updates and stable ids -----------------------------------------------------


def test_incremental_update(corpus_dir: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_index(corpus_dir, cache) as ix:
        calls: list[tuple[int, int]] = []
        first = ix.update(progress=lambda done, total: calls.append((done, total)))
        assert (first.indexed, first.unchanged, first.removed) == (4, 0, 0)
        assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
        total = first.passages
        assert total == ix.passage_count() > 0

        opened: list[str] = []

        def spy_open(path: str, *a: object, **kw: object):  # noqa: ANN202
            opened.append(str(path))
            return open(path, *a, **kw)  # type: ignore[call-overload]

        monkeypatch.setattr(index_module, "open", spy_open, raising=False)
        again = ix.update()
        assert (again.indexed, again.unchanged, again.removed, again.passages) == (0, 4, 0, total)
        assert opened == []  # same mtime and size: not even read

        bump_mtime(corpus_dir / "readme.txt")  # touched, content unchanged: hashed, not re-indexed
        touched = ix.update()
        assert (touched.indexed, touched.unchanged) == (0, 4)
        assert [Path(p).name for p in opened] == ["readme.txt"]

        notes = corpus_dir / "notes.md"
        write(notes, NOTES_MD.replace("a drop of oil", "two drops of castoroil"))
        bump_mtime(notes)
        changed = ix.update()
        assert (changed.indexed, changed.unchanged, changed.removed) == (1, 3, 0)
        assert ix.search("castoroil")[0].path == "notes.md"

        (corpus_dir / "sub" / "manual.rst").unlink()
        gone = ix.update()
        assert (gone.indexed, gone.unchanged, gone.removed) == (0, 3, 1)
        assert ix.search("pump prime valve") == []
        assert gone.passages < total


def test_passage_ids_stable_across_reindex(corpus_dir: Path, cache: Path, tmp_path: Path) -> None:
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        before = {h.passage_id: h.text for h in ix.search("widget gears sprocket pump ladder", k=20)}
        write(corpus_dir / "readme.txt", README_TXT + "\nA new paragraph about rakes.\n")
        bump_mtime(corpus_dir / "readme.txt")
        assert ix.update().indexed == 1
        after = {h.passage_id: h.text for h in ix.search("widget gears sprocket pump ladder", k=20)}
        unchanged = {pid for pid in before if "/readme.txt#" not in pid}
        assert unchanged and all(after.get(pid) == before[pid] for pid in unchanged)
        for pid in unchanged:
            assert ix.read(pid).passage.text == before[pid]
    with open_index(corpus_dir, tmp_path / "fresh-cache") as fresh:  # a rebuild from scratch
        fresh.update()
        for pid in unchanged:
            assert fresh.read(pid).passage.text == before[pid]


def test_index_lives_in_cache_not_in_corpus(corpus_dir: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    files_before = all_files(corpus_dir)
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        assert cache in ix.db_path.parents
    assert all_files(corpus_dir) == files_before

    other_cache = tmp_path / "other-cache"
    with CorpusIndex.open(corpus_dir, other_cache) as ix:
        ix.update()
        key = hashlib.sha256(os.path.realpath(corpus_dir).encode()).hexdigest()[:16]
        assert ix.db_path == other_cache / "corpus" / key / "index.sqlite"
        assert ix.db_path.exists()
    assert all_files(corpus_dir) == files_before

    with pytest.raises(CorpusError, match="inside the corpus"):
        CorpusIndex.open(corpus_dir, corpus_dir / "cache")
    assert all_files(corpus_dir) == files_before


# -- bad files and the root boundary ---------------------------------------------------------


def test_binary_and_undecodable_files_are_skipped_and_counted(corpus_dir: Path, cache: Path) -> None:
    write(corpus_dir / "blob.txt", b"binaryword\x00\x01\x02" * 10)
    write(corpus_dir / "aaa-latin1.md", "# Caf\u00e9\n\nlatinword na\u00efve\n".encode("latin-1"))
    write(corpus_dir / "zzz.md", "# After\n\nafterword survives\n")
    declared = '<html><head><meta charset="iso-8859-1"><title>Men\u00fa</title></head><body><p>declaredword se\u00f1or</p></body></html>'
    write(corpus_dir / "declared.html", declared.encode("latin-1"))
    write(corpus_dir / "bom.md", b"\xef\xbb\xbf# Bom\n\nbomword\n")
    with open_index(corpus_dir, cache) as ix:
        stats = ix.update()
        assert stats.skipped_binary == 1
        assert stats.skipped_undecodable == 1
        assert stats.indexed == 7
        assert stats.files_seen == 9
        reasons = dict(stats.problems)
        assert "blob.txt" in reasons and "aaa-latin1.md" in reasons
        assert ix.search("binaryword") == [] and ix.search("latinword") == []
        assert ix.search("afterword")[0].path == "zzz.md"  # indexing went on after the bad file
        hit = ix.search("declaredword")[0]
        assert "se\u00f1or" in hit.text and hit.title == "Men\u00fa"
        assert ix.search("bomword")[0].title == "Bom"
        again = ix.update()  # bad files are remembered, still counted, not re-read
        assert (again.indexed, again.skipped_binary, again.skipped_undecodable) == (0, 1, 1)


def test_symlinks_outside_the_root_are_not_read(corpus_dir: Path, cache: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside / "secret.md", "# Secret\n\nzanzibarsecret\n")
    write(outside / "deep" / "more.md", "# More\n\nzanzibardeep\n")
    (corpus_dir / "leak.md").symlink_to(outside / "secret.md")
    (corpus_dir / "leakdir").symlink_to(outside, target_is_directory=True)
    (corpus_dir / "alias.md").symlink_to(corpus_dir / "notes.md")  # inside the root: fine
    with open_index(corpus_dir, cache) as ix:
        stats = ix.update()
        assert stats.skipped_outside == 2
        assert {rel for rel, _ in stats.problems} >= {"leak.md", "leakdir"}
        assert ix.search("zanzibarsecret") == [] and ix.search("zanzibardeep") == []
        # a link inside the root is read: its bytes are notes.md's, so the two are one document, indexed once
        assert {h.path for h in ix.search("sprocket oil")} == {"alias.md"} and stats.skipped_duplicate == 1


def test_files_with_the_same_bytes_are_indexed_once_until_the_twin_goes(corpus_dir: Path, cache: Path) -> None:
    write(corpus_dir / "copy-of-notes.md", (corpus_dir / "notes.md").read_bytes())
    # other bytes, the same text (a PDF's id differs, trailing blank lines): one document too
    write(corpus_dir / "third" / "notes.md", (corpus_dir / "notes.md").read_bytes() + b"\n\n\n")
    with open_index(corpus_dir, cache) as ix:
        stats = ix.update()
        assert (stats.indexed, stats.skipped_duplicate, stats.files_seen) == (4, 2, 6)
        # the shortest path is the one indexed
        assert dict(stats.problems)["copy-of-notes.md"] == "the same content as notes.md, which is indexed"
        assert ix.copies() == {"copy-of-notes.md": "notes.md", "third/notes.md": "notes.md"}
        assert [h.path for h in ix.search("sprocket oil")] == ["notes.md"]  # one passage, not three
        assert ix.update().skipped_duplicate == 2  # remembered
        (corpus_dir / "notes.md").unlink()  # the indexed twin goes: the shortest copy takes its place
        again = ix.update()
        assert (again.removed, again.indexed, again.skipped_duplicate) == (1, 1, 1)
        assert [h.path for h in ix.search("sprocket oil")] == ["third/notes.md"]
        write(corpus_dir / "third" / "notes.md", "# Notes\n\nSprocket oil changed.\n")  # it changes: both are indexed
        bump_mtime(corpus_dir / "third" / "notes.md")
        third = ix.update()
        assert (third.indexed, third.skipped_duplicate) == (2, 0)
        assert {h.path for h in ix.search("sprocket oil")} == {"copy-of-notes.md", "third/notes.md"}


def test_a_root_of_links_to_another_folder_says_which_folder(tmp_path: Path, cache: Path) -> None:
    real = tmp_path / "usr" / "share" / "R" / "manual"
    write(real / "intro.md", "# Intro\n\nvectors\n")
    write(real / "lang.md", "# Lang\n\nclosures\n")
    links = tmp_path / "doc" / "r-manuals"
    links.mkdir(parents=True)
    for name in ("intro.md", "lang.md"):
        (links / name).symlink_to(real / name)
    with pytest.raises(CorpusError) as e:
        Corpus.open([links], cache)
    assert str(e.value).endswith(f"{links.resolve()} (its 2 candidate files are symlinks resolving outside it, which "
                                 f"are never read; index the folder they point to instead: {real.resolve()})")


def test_read_refuses_traversal_and_unknown_ids(corpus_dir: Path, cache: Path) -> None:
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        tag = ix.root_tag
        for bad in ("../../etc/passwd#0", f"{tag}/../../etc/passwd#0", f"{tag}//etc/passwd#0",
                    f"{tag}/sub/../notes.md#0", f"{tag}/notes.md", f"{tag}/notes.md#x"):
            with pytest.raises(CorpusError, match="refused|malformed") as err:
                ix.read(bad)
            assert not isinstance(err.value, PassageNotFound), bad
        with pytest.raises(PassageNotFound, match="notes.md#999"):
            ix.read(f"{tag}/notes.md#999")
        with pytest.raises(PassageNotFound):
            ix.read(f"{tag}/nope.md#0")
        got = ix.read(f"{tag}/notes.md#1")
        assert got.passage.heading == "Maintenance notes > Sprocket lubrication"
        assert "General maintenance advice" in got.context_before
        assert "frobnicate a widget by hand" in got.context_after


def test_corpus_errors_for_bad_roots(tmp_path: Path, cache: Path) -> None:
    with pytest.raises(CorpusError, match="does not exist"):
        Corpus.open([tmp_path / "missing"], cache)
    f = write(tmp_path / "file.md", "# A file\n")
    with pytest.raises(CorpusError, match="not a directory"):
        Corpus.open([f], cache)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CorpusError, match="no indexable file"):
        Corpus.open([empty], cache)
    only_binary = tmp_path / "binonly"
    write(only_binary / "x.txt", b"\x00\x00")
    with pytest.raises(CorpusError, match="no indexable file"):
        Corpus.open([only_binary], cache)
    good = tmp_path / "good"
    write(good / "a.md", "# A\n\ntext\n")
    with pytest.raises(CorpusError, match="does not exist"):  # all roots validated before indexing
        Corpus.open([good, tmp_path / "missing"], cache)
    assert not index_path_for(good.resolve(), cache).exists()


def test_capital_letters_standing_alone_are_names() -> None:
    from subagents.corpus.query import letter_names

    assert letter_names("Can I make R treat warnings as errors from R's C API?") == ["r", "c"]  # never "I"
    assert letter_names("How do I pass -R to a U.S. form, or plan A?") == ["a"]


def test_query_without_content_words_is_an_error() -> None:
    with pytest.raises(CorpusError, match="no searchable words"):
        to_fts_query("What is it, and how does it do this?")
    assert to_fts_query("How do I use asyncio.TaskGroup?") == '"use" OR "asyncio taskgroup" OR "asyncio" OR "taskgroup"'


def test_two_roots_with_same_basename(tmp_path: Path, cache: Path) -> None:
    a = write(tmp_path / "a" / "docs" / "x.md", "# Alpha\n\nshared word alphaonly\n").parent
    b = write(tmp_path / "b" / "docs" / "x.md", "# Beta\n\nshared word betaonly shared\n").parent
    assert root_tag_for(a.resolve()) != root_tag_for(b.resolve())
    with Corpus.open([a, b, a], cache) as corpus:
        assert len(corpus.indexes) == 2 and len(corpus.stats) == 2
        hits = corpus.search("shared", k=5)
        assert {h.title for h in hits} == {"Alpha", "Beta"}
        assert hits[0].score >= hits[1].score
        for h in hits:
            assert corpus.read(h.passage_id).passage.title == h.title
        with pytest.raises(PassageNotFound, match="unknown corpus root"):
            corpus.read("docs-0000/x.md#0")


# -- the agent tools ------------------------------------------------------------------------


def _payload(content: str) -> dict:
    assert content.startswith("<retrieved_material source=")
    body = content.split("\n", 1)[1].rsplit("\n</retrieved_material>", 1)[0]
    return json.loads(body)


async def test_tools_register_sources_and_read_full_text(corpus_dir: Path, cache: Path) -> None:
    with Corpus.open([corpus_dir], cache) as corpus:
        tools = make_corpus_tools(corpus)
        assert [t.name for t in tools] == ["search_corpus", "read_passage"]
        box = Toolbox(tools)
        ctx = ToolContext(agent_id="agent-1", sources=SourceRegistry())
        allowed = box.names()

        res = await box.call(ToolUseBlock("t1", "search_corpus", {"query": "how to frobnicate widgets", "k": 3}), allowed, ctx)
        assert not res.is_error, res.content
        data = _payload(res.content)
        assert data["query"] == "how to frobnicate widgets"
        results = data["results"]
        assert 1 <= len(results) <= 3
        top = results[0]
        assert set(top) == {"source_id", "passage_id", "title", "heading", "snippet", "score"}
        assert top["heading"] == "Widget Guide > Frobnicating widgets"
        assert [r["source_id"] for r in results] == [f"S{i}" for i in range(1, len(results) + 1)]
        src = ctx.sources.get(top["source_id"])
        assert src is not None and src.key == f"corpus:{top['passage_id']}" and src.kind == "corpus"
        assert src.retrieved_by == ["agent-1"] and src.meta["path"] == "guide.html"

        again = _payload((await box.call(ToolUseBlock("t2", "search_corpus", {"query": "frobnicate widgets"}), allowed, ctx)).content)
        assert again["results"][0]["source_id"] == top["source_id"]  # same passage, same id

        read = await box.call(ToolUseBlock("t3", "read_passage", {"passage_id": top["passage_id"]}), allowed, ctx)
        assert not read.is_error, read.content
        full = _payload(read.content)
        assert full["source_id"] == top["source_id"]
        assert set(full) == {"source_id", "passage_id", "title", "heading", "path", "text", "context_before", "context_after"}
        assert full["text"] == corpus.read(top["passage_id"]).passage.text
        assert full["text"] in ctx.sources.get(top["source_id"]).text  # registry holds the full text

        empty = _payload((await box.call(ToolUseBlock("t4", "search_corpus", {"query": "xylophonezebra"}), allowed, ctx)).content)
        assert empty["results"] == [] and empty["query"] == "xylophonezebra"
        # how many passages hold each query term: a word no passage holds is not in the corpus
        assert empty["corpus"] == {"passages": corpus.passage_count(), "term_passages": {"xylophonezebra": 0},
                                   "term_titles": {"xylophonezebra": 0}}
        stats = again["corpus"]["term_passages"]
        assert stats["frobnicate"] >= 1 and set(stats) == {"frobnicate", "widgets"}
        # and how many name it in their title or headings ("Frobnicating widgets" is a heading)
        titled = again["corpus"]["term_titles"]
        assert titled["widgets"] >= 1 and titled["widgets"] <= stats["widgets"]
        # and of a name written in several capitalised words, the phrase ("Frobnicating widgets" is a heading)
        named = _payload((await box.call(ToolUseBlock("t5", "search_corpus", {"query": "Why do Frobnicating Widgets spin?"}),
                                         allowed, ctx)).content)["corpus"]
        assert named["term_passages"]["frobnicating widgets"] >= 1 and named["term_titles"]["frobnicating widgets"] >= 1
        # and of a capital letter that names something (R, C): too short to search, counted all the same (in R's
        # manuals every passage says R: the corpus's own subject, no word a question is about)
        lettered = _payload((await box.call(ToolUseBlock("t6", "search_corpus", {"query": "Can R frobnicate widgets?"}),
                                            allowed, ctx)).content)["corpus"]["term_passages"]
        assert "r" in lettered and "i" not in lettered


async def test_tool_errors_are_readable(corpus_dir: Path, cache: Path) -> None:
    with Corpus.open([corpus_dir], cache) as corpus:
        box = Toolbox(make_corpus_tools(corpus))
        ctx = ToolContext(agent_id="a", sources=SourceRegistry())
        allowed = box.names()
        stop = await box.call(ToolUseBlock("1", "search_corpus", {"query": "what is it?"}), allowed, ctx)
        assert stop.is_error and "no searchable words" in stop.content
        bad_k = await box.call(ToolUseBlock("2", "search_corpus", {"query": "pump", "k": 50}), allowed, ctx)
        assert bad_k.is_error and "k" in bad_k.content
        missing = await box.call(ToolUseBlock("3", "read_passage", {"passage_id": "docs-ffff/nope.md#0"}), allowed, ctx)
        assert missing.is_error and "docs-ffff/nope.md#0" in missing.content
        trav = await box.call(ToolUseBlock("4", "read_passage", {"passage_id": "../../etc/passwd#0"}), allowed, ctx)
        assert trav.is_error and "root:" not in trav.content
        assert len(ctx.sources) == 0


def test_unusable_index_cache_is_a_corpus_error_and_a_clobbered_index_is_rebuilt(corpus_dir: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(CorpusError, match="cannot open the index cache"):
        CorpusIndex.open(corpus_dir, a_file)  # the cache dir is a file

    cache = tmp_path / "cache"
    db = index_path_for(Path(os.path.realpath(corpus_dir)), cache)
    db.parent.mkdir(parents=True)
    db.write_text("not a database" * 100)  # clobbered: it is only a cache
    with CorpusIndex.open(corpus_dir, cache) as ix:
        assert ix.update().passages > 0


def test_term_titles_count_only_titles_and_headings(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "titled"
    write(root / "gizmo.html", "<html><head><title>Gizmo</title></head><body><h1>Gizmo</h1>"
                               "<h2>Turning cranks</h2><p>A gizmo may hold a sprocket.</p></body></html>")
    with Corpus.open([root], cache) as corpus:
        assert corpus.term_passages(["sprocket", "gizmo", "cranks"]) == {"sprocket": 1, "gizmo": 1, "cranks": 1}
        # mentioned in the body only: no title or heading names it
        assert corpus.term_titles(["sprocket", "gizmo", "cranks"]) == {"sprocket": 0, "gizmo": 1, "cranks": 1}


# ---------------------------------------------------------------- the documentation's own index

def _sphinx_index(extra: list[tuple[str, str]]) -> str:
    """A Sphinx-like genindex page: alphabetical <li> entries, each a link (sub-entries nested)."""
    entries = sorted([(f"gizmo_{i:02d}() (in module gizmos)", f"api/gizmos.html#gizmos.gizmo_{i:02d}") for i in range(34)]
                     + extra, key=lambda e: e[0].casefold())
    items = "".join(f'<li><a href="{href}">{term}</a></li>\n' for term, href in entries)
    return (f'<html><head><title>Index</title></head><body><div role="main"><h1>Index</h1>'
            f'<table class="indextable"><tr><td><ul>{items}</ul></td></tr></table></div></body></html>')


SHUTTLE_HTML = """<html><head><title>shuttle — moving files</title></head><body><div role="main">
<h1>shuttle — moving files</h1><p>The shuttle module moves things between places on a disk.</p>
<h2>Directory operations</h2><p>Directories are walked depth first by every shuttle function.</p>
<hr id="index-0"/><h2>Cloning</h2>
<p>Use shuttle.clone2() to copy a file together with its metadata.</p></div></body></html>"""

DOCBOOK_INDEX = """<html><head><title>Index</title></head><body><div class="index"><h2>Index</h2><dl>
<dt id="e1">auto-increment (see <a href="#e-serial">serial</a>)</dt>
{fillers}
<dt id="e-serial">serial, <a class="indexterm" href="datatypes.html#SERIAL">Serial Types</a></dt>
</dl></div></body></html>"""


def test_an_index_page_is_a_thesaurus_not_a_passage(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "docs"
    write(root / "genindex.html", _sphinx_index([("duplicating documents", "library/shuttle.html#index-0")]))
    write(root / "library" / "shuttle.html", SHUTTLE_HTML)
    write(root / "api" / "gizmos.html", "<html><body><h1>gizmos</h1><p>Gizmo functions.</p></body></html>")
    # a table of contents (document order, not alphabetical) stays a page
    toc = "".join(f'<li><a href="library/shuttle.html">{w} chapter</a></li>' for w in
                  ["Zebra", "Apple", "Mango", "Banana", "Cherry", "Kiwi"] * 6)
    write(root / "contents.html", f"<html><body><h1>Contents</h1><ul>{toc}</ul></body></html>")
    with Corpus.open([root], cache) as corpus:
        assert not [p for p in corpus.search("gizmo_01 gizmo_02 Index", 20) if p.path == "genindex.html"]
        assert any(p.path == "contents.html" for p in corpus.search("Zebra chapter", 5))
        hits = corpus.lookup("How do I duplicate documents?")
        assert hits and hits[0].entry == "duplicating documents"
        # the link's anchor (on an <hr>) names the section it opens, though no word of the query is in it
        assert hits[0].passage.path == "library/shuttle.html" and "clone2" in hits[0].passage.text
        assert not corpus.lookup("How are directories walked?")  # no entry asks for it


def test_a_call_heading_its_sub_entries_is_looked_up_by_its_name_and_its_own_entry_first(tmp_path: Path,
                                                                                           cache: Path) -> None:
    """Sphinx nests "built-in function" under "twirl()" (joined "twirl() built-in function"): the sub-entry
    qualifies the call, so "twirl()" asks for it; of the entries named "twirl()", the one whose anchor is the
    name itself (the builtin, not a module's function or a class's method named alike) comes first."""
    root = tmp_path / "docs"
    nested = ('<li>twirl()<ul><li><a href="library/functions.html#twirl">built-in function</a></li></ul></li>\n'
              '<li><a href="library/spinners.html#spinners.Dial.twirl">twirl() (Dial method)</a></li>\n'
              '<li><a href="library/spinners.html#spinners.twirl">twirl() (in module spinners)</a></li>\n')
    write(root / "genindex.html", _sphinx_index([]).replace("</ul></td>", nested + "</ul></td>"))
    write(root / "library" / "functions.html", '<html><body><h1>Built-in Functions</h1><dl><dt id="twirl">twirl(x)</dt>'
                                               '<dd><p>Spin x once around its axis.</p></dd></dl></body></html>')
    write(root / "library" / "spinners.html", '<html><body><h1>spinners</h1><dl><dt id="spinners.twirl">spinners.twirl(s)'
                                              '</dt><dd><p>Twirl a spinner.</p></dd><dt id="spinners.Dial.twirl">'
                                              'Dial.twirl()</dt><dd><p>Twirl this dial.</p></dd></dl></body></html>')
    for i in range(12):  # (a name in a fifth of the passages names nothing)
        write(root / "api" / f"gizmo{i}.html", f"<html><body><h1>gizmo {i}</h1><p>Gizmo functions, part {i}.</p></body></html>")
    with Corpus.open([root], cache) as corpus:
        hits = corpus.lookup("What does twirl() do?")
        assert [h.entry for h in hits][:1] == ["twirl() built-in function"], [h.entry for h in hits]
        assert hits[0].passage.path == "library/functions.html"
        assert {h.passage.path for h in hits[1:]} == {"library/spinners.html"}


def test_index_see_references_and_the_search_tool(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "pg"
    fillers = "".join(f'<dt>filler{i:02d}, <a class="indexterm" href="misc.html">Misc {i}</a></dt>' for i in range(35))
    write(root / "bookindex.html", DOCBOOK_INDEX.format(fillers=fillers))
    write(root / "datatypes.html", '<html><body><h1>Data Types</h1><p>Text types hold strings.</p>'
                                   '<div id="SERIAL"><h2>Serial Types</h2><p>The serial types are not true types but a '
                                   'notational convenience for creating unique identifier columns.</p></div></body></html>')
    write(root / "misc.html", "<html><body><h1>Misc</h1><p>Nothing much.</p></body></html>")
    with Corpus.open([root], cache) as corpus:
        hits = corpus.lookup("auto-increment column")
        assert hits and hits[0].entry == "auto-increment" and "notational convenience" in hits[0].passage.text
        # an entry naming a whole page: the page's passage that best matches the query
        page = corpus.lookup("filler07 is not much")
        assert page and page[0].entry == "filler07" and page[0].passage.path == "misc.html"

        async def search() -> dict:
            box = Toolbox(make_corpus_tools(corpus))
            ctx = ToolContext(agent_id="a", sources=SourceRegistry())
            res = await box.call(ToolUseBlock("1", "search_corpus", {"query": "auto-increment id column"}), box.names(), ctx)
            return _payload(res.content)

        import trio

        data = trio.run(search)
        assert data["index"][0]["entry"] == "auto-increment" and data["index"][0]["passage_id"].endswith("datatypes.html#1")
        assert all(r["passage_id"].split("/", 1)[1].split("#")[0] != "bookindex.html" for r in data["results"])


def test_an_index_of_another_schema_version_is_rebuilt_whatever_tables_it_had(corpus_dir: Path, cache: Path) -> None:
    """Two checkouts of different versions may share one cache: each rebuilds the other's index."""
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        path = ix.db_path
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = 'corpus-0' WHERE key = 'schema'")
    db.execute("CREATE TABLE older_things(x)")  # a table of that other version
    db.execute("CREATE VIRTUAL TABLE older_fts USING fts5(x)")
    db.commit()
    db.close()
    with open_index(corpus_dir, cache) as ix:
        ix.update()
        assert ix.search("frobnicate widgets")
        names = {r[0] for r in ix._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "older_things" not in names and "older_fts" not in names


def test_a_definition_term_and_an_introducing_line_stay_with_what_they_head() -> None:
    from subagents.corpus.chunking import chunk_document
    from subagents.corpus.html_text import html_to_document

    filler = "Widgets are drawn in layers. " * 48  # ~1400 characters: the next blocks overflow the passage
    html = (f"<html><body><h1>mod</h1><p>{filler}</p><dl><dt id='mod.func'>mod.func(x)</dt>"
            f"<dd><p>Return the frobnicated x. {'It is frobnicated twice. ' * 6}</p><p>{filler}</p><p>Example:</p>"
            f"<pre>mod.func(1)\nmod.func(2)</pre></dd></dl></body></html>")
    chunks = chunk_document(html_to_document(html, page="mod.html"))
    term = next(c for c in chunks if "mod.func(x)" in c.text)
    assert "Return the frobnicated x." in term.text and "mod.func" in term.anchors.split()
    example = next(c for c in chunks if "Example:" in c.text)
    assert "mod.func(1)" in example.text



def test_an_api_entry_opens_a_passage_of_its_own() -> None:
    """The entry after a long one opens the next passage (its opening is what ranking by meaning reads)
    though both would fit in one; short entries stay together, as do two signatures of one entry."""
    from subagents.corpus.chunking import MAX_CHARS, chunk_document
    from subagents.corpus.html_text import html_to_document

    long = "It is described at length here. " * 19  # 608 characters
    html = ("<html><body><h1>mod</h1><dl><dt id='mod.a'>mod.a()</dt><dd><p>Return a. " + long + "</p></dd>"
            "<dt id='mod.b'>mod.b()</dt><dd><p>Return b.</p></dd>"
            "<dt id='mod.c'>mod.c()</dt><dd><p>Return c.</p></dd>"
            "<dt id='mod.d'>mod.d(x)</dt><dt id='mod.d2'>mod.d(x, y)</dt><dd><p>Return d. " + long + "</p></dd>"
            "<dt id='mod.e'>mod.e()</dt><dd><p>Return e.</p></dd></dl></body></html>")
    chunks = chunk_document(html_to_document(html, page="mod.html"))
    assert len(long) * 2 < MAX_CHARS  # it is not the size limit that splits them
    opening = [c.text.split("\n")[0] for c in chunks]
    assert opening == ["mod.a()", "mod.b()", "mod.e()"], opening
    assert "mod.c()" in chunks[1].text and "mod.d(x, y)" in chunks[1].text

def _function_table(rows: int) -> str:
    """A PostgreSQL-style function table: one cell per row, its paragraphs the signatures, what the function
    does and an example."""
    body = "".join(
        f'<tr><td class="func_table_entry"><p class="func_signature">gadget_{i} ( g gadget ) → integer</p>'
        f"<p>Counts the sprockets of gadget number {i}, {'one sprocket at a time, ' * 6}and returns the count.</p>"
        f"<p>gadget_{i}('g') → {i}</p></td></tr>" for i in range(rows))
    return (f"<html><body><h1>Gadget functions</h1><table><caption>Gadget functions</caption>"
            f"<tr><th>Function</th></tr>{body}</table></body></html>")


def test_a_table_row_of_paragraphs_keeps_them_apart_and_never_spans_two_passages() -> None:
    """A function table's row is signature, description and example on lines of their own (run together,
    "… → integer Counts …" read as one sentence), and a passage ends between rows, never inside one."""
    from subagents.corpus.chunking import chunk_document
    from subagents.corpus.html_text import html_to_document

    chunks = chunk_document(html_to_document(_function_table(12), page="functions.html"))
    assert len(chunks) > 1  # the table is longer than one passage
    for i in range(12):
        lines = [c.text.splitlines() for c in chunks if f"gadget_{i} ( g gadget ) → integer" in c.text]
        assert len(lines) == 1, i  # the row in one passage
        at = lines[0].index(f"gadget_{i} ( g gadget ) → integer")  # its own line
        assert lines[0][at + 1].startswith(f"Counts the sprockets of gadget number {i},")
        assert lines[0][at + 2] == f"gadget_{i}('g') → {i}"


def test_a_function_table_row_is_a_signature_a_description_and_an_example() -> None:
    from subagents.extractive.evidence import Passage, UnitKind, units_of

    text = ("gadget_1 ( g gadget ) → integer\nCounts the sprockets of the gadget.\ngadget_1('g') → 1\n\n"
            "jsonb @> jsonb → boolean\nDoes the first value contain the second?\n'{\"a\":1}'::jsonb @> '{}'::jsonb → t")
    units = units_of(Passage("S1", "Functions", "", text, True))
    assert [(u.kind, u.api) for u in units] == [
        (UnitKind.SIGNATURE, "gadget_1 ( g gadget ) → integer"),
        (UnitKind.SENTENCE, "gadget_1 ( g gadget ) → integer"),
        (UnitKind.CODE, "gadget_1 ( g gadget ) → integer"),
        (UnitKind.SIGNATURE, "jsonb @> jsonb → boolean"),
        (UnitKind.SENTENCE, "jsonb @> jsonb → boolean"),
        (UnitKind.CODE, "jsonb @> jsonb → boolean")], units


def test_stopwords_written_as_names_are_searched() -> None:
    # SQL keywords in capitals and words in backticks are what the question is about
    assert to_fts_query("What is the difference between WHERE and HAVING?") == '"difference" OR "where" OR "having"'
    assert to_fts_query("HAVING") == '"having"'
    assert to_fts_query("When is `is` wrong?") == '"is" OR "wrong"'
    with pytest.raises(CorpusError, match="no searchable words"):
        to_fts_query("WHAT IS IT?")  # a question in capitals is shouted, not named


def test_a_title_of_common_words_is_searched_when_nothing_else_is_left() -> None:
    assert to_fts_query("What is What Now?") == '"what" OR "now"'  # the tutorial's section "What Now?"
    assert to_fts_query("Tell me about The Zen of Python") == '"zen" OR "python"'  # (other words left: no change)
    with pytest.raises(CorpusError, match="no searchable words"):
        to_fts_query("What is it? Is it here?")  # capitals that start a sentence are no title
    assert to_fts_query("What is R?") == '"r"'  # a letter standing alone as a name, when nothing else is left
    assert to_fts_query("What is R's C API?") == '"api"'


def test_operators_standing_alone_are_named_and_prose_marks_are_not() -> None:
    assert operators_in("What does := do?") == [":="]
    assert operators_in("Is `**` the same as pow()? And ->?") == ["**", "->"]
    assert operators_in("What is the ->> operator, and is == slower than is?") == ["->>", "=="]
    assert operators_in("Hello - world... Why? Really!") == []
    assert operators_in("Use (?P<name>...) in re, or a, b; c") == []
    # R's infix operators, words or four marks between percent signs (before, "%||%" and "%in%" named nothing)
    assert operators_in("How do I use the %||% operator, and what does %in% do?") == ["%||%", "%in%"]
    assert operators_in("a 50% share and 20% more") == []


def test_a_query_naming_an_operator_finds_it_as_written(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "ops"
    write(root / "json.txt", "JSON\n\nThe operator json ->> text extracts a field as text.\n")
    write(root / "trgm.txt", "Trigrams\n\nThe operator text <->> text gives a distance; every operator here is fast.\n")
    write(root / "other.txt", "Other\n\nAn operator, operator, operator: words about operators only.\n")
    with Corpus.open([root], cache) as corpus:
        assert [h.path for h in corpus.search("What does the ->> operator do?", 5)][0] == "json.txt"
        assert [h.path for h in corpus.search("->>", 5)] == ["json.txt"]  # no words: the passages using it
        assert corpus.search("~~>", 5) == []


def test_a_search_for_every_word_of_a_query_naming_an_operator_holds_the_operator_too(tmp_path: Path,
                                                                                       cache: Path) -> None:
    from subagents.corpus import Match

    root = tmp_path / "ops"
    write(root / "json.txt", "JSON\n\nThe operator json ->> text extracts a field as text.\n")
    write(root / "arrow.txt", "Arrows\n\nThe operator json -> text extracts a field as json.\n")
    write(root / "plain.txt", "Plain\n\nA json field holds text; nothing here uses an operator.\n")
    with Corpus.open([root], cache) as corpus:
        assert {h.path for h in corpus.search("->> json text", 5)} >= {"json.txt", "plain.txt"}  # any: then words
        assert [h.path for h in corpus.search("->> json text", 5, Match.ALL)] == ["json.txt"]
        assert corpus.search("->> colour", 5, Match.ALL) == []  # no passage has both


def test_an_operator_hit_shows_the_operator_in_its_snippet(tmp_path: Path, cache: Path) -> None:
    # the words' snippet centres on "jsonb", far from the row using ->>: the snippet must show the operator asked
    # about, or a reader of the results cannot tell this passage answers
    filler = " ".join(f"The jsonb type stores document {i} in a decomposed binary format." for i in range(40))
    root = tmp_path / "ops"
    write(root / "json.txt", f"JSON\n\n{filler}\n\nThe operator json ->> text extracts a field as text.\n")
    with Corpus.open([root], cache) as corpus:
        hit = corpus.search("->> jsonb", 3)[0]
    assert "->>" in hit.snippet, hit.snippet
