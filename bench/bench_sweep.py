"""Robustness of the offline research runs on questions nobody wrote for the method: questions made from
random section headings of a corpus in twenty shapes (what-is, how-to, why, comparisons, three-part
questions, quoted, version-prefixed, bare headings, "???"), each run once.

    python bench/bench_sweep.py [--corpus ROOT] [--n N] [--seed S] [--cache-dir DIR] [--show-empty]

Prints the share of runs that completed, found nothing (completed_empty), failed, or crashed (an exception
that is not a run failure), the share of quoted sentences that are cut, and the share of runs slower than
1 s. A robust method fails and crashes on none and cuts no sentence. Measures, never asserts.
"""

from __future__ import annotations

import argparse
import random
import re
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SHAPES = [
    "What is {}?", "How do I work with {}?", "Why does {} matter?", "What is the difference between {} and {}?",
    "What is {}, and how do I use {}?", "Which kinds of {} are there?", "{} vs {}: which one should I use?",
    "How can I configure {} when using {}?", "Is {} faster than {}?", "Explain {} in detail, with examples of {}.",
    "What is {}? How do I use it? Why does it exist?", "Which {} options are there, and what does {} default to?",
    "In version 3.11, how does {} behave?", "Can you show me an example of {} with `{}`?",
    "\"{}\" — what does it mean?", "What's the relationship between {}, {} and {}?", "how to {} ???", "{}",
    "When should I prefer {} over {}, and why?", "Does {} support {}? If not, what should I use instead?",
]


def headings(root: Path, cache: Path) -> list[str]:
    """The corpus's section headings of 2 to 8 words (section numbers dropped), from its index."""
    from subagents.corpus import Corpus

    with Corpus.open([root], cache / "corpus") as corpus:
        db = sqlite3.connect(corpus.indexes[0].db_path)
        rows = db.execute("SELECT heading FROM chunks").fetchall()
        db.close()
    out = {re.sub(r"^[\dA-Z]{0,2}[\d.]+\s*", "", h.rsplit(" > ", 1)[-1]).strip() for (h,) in rows}
    return sorted(h for h in out if 2 <= len(h.split()) <= 8)


def questions(heads: list[str], n: int, seed: int) -> list[str]:
    """`n` questions, the shapes in turn (those needing more headings than the corpus has left out)."""
    rnd = random.Random(seed)
    shapes = [s for s in SHAPES if s.count("{}") <= len(heads)]
    return [shapes[i % len(shapes)].format(*rnd.sample(heads, shapes[i % len(shapes)].count("{}"))) for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="/usr/share/doc/python3.11/html")
    ap.add_argument("--n", type=int, default=100, help="questions (default 100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "research-agents")
    ap.add_argument("--show-empty", action="store_true", help="print each question that found nothing")
    args = ap.parse_args()
    from bench_quality import claim_sentences, is_cut
    from lead_agent import research_sync
    from lead_agent.api import RunFailed

    root = Path(args.corpus)
    heads = headings(root, args.cache_dir)
    if not heads:
        print(f"bench_sweep: {root} has no section heading of 2-8 words to make questions from", file=sys.stderr)
        return 2
    qs = questions(heads, args.n, args.seed)
    counts: Counter[str] = Counter()
    sentences = cut = slow = 0
    with tempfile.TemporaryDirectory() as tmp:
        for q in qs:
            start = time.perf_counter()
            try:
                result = research_sync(q, corpus=[root], runs_dir=Path(tmp), cache_dir=args.cache_dir,
                                       use_config_file=False, environ={})
                counts[result.manifest["status"]] += 1
                if args.show_empty and result.manifest["status"] == "completed_empty":
                    print(f"  empty: {q[:100]!r}")
                got = claim_sentences(result.report)
                sentences += len(got)
                for s in got:
                    if is_cut(s):
                        cut += 1
                        print(f"  cut: {q[:60]!r}: {s[:120]!r}")
            except RunFailed as e:
                counts["failed"] += 1
                print(f"  failed: {q[:60]!r}: {str(e)[:120]}")
            except Exception as e:  # noqa: BLE001 — a crash is what this bench counts
                counts["crash"] += 1
                print(f"  crash: {q[:60]!r}: {e!r}"[:200])
            slow += time.perf_counter() - start > 1.0
    n = max(1, len(qs))
    print(f"{len(qs)} questions from {root} (seed {args.seed})")
    for status in ("completed", "completed_empty", "failed", "crash"):
        print(f"  {status:16} {counts[status]:4}  {counts[status] / n:6.1%}")
    print(f"  cut sentences    {cut:4} of {sentences}  {cut / max(1, sentences):6.2%}")
    print(f"  slower than 1 s  {slow:4}  {slow / n:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
