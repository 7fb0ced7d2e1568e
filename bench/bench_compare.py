"""A comparison against a fake Messages API with latency: 2 variants x N questions, cells run
concurrently; prints the experiment's wall time over the sum of its cell times (the goal: <= 0.3 with
--parallel 4; 1/parallel is the ideal) and the judge's share of the experiment's cost.

    python bench/bench_compare.py [--questions 20] [--parallel 4] [--latency 0.3] [--tps 200]

The real anthropic SDK talks to FakeAnthropicServer on 127.0.0.1 (base latency + output tokens at
`--tps` tokens/s); tests/fakes/research_play.py plays the lead (3 subagents, or 1 under the variant whose
prompt asks for it), the subagents (search, then submit) and the judge (rubric per report, pairwise
per question in both orders). Token counts are the fake's (characters / 4); prices are pricing.json's
for claude-opus-4-6 (lead), claude-haiku-4-5 (subagents) and claude-sonnet-4-5 (judge).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lead_agent.compare.experiment import CELLS, ExperimentDir, build_experiment  # noqa: E402
from lead_agent.compare.harness import run_comparison  # noqa: E402
from subagents.prompting import prompts_root  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropicServer  # noqa: E402
from tests.fakes.research_play import ResearchPlay  # noqa: E402

WORDS = ["lighthouse", "glacier", "volcano", "orchard", "harbour", "desert", "reef", "canyon", "prairie", "tundra",
         "delta", "fjord", "savanna", "marsh", "atoll", "steppe", "lagoon", "mesa", "geyser", "moor", "bayou", "butte"]


def setup(tmp: Path, n: int) -> tuple[Path, Path, Path]:
    corpus = tmp / "corpus"
    corpus.mkdir()
    for t in WORDS[:n]:
        body = " ".join(f"The {t} keeper wrote record {i} about the {t}, noting its weather every morning." for i in range(8))
        (corpus / f"{t}.md").write_text(f"# The {t}\n\n## About the {t}\n\n{body}\n")
    questions = tmp / "questions.jsonl"
    questions.write_text("".join(json.dumps({"id": f"b{i + 1}", "question": f"What did the {t} keeper record?",
                                             "answers": [f"{t} keeper"], "gold_sources": [f"{t}.md"]}) + "\n"
                                 for i, t in enumerate(WORDS[:n])))
    variant = tmp / "one-subagent"
    variant.mkdir()
    lead = (prompts_root() / "default" / "lead_system.txt").read_text()
    (variant / "lead_system.txt").write_text(lead + "\nUse at most 1 subagents per round.\n")
    return corpus, questions, variant


async def main_async(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        corpus, questions, variant = setup(tmp, args.questions)
        with FakeAnthropicServer(handler=ResearchPlay(default_tasks=3), base_latency=args.latency,
                                 tokens_per_second=args.tps) as srv:
            exp = build_experiment({"questions": str(questions), "corpus": [str(corpus)], "parallel": args.parallel,
                                    "lead_model": "claude-opus-4-6", "subagent_model": "claude-haiku-4-5",
                                    "judge_model": "claude-sonnet-4-5", "max_rounds": 1,
                                    "cache_dir": str(tmp / "cache")}, ["default", str(variant)])
            where = ExperimentDir(tmp / "runs" / exp.id)
            t0 = time.monotonic()
            result = await run_comparison(exp, where, progress=None, use_config_file=False,
                                          environ={"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": srv.base_url})
            total = time.monotonic() - t0
            if srv.refusals or srv.handler_errors:
                raise SystemExit(f"the fake refused or failed: {srv.refusals or srv.handler_errors}")
        log = [json.loads(x) for x in (where.path / CELLS).read_text().splitlines()]
        starts = [r["at"] for r in log if r["event"] == "start"]
        ends = [r for r in log if r["event"] == "end"]
        wall = max(r["at"] for r in ends) - min(starts)
        cell_sum = sum(r["seconds"] for r in ends)
        runs_cost = sum(r["metrics"]["cost_usd"] for r in result.rows)
        judge = result.judge
        failed = [r["cell"] for r in result.rows if r["status"] != "completed"]
    print(f"{len(ends)} cells (2 variants x {args.questions} questions), --parallel {args.parallel}; fake latency "
          f"{args.latency}s + output tokens at {args.tps} tok/s; {len(failed)} failed")
    print(f"cells: wall {wall:.2f}s, sum of cell times {cell_sum:.2f}s, mean cell {cell_sum / len(ends):.2f}s")
    ratio = wall / cell_sum
    print(f"experiment wall / sum of cell times: {ratio:.3f} (ideal 1/{args.parallel} = {1 / args.parallel:.3f}; "
          f"goal <= 0.3) -> {'meets' if ratio <= 0.3 else 'MISSES'} the goal")
    assert judge is not None and judge.cost_usd is not None
    share = judge.cost_usd / (judge.cost_usd + runs_cost)
    print(f"judge: {judge.judgments} judgments ({judge.failed} failed), ${judge.cost_usd:.4f}; runs ${runs_cost:.4f}; "
          f"judge's share of the experiment's cost {share * 100:.1f}%")
    print(f"whole comparison (cells, judge, statistics, report): {total:.2f}s")
    for c in result.comparisons:
        if c.metric in ("subagents", "cost_usd") and c.significant:
            print(f"  verdict: {c.verdict}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--latency", type=float, default=0.3, help="fake base latency, seconds")
    ap.add_argument("--tps", type=float, default=200.0, help="fake output tokens per second")
    args = ap.parse_args()
    if not 2 <= args.questions <= len(WORDS):
        ap.error(f"--questions must be 2..{len(WORDS)}")
    return trio.run(main_async, args)


if __name__ == "__main__":
    sys.exit(main())
