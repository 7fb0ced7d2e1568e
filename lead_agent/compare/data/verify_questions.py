#!/usr/bin/env python3
"""Verify an evaluation question set against the documentation corpus it was written for.

Usage:
    python3 verify_questions.py CORPUS_ROOT QUESTIONS.jsonl

Standalone, standard library only, except that a PDF gold source ("FILE.pdf#page=N") needs pypdf,
which is imported only when such a source is checked. Exits 0 when every check passes, 1 when any
fails (each failure is listed on stderr), 2 on bad usage.

Checks, for every line of QUESTIONS.jsonl:
  * it is a JSON object with the fields id, question, answers, gold_sources, tags, split;
    ids are unique; split is "dev", "test", "holdout", "holdout2" or "probe" (bench/probes);
  * tags hold exactly one question type (how-to, why, what-is, comparison, multi-part, list),
    exactly one of answerable / unanswerable, and exactly one corpus tag (python, postgresql, r);
  * unanswerable questions have empty answers and gold_sources;
  * answerable questions have at least one answer and one gold source; every gold source is a
    relative path inside CORPUS_ROOT that exists. A PDF gold source names one page,
    "FILE.pdf#page=N" with N the 1-based physical page index in the file (pypdf's pages[N-1]); it
    exists when FILE.pdf exists under CORPUS_ROOT and has at least N pages. An answer stated on
    several pages lists one such source per page;
  * every answer appears literally in the text of the gold pages. A page's text is its HTML with
    head, scripts, styles and the navigation chrome (Sphinx mobile menu, sidebars, related bars and
    footer; DocBook navigation header and footer) removed, tags stripped, entities decoded, typographic quotes and
    dashes made plain, whitespace collapsed, compared case-insensitively. An answer to a multi-part
    question may join several literal parts with "; ": then each part must appear (not
    necessarily on the same gold page). A PDF page's text is pypdf's extract_text() of that page
    with a hyphen at a line end between two letters joined ("garb-\nage" -> "garbage"), then
    normalised as an HTML page's text;
  * every gold source states at least one answer or answer part (no decorative sources).
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

TYPES = ("how-to", "why", "what-is", "comparison", "multi-part", "list")
ANSWERABILITY = ("answerable", "unanswerable")
CORPORA = ("python", "postgresql", "r")
SPLITS = ("dev", "test", "holdout", "holdout2", "probe")
FIELDS = ("id", "question", "answers", "gold_sources", "tags", "split")
PART_SEPARATOR = "; "
PDF_PAGE = re.compile(r"page=([1-9][0-9]*)")
# a hyphen ending a line between two letters: a word broken across lines
PDF_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])-[ \t]*\r?\n[ \t]*(?=[^\W\d_])")

# div classes that are navigation chrome, not page content
CHROME_CLASSES = {"mobile-nav", "sphinxsidebar", "related", "footer", "navheader", "navfooter"}
SKIP_TAGS = {"head", "script", "style", "nav"}
# tags after which text must not run on into the next word
BLOCK_TAGS = {
    "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "pre", "table", "tr", "td", "th",
    "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "section", "hr", "tbody", "thead",
    "caption", "figure", "figcaption", "title",
}

TRANSLATE = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00a0": " ", "\u00b6": " ",
    "\u200b": "",
})


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0          # inside <head>, <script>, <style> or <nav>
        self.div_depth = 0
        self.chrome_at: int | None = None   # div depth where a chrome div opened

    def handle_starttag(self, tag, attrs):
        if tag in SKIP_TAGS:
            self.skip_depth += 1
        if tag == "div":
            self.div_depth += 1
            classes = set((dict(attrs).get("class") or "").split())
            if self.chrome_at is None and classes & CHROME_CLASSES:
                self.chrome_at = self.div_depth
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in SKIP_TAGS and self.skip_depth:
            self.skip_depth -= 1
        if tag == "div":
            if self.chrome_at is not None and self.div_depth == self.chrome_at:
                self.chrome_at = None
            self.div_depth = max(0, self.div_depth - 1)
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.skip_depth and self.chrome_at is None:
            self.parts.append(data)


def normalize(text: str) -> str:
    """Entities decoded, quotes and dashes plain, whitespace collapsed, case folded."""
    text = html.unescape(text).translate(TRANSLATE)
    return re.sub(r"\s+", " ", text).strip().casefold()


def page_text(path: Path) -> str:
    parser = _TextExtractor()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    return normalize("".join(parser.parts))


class PdfPages:
    """The pages of the PDF files of a corpus, each file opened once with pypdf (imported lazily)."""

    def __init__(self) -> None:
        self.readers: dict[Path, object] = {}

    def reader(self, path: Path):
        if path not in self.readers:
            try:
                import pypdf  # only needed for PDF gold sources
            except ImportError as exc:
                raise RuntimeError("PDF gold sources need pypdf (pip install pypdf)") from exc
            self.readers[path] = pypdf.PdfReader(str(path))
        return self.readers[path]

    def count(self, path: Path) -> int:
        return len(self.reader(path).pages)

    def text(self, path: Path, page: int) -> str:
        """Normalised text of the 1-based physical page `page` of the PDF at `path`."""
        raw = self.reader(path).pages[page - 1].extract_text() or ""
        return normalize(PDF_LINE_HYPHEN.sub("", raw))


def answer_parts(answer: str) -> list[str]:
    return [p for p in (s.strip() for s in answer.split(PART_SEPARATOR)) if p]


def check_fields(q: dict, qid: str, seen_ids: set[str]) -> list[str]:
    """Shape checks of one question: fields, id, split, list types, tags."""
    failures = []
    extra = sorted(set(q) - set(FIELDS))
    if extra:
        failures.append(f"{qid}: unknown fields {extra}")
    if qid in seen_ids:
        failures.append(f"{qid}: duplicate id")
    seen_ids.add(qid)
    if not isinstance(q["question"], str) or not q["question"].strip():
        failures.append(f"{qid}: empty question")
    if q["split"] not in SPLITS:
        failures.append(f"{qid}: split must be one of {SPLITS}, not {q['split']!r}")
    for field in ("answers", "gold_sources", "tags"):
        if not isinstance(q[field], list) or not all(isinstance(x, str) for x in q[field]):
            failures.append(f"{qid}: {field} must be a list of strings")
            q[field] = []
    for group, name in ((TYPES, "question type"), (ANSWERABILITY, "answerability"), (CORPORA, "corpus")):
        found = [t for t in q["tags"] if t in group]
        if len(found) != 1:
            failures.append(f"{qid}: needs exactly one {name} tag of {group}, has {found}")
    unknown = [t for t in q["tags"] if t not in TYPES + ANSWERABILITY + CORPORA]
    if unknown:
        failures.append(f"{qid}: unknown tags {unknown}")
    return failures


def gold_pages(q: dict, qid: str, root: Path, text_of, pdf: PdfPages) -> tuple[dict[str, str], list[str]]:
    """The text of each gold page, and what is wrong with the gold sources."""
    failures, pages = [], {}
    for source in q["gold_sources"]:
        file_part, hash_sign, fragment = source.partition("#")
        is_pdf = file_part.lower().endswith(".pdf")
        rel = Path(file_part if is_pdf else source)
        if rel.is_absolute() or ".." in rel.parts:
            failures.append(f"{qid}: gold source {source!r} is not a path inside the corpus")
            continue
        path = root / rel
        if is_pdf and not (hash_sign and PDF_PAGE.fullmatch(fragment)):
            failures.append(f"{qid}: PDF gold source {source!r} must name one page as FILE.pdf#page=N")
            continue
        if not path.is_file():
            failures.append(f"{qid}: gold source {source!r} does not exist under {root}")
            continue
        if not is_pdf:
            pages[source] = text_of(path)
            continue
        page = int(PDF_PAGE.fullmatch(fragment).group(1))
        try:
            count = pdf.count(path)
        except Exception as exc:  # pypdf missing or the file unreadable
            failures.append(f"{qid}: gold source {source!r}: cannot read {rel} ({exc})")
            continue
        if page > count:
            failures.append(f"{qid}: gold source {source!r}: {rel} has only {count} pages")
            continue
        pages[source] = text_of(path, page)
    return pages, failures


def check_answers(q: dict, qid: str, pages: dict[str, str]) -> list[str]:
    """Every answer (or every part of it) is stated on a gold page, and every gold page states one."""
    failures: list[str] = []
    used: set[str] = set()
    for answer in q["answers"]:
        whole = normalize(answer)
        hits = [s for s, t in pages.items() if whole and whole in t]
        if hits:
            used.update(hits)
            continue
        parts = answer_parts(answer)
        if len(parts) < 2:
            failures.append(f"{qid}: answer {answer!r} not found in {list(pages)}")
            continue
        for part in parts:
            hits = [s for s, t in pages.items() if normalize(part) in t]
            if not hits:
                failures.append(f"{qid}: part {part!r} of answer {answer!r} not found in {list(pages)}")
            used.update(hits)
    failures += [f"{qid}: gold source {s!r} states none of the answers" for s in pages if s not in used]
    return failures


def parse_line(line: str, lineno: int) -> tuple[dict | None, str | None]:
    if not line.strip():
        return None, f"line {lineno}: empty line"
    try:
        q = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"line {lineno}: not JSON ({exc})"
    if not isinstance(q, dict):
        return None, f"line {lineno}: not a JSON object"
    missing = [f for f in FIELDS if f not in q]
    if missing:
        return None, f"{q.get('id', f'line {lineno}')}: missing fields {missing}"
    return q, None


def verify(corpus_root: Path, questions_path: Path) -> tuple[list[str], list[dict]]:
    failures: list[str] = []
    rows: list[dict] = []
    cache: dict[tuple[Path, int], str] = {}
    seen_ids: set[str] = set()
    root = corpus_root.resolve()
    pdf = PdfPages()

    def text_of(path: Path, page: int = 0) -> str:
        """An HTML page's text (page 0) or the text of page `page` of a PDF."""
        if (path, page) not in cache:
            cache[(path, page)] = pdf.text(path, page) if page else page_text(path)
        return cache[(path, page)]

    for lineno, line in enumerate(questions_path.read_text(encoding="utf-8").splitlines(), 1):
        q, problem = parse_line(line, lineno)
        if q is None:
            failures.append(problem or f"line {lineno}: unreadable")
            continue
        qid = q.get("id", f"line {lineno}")
        failures += check_fields(q, qid, seen_ids)
        rows.append(q)
        if "unanswerable" in q["tags"]:
            if q["answers"] or q["gold_sources"]:
                failures.append(f"{qid}: unanswerable but has answers or gold_sources")
            continue
        if not q["answers"]:
            failures.append(f"{qid}: answerable but no answers")
        if not q["gold_sources"]:
            failures.append(f"{qid}: answerable but no gold_sources")
        pages, problems = gold_pages(q, qid, root, text_of, pdf)
        failures += problems
        if len(pages) == len(q["gold_sources"]):
            failures += check_answers(q, qid, pages)
    return failures, rows


def summary(rows: list[dict]) -> str:
    counts = Counter()
    for q in rows:
        kind = next((t for t in q["tags"] if t in TYPES), "?")
        ans = next((t for t in q["tags"] if t in ANSWERABILITY), "?")
        counts[(ans, kind, q["split"])] += 1
    lines = [f"{len(rows)} questions"]
    for ans in ANSWERABILITY:
        total = sum(n for (a, _, _), n in counts.items() if a == ans)
        lines.append(f"  {ans}: {total}")
        for kind in TYPES:
            per_split = [counts[(ans, kind, s)] for s in SPLITS]
            if any(per_split):
                split_counts = ", ".join(f"{s} {n}" for s, n in zip(SPLITS, per_split))
                lines.append(f"    {kind:<11} {sum(per_split):>3}  ({split_counts})")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python3 verify_questions.py CORPUS_ROOT QUESTIONS.jsonl", file=sys.stderr)
        return 2
    corpus_root, questions = Path(argv[1]), Path(argv[2])
    if not corpus_root.is_dir():
        print(f"corpus root {corpus_root} is not a directory", file=sys.stderr)
        return 2
    if not questions.is_file():
        print(f"question file {questions} does not exist", file=sys.stderr)
        return 2
    failures, rows = verify(corpus_root, questions)
    print(f"{questions} against {corpus_root}")
    print(summary(rows), flush=True)
    if failures:
        print(f"FAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    print("OK: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
