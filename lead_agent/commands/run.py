"""`research run QUESTION`: research a question and write a cited report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_EMPTY, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, err, out

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
    run.add_argument("--mode", choices=["multi", "single"], default=None,
                     help="multi: a lead delegates to subagents (default); single: one agent with every tool, no delegation")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")



def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The flags of `research run` as API options (None: not given, so env/config/defaults apply)."""
    return dict(
        corpus=list(args.corpus), runs_dir=args.runs_dir, max_subagents=args.max_subagents,
        max_rounds=args.max_rounds, concurrency=args.concurrency, lead_model=args.lead_model,
        subagent_model=args.subagent_model, prompts=args.prompts, cache_dir=args.cache_dir,
        provider=args.provider, base_url=args.base_url, requests_per_minute=args.requests_per_minute,
        tokens_per_minute=args.tokens_per_minute, web=args.web, web_cache=args.cache,
        allow_private_network=args.allow_private_network, estimate=args.estimate, mode=args.mode,
    )


class _RunDirSeen:
    """Remembers where the run was saved (for the message after Ctrl-C)."""

    def __init__(self) -> None:
        self.path: Path | None = None

    def on_event(self, record: Any) -> None:
        run_dir = getattr(record.event, "run_dir", None)
        if run_dir and self.path is None:
            self.path = Path(run_dir)


def main(args: argparse.Namespace) -> int:
    import trio

    from ..api import RunFailed, is_interrupt, research
    from ..progress import PlainProgress
    from ..settings import UsageError
    from ..terminal import neutralise

    seen = _RunDirSeen()
    observers: list[Any] = [seen]
    if not args.quiet:
        observers.append(PlainProgress(lambda msg: print(neutralise(msg), file=sys.stderr, flush=True)))
    try:
        result = trio.run(lambda: research(args.question, observers=observers, **run_options(args)))
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
        where = seen.path
        print("\nresearch: interrupted" + (f"; run saved to {where} (status: interrupted)" if where else ""),
              file=sys.stderr)
        return EXIT_INTERRUPTED
    out(result.report)
    if result.status == "estimated":
        print(f"Plan and estimate saved to {result.run_dir}/ (plan.v1.json, manifest.json); no subagents were run")
        return 0
    check = result.manifest.get("citation_check", {})
    print(f"Run saved to {result.run_dir}/ (report.md, manifest.json, {len(result.manifest['agents'])} transcripts; "
          f"citations {check.get('supported', 0)}/{check.get('markers', 0)} supported)")
    if result.status == "completed_empty":
        print(f"research: nothing found: no subagent returned a claim (status: completed_empty, exit {EXIT_EMPTY})",
              file=sys.stderr)
        return EXIT_EMPTY
    return 0
