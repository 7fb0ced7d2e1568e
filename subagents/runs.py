"""A run directory as data: its layout, and `read_run(path)` that loads it back into typed objects.

The state of a run is a fold over its events (`RunTrace.apply`): the live manifest keeper and the
reader use the same fold, so a run read back after a crash says what its transcripts say, never
what a half-written manifest claimed.

    runs/<run_id>/
      manifest.json         the folded state, rewritten atomically as the run goes
      run.jsonl             run-level events (start, citation check, report, end)
      agents/<agent>.jsonl  one transcript per agent
      plan.vN.json          every accepted plan version
      sources.json          every retrieved passage with its id and the text shown
      report.md             the citation-checked report
      report.html           the same report as a self-contained page (clickable citations and references)

Reading never leaves the run directory: a file reached through a symlink, or a manifest path,
that resolves outside it is refused (listed in `Run.refused`), never read.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .context import AgentRole, AgentStatus
from .delegation import Delegation, Findings
from .events import (RUN_AGENT, AgentEnded, AgentFailed, AgentStarted, AttemptStarted, CitationChecked, EstimateMade,
                     EventRecord, FindingsSubmitted, ModelResponded, PlanAccepted, PlanRejected, PlanReviewed,
                     ReplanDecided, ReportWritten, RoundEnded, RoundPurpose, RoundStarted, RunBudgetReached, RunEnded,
                     RunResumed, RunStarted, RunStatus, SourceRegistered, ToolCalled, ToolReturned)
from .loop import CallRecord, tally_tool_result
from .model import Usage
from .models.pricing import add_costs, cost
from .sources import Source, SourceRegistry
from .tool_names import SUBMIT_FINDINGS
from .transcript import AGENTS_DIR, RUN_LOG, read_records

MANIFEST = "manifest.json"
SOURCES = "sources.json"
REPORT = "report.md"
REPORT_HTML = "report.html"


def plan_file(version: int) -> str:
    return f"plan.v{version}.json"


@dataclass
class AgentTrace:
    """One agent, folded from its events."""

    agent_id: str
    parent_id: str | None = None
    role: AgentRole | None = None
    model: str = ""
    round: int | None = None
    question: str | None = None
    delegation: Delegation | None = None
    allowed_tools: list[str] = field(default_factory=list)
    status: AgentStatus = AgentStatus.RUNNING
    stop: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    calls: list[CallRecord] = field(default_factory=list)
    tool_calls: int = 0  # the calls its budget counted (its terminal submit not included), as it goes and at its end
    refused_over_budget: int = 0  # calls refused without running: its tool-call budget was spent
    # per tool, the calls that ran and failed / succeeded, counted as the live loop counts them; a rerun starts
    # afresh (like the live agent it is), so these are its latest attempt's
    tool_errors: dict[str, int] = field(default_factory=dict)
    tool_successes: dict[str, int] = field(default_factory=dict)
    turns: int = 0
    started: float | None = None
    ended: float | None = None
    findings: Findings | None = None
    records: list[EventRecord] = field(default_factory=list)
    attempts: int = 1  # attempts this agent wrote lines in (a resumed run reruns or continues it)
    last_seq: int = -1  # the seq of its last line (a resumed attempt continues after it)
    _earlier_tool_calls: int = 0

    def apply(self, rec: EventRecord, keep: bool = True) -> None:
        if keep:
            self.records.append(rec)
        e = rec.event
        self.turns = max(self.turns, rec.turn)
        self.last_seq = max(self.last_seq, rec.seq)
        if isinstance(e, AttemptStarted):  # earlier attempts' usage and calls stay counted
            self.attempts += 1
            self.status, self.ended, self._earlier_tool_calls = AgentStatus.RUNNING, None, self.tool_calls
            self.tool_errors, self.tool_successes = {}, {}
            return
        if isinstance(e, AgentStarted):
            self.role, self.model, self.round = e.role, e.model, e.round
            self.question, self.delegation, self.allowed_tools = e.question, e.delegation, list(e.allowed_tools)
            self.started, self.parent_id = rec.t, rec.parent_id
        elif isinstance(e, ModelResponded):
            self.usage = self.usage + e.usage
            self.calls.append(CallRecord(e.model, e.usage, e.seconds))
        elif isinstance(e, ToolCalled) and e.over_budget:
            self.refused_over_budget += 1
        elif isinstance(e, ToolCalled) and e.name != SUBMIT_FINDINGS:
            self.tool_calls += 1
        elif isinstance(e, ToolReturned):
            tally_tool_result(e, self.tool_errors, self.tool_successes)
        elif isinstance(e, FindingsSubmitted):
            self.findings = e.findings
        elif isinstance(e, AgentFailed):
            self.error = e.error
        elif isinstance(e, AgentEnded):  # usage stays the sum of the calls: every attempt's, not the last one's
            self.status, self.stop, self.error = e.status, e.stop, e.error or self.error
            self.tool_calls = self._earlier_tool_calls + e.tool_calls
            self.turns, self.ended = max(self.turns, e.turns), rec.t

    @property
    def finished(self) -> bool:
        return self.status is not AgentStatus.RUNNING

    def cost_usd(self) -> float | None:
        return add_costs(*(cost(c.usage, c.model) for c in self.calls))


@dataclass
class RoundTrace:
    round: int
    agent_ids: list[str]
    started: float
    ended: float | None = None
    purpose: RoundPurpose = RoundPurpose.RESEARCH  # replan rounds count against --max-replans, not --max-rounds


@dataclass
class RunTrace:
    """A whole run, folded from every agent's events and the run-level events."""

    run_id: str = ""
    started: RunStarted | None = None
    started_at: str = ""  # wall clock of the run start
    status: RunStatus = RunStatus.RUNNING
    error: str | None = None
    finished_at: str | None = None
    agents: dict[str, AgentTrace] = field(default_factory=dict)
    plans: list[PlanAccepted] = field(default_factory=list)
    rejections: list[PlanRejected] = field(default_factory=list)
    rounds: dict[int, RoundTrace] = field(default_factory=dict)
    citation: CitationChecked | None = None
    estimate: dict[str, Any] | None = None
    report_path: str | None = None
    prompts: dict[str, dict[str, str]] = field(default_factory=dict)
    last_t: float = 0.0
    reviews: list[PlanReviewed] = field(default_factory=list)
    decisions: list[ReplanDecided] = field(default_factory=list)
    budget_reached: RunBudgetReached | None = None
    attempts: list[RunResumed] = field(default_factory=list)  # every resumption, in order
    sources: list[tuple[str, SourceRegistered]] = field(default_factory=list)  # (agent id, registration)
    last_seqs: dict[str, int] = field(default_factory=dict)  # per agent id (the run's own stream too)

    def apply(self, rec: EventRecord, keep: bool = True) -> None:
        self.run_id = self.run_id or rec.run_id
        self.last_t = max(self.last_t, rec.t)
        self.last_seqs[rec.agent_id] = max(self.last_seqs.get(rec.agent_id, -1), rec.seq)
        if rec.agent_id == RUN_AGENT:
            self._apply_run(rec)
            return
        agent = self.agents.get(rec.agent_id)
        if agent is None:
            agent = self.agents[rec.agent_id] = AgentTrace(rec.agent_id, rec.parent_id)
        agent.apply(rec, keep)
        e = rec.event
        if isinstance(e, AgentStarted):
            self.prompts.update(e.prompts)
        elif isinstance(e, PlanAccepted):
            self.plans.append(e)
        elif isinstance(e, PlanRejected):
            self.rejections.append(e)
        elif isinstance(e, PlanReviewed):
            self.reviews.append(e)
        elif isinstance(e, ReplanDecided):
            self.decisions.append(e)
        elif isinstance(e, SourceRegistered):
            self.sources.append((rec.agent_id, e))
        elif isinstance(e, RoundStarted):
            self.rounds[e.round] = RoundTrace(e.round, list(e.agent_ids), rec.t, purpose=e.purpose)
        elif isinstance(e, RoundEnded) and e.round in self.rounds:
            self.rounds[e.round].ended = rec.t

    def _apply_run(self, rec: EventRecord) -> None:
        e = rec.event
        if isinstance(e, RunStarted):
            self.started, self.started_at = e, rec.ts
        elif isinstance(e, CitationChecked):
            self.citation = e
        elif isinstance(e, EstimateMade):
            self.estimate = e.estimate
        elif isinstance(e, ReportWritten):
            self.report_path = e.path
        elif isinstance(e, RunEnded):
            self.status, self.error, self.finished_at = e.status, e.error, rec.ts
            self.prompts.update(e.prompts)
        elif isinstance(e, RunBudgetReached):
            self.budget_reached = e
        elif isinstance(e, RunResumed):
            self.attempts.append(e)
            self.status, self.error, self.finished_at = RunStatus.RUNNING, None, None
        elif isinstance(e, SourceRegistered):
            self.sources.append((rec.agent_id, e))

    @property
    def attempt(self) -> int:
        """The number of the latest attempt (1 for a run never resumed)."""
        return 1 + len(self.attempts)

    def source_registry(self) -> SourceRegistry:
        """The run's sources rebuilt from their registration events, with their ids."""
        registry = SourceRegistry()
        for agent_id, e in self.sources:
            registry.restore(source_id=e.id, key=e.key, kind=e.source_kind, title=e.title, locator=e.locator,
                             text=e.text, agent_id=agent_id if agent_id != RUN_AGENT else "", meta=e.meta)
        return registry

    @property
    def question(self) -> str:
        return self.started.question if self.started else ""

    def ordered_agents(self) -> list[AgentTrace]:
        """The lead first, then subagents in plan order (round, task), then anything else."""
        order: dict[str, tuple[int, int]] = {}
        for p in self.plans:
            for i, t in enumerate(p.tasks):
                order.setdefault(t.agent_id, (p.round, i))
        agents = list(self.agents.values())
        return sorted(agents, key=lambda a: (a.role is not AgentRole.LEAD,
                                             order.get(a.agent_id, (10**6, agents.index(a)))))

    def usage(self) -> Usage:
        total = Usage()
        for a in self.agents.values():
            total = total + a.usage
        return total

    def cost_usd(self) -> float | None:
        return add_costs(*(a.cost_usd() for a in self.agents.values()))


class UnsafeRunPath(ValueError):
    """A path that would lead out of the run directory (through `..`, an absolute path or a symlink)."""


def run_file(run_dir: Path, name: str | Path) -> Path:
    """The real path of `name` inside `run_dir`; UnsafeRunPath when it resolves outside the
    directory. The file need not exist."""
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts:
        raise UnsafeRunPath(f"{str(name)!r} is not a path inside the run directory")
    base = os.path.realpath(run_dir)
    real = os.path.realpath(os.path.join(base, rel))
    if not (real == base or real.startswith(base.rstrip(os.sep) + os.sep)):
        raise UnsafeRunPath(f"{str(name)!r} leads outside the run directory")
    return Path(real)


@dataclass
class Run:
    """A run directory read back: the folded trace plus the files beside it."""

    path: Path
    trace: RunTrace
    manifest: dict[str, Any]
    sources: list[Source]
    report: str | None
    refused: list[str] = field(default_factory=list)  # paths not read: they lead outside the run directory
    damaged: list[str] = field(default_factory=list)  # files that could not be parsed (state read from the events)

    @property
    def run_id(self) -> str:
        return self.trace.run_id or str(self.manifest.get("run_id", self.path.name))

    @property
    def status(self) -> str:
        """The final status from the events; a run whose events stop without an end is `running`
        (still going) or was killed — the manifest's word is taken only when the events have none."""
        if self.trace.status is not RunStatus.RUNNING:
            return self.trace.status.value
        return str(self.manifest.get("status", RunStatus.RUNNING.value))


class _Reader:
    """Reads the files of one run directory, refusing any that lead outside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.refused: list[str] = []

    def file(self, name: str | Path) -> Path | None:
        """The regular file `name` of the run directory, or None (missing, or refused)."""
        try:
            real = run_file(self.path, name)
        except UnsafeRunPath as e:
            self.refused.append(str(e))
            return None
        try:
            return real if stat.S_ISREG(os.stat(real).st_mode) else None
        except OSError:
            return None

    def records(self) -> Iterable[EventRecord]:
        """Every event: run-level first, then each agent's transcript."""
        run_log = self.file(RUN_LOG)
        if run_log is not None:
            yield from read_records(run_log)
        agents = self.path / AGENTS_DIR
        if agents.is_dir():
            for f in sorted(agents.glob("*.jsonl")):
                real = self.file(Path(AGENTS_DIR) / f.name)
                if real is not None:
                    yield from read_records(real)

    def check_manifest_paths(self, manifest: dict[str, Any]) -> None:
        """Paths the manifest names (transcripts, plan files) must stay inside the directory."""
        named = [a.get("transcript") for a in manifest.get("agents") or [] if isinstance(a, dict)]
        named += list(manifest.get("plans") or [])
        for name in named:
            if isinstance(name, str) and name:
                try:
                    run_file(self.path, name)
                except UnsafeRunPath as e:
                    self.refused.append(f"manifest: {e}")


def iter_records(path: Path) -> Iterable[EventRecord]:
    """Every event of a run directory: run-level first, then each agent's transcript (files
    leading outside the directory are skipped)."""
    return _Reader(Path(path)).records()


def fold(records: Iterable[EventRecord]) -> RunTrace:
    trace = RunTrace()
    for rec in sorted(records, key=lambda r: (r.t, r.agent_id, r.seq)):
        trace.apply(rec)
    return trace


def read_run(path: Path) -> Run:
    """Load a run directory (finished, running or crashed) into typed objects. Nothing outside the
    directory is read: such files and manifest paths are listed in `Run.refused`."""
    path = Path(path)
    reader = _Reader(path)
    damaged: list[str] = []
    trace = fold(reader.records())
    manifest = _read_manifest(reader, trace, damaged)
    reader.check_manifest_paths(manifest)
    sources = _read_sources(reader, trace, damaged)
    report_path = reader.file(REPORT)
    report = report_path.read_text(encoding="utf-8", errors="replace") if report_path is not None else None
    return Run(path=path, trace=trace, manifest=manifest, sources=sources, report=report,
               refused=reader.refused, damaged=damaged)


def _damage(name: str, e: Exception) -> str:
    why = "empty" if isinstance(e, json.JSONDecodeError) and not e.doc.strip() else f"{type(e).__name__}: {e}"
    return f"{name} is unreadable ({why}); read from the transcripts instead"


def _read_manifest(reader: _Reader, trace: RunTrace, damaged: list[str]) -> dict[str, Any]:
    """manifest.json, or (missing, truncated, empty, not an object) what the events say of it: the
    manifest is only the fold of the events, written as the run goes (a crash can cut it)."""
    path = reader.file(MANIFEST)
    if path is None:
        return manifest_from_trace(trace) if trace.started is not None else {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("not a JSON object")
        return manifest
    except (OSError, ValueError) as e:
        damaged.append(_damage(MANIFEST, e))
        return manifest_from_trace(trace) if trace.started is not None else {}


def manifest_from_trace(trace: RunTrace) -> dict[str, Any]:
    """The manifest fields readers use, from the fold (the full manifest is `lead_agent.manifest`'s)."""
    s = trace.started
    return {"run_id": trace.run_id, "question": trace.question, "status": trace.status.value,
            "created_at": trace.started_at, "options": dict(s.options) if s else {},
            "models": {"lead": s.lead_model, "subagent": s.subagent_model,
                       "language_model_used": s.language_model_used} if s else {},
            "timings": {"started_at": trace.started_at, "seconds": round(trace.last_t, 3)},
            "sources": len(trace.sources), "error": trace.error}


def _read_sources(reader: _Reader, trace: RunTrace, damaged: list[str]) -> list[Source]:
    """sources.json, or (unreadable) the sources rebuilt from their registration events."""
    path = reader.file(SOURCES)
    if path is None:  # missing, or refused (leads outside the run directory)
        return []
    try:
        return SourceRegistry.read(path)
    except (OSError, ValueError, TypeError, KeyError) as e:
        damaged.append(_damage(SOURCES, e))
        return trace.source_registry().all()
