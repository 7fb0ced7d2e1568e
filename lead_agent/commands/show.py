"""`research show RUN`: a run read back from its directory (finished, still running or crashed):
the plans, a timeline of every agent, tool calls, findings, usage and the citation check; one
agent's transcript (`--agent`), the typed run as JSON (`--json`), a self-contained HTML trace
viewer (`--html`), following a run as it grows (`--follow`), or its OpenTelemetry spans (`--otel`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_USAGE, err, out

NAME = "show"

EXAMPLES = """\
examples:
  research show runs/20260101-120000-compare-lists-and-tuples-1a2b
  research show 20260101-120000-compare-lists-and-tuples-1a2b --agent r1-sub2
  research show RUN --html                 # writes RUN/trace.html and prints its path
  research show RUN --html trace.html      # a single self-contained file: open it in a browser
  research show RUN --json | jq '.agents[].status'
  research show RUN --follow               # a run still going: redrawn as its transcripts grow
"""


def add_parser(sub: Any) -> None:
    show = sub.add_parser("show", help="show a run: plans, timeline, agents, findings, usage, citations",
                          description="Show a run read back from its directory (works on a running or crashed "
                                      "run too).", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("run", help="a run id (under --runs-dir) or a run directory")
    show.add_argument("--runs-dir", default="runs", metavar="DIR", help="where run ids are looked up (default ./runs)")
    what = show.add_mutually_exclusive_group()
    what.add_argument("--agent", metavar="ID", help="one agent's transcript, readable (e.g. lead, r1-sub2)")
    what.add_argument("--json", action="store_true", help="the typed run as one JSON object")
    what.add_argument("--html", nargs="?", const="", metavar="FILE",
                      help="write a self-contained HTML trace viewer (default FILE: RUN/trace.html)")
    what.add_argument("--follow", action="store_true", help="follow a running run until it ends (Ctrl-C stops)")
    what.add_argument("--otel", action="store_true",
                      help="export the run's spans through OTLP (OTEL_EXPORTER_OTLP_*; needs the [otel] extra)")


def main(args: argparse.Namespace) -> int:
    from ..rundir import resolve_run

    try:
        path = resolve_run(args.run, Path(args.runs_dir))
    except FileNotFoundError as e:
        err(str(e))
        return EXIT_USAGE
    if args.follow:
        from ..follow import follow

        return follow(path, args.environ)
    try:
        return _show(args, path)
    except BrokenPipeError:  # `research show RUN | head`: the CLI ends quietly (exit 141)
        raise
    except LookupError as e:
        if args.agent:
            err(str(e).strip("'\""))
            return EXIT_USAGE
        err(f"cannot show run {path}: {type(e).__name__}: {e}")
        return EXIT_FAILED
    except (OSError, ValueError, TypeError, AttributeError) as e:  # a corrupt or half-written run
        err(f"cannot show run {path}: {type(e).__name__}: {e}")
        return EXIT_FAILED


def html_target_problem(target: Path) -> str | None:
    """Why the viewer cannot be written to `target` (a user mistake), or None."""
    import os

    if target.is_dir():
        return "is a folder; give a file name (e.g. trace.html)"
    parent = target.parent
    if not parent.is_dir():
        return f"the folder {parent} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return "not writable"
    return None


def _show(args: argparse.Namespace, path: Path) -> int:
    from subagents.runs import read_run

    from ..show import render_agent, render_run, run_json

    run = read_run(path)
    if not run.manifest and run.trace.started is None and not run.trace.agents:
        manifest = run.damaged[0].split("; ")[0] if run.damaged else "an empty manifest"
        raise ValueError(f"{manifest} and no events: not a run (or nothing of it was written)")
    if args.agent:
        out(render_agent(run, args.agent))
    elif args.json:
        import json

        print(json.dumps(run_json(run), indent=1, ensure_ascii=False, default=str))
    elif args.html is not None:
        from ..viewer import write_viewer

        target = Path(args.html) if args.html else path / "trace.html"
        problem = html_target_problem(target)
        if problem:
            err(f"--html {target}: {problem}")
            return EXIT_USAGE
        from subagents.storage import StorageError

        try:
            write_viewer(run, target)
        except StorageError as e:  # nothing left behind; a FILE the user chose is theirs to fix
            err(f"--html {target}: {e.strerror}" if args.html else str(e))
            return EXIT_USAGE if args.html else EXIT_FAILED
        print(target)
    elif args.otel:
        from subagents.runs import iter_records

        from ..otel import OtelExporter, otlp_exporter

        try:
            exporter = otlp_exporter(args.environ)
        except ImportError as e:
            err(f"--otel needs the OpenTelemetry packages: pip install 'research-agents[otel]' ({e.name} is missing)")
            return EXIT_USAGE
        obs = OtelExporter(exporter)
        for rec in sorted(iter_records(path), key=lambda r: (r.t, r.agent_id, r.seq)):
            obs.on_event(rec)
        obs.close()
        print(f"OpenTelemetry (run {run.run_id}): {obs.export_summary()}", file=sys.stderr)
        return EXIT_FAILED if obs.tally is not None and obs.tally.failed else 0
    else:
        out(render_run(run))
    return 0
