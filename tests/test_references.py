"""How reports name and link sources: title and section (not passage ids), file:// with the section's
anchor for corpus files, the page URL for the web."""

from __future__ import annotations

from pathlib import Path

from lead_agent.references import reference_line, source_link
from lead_agent.report_html import markdown_html
from subagents.sources import Source, SourceKind

PAGE = """<html><body><section id="top"><h1>Built-in Types<a class="headerlink" href="#top">¶</a></h1>
<section id="sequence-types"><h2>Sequence Types — list, tuple<a class="headerlink" href="#sequence-types">¶</a></h2>
<section id="lists"><h3>Lists<a class="headerlink" href="#lists">¶</a></h3><p>Lists are mutable.</p></section>
</section></section>
<div class="sect1"><h2 class="title"><a id="SQL-WITH"></a>WITH Clause</h2></div></body></html>"""


def corpus_source(root: Path, heading: str, path: str = "library/stdtypes.html") -> Source:
    return Source("S4", f"corpus:docs-1a2b/{path}#7", SourceKind.CORPUS, "Built-in Types", f"docs-1a2b/{path}#7",
                  "Lists are mutable.", [], {"heading": heading, "path": path, "root": str(root)})


def test_a_corpus_source_links_its_file_and_section(tmp_path: Path) -> None:
    root = tmp_path / "my docs"
    (root / "library").mkdir(parents=True)
    (root / "library" / "stdtypes.html").write_text(PAGE)
    link = source_link(corpus_source(root, "Built-in Types > Sequence Types — list, tuple > Lists"))
    assert link.label == "Built-in Types › Sequence Types — list, tuple › Lists"
    assert link.href == (root / "library" / "stdtypes.html").as_uri() + "#lists" and "%20" in link.href
    assert link.where == "library/stdtypes.html"
    assert source_link(corpus_source(root, "Built-in Types > WITH Clause")).href.endswith("#SQL-WITH")
    assert source_link(corpus_source(root, "Built-in Types > No Such Heading")).href == \
        (root / "library" / "stdtypes.html").as_uri()  # the file, without a made-up anchor
    line = reference_line(3, corpus_source(root, "Built-in Types > Sequence Types — list, tuple > Lists"))
    assert line == (f"3. [Built-in Types › Sequence Types — list, tuple › Lists](<{link.href}>) — "
                    "`library/stdtypes.html` (S4)")
    html = markdown_html(f"Lists change [3].\n\n## References\n\n{line}\n")
    assert f'href="{link.href}"' in html and 'href="#ref-3"' in html
    assert '<ol start="3">\n<li id="ref-3">' in html  # the item ids follow the list's own numbers


def test_a_web_source_links_its_page() -> None:
    src = Source("S2", "web:https://example.org/a#3", SourceKind.WEB, "An article", "https://example.org/a#passage-3",
                 "text", [], {"url": "https://example.org/a", "heading": "Background"})
    link = source_link(src)
    assert (link.label, link.href, link.where) == ("An article › Background", "https://example.org/a", "example.org")
    pdf = Source("S3", "web:https://example.org/b.pdf#1", SourceKind.WEB, "Paper", "https://example.org/b.pdf#page=2",
                 "text", [], {"url": "https://example.org/b.pdf", "page": 2})
    assert source_link(pdf).href == "https://example.org/b.pdf#page=2"


def test_markdown_in_a_title_cannot_make_a_link() -> None:
    src = Source("S1", "k", SourceKind.WEB, "[click](javascript:alert(1)) *x*", "javascript:alert(1)", "t", [],
                 {"url": "javascript:alert(1)"})
    line = reference_line(1, src)
    html = markdown_html(line)
    assert "javascript:" not in html.split("<code>")[0].replace("[click](javascript:alert(1))", "")
    assert "<a " not in html and "<em>" not in html
