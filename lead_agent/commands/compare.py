"""`research compare`: run questions under several variants (prompt folders plus settings), then
compare them: metrics from the transcripts, an optional judge, paired statistics, summary.md and a
self-contained report.html.

    research compare --variant default --variant terse --questions questions.jsonl --repeats 2
    research compare experiment.toml
    research compare --resume runs/compare-<id>
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, err

NAME = "compare"
RESUME_OK = {"parallel", "max_cost", "quiet", "resume"}  # flags that may change on --resume


def add_parser(sub: Any) -> None:
    p = sub.add_parser("compare", help="compare prompt variants on a question set: metrics, judge, statistics",
                       description="Run every question under every variant (repeats too), on identical sources, "
                                   "and compare: cost, effort, citations, gold answers, an optional judge, "
                                   "paired statistics. Writes a comparison directory with every run.")
    p.add_argument("experiment", nargs="?", type=Path, help="an experiment file (TOML); flags override it")
    p.add_argument("--variant", action="append", default=[], metavar="SPEC",
                   help="a prompt variant: a folder in prompts/, a path, or 'single' (built in: one agent, no "
                        "delegation); settings after a colon: terse:max_subagents=2,lead_model=NAME (repeatable)")
    p.add_argument("--questions", metavar="FILE|SET",
                   help="a JSONL file, or python-docs, postgresql-docs, r-docs, deep-research-bench, fanoutqa")
    p.add_argument("--split", choices=["dev", "test", "holdout", "holdout2"], help="only questions of this split")
    p.add_argument("--tag", dest="tags", action="append", metavar="TAG", help="only questions with this tag")
    p.add_argument("--limit", type=int, metavar="N", help="the first N questions (after --split / --tag)")
    p.add_argument("--repeats", type=int, metavar="N", help="runs per question and variant (default 1)")
    p.add_argument("--parallel", type=int, metavar="N", help="cells running at once (default 4)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="start no new cell once the experiment spent this")
    p.add_argument("--judge-model", metavar="NAME", help="a language model that scores and compares the reports")
    p.add_argument("--resume", type=Path, metavar="DIR", help="finish an interrupted comparison; done cells are kept")
    p.add_argument("--runs-dir", metavar="DIR", help="where the comparison directory goes (default ./runs)")
    p.add_argument("--corpus", action="append", metavar="PATH", help="corpus folder (default: the set's own)")
    p.add_argument("--web", action="store_true", default=None, help="give subagents the web (a shared cache)")
    p.add_argument("--lead-model", metavar="NAME", help="lead model of every variant that does not set its own")
    p.add_argument("--subagent-model", metavar="NAME", help="subagent model of every variant that does not set its own")
    p.add_argument("--provider", metavar="NAME", help="model provider: extractive, anthropic, openai")
    p.add_argument("--base-url", metavar="URL", help="API base URL (OpenAI-compatible endpoints, proxies)")
    p.add_argument("--max-subagents", type=int, metavar="N", help="subagents per round, unless a variant sets it")
    p.add_argument("--max-rounds", type=int, metavar="N", help="delegation rounds in all, unless a variant sets it")
    p.add_argument("--concurrency", type=int, metavar="N", help="subagents running at once within a run")
    p.add_argument("--requests-per-minute", type=float, metavar="N", help="one limit shared by every cell")
    p.add_argument("--tokens-per-minute", type=float, metavar="N", help="one limit shared by every cell")
    p.add_argument("--cache-dir", type=Path, metavar="DIR", help="cache root (the corpus index)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


FLAG_KEYS = ("questions", "split", "tags", "limit", "repeats", "parallel", "max_cost", "judge_model", "runs_dir",
             "corpus", "web", "lead_model", "subagent_model", "provider", "base_url", "max_subagents", "max_rounds",
             "concurrency", "requests_per_minute", "tokens_per_minute", "cache_dir")


def _given(args: argparse.Namespace) -> dict[str, Any]:
    return {k: getattr(args, k) for k in FLAG_KEYS if getattr(args, k) is not None}


def _experiment(args: argparse.Namespace) -> tuple[Any, Any, bool]:
    from ..compare.experiment import ExperimentDir, build_experiment, read_experiment_file
    from ..settings import UsageError

    given = _given(args)
    if args.resume is not None:
        extra = sorted(set(given) - RESUME_OK) + (["--variant"] if args.variant else []) + \
            (["EXPERIMENT"] if args.experiment else [])
        if extra:
            raise UsageError(f"--resume takes the experiment as it was saved; drop {', '.join(extra)}")
        where = ExperimentDir(args.resume)
        exp = where.load()
        if given.get("parallel") is not None and given["parallel"] < 1:
            raise UsageError(f"--parallel must be at least 1 (got {given['parallel']})")
        if given.get("max_cost") is not None and not given["max_cost"] > 0:
            raise UsageError(f"--max-cost must be a positive amount of USD (got {given['max_cost']})")
        changes = {k: given[k] for k in ("parallel", "max_cost") if k in given}
        if changes:
            import dataclasses

            exp = dataclasses.replace(exp, **changes)
        return exp, where, True
    values = read_experiment_file(args.experiment) if args.experiment else {}
    values.update(given)
    exp = build_experiment(values, list(args.variant))
    runs_dir = Path(values.get("runs_dir") or "runs")
    if not str(runs_dir).strip():
        raise UsageError("--runs-dir is empty")
    return exp, ExperimentDir(runs_dir / exp.id), False


def main(args: argparse.Namespace) -> int:
    import trio

    from ..api import is_interrupt
    from ..compare.harness import run_comparison
    from ..settings import UsageError
    from .common import run_until_signal

    where = None
    try:
        exp, where, resume = _experiment(args)
        result, signum = trio.run(run_until_signal, lambda: run_comparison(exp, where, resume=resume,
                                                                           progress=None if args.quiet else _stderr))
    except UsageError as e:
        err(str(e))
        return EXIT_USAGE
    except (KeyboardInterrupt, BaseExceptionGroup) as e:
        if not is_interrupt(e):
            raise
        result, signum = None, None
    if result is None:  # Ctrl-C, SIGTERM or SIGHUP: the cells in flight ended as interrupted
        hint = f"; finish it with: research compare --resume {where.path}" if where and where.path.is_dir() else ""
        print(f"\nresearch: interrupted{hint}", file=sys.stderr)
        return 128 + signum if signum else EXIT_INTERRUPTED
    print(result.summary)
    print(f"Comparison saved to {result.path}/ (summary.md, results.jsonl, report.html, runs/)")
    failed = sum(1 for r in result.rows if r["status"] not in ("completed", "completed_empty"))
    return EXIT_FAILED if failed and failed == len(result.rows) else 0


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
