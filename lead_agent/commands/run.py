"""`research run QUESTION`: research a question and write a cited report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, err

NAME = "run"


def add_parser(sub: Any) -> None:
    run = sub.add_parser("run", help="research a question and write a cited report")
    run.add_argument("question")
    run.add_argument("--corpus", action="append", default=[], metavar="PATH",
                     help="a folder of .html/.md/.rst/.txt documents (repeatable)")
    run.add_argument("--runs-dir", default="runs", metavar="DIR", help="where runs are saved (default: ./runs)")
    run.add_argument("--max-subagents", type=int, default=5, metavar="N", help="subagents per round (default 5)")
    run.add_argument("--max-rounds", type=int, default=2, metavar="N",
                     help="delegation rounds in all, the first included (default 2: one gap round)")
    run.add_argument("--concurrency", type=int, default=4, metavar="N", help="subagents running at once (default 4)")
    run.add_argument("--lead-model", metavar="NAME", help="model of the lead (default: extractive without an API key)")
    run.add_argument("--subagent-model", metavar="NAME", help="model of the subagents")
    run.add_argument("--provider", metavar="NAME", help="model provider: extractive, anthropic, openai")
    run.add_argument("--base-url", metavar="URL", help="API base URL (OpenAI-compatible endpoints, proxies)")
    run.add_argument("--web", action="store_true", help="give subagents web search (DuckDuckGo) and page fetch")
    run.add_argument("--cache", choices=["read-through", "record", "replay", "off"], default=None,
                     help="web cache: read-through with a TTL (default), record, replay (recorded results only), off")
    run.add_argument("--allow-private-network", action="store_true", default=None,
                     help="let fetch_page reach loopback/private/link-local addresses (intranet use)")
    run.add_argument("--estimate", action="store_true", help="write the plan and a cost estimate; run no subagents")
    run.add_argument("--requests-per-minute", type=float, metavar="N", help="model requests per minute, all agents")
    run.add_argument("--tokens-per-minute", type=float, metavar="N", help="model tokens per minute, all agents")
    run.add_argument("--prompts", default="default", metavar="NAME", help="prompt variant in prompts/ (default: default)")
    run.add_argument("--cache-dir", type=Path, metavar="DIR",
                     help="cache root: the corpus index in DIR/corpus, web responses in DIR/web "
                          "(default: $RESEARCH_CACHE_DIR or ~/.cache/research-agents)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    gov = run.add_argument_group("approval, replanning and budgets")
    gov.add_argument("--approve", action="store_true", default=None,
                     help="show each plan before its subagents start: approve, edit (in $EDITOR) or reject it")
    gov.add_argument("--plan-only", action="store_true", default=None,
                     help="stop after writing the plan (status awaiting_approval); continue with "
                          "`research approve RUN` or `research reject RUN`")
    gov.add_argument("--max-replans", type=int, metavar="N", help="new plans after failed tasks (default 2)")
    gov.add_argument("--max-cost", type=float, metavar="USD", help="stop the run at this cost (every token kind priced)")
    gov.add_argument("--max-tokens", type=int, metavar="N", help="stop the run at this many tokens (every kind)")
    gov.add_argument("--deadline", type=float, metavar="SECONDS", help="stop the run after this many seconds")



def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The flags of `research run` as API options (None: not given, so env/config/defaults apply)."""
    return dict(
        corpus=list(args.corpus), runs_dir=args.runs_dir, max_subagents=args.max_subagents,
        max_rounds=args.max_rounds, concurrency=args.concurrency, lead_model=args.lead_model,
        subagent_model=args.subagent_model, prompts=args.prompts, cache_dir=args.cache_dir,
        provider=args.provider, base_url=args.base_url, requests_per_minute=args.requests_per_minute,
        tokens_per_minute=args.tokens_per_minute, web=args.web, web_cache=args.cache,
        allow_private_network=args.allow_private_network, estimate=args.estimate,
        plan_only=args.plan_only, max_replans=args.max_replans, max_cost=args.max_cost, max_tokens=args.max_tokens,
        deadline=args.deadline,
    )


class _RunDirSeen:
    """Remembers where the run was saved (for the message after Ctrl-C)."""

    def __init__(self) -> None:
        self.path: Path | None = None

    def on_event(self, record: Any) -> None:
        run_dir = getattr(record.event, "run_dir", None)
        if run_dir and self.path is None:
            self.path = Path(run_dir)


def reviewer() -> Any:
    """The terminal plan reviewer (--approve), editing in $VISUAL / $EDITOR (read here, at the entry point)."""
    import os

    from ..terminal_review import TerminalReviewer

    return TerminalReviewer(editor=os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


def main(args: argparse.Namespace) -> int:
    from ..api import research

    seen = _RunDirSeen()
    observers: list[Any] = [seen]
    if not args.quiet:
        from ..progress import PlainProgress

        observers.append(PlainProgress(lambda msg: print(msg, file=sys.stderr, flush=True)))
    options = run_options(args)
    if args.approve:
        options["approve"] = reviewer()
    return execute_run(lambda: research(args.question, observers=observers, **options), seen)


def execute_run(start: Any, seen: Any) -> int:
    """Run `start()` (a research, resume or approve) in trio; SIGTERM and SIGHUP end it like Ctrl-C.
    Prints the outcome; returns the exit code."""
    import trio

    from ..api import RunFailed, is_interrupt
    from ..settings import UsageError
    from .common import run_until_signal

    try:
        result, signum = trio.run(run_until_signal, start)
    except UsageError as e:
        err(str(e))
        return EXIT_USAGE
    except RunFailed as e:
        err(f"run failed: {e}")
        print(f"Run saved to {e.run_dir} (status: failed)", file=sys.stderr)
        return EXIT_FAILED
    except (KeyboardInterrupt, BaseExceptionGroup) as e:
        if not is_interrupt(e):
            raise
        signum = None
        result = None
    if result is None:
        where = seen.path
        print("\nresearch: interrupted" + (f"; run saved to {where} (status: interrupted; "
                                           f"continue it with `research resume {where}`)" if where else ""),
              file=sys.stderr)
        return 128 + signum if signum else EXIT_INTERRUPTED
    return finish(result)


def finish(result: Any) -> int:
    """Print a finished run's report and where it was saved."""
    if result.status == "awaiting_approval":
        print(f"Plan saved to {result.run_dir}/ ({', '.join(result.manifest.get('plans', []))}); no subagents ran.\n"
              f"Edit the plan file if you like, then: research approve {result.run_dir}   "
              f"(or: research reject {result.run_dir})")
        return 0
    if result.status == "rejected":
        print(f"The plan was rejected; no subagents ran. Run saved to {result.run_dir}/")
        return 0
    print(result.report)
    stopped = (result.manifest.get("budget") or {}).get("stopped_by")
    if stopped:
        print(f"research: the run's {stopped} budget was reached; the report is written from what was found",
              file=sys.stderr)
    if result.status == "estimated":
        print(f"Plan and estimate saved to {result.run_dir}/ (plan.v1.json, manifest.json); no subagents were run")
        return 0
    check = result.manifest.get("citation_check", {})
    print(f"Run saved to {result.run_dir}/ (report.md, manifest.json, {len(result.manifest['agents'])} transcripts; "
          f"citations {check.get('supported', 0)}/{check.get('markers', 0)} supported)")
    return 0
