"""Answer quality of the offline (extractive) research runs against gold answers, next to a plain
BM25 baseline computed in the same run, per corpus and per split (dev / test / holdout / holdout2 reported apart).

    python bench/bench_quality.py [--sets python,postgresql,r] [--split dev|test|holdout|holdout2|all] [--limit N]
    python bench/bench_quality.py --questions bench/probes/python_unanswerable.jsonl --corpus /usr/share/doc/python3.11/html
    python bench/bench_quality.py --questions FILE.jsonl --corpus ROOT   # any question set

Question sets are lead_agent/compare/data/*.jsonl (format in its README). For every question the
offline research runs once (warm index: the index is brought up to date before timing starts) and
the plain baseline takes the BM25 top-3 passages for the question as its answer.

Figures (answerable questions unless said otherwise):
  gold cited     the report cites a page of `gold_sources` (baseline: one of the 3 passages is on one); a
                 gold source in a PDF names its page (`R-intro.pdf#page=17`), met by a passage on that page
  gold in answer a citation in the report's Answer section is on a gold page
  F1 / recall    answer-token F1 and recall of the Answer section against the best gold alternative
                 (lower-cased alphanumeric tokens, articles dropped; the parts of an alternative joined)
  not found      unanswerable questions whose run found nothing (no subagent returned a claim)
  false nf       answerable questions whose run found nothing
  overlap        mean Jaccard of the passages retrieved by two sibling subagents of one round
  cut            sentences in the Answer and Details sections that do not end a sentence (a line
                 ending in ":" without the code it introduces counts as cut)
  in report      share of the subagents' claims that the report uses
  time           wall seconds per research run (goal < 1 s)
Goals (issue 11): gold in answer >= 85%, not found >= 90% with false nf <= 5%, overlap <= 0.25,
no cut sentences, F1 >= 1.5x the baseline's. Measures, never asserts.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parents[1] / "lead_agent" / "compare" / "data"
SETS = {"python": ("python_docs.jsonl", "/usr/share/doc/python3.11/html"),
        "postgresql": ("postgresql_docs.jsonl", "/usr/share/doc/postgresql-doc-15/html"),
        "r": ("r_docs.jsonl", "/usr/share/R/doc/manual")}  # (Debian r-doc-pdf: PDF manuals)
SPLITS = ("dev", "test", "holdout", "holdout2", "probe")  # probe: bench/probes, outside the shipped sets
HELD_OUT = ("holdout", "holdout2")  # reported in totals only, never per question
ARTICLES = {"a", "an", "the"}
REF = re.compile(r"^(\d+)\. .* — `([^`]+)` \((S\d+)\)$")
MARK = re.compile(r"\[(\d+(?:\]\[\d+)*)\]")
CLAIM_END = re.compile(r"[.!?)\"'`”’]$")


# ---------------------------------------------------------------- metrics

def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in ARTICLES]


def f1_recall(answer: str, golds: list[str]) -> tuple[float, float]:
    """Best answer-token F1 and recall over the gold alternatives ("; " parts joined)."""
    got = tokens(answer)
    best_f1 = best_recall = 0.0
    for gold in golds:
        want = tokens(gold.replace("; ", " "))
        if not want or not got:
            continue
        common = sum(min(got.count(t), want.count(t)) for t in set(want))
        recall, precision = common / len(want), common / len(got)
        f1 = 0.0 if common == 0 else 2 * precision * recall / (precision + recall)
        best_f1, best_recall = max(best_f1, f1), max(best_recall, recall)
    return best_f1, best_recall


def section(report: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", report, re.S | re.M)
    return m.group(1) if m else ""


def pages_of(passage_id: str, corpus) -> set[str]:
    """What a passage is on, as gold sources name it: 'html-9314/library/shutil.html#4' (a passage id,
    root tag 'html-9314') -> {'library/shutil.html'}; a passage of a PDF -> {'R-intro.pdf#page=17', …}, a
    page for each page it is on."""
    path = passage_id.partition("/")[2].rsplit("#", 1)[0]
    pages = corpus.pages_of(passage_id)
    return {f"{path}#page={n}" for n in pages} if pages else {path}


def gold_pages(q: dict, index) -> set[str]:
    """A question's gold sources, and the same pages in the file the index holds for a gold file it did not index
    because another file has its text (refman.pdf: fullrefman.pdf is indexed)."""
    copies = {}
    for ix in index.indexes:
        copies.update(ix.copies())
    gold = set(q["gold_sources"])
    for g in list(gold):
        path, sep, page = g.partition("#")
        if path in copies:
            gold.add(copies[path] + sep + page)
    return gold


def references(report: str, passage_ids: dict[str, str], corpus) -> dict[str, set[str]]:
    """Reference number -> the pages of the passage it cites (`passage_ids`: source id -> passage id)."""
    refs = {}
    for line in section(report, "References").splitlines():
        m = REF.match(line.strip())
        if m and m.group(3) in passage_ids:
            refs[m.group(1)] = pages_of(passage_ids[m.group(3)], corpus)
    return refs


def cited_numbers(text: str) -> set[str]:
    return {n for m in MARK.finditer(text) for n in re.findall(r"\d+", m.group(0))}


def claim_sentences(report: str) -> list[str]:
    """Prose lines of the Answer and Details sections (no table rows, code or headings), markers
    removed; a line ending in ":" counts only when no code block follows it (then it is cut)."""
    out, fence = [], False
    for name in ("Answer", "Details", "Findings"):
        lines = section(report, name).splitlines()
        for i, line in enumerate(lines):
            s = line.strip()
            if s.startswith("```"):
                fence = not fence
                continue
            if fence or not s or s.startswith(("#", "|", ">")):
                continue
            s = MARK.sub("", re.sub(r"^[-*]\s+", "", s)).strip()
            following = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
            if s and not (s.endswith(":") and following.startswith("```")):
                out.append(s)
    return out


def is_cut(sentence: str) -> bool:
    return "…" in sentence or not CLAIM_END.search(sentence.rstrip())


# ---------------------------------------------------------------- one question

@dataclass
class Outcome:
    qid: str
    split: str
    answerable: bool
    not_found: bool = False
    gold_cited: bool = False
    gold_in_answer: bool = False
    f1: float = 0.0
    recall: float = 0.0
    cut: int = 0
    sentences: int = 0
    overlaps: list[float] = field(default_factory=list)
    claims: int = 0
    claims_used: int = 0
    seconds: float = 0.0


def sibling_overlaps(run_dir: Path) -> list[float]:
    from subagents.runs import read_run

    run = read_run(run_dir)
    by_agent: dict[str, set[str]] = {}
    for src in run.sources:
        for agent in src.retrieved_by:
            by_agent.setdefault(agent, set()).add(src.key)
    rounds: dict[int, list[str]] = {}
    for a in run.trace.ordered_agents():
        if a.round is not None:
            rounds.setdefault(a.round, []).append(a.agent_id)
    out = []
    for ids in rounds.values():
        for x, y in itertools.combinations(ids, 2):
            sx, sy = by_agent.get(x, set()), by_agent.get(y, set())
            if sx or sy:
                out.append(len(sx & sy) / len(sx | sy))
    return out


def score_method(q: dict, corpus: str, runs: Path, cache: Path, index) -> Outcome:
    from lead_agent.api import research_sync
    from subagents.runs import read_run

    t = time.perf_counter()
    result = research_sync(q["question"], corpus=[corpus], runs_dir=runs, cache_dir=cache, use_config_file=False,
                           environ={})
    o = Outcome(q["id"], q["split"], bool(q["answers"]), seconds=time.perf_counter() - t)
    report = result.report
    run = read_run(result.run_dir)
    claims = [c.text for a in run.trace.ordered_agents() if a.findings for c in a.findings.claims]
    o.not_found = not claims
    o.claims = len(claims)
    o.claims_used = sum(1 for c in claims if c in report)
    refs = references(report, {s.id: s.locator for s in run.sources}, index)
    gold = gold_pages(q, index)
    o.gold_cited = any(p & gold for p in refs.values())
    answer = section(report, "Answer")
    o.gold_in_answer = any(refs.get(n, set()) & gold for n in cited_numbers(answer))
    o.f1, o.recall = f1_recall(MARK.sub(" ", answer), q["answers"])
    sents = claim_sentences(report)
    o.sentences, o.cut = len(sents), sum(is_cut(s) for s in sents)
    o.overlaps = sibling_overlaps(result.run_dir)
    return o


def score_baseline(q: dict, corpus) -> Outcome:
    o = Outcome(q["id"], q["split"], bool(q["answers"]))
    hits = corpus.search(q["question"], 3)
    pages = {page for p in hits for page in pages_of(p.passage_id, corpus)}
    o.gold_cited = o.gold_in_answer = bool(pages & gold_pages(q, corpus))
    o.f1, o.recall = f1_recall(" ".join(p.text for p in hits), q["answers"])
    o.sentences, o.cut = len(hits), sum(is_cut(" ".join(p.text.split())) for p in hits)
    return o


# ---------------------------------------------------------------- figures

def pct(xs: list[bool]) -> str:
    return f"{100 * sum(xs) / len(xs):5.1f}%" if xs else "    –"


def mean(xs: list[float]) -> str:
    return f"{statistics.mean(xs):.3f}" if xs else "–"


def figures(rows: list[Outcome]) -> dict[str, str]:
    ans = [r for r in rows if r.answerable]
    una = [r for r in rows if not r.answerable]
    overlaps = [x for r in rows for x in r.overlaps]
    return {
        "n": f"{len(ans)}+{len(una)}",
        "gold cited": pct([r.gold_cited for r in ans]),
        "gold in answer": pct([r.gold_in_answer for r in ans]),
        "F1": mean([r.f1 for r in ans]),
        "recall": mean([r.recall for r in ans]),
        "not found": pct([r.not_found for r in una]),
        "false nf": pct([r.not_found for r in ans]),
        "overlap": f"{mean(overlaps)}/{len(overlaps)}p",
        "cut": f"{sum(r.cut for r in rows)}/{sum(r.sentences for r in rows)}",
        "in report": pct([True] * sum(r.claims_used for r in rows) + [False] * sum(r.claims - r.claims_used for r in rows)),
    }


def print_table(title: str, groups: dict[str, tuple[list[Outcome], list[Outcome]]]) -> None:
    cols = ["n", "gold cited", "gold in answer", "F1", "recall", "not found", "false nf", "overlap", "cut", "in report"]
    print(f"\n{title}")
    print(f"{'':24}" + "".join(f"{c:>16}" for c in cols))
    for name, (method, base) in groups.items():
        for label, rows in (("method", method), ("BM25 top-3", base)):
            f = figures(rows)
            if label == "BM25 top-3":
                f.update({"not found": "    –", "false nf": "    –", "overlap": "–", "in report": "–"})
            print(f"{name + ' ' + label:24}" + "".join(f"{f[c]:>16}" for c in cols))
        fm, fb = figures(method)["F1"], figures(base)["F1"]
        if fm != "–" and fb != "–" and float(fb) > 0:
            print(f"{'':24}F1 ratio method/baseline: {float(fm) / float(fb):.2f} (goal >= 1.5)")


def load(path: Path, split: str, limit: int | None) -> list[dict]:
    qs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    qs = [q for q in qs if split == "all" or q["split"] == split]
    return qs[:limit] if limit else qs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="python,postgresql,r", help="comma-separated: python, postgresql, r")
    ap.add_argument("--questions", type=Path, help="a question file (with --corpus) instead of --sets")
    ap.add_argument("--corpus", help="the corpus root of --questions")
    ap.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    ap.add_argument("--limit", type=int, help="the first N questions of each set (after --split)")
    ap.add_argument("--cache-dir", type=Path, help="index cache root (default: the user's, so the index is warm)")
    ap.add_argument("--verbose", action="store_true",
                    help="one line per question (not for holdouts: a held-out question is only counted)")
    args = ap.parse_args()

    from lead_agent.api import open_encoder
    from lead_agent.settings import resolve_embedding
    from subagents.corpus import Corpus
    from subagents.corpus.index import default_cache_dir

    if args.questions:
        if not args.corpus:
            ap.error("--questions needs --corpus")
        plan = [(args.questions.stem, args.questions, args.corpus)]
    else:
        plan = [(name, DATA / SETS[name][0], SETS[name][1]) for name in args.sets.split(",") if name in SETS]
    cache = args.cache_dir or default_cache_dir()
    all_times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, root in plan:
            if not Path(root).is_dir():
                print(f"{name}: corpus not found at {root}: skipped")
                continue
            t0 = time.perf_counter()
            # once with the runs' encoder: a fresh index embeds its passages here, not inside the first timed run;
            # the baseline then searches by words alone
            warm = Corpus.open([Path(root)], cache_dir=cache, encoder=open_encoder(resolve_embedding(None)))
            embedded = sum(st.vectors or 0 for st in warm.stats.values())  # what the update left with a vector
            warm.close()
            corpus = Corpus.open([Path(root)], cache_dir=cache)
            print(f"{name}: index ready in {time.perf_counter() - t0:.1f}s ({corpus.passage_count()} passages, "
                  f"{embedded} embedded)")
            qs = load(path, args.split, args.limit)
            held_out = path.stem.endswith("_holdout")
            method, base = [], []
            for q in qs:
                m = score_method(q, root, Path(tmp) / "runs", cache, corpus)
                b = score_baseline(q, corpus)
                method.append(m)
                base.append(b)
                if args.verbose and not held_out and q["split"] not in HELD_OUT:
                    print(f"  {q['id']} {q['split']:4} {'nf' if m.not_found else '  '} gold-ans={int(m.gold_in_answer)} cited={int(m.gold_cited)} "
                          f"f1={m.f1:.2f} base-f1={b.f1:.2f} {m.seconds:.2f}s  {q['question'][:70]}")
            corpus.close()
            all_times += [m.seconds for m in method]
            groups = {s: ([m for m in method if m.split == s], [b for b in base if b.split == s])
                      for s in SPLITS if any(m.split == s for m in method)}
            print_table(f"{name} ({path.name}, {len(qs)} questions)", groups)
    if all_times:
        print(f"\nwarm offline run: median {statistics.median(all_times):.2f}s, max {max(all_times):.2f}s per question "
              f"(goal < 1 s: {'PASS' if statistics.median(all_times) < 1.0 else 'MISS'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
