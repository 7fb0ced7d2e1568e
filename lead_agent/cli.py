"""The `research` command: `run` a research, `show` a run, `tool` to try an agent tool by hand.

User mistakes print one line `research: error: …` and exit 2 with nothing written; a run that
starts and fails exits 1 and keeps its directory; Ctrl-C exits 130 with the run marked
interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"research: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="research", description="Multi-agent research over a local corpus (and the web).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

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

    show = sub.add_parser("show", help="show a run: plans, agents, tool calls, findings, usage, citations")
    show.add_argument("run", help="a run id (under --runs-dir) or a run directory")
    show.add_argument("--runs-dir", default="runs", metavar="DIR")

    try:
        from .cli_tool import add_tool_parser
    except ImportError:
        pass
    else:
        add_tool_parser(sub)
    return p


def _err(msg: str) -> None:
    print(f"research: error: {msg}", file=sys.stderr)


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The flags of `research run` as API options (None: not given, so env/config/defaults apply)."""
    return dict(
        corpus=list(args.corpus), runs_dir=args.runs_dir, max_subagents=args.max_subagents,
        max_rounds=args.max_rounds, concurrency=args.concurrency, lead_model=args.lead_model,
        subagent_model=args.subagent_model, prompts=args.prompts, cache_dir=args.cache_dir,
        provider=args.provider, base_url=args.base_url, requests_per_minute=args.requests_per_minute,
        tokens_per_minute=args.tokens_per_minute, web=args.web, web_cache=args.cache,
        allow_private_network=args.allow_private_network, estimate=args.estimate,
    )


class _RunDirSeen:
    """Remembers where the run was saved (for the message after Ctrl-C)."""

    def __init__(self) -> None:
        self.path: Path | None = None

    def on_event(self, record: Any) -> None:
        run_dir = getattr(record.event, "run_dir", None)
        if run_dir and self.path is None:
            self.path = Path(run_dir)


def cmd_run(args: argparse.Namespace) -> int:
    import trio

    from .api import RunFailed, is_interrupt, research
    from .progress import PlainProgress
    from .settings import UsageError

    seen = _RunDirSeen()
    observers: list[Any] = [seen]
    if not args.quiet:
        observers.append(PlainProgress(lambda msg: print(msg, file=sys.stderr, flush=True)))
    try:
        result = trio.run(lambda: research(args.question, observers=observers, **run_options(args)))
    except UsageError as e:
        _err(str(e))
        return EXIT_USAGE
    except RunFailed as e:
        _err(f"run failed: {e}")
        print(f"Run saved to {e.run_dir} (status: failed)", file=sys.stderr)
        return EXIT_FAILED
    except (KeyboardInterrupt, BaseExceptionGroup) as e:
        if not is_interrupt(e):
            raise
        where = seen.path
        print("\nresearch: interrupted" + (f"; run saved to {where} (status: interrupted)" if where else ""),
              file=sys.stderr)
        return EXIT_INTERRUPTED
    print(result.report)
    if result.status == "estimated":
        print(f"Plan and estimate saved to {result.run_dir}/ (plan.v1.json, manifest.json); no subagents were run")
        return 0
    check = result.manifest.get("citation_check", {})
    print(f"Run saved to {result.run_dir}/ (report.md, manifest.json, {len(result.manifest['agents'])} transcripts; "
          f"citations {check.get('supported', 0)}/{check.get('markers', 0)} supported)")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from .rundir import resolve_run
    from .show import render_run

    try:
        path = resolve_run(args.run, Path(args.runs_dir))
    except FileNotFoundError as e:
        _err(str(e))
        return EXIT_USAGE
    try:
        text = render_run(path)
    except (OSError, ValueError, LookupError, TypeError, AttributeError) as e:  # a corrupt or half-written run
        _err(f"cannot show run {path}: {type(e).__name__}: {e}")
        return EXIT_FAILED
    print(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "show":
        return cmd_show(args)
    if args.command == "tool":
        from .cli_tool import run_tool_command

        return run_tool_command(args)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
