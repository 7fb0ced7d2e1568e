"""PDF documents in a corpus (subagents/corpus/pdf_text.py): a typeset manual read back as headings,
paragraphs and code, each passage knowing its page, and reports linking `file.pdf#page=N`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subagents.corpus import Corpus, CorpusIndex, make_corpus_tools
from subagents.corpus.chunking import Document
from subagents.corpus.pdf_text import PdfUnreadable, pdf_to_document
from subagents.model import ToolUseBlock
from subagents.sources import SourceRegistry
from subagents.tools import ToolContext, Toolbox

from .fakes.pdf_pages import Bookmark, Run, layout_pdf, lines

LEFT = 72


def manual_pages() -> list[list[Run]]:
    title = [Run("Widget Manual", 150, 600, 24, "bold"), Run("For version 2 of the widget", 150, 560, 12)]
    contents = lines(LEFT, 700, [f"{n} Chapter about part {n} . . . . . . . . . . . . {n + 2}" for n in range(1, 11)])
    page3 = [
        Run("Chapter 1: Widgets", LEFT, 750), Run("3", 530, 750),  # the running head holds the page's number
        Run("1 Widgets", LEFT, 700, 16, "bold"),
        Run("1.1 Frobnicating widgets", LEFT, 670, 13, "bold"),
        *lines(LEFT, 640, ["To frobnicate a widget, turn its crank slowly until the frob-",
                           "nication light shows green. The crank turns at most 2"]),
        Run("10", 330, 632, 7),  # an exponent: raised and small, after a digit
        Run(" times per minute.", 340, 628),
        Run("1", 430, 632, 7),  # a footnote mark: raised and small, after a word
        *lines(LEFT, 600, ["Widgets wear out. Speed is the trade-",
                           "off, as the trade-off table shows."]),
        *lines(90, 570, ["crank <- frob(widget)"], font="mono"),
        *lines(102, 558, ["turn(crank, 3)"], font="mono"),
        Run("Arguments", LEFT, 530, 10, "bold"),
        *lines(LEFT, 510, ["widget  the widget to frobnicate and oil."]),
        Run("3", 300, 40),  # the page number at the foot
    ]
    page4 = [
        Run("Chapter 1: Widgets", LEFT, 750), Run("4", 530, 750),
        *lines(LEFT, 690, ["Sprockets need grease every week, or they squeak at night."]),
        Run("4", 300, 40),
    ]
    return [title, contents, page3, page4]


MARKS = (Bookmark("Widgets", 3, 710, (Bookmark("Frobnicating widgets", 3, 680),)),
         Bookmark("Sprocket care", 4, 720))


def blocks(doc: Document) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(b.level, b.text, b.anchors) for b in doc.blocks]


def test_a_typeset_manual_reads_as_headings_paragraphs_and_code() -> None:
    doc = pdf_to_document(layout_pdf(manual_pages(), bookmarks=MARKS), "manual.pdf")
    assert doc.title == "Widget Manual"  # the largest type on the first page (no metadata title)
    got = blocks(doc)
    assert got[2:] == [
        (2, "1 Widgets", ("page=3",)),  # the outline's entry, worded as the page has it
        (3, "1.1 Frobnicating widgets", ("page=3",)),
        (0, "To frobnicate a widget, turn its crank slowly until the frobnication light shows green. "
            "The crank turns at most 2^10 times per minute.", ("page=3",)),
        (0, "Widgets wear out. Speed is the trade-off, as the trade-off table shows.", ("page=3",)),
        (0, "crank <- frob(widget)\n  turn(crank, 3)", ("page=3",)),
        (4, "Arguments", ("page=3",)),  # a short bold line: a subheading below the last heading
        (0, "widget the widget to frobnicate and oil.", ("page=3",)),
        (2, "Sprocket care", ("page=4",)),  # a bookmark no line words: its own title heads the text
        (0, "Sprockets need grease every week, or they squeak at night.", ("page=4",)),
    ]
    assert got[0][1] == "Widget Manual"
    text = " ".join(b.text for b in doc.blocks)
    assert "Chapter 1: Widgets" not in text and ". . . ." not in text  # running heads, the contents page


@pytest.mark.parametrize("size_in_matrix", [False, True])
def test_without_an_outline_larger_type_heads_the_text_and_the_metadata_titles_it(size_in_matrix: bool) -> None:
    """(Sizes set in the font, as TeX does, or in the text matrix with the font at 1, as Word does.)"""
    page = [Run("Sprocket Handbook", LEFT, 720, 20, "bold"),
            Run("Greasing", LEFT, 690, 14, "bold"),
            *lines(LEFT, 670, ["Grease the sprocket weekly."]),
            Run("Storage", LEFT, 640, 14, "bold"),
            *lines(LEFT, 620, ["Store sprockets dry."])]
    doc = pdf_to_document(layout_pdf([page], title="The Sprocket Handbook", size_in_matrix=size_in_matrix),
                          "handbook.pdf")
    assert doc.title == "The Sprocket Handbook"
    assert [(b.level, b.text) for b in doc.blocks] == [
        (1, "Sprocket Handbook"), (2, "Greasing"), (0, "Grease the sprocket weekly."),
        (2, "Storage"), (0, "Store sprockets dry.")]


def test_paragraphs_run_past_lists_footnotes_and_page_breaks_and_unnumbered_running_heads_go() -> None:
    """A list set right of the body (on this page more lines than the body) leaves the body's lines one paragraph; a
    paragraph running on to the next page is one, its page's footnote after it; a head atop every page without
    a page number goes."""
    head = Run("Gadget Guide", LEFT, 750)
    page1 = [head, *lines(LEFT, 700, ["Gadgets draw on the widget they are given and keep no state of",
                                      "their own, so one gadget serves many widgets."]),
             *lines(80, 682, ["• a gadget that draws", "• a gadget that listens", "• a gadget that waits"]),
             *lines(LEFT, 628, ["Every gadget is created by its widget, which also ends"]),
             Run("1 Widgets end gadgets when they close.", LEFT, 60, 8),
             Run("0.0 0.5 1.0 1.5 2.0 2.5 x Fn(x) 3.0 3.5", LEFT, 40, 7)]  # a plot's ticks, small, at the foot
    page2 = [head, *lines(LEFT, 700, ["it when the widget closes."])]
    page3 = [head, *lines(LEFT, 700, ["Gadgets never draw alone."]),
             *lines(LEFT, 600, ["gadgets Relative Frequency 1.5 2.0 2.5 3.0 0.0 0.1 0.2 0.3 Fn(x)"])]  # a plot's labels
    doc = pdf_to_document(layout_pdf([page1, page2, page3]), "gadgets.pdf")
    assert doc.title == "gadgets.pdf"  # no type larger than the body's, no metadata
    assert [(b.text, b.anchors) for b in doc.blocks] == [
        ("Gadgets draw on the widget they are given and keep no state of their own, so one gadget serves many "
         "widgets.", ("page=1",)),
        ("• a gadget that draws", ("page=1",)), ("• a gadget that listens", ("page=1",)),
        ("• a gadget that waits", ("page=1",)),
        ("Every gadget is created by its widget, which also ends it when the widget closes.", ("page=1", "page=2")),
        ("1 Widgets end gadgets when they close.", ("page=1",)),
        ("Gadgets never draw alone.", ("page=3",)),
    ]


def test_outline_entries_find_their_lines_wrapped_or_titled_but_never_a_sentence_that_ends_with_them() -> None:
    """A bookmark's heading may wrap onto a second line; a help page's topic line starts with the bookmark's
    name and goes on with its title; a sentence of the body ending in a bookmark's words is no heading."""
    page = [*lines(LEFT, 720, ["See the section on grease; we here look at a specific example."]),
            Run("2.7 Index vectors; selecting and modifying subsets of a", LEFT, 690, 13, "bold"),
            Run("data set", LEFT, 675, 13, "bold"),
            *lines(LEFT, 650, ["Subsets are selected by index vectors."]),
            Run("combn Generate All Combinations", LEFT, 620, 12, "bold"),
            *lines(LEFT, 600, ["Generate all combinations of the elements of x."]),
            Run("A specific example", LEFT, 570, 13, "bold"),
            *lines(LEFT, 550, ["Grease one sprocket first."])]
    marks = (Bookmark("Index vectors; selecting and modifying subsets of a data set", 1, 700),
             Bookmark("combn", 1, 630), Bookmark("A specific example", 1, 720))
    doc = pdf_to_document(layout_pdf([page], bookmarks=marks), "manual.pdf")
    assert [(b.level, b.text) for b in doc.blocks] == [
        (0, "See the section on grease; we here look at a specific example."),
        (2, "2.7 Index vectors; selecting and modifying subsets of a data set"),
        (0, "Subsets are selected by index vectors."),
        (2, "combn Generate All Combinations"),
        (0, "Generate all combinations of the elements of x."),
        (2, "A specific example"),
        (0, "Grease one sprocket first."),
    ]


def test_a_locked_pdf_is_unreadable() -> None:
    locked = layout_pdf([lines(LEFT, 700, ["secret sprockets"])], password="hunter2")
    with pytest.raises(PdfUnreadable, match="encrypted"):
        pdf_to_document(locked, "locked.pdf")


def _payload(content: str) -> dict:
    return json.loads(content.split("\n", 1)[1].rsplit("\n</retrieved_material>", 1)[0])


async def test_a_pdf_corpus_is_searched_and_cited_by_page(tmp_path: Path) -> None:
    from lead_agent.references import reference_line, source_link

    root = tmp_path / "docs"
    root.mkdir()
    (root / "manual.pdf").write_bytes(layout_pdf(manual_pages(), bookmarks=MARKS))
    (root / "locked.pdf").write_bytes(layout_pdf([lines(LEFT, 700, ["secret sprockets"])], password="pw"))
    (root / "broken.pdf").write_bytes(layout_pdf(manual_pages())[:400])
    (root / "notes.md").write_text("# Notes\n\nOil the crank monthly.\n")
    (root / "gears.pdf").write_bytes(layout_pdf([lines(LEFT, 700, ["Gears want oil in spring."]),
                                                 lines(LEFT, 700, ["Gears want rest in winter."])]))
    with CorpusIndex.open(root, tmp_path / "cache") as ix:
        stats = ix.update()
        assert (stats.indexed, stats.skipped_undecodable, stats.skipped_other) == (3, 1, 1)
        reasons = dict(stats.problems)
        assert "encrypted" in reasons["locked.pdf"] and reasons["broken.pdf"].startswith("failed to extract")
        hit = ix.search("frobnication light")[0]
        assert hit.path == "manual.pdf" and hit.heading == "1 Widgets > 1.1 Frobnicating widgets"
        assert ix.pages_of(hit.passage_id) == (3,)
        assert ix.pages_of(ix.search("sprockets grease")[0].passage_id) == (4,)
        assert ix.pages_of(ix.search("oil crank monthly")[0].passage_id) == ()  # not a PDF
        assert ix.pages_of(ix.search("gears spring winter")[0].passage_id) == (1, 2)  # one passage on two pages

    with Corpus.open([root], tmp_path / "cache") as corpus:
        box = Toolbox(make_corpus_tools(corpus))
        ctx = ToolContext(agent_id="a", sources=SourceRegistry())
        res = await box.call(ToolUseBlock("t1", "search_corpus", {"query": "sprockets grease"}), box.names(), ctx)
        top = _payload(res.content)["results"][0]
        src = ctx.sources.get(top["source_id"])
        assert src.meta["page"] == 4 and src.meta["pages"] == [4] and src.meta["path"] == "manual.pdf"
        link = source_link(src)
        assert link.href == (root.resolve() / "manual.pdf").as_uri() + "#page=4"
        assert link.where == "manual.pdf#page=4"
        assert reference_line(1, src).endswith("— `manual.pdf#page=4` (S1)")


def test_research_over_a_pdf_corpus_cites_the_page(tmp_path: Path, research_in_process) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "manual.pdf").write_bytes(layout_pdf(manual_pages(), bookmarks=MARKS))
    code, out, err = research_in_process("run", "How do I frobnicate a widget?", "--corpus", str(root),
                                         "--embedding-model", "off", "-q")
    assert code == 0, err
    assert "turn its crank slowly until the frobnication light shows green" in out
    assert f"(<{(root.resolve() / 'manual.pdf').as_uri()}#page=3>) — `manual.pdf#page=3`" in out



def test_reading_a_long_pdf_reports_its_pages_as_it_goes(tmp_path: Path) -> None:
    from subagents.corpus import IndexStage
    from subagents.events import CorpusIndexing
    from lead_agent.progress import indexing_line

    root = tmp_path / "docs"
    root.mkdir()
    (root / "long.pdf").write_bytes(layout_pdf([lines(LEFT, 700, [f"Page {n} says sprockets."]) for n in range(1, 6)]))
    seen: list[tuple] = []
    with CorpusIndex.open(root, tmp_path / "cache") as ix:
        ix.update(progress=lambda *a: seen.append(a))
    assert [a for a in seen if a[2:3] == (IndexStage.PAGES,)] == [(n, 5, IndexStage.PAGES, "long.pdf") for n in range(1, 6)]
    assert seen[-1] == (1, 1)  # then the file is examined
    line = indexing_line(CorpusIndexing("/docs", 3, 5, 4.0, stage="pages", item="long.pdf"))
    assert line == "indexing corpus /docs: reading long.pdf, page 3 of 5 (4s)"
