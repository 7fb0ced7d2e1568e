"""Live progress on a terminal (rich): a tree lead → round → subagents, redrawn several times a
second from the `ProgressTree` fold of the run's events. Each line has the agent's status, its
current step, tool calls, tokens, cost and elapsed time; a spinner and an elapsed counter run
while a model or tool call is in flight (the lead's planning and synthesis calls included); the
top line has the run's totals (and the budget left when the run has a cost budget).

Imported only when a run starts on a terminal: `rich` is not loaded by `research --help`.
"""

from __future__ import annotations

import threading
import time
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text
from rich.tree import Tree

from subagents.context import AgentStatus
from subagents.events import EventRecord, RunStatus

from .progress_tree import AgentNode, ProgressTree, RoundNode, fmt_cost, fmt_secs, fmt_tokens

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
MARK = {AgentStatus.OK: ("✓", "green"), AgentStatus.PARTIAL: ("◐", "yellow"), AgentStatus.FAILED: ("✗", "red"),
        AgentStatus.INTERRUPTED: ("■", "magenta"), AgentStatus.ESTIMATED: ("✓", "cyan"),
        AgentStatus.RUNNING: ("·", "dim")}
RUN_STYLE = {RunStatus.COMPLETED: "green", RunStatus.FAILED: "red", RunStatus.INTERRUPTED: "magenta",
             RunStatus.RUNNING: "cyan", RunStatus.ESTIMATED: "cyan"}


def _spin(now: float) -> str:
    return SPINNER[int(now * 10) % len(SPINNER)]


def agent_line(a: AgentNode, now: float, width: int = 100, *, priced: bool = True, objective: bool = True) -> Text:
    """One agent: mark, id, status or current step (with elapsed while a call is in flight), figures."""
    line = Text()
    busy = a.busy_since()
    if a.finished:
        mark, style = MARK.get(a.status, ("?", "white"))
        line.append(f"{mark} ", style=style)
    elif a.started is None:
        line.append("… ", style="dim")
    else:
        line.append(f"{_spin(now)} ", style="cyan")
    line.append(f"{a.agent_id:<8}", style="bold")
    if a.finished:
        line.append(f" {a.status.value}", style=MARK.get(a.status, ("", "white"))[1])
        if a.claims is not None:
            line.append(f", {a.claims} claim(s)")
        if a.error:
            line.append(f" — {a.error}", style="red")
    elif a.started is None:
        line.append(" waiting for a slot", style="dim")
    else:
        line.append(f" {a.step()}", style="yellow" if busy is not None else "")
        if busy is not None:
            line.append(f" {fmt_secs(max(0.0, now - busy))}", style="dim")
    n = a.tool_calls
    figures = [f"{n}/{a.max_tool_calls} tool calls" if a.max_tool_calls else f"{n} tool call{'' if n == 1 else 's'}"]
    if a.refused_over_budget:
        figures.append(f"{a.refused_over_budget} refused over budget")
    if priced:  # an offline run has no tokens or cost to show
        figures += [f"{fmt_tokens(a.usage.input_tokens + a.usage.output_tokens)} tok", fmt_cost(a.cost_usd)]
    if a.condensed:
        figures.append(f"context condensed {a.condensed}×")
    figures.append(fmt_secs(a.elapsed(now)))
    line.append("  " + " · ".join(figures), style="dim")
    if a.objective and objective:
        line.append(f"\n{a.objective}", style="italic dim")
    line.truncate(width * 3)
    return line


def header(tree: ProgressTree, now: float) -> Text:
    t = Text()
    style = RUN_STYLE.get(tree.status, "white")
    running = tree.status is RunStatus.RUNNING
    t.append(f"{_spin(now) if running else '●'} research ", style=f"bold {style}")
    t.append(tree.status.value, style=style)
    t.append(f"  {fmt_secs(tree.elapsed(now))}", style="dim")
    u = tree.usage()
    c = tree.counts()
    cost = tree.cost_usd()
    totals = [f"{c['model_calls']} model calls", f"{c['tool_calls']} tool calls"]
    if tree.language_model_used:
        totals = [f"cost so far {fmt_cost(cost)}",
                  f"tokens in {fmt_tokens(u.input_tokens)} / out {fmt_tokens(u.output_tokens)}"] + totals
    if tree.budget_usd is not None and cost is not None:
        totals.append(f"budget left {fmt_cost(max(0.0, tree.budget_usd - cost))} of {fmt_cost(tree.budget_usd)}")
    t.append("\n" + " · ".join(totals), style="dim")
    if not tree.language_model_used and tree.lead_model:
        t.append("  (offline: no language model)", style="dim")
    t.append(f"\n{tree.question}", style="bold")
    return t


def _round_label(r: RoundNode, subs: list[AgentNode]) -> Text:
    done = sum(a.finished for a in subs)
    label = Text(r.label, style="bold")
    label.append(f"  {r.query_type} · {done}/{len(subs)} done", style="dim")
    if r.ended is not None:
        by_status: dict[str, int] = {}
        for a in subs:
            by_status[a.status.value] = by_status.get(a.status.value, 0) + 1
        label.append(" (" + ", ".join(f"{n} {s}" for s, n in by_status.items()) + ")", style="dim")
        label.append(f" · {fmt_secs(r.ended - r.started)}", style="dim")
    return label


def render(tree: ProgressTree, now: float, width: int = 100, height: int | None = None) -> Tree:
    """The tree. Given the terminal's `height`, it stays on screen: objectives are dropped first, then
    finished rounds fold into one line each."""
    rounds = sorted(tree.rounds.values(), key=lambda r: r.round)
    subs = {r.round: tree.subagents_of(r.round) for r in rounds}
    n = sum(len(v) for v in subs.values())
    room = (height or 10_000) - 6 - len(rounds)  # header, lead, tail
    objectives = 2 * n <= room
    fold = {r.round for r in rounds if r.ended is not None} if n > room else set()
    root = Tree(header(tree, now), guide_style="dim")
    lead = tree.lead
    if lead is not None:
        line = agent_line(lead, now, width, priced=tree.language_model_used)
        lead_branch = root.add(Text.assemble(line, (f"  {lead.model}", "dim")))
    else:
        lead_branch = root
    for r in rounds:
        branch = lead_branch.add(_round_label(r, subs[r.round]))
        if r.round in fold:
            continue
        for a in subs[r.round]:
            branch.add(agent_line(a, now, width, priced=tree.language_model_used, objective=objectives))
    tail = [x for x in (tree.citations, f"report: {tree.report_path}" if tree.report_path else "") if x]
    if tree.error:
        tail.append(f"error: {tree.error}")
    if tail:
        root.add(Text(" · ".join(tail), style="red" if tree.error else "dim"))
    return root


def _epoch(ts: str, default: float) -> float:
    from datetime import datetime

    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return default


class LiveProgress:
    """An observer: folds events into a `ProgressTree` and redraws it with `rich.live.Live`."""

    def __init__(self, stream: IO[str] | None = None, *, refresh_per_second: float = 8.0,
                 console: Console | None = None) -> None:
        import sys

        self.tree = ProgressTree()
        self.console = console or Console(file=stream or sys.stderr, highlight=False)
        self._lock = threading.Lock()
        self._t0: float | None = None  # wall-clock time (epoch seconds) of the run's t=0
        self._corpus: list[str] = []
        self._started = False
        self.live = Live(get_renderable=self._renderable, console=self.console, refresh_per_second=refresh_per_second,
                         transient=False, redirect_stdout=False, redirect_stderr=False)

    def now(self) -> float:
        """Seconds since the run started (from the events' wall clock: right for a replayed run too)."""
        return time.time() - self._t0 if self._t0 is not None else 0.0

    def _renderable(self) -> Any:
        with self._lock:
            width = max(40, self.console.width - 6)
            height = self.console.height - len(self._corpus) if self._started else None
            body = render(self.tree, self.now(), width, height)
            return Group(*[Text(x, style="dim") for x in self._corpus], body) if self._corpus else body

    def on_event(self, record: EventRecord) -> None:
        from subagents.events import CorpusIndexed, CorpusIndexing, RunEnded

        from .progress import indexing_line

        e = record.event
        with self._lock:
            if isinstance(e, CorpusIndexing):  # before the tree starts: a plain line now and then
                self.console.print(indexing_line(e), style="dim", markup=False, highlight=False)
                return
            if isinstance(e, CorpusIndexed):
                self._corpus.append(f"corpus {e.root}: {e.passages} passages, {e.indexed} (re)indexed, "
                                    f"{e.unchanged} unchanged" + (f"; semantic ranking {e.semantic}" if e.semantic
                                                                  else "") + f" ({e.seconds:.1f}s)")
                return
            if self._t0 is None:
                self._t0 = _epoch(record.ts, time.time()) - record.t
            self.tree.apply(record)
        if not self._started:
            self._started = True
            self.live.start()
        if isinstance(e, RunEnded):
            self.close()

    def close(self) -> None:
        if self._started:
            self._started = False
            self.live.refresh()
            self.live.stop()


__all__ = ["LiveProgress", "agent_line", "header", "render"]
