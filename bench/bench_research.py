"""Offline research benchmark on python3-doc: per question, wall time, subagents, passages cited and
citation-check pass rate. Target: each run <= 20 s on a 2-core machine.

    python bench/bench_research.py [--corpus /usr/share/doc/python3.11/html] [--questions N]

Uses a fresh index cache (its build time is printed separately) and a temporary runs directory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

QUESTIONS = [
    "What happens to the other tasks in an asyncio TaskGroup when one of them raises an exception?",
    "Compare lists and tuples",
    "How does the with statement call __enter__ and __exit__?",
    "What is the difference between deepcopy and copy?",
    "Why does Python have a global interpreter lock?",
    "How do I read a CSV file with a header row?",
    "What does functools.lru_cache do with its maxsize argument?",
    "Compare threading, multiprocessing and asyncio",
    "How are exceptions chained with raise from?",
    "What does the walrus operator do?",
]
TARGET_S = 20.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/usr/share/doc/python3.11/html")
    ap.add_argument("--questions", type=int, default=len(QUESTIONS), help="run only the first N questions")
    args = ap.parse_args()
    if not Path(args.corpus).is_dir():
        print(f"corpus not found: {args.corpus} (apt-get install -y python3-doc)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        from lead_agent.api import research_sync
        from subagents.corpus import Corpus

        t0 = time.perf_counter()
        Corpus.open([Path(args.corpus)], cache_dir=cache).close()
        print(f"index build (fresh cache): {time.perf_counter() - t0:.1f}s\n")
        print(f"{'wall s':>7} {'subs':>4} {'rounds':>6} {'cited':>5} {'pass':>5}  question")
        walls, rates = [], []
        for q in QUESTIONS[: args.questions]:
            t = time.perf_counter()
            r = research_sync(q, corpus=[args.corpus], runs_dir=Path(tmp) / "runs", cache_dir=cache,
                              use_config_file=False, environ={})  # offline: no key, no config
            wall = time.perf_counter() - t
            m = r.manifest
            subs = sum(1 for a in m["agents"] if a["role"] == "subagent")
            check = m["citation_check"]
            rate = check["pass_rate"] if check["pass_rate"] is not None else 0.0
            walls.append(wall)
            rates.append(rate)
            print(f"{wall:7.2f} {subs:4d} {len(m['plans']):6d} {len(check['cited_sources']):5d} {rate:5.2f}  {q[:70]}")
        print(f"\nwall: median {statistics.median(walls):.2f}s, max {max(walls):.2f}s "
              f"(target <= {TARGET_S:.0f}s each: {'PASS' if max(walls) <= TARGET_S else 'MISS'})")
        print(f"citation pass rate: mean {statistics.mean(rates):.3f}")
        print(json.dumps({"max_wall_s": round(max(walls), 3), "mean_pass_rate": round(statistics.mean(rates), 4)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
