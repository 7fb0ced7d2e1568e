"""`report.html`: the same content as `report.md`, as one self-contained page (inline CSS, no
scripts, no network). Markdown is rendered with markdown-it (raw HTML in the report is shown as
text, never interpreted); every `[n]` marker links to reference n, and references link to the
corpus file (`file://…#section`) or the web page."""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any

CSS = """
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;
color:#1d232a;background:#fff}
h1{font-size:1.7rem;line-height:1.25}h2{margin-top:2rem;border-bottom:1px solid #e3e6ea;padding-bottom:.2rem}
blockquote{margin:1rem 0;padding:.5rem 1rem;background:#f5f7fa;border-left:4px solid #9aa7b5;color:#3b4550}
code{background:#f1f3f5;padding:.05rem .3rem;border-radius:3px;font-size:.9em}
pre{background:#f1f3f5;padding:.8rem;overflow:auto}pre code{background:none;padding:0}
a{color:#0b5cad}a.cite{text-decoration:none;font-size:.85em;vertical-align:super;padding:0 .1rem}
li:target{background:#fff4c2}table{border-collapse:collapse}td,th{border:1px solid #d6dbe0;padding:.3rem .5rem}
"""
MARKER = re.compile(r"\[(\d{1,4})\]")
_PROTECTED = re.compile(r"(<pre.*?</pre>|<code.*?</code>|<a [^>]*>.*?</a>)", re.S)
_REFS = re.compile(r"(<h2>References</h2>\s*<ol(?: start=\"(\d+)\")?>)(.*?)(</ol>)", re.S)


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    # references link to local corpus files: allow file: (markdown-it refuses it by default); never scripts
    md.validateLink = lambda url: not re.match(r"^\s*(javascript|vbscript|data):", url, re.I)
    return md


def markdown_html(text: str) -> str:
    """Markdown to HTML; `[n]` markers become links to `#ref-n`; reference items get `id="ref-n"`."""
    body = _markdown().render(text)
    parts = _PROTECTED.split(body)
    for i in range(0, len(parts), 2):  # only text outside code and existing links
        parts[i] = MARKER.sub(r'<a class="cite" href="#ref-\1" data-ref="\1">[\1]</a>', parts[i])
    body = "".join(parts)

    def number(m: re.Match[str]) -> str:
        n = int(m.group(2) or 1)
        items = re.split(r"(<li>)", m.group(3))
        out = []
        for piece in items:
            if piece == "<li>":
                out.append(f'<li id="ref-{n}">')
                n += 1
            else:
                out.append(piece)
        return m.group(1) + "".join(out) + m.group(4)

    return _REFS.sub(number, body, count=1)


def report_page(markdown_text: str, title: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
            f"{markdown_html(markdown_text)}</body></html>\n")


__all__ = ["markdown_html", "report_page"]
