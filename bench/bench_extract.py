"""Web extraction benchmark: fetch + extract ~100 Python library doc pages through the real fetch
code (httpx, guard, caps, trafilatura, passage splitting) from a loopback HTTP server.

    python bench/bench_extract.py [--root /usr/share/doc/python3.11/html] [--pages 100]

Prints pages/s (sequential, and with 4 fetches in flight behind the 2-thread extraction limiter),
where the time goes (network vs extraction), and how much of each page's main text is kept,
measured against the page's own source, `_sources/library/<name>.rst.txt`:

* token recall: of the rst's word tokens (lowercased alphanumeric runs, rst markup removed),
  counted with multiplicity, the share also found in the extracted text;
* boilerplate share: of the extracted tokens, the share the rst does not account for
  (navigation, sidebars, footers — and Sphinx's generated words such as "New in version").

The same figures for the whole page's visible text (no boilerplate removal) are a baseline.
Measures, never asserts.
"""

from __future__ import annotations

import argparse
import functools
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from subagents.web import WebConfig, WebTools  # noqa: E402
from subagents.web.extract import Page, extract_page  # noqa: E402
from tests.fakes.web_server import FakeWebServer  # noqa: E402

TOKEN = re.compile(r"[a-z0-9]+")

# directives whose whole block is not rendered as page text
HIDDEN_BLOCKS = {
    "testsetup", "testcleanup", "index", "moduleauthor", "sectionauthor", "highlight", "raw",
    "only", "toctree", "include", "literalinclude", "doctest-skip", "ifconfig", "audit-event-table",
    "impl-detail", "availability", "currentmodule", "module", "program", "productionlist",
}


def rst_to_text(rst: str) -> str:
    """Strip reST markup, keeping the words a reader sees on the rendered page."""
    out: list[str] = []
    skip_indent: int | None = None
    lines = rst.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not stripped or indent > skip_indent:
                continue
            skip_indent = None
        m = re.match(r"\.\.\s+([\w:-]+)::\s*(.*)", stripped)
        if m:
            name = m.group(1).split(":")[-1]
            options = []
            for nxt in lines[i + 1 : i + 8]:
                if not re.match(r"\s+:[\w-]+:", nxt):
                    break
                options.append(nxt.strip())
            if name in HIDDEN_BLOCKS or any(o.startswith(":hide:") for o in options):
                skip_indent = indent
                continue
            out.append(m.group(2))  # e.g. ".. function:: name(args)" -> "name(args)"
            continue
        if re.match(r"\.\.\s+_[^:]*:", stripped) or re.match(r"\.\.\s+\|", stripped):
            continue  # link targets, substitution definitions
        if stripped.startswith("..") and "::" not in stripped:
            skip_indent = indent  # a comment block
            continue
        if re.match(r":[\w-]+:", stripped) and not re.match(r":[\w-]+:`", stripped):
            continue  # directive options (":synopsis: …", ":noindex:")
        if re.fullmatch(r"([=\-~^\"'`#*+<>_.:])\1{2,}", stripped):
            continue  # section underlines and transitions
        out.append(line)
    text = "\n".join(out)
    text = re.sub(r":[\w:+-]+:`", "`", text)  # roles: :func:`x` -> `x`
    text = re.sub(r"<(https?://|mailto:)[^>]*>`_+", "`", text)  # link targets
    text = re.sub(r"`([^`<]*?)\s*<[^>]*>`", r"\1", text)  # `title <target>` -> title
    text = re.sub(r"\|[\w -]+\|", " ", text)  # substitution references
    return text


def tokens(text: str) -> Counter[str]:
    return Counter(TOKEN.findall(text.lower()))


def recall_and_boilerplate(source: Counter[str], extracted: Counter[str]) -> tuple[float, float]:
    common = sum((source & extracted).values())
    recall = common / max(1, sum(source.values()))
    boiler = sum((extracted - source).values()) / max(1, sum(extracted.values()))
    return recall, boiler


def visible_text(html: bytes) -> str:
    import lxml.html

    doc = lxml.html.fromstring(html)
    for bad in doc.xpath("//script|//style"):
        bad.drop_tree()
    return doc.text_content()


def page_text(page: Page) -> str:
    return "\n".join([page.title, *(p.text for p in page.passages)])


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))]


def pick_pages(root: Path, n: int) -> list[str]:
    names = sorted(
        p.name for p in (root / "library").glob("*.html")
        if (root / "_sources" / "library" / (p.stem + ".rst.txt")).is_file()
    )
    if len(names) <= n:
        return names
    step = len(names) / n
    return [names[int(i * step)] for i in range(n)]


async def run_bench(root: Path, names: list[str], base_url: str) -> None:
    cfg = WebConfig(allow_private_network=True, cache_mode="off", extract_concurrency=2)
    web = WebTools(cfg)
    urls = [f"{base_url}/library/{n}" for n in names]

    # sequential: time network and extraction separately
    pages: dict[str, Page] = {}
    t_net = t_ext = 0.0
    errors: list[str] = []
    t0 = time.perf_counter()
    for n, url in zip(names, urls):
        a = time.perf_counter()
        try:
            raw = await web.get_raw(url)
            b = time.perf_counter()
            job = functools.partial(extract_page, url=raw.url, content_type=raw.content_type,
                                    charset=raw.charset, body=raw.body)
            page = await trio.to_thread.run_sync(job, limiter=web.extract_limiter)
            c = time.perf_counter()
        except Exception as e:  # report, keep going
            errors.append(f"{n}: {e}")
            continue
        t_net += b - a
        t_ext += c - b
        pages[n] = page
    seq = time.perf_counter() - t0

    # concurrent: the tool path (fetch + extraction in worker threads), 4 in flight
    limiter = trio.CapacityLimiter(4)
    done = 0

    async def one(url: str) -> None:
        nonlocal done
        async with limiter:
            await web.fetch(url)
            done += 1

    t0 = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for url in urls:
            nursery.start_soon(one, url)
    conc = time.perf_counter() - t0

    # quality against the rst sources
    rows = []
    for n, page in pages.items():
        rst = (root / "_sources" / "library" / (Path(n).stem + ".rst.txt")).read_text(encoding="utf-8", errors="replace")
        src = tokens(rst_to_text(rst))
        ext = tokens(page_text(page))
        base = tokens(visible_text((root / "library" / n).read_bytes()))
        r, b = recall_and_boilerplate(src, ext)
        br, bb = recall_and_boilerplate(src, base)
        toc = ".. toctree::" in rst  # index pages whose text Sphinx generates from other files
        rows.append((n, r, b, br, bb, len(page.passages), sum(len(p.text) for p in page.passages), toc))

    print(f"pages: {len(names)} library/*.html from {root} over http://127.0.0.1 (real fetch + extract code)")
    if errors:
        print(f"errors: {len(errors)}: " + "; ".join(errors[:5]))
    print(f"sequential: {len(pages) / seq:6.1f} pages/s  ({seq:.2f}s; network+guard {t_net:.2f}s, "
          f"extraction {t_ext:.2f}s = {100 * t_ext / max(1e-9, t_net + t_ext):.0f}%)")
    print(f"concurrent: {done / conc:6.1f} pages/s  ({conc:.2f}s; 4 fetches in flight, 2 extraction threads; "
          f"speed-up x{seq / conc:.2f})")
    recall = [r[1] for r in rows]
    boiler = [r[2] for r in rows]
    b_recall = [r[3] for r in rows]
    b_boiler = [r[4] for r in rows]
    print("main text kept (token recall vs _sources/*.rst.txt):")
    print(f"  extracted : mean {statistics.mean(recall):.3f}  median {statistics.median(recall):.3f}  "
          f"p10 {pct(recall, 0.10):.3f}  min {min(recall):.3f}")
    print(f"  whole page: mean {statistics.mean(b_recall):.3f}  median {statistics.median(b_recall):.3f}  "
          f"p10 {pct(b_recall, 0.10):.3f}   (baseline, no boilerplate removal)")
    print("boilerplate share (extracted tokens not in the rst):")
    print(f"  extracted : mean {statistics.mean(boiler):.3f}  median {statistics.median(boiler):.3f}  "
          f"p90 {pct(boiler, 0.90):.3f}  max {max(boiler):.3f}")
    print(f"  whole page: mean {statistics.mean(b_boiler):.3f}  median {statistics.median(b_boiler):.3f}  "
          f"p90 {pct(b_boiler, 0.90):.3f}")
    plain = [r for r in rows if not r[7]]
    n_toc = len(rows) - len(plain)
    if plain and n_toc:
        print(f"  without the {n_toc} toctree index pages (the titles they list are not in their rst):")
        for label, i in (("extracted", 2), ("whole page", 4)):
            xs = [r[i] for r in plain]
            print(f"  {label:10}: mean {statistics.mean(xs):.3f}  median {statistics.median(xs):.3f}  "
                  f"p90 {pct(xs, 0.90):.3f}")
    passages = [r[5] for r in rows]
    chars = [r[6] / max(1, r[5]) for r in rows]
    print(f"passages per page: median {statistics.median(passages):.0f}, max {max(passages)}; "
          f"mean passage {statistics.mean(chars):.0f} chars")
    print("lowest recall:", ", ".join(f"{r[0]} {r[1]:.2f}" for r in sorted(rows, key=lambda r: r[1])[:5]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    ap.add_argument("--pages", type=int, default=100)
    args = ap.parse_args()
    if not (args.root / "library").is_dir():
        print(f"no Python docs at {args.root} (Debian: apt-get install python3-doc)", file=sys.stderr)
        return 2
    names = pick_pages(args.root, args.pages)
    with FakeWebServer(root=args.root) as srv:
        trio.run(run_bench, args.root, names, srv.base_url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
