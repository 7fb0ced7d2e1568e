"""Passage splitting and per-type extraction, without a server."""

from __future__ import annotations

import pytest

from subagents.tools import ToolError
from subagents.web.extract import extract_page, kind_for_content_type, split_passages
from tests.fakes.web_server import make_pdf


def test_passages_cut_at_paragraphs_and_headings_with_nearest_heading() -> None:
    para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8  # ~450 chars
    text = "\n\n".join(["# Title", para, para, "## Part A", para, para, para, "## Part B", "short", "### Deep", para])
    parts = split_passages(text, max_chars=1500, heading_min=400)
    assert all(len(p) <= 1500 for _h, p in parts)
    assert parts[0][0] == "Title" and parts[0][1].startswith("# Title")
    headings = [h for h, _ in parts]
    assert "Part A" in headings
    for h, p in parts:
        if p.startswith("## Part A"):
            assert h == "Part A"
    # "## Part B" + "short" is under heading_min, so "### Deep" joins it; the passage keeps Part B
    b = next(p for p in parts if p[1].startswith("## Part B"))
    assert b[0] == "Part B" and "### Deep" in b[1]
    # nothing lost, nothing duplicated
    assert sum(p.count("Lorem") for _h, p in parts) == text.count("Lorem")


def test_long_paragraph_split_at_sentences_then_whitespace() -> None:
    sentences = " ".join(f"Sentence number {i} says something moderately long here." for i in range(80))
    parts = split_passages(sentences, max_chars=1000)
    assert len(parts) > 3 and all(len(p) <= 1000 for _h, p in parts)
    assert all(p.endswith(".") for _h, p in parts)
    blob = "x" * 3500  # no spaces at all: hard cuts
    parts = split_passages(blob, max_chars=1000)
    assert [len(p) for _h, p in parts] == [1000, 1000, 1000, 500]


def test_content_type_kinds() -> None:
    assert kind_for_content_type("text/html") == "html"
    assert kind_for_content_type("application/xhtml+xml") == "html"
    assert kind_for_content_type("application/pdf") == "pdf"
    assert kind_for_content_type("text/markdown") == "markdown"
    assert kind_for_content_type("text/plain") == "text"
    assert kind_for_content_type("") == ""
    for refused in ["application/octet-stream", "image/png", "application/json", "text/csv", "video/mp4"]:
        assert kind_for_content_type(refused) is None
        with pytest.raises(ToolError, match=refused):
            extract_page(url="http://x.test/", content_type=refused, charset=None, body=b"data")


def test_broken_pdf_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="could not read the PDF"):
        extract_page(url="http://x.test/a.pdf", content_type="application/pdf", charset=None, body=b"%PDF-1.4 junk")
    empty = make_pdf([[]])
    with pytest.raises(ToolError, match="no extractable text"):
        extract_page(url="http://x.test/a.pdf", content_type="application/pdf", charset=None, body=empty)


def test_long_pdf_page_splits_but_keeps_its_page_number() -> None:
    lines = [f"Line {i} of a long page about orbital mechanics and tides." for i in range(60)]
    page = extract_page(url="http://x.test/a.pdf", content_type="application/pdf", charset=None,
                        body=make_pdf([["one"], lines]), max_chars=800)
    assert page.passages[0].page == 1
    assert len([p for p in page.passages if p.page == 2]) >= 3
    assert page.title == "one"  # no metadata title: first line


def test_charset_and_fallback_decoding() -> None:
    page = extract_page(url="http://x.test/n.txt", content_type="text/plain", charset="iso-8859-1",
                        body="Café au lait".encode("latin-1"))
    assert page.passages[0].text == "Café au lait"
    page = extract_page(url="http://x.test/n.txt", content_type="text/plain", charset=None,
                        body="naïve".encode("cp1252"))
    assert page.passages[0].text == "naïve"


def test_tiny_html_falls_back_to_visible_text() -> None:
    html = b"<html><head><title>Tiny</title></head><body><nav>Menu</nav><p>Just one line.</p></body></html>"
    page = extract_page(url="http://x.test/t.html", content_type="text/html", charset=None, body=html)
    assert page.title == "Tiny"
    assert "Just one line." in page.passages[0].text


def encrypted_pdf(user_password: str) -> bytes:
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(make_pdf([["Secret orbital data."], ["More secret data."]]))).pages:
        writer.add_page(page)
    writer.encrypt(user_password=user_password, owner_password="owner-pw", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_encrypted_pdfs() -> None:
    body = encrypted_pdf("s3cret")
    assert b"Secret orbital" not in body
    with pytest.raises(ToolError, match="the PDF is encrypted and cannot be read"):
        extract_page(url="http://x.test/a.pdf", content_type="application/pdf", charset=None, body=body)
    # an empty user password (only printing/copying restricted) opens like any PDF
    page = extract_page(url="http://x.test/b.pdf", content_type="application/pdf", charset=None,
                        body=encrypted_pdf(""))
    assert [(p.page, p.text) for p in page.passages] == [(1, "Secret orbital data."), (2, "More secret data.")]


def test_pdf_pages_past_the_cap_are_not_read() -> None:
    body = make_pdf([[f"Page {n} text about tides."] for n in range(1, 6)])
    page = extract_page(url="http://x.test/a.pdf", content_type="application/pdf", charset=None, body=body,
                        max_pdf_pages=2)
    assert [p.page for p in page.passages] == [1, 2]
    full = extract_page(url="http://x.test/a.pdf", content_type="application/pdf", charset=None, body=body,
                        max_pdf_pages=5)
    assert [p.page for p in full.passages] == [1, 2, 3, 4, 5]
