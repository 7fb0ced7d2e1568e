"""The manifest keeper: an observer that folds the run's events (`subagents.runs.RunTrace`) and
rewrites `manifest.json` atomically whenever something a reader cares about changes, so the file is
current while the run goes and final when it ends."""

from __future__ import annotations

import time
from typing import Any

from subagents.events import (AgentEnded, AgentStarted, AttemptStarted, CitationChecked, EstimateMade, EventRecord,
                              FindingsSubmitted, ModelResponded, PlanAccepted, PlanReviewed, ReplanDecided,
                              ReportWritten, RoundEnded, RoundStarted, RunBudgetReached, RunEnded, RunResumed,
                              RunStarted)
from subagents.models.pricing import cost
from subagents.runs import AgentTrace, RunTrace, SOURCES, plan_file
from subagents.sources import SourceRegistry

from .rundir import RunDir

# events after which the manifest is rewritten at once; model responses at most every THROTTLE seconds
_SAVE_ON = (RunStarted, AgentStarted, AgentEnded, PlanAccepted, RoundStarted, RoundEnded, CitationChecked,
            ReportWritten, EstimateMade, RunEnded, FindingsSubmitted, PlanReviewed, ReplanDecided, RunBudgetReached,
            RunResumed, AttemptStarted)
THROTTLE = 1.0


def agent_entry(a: AgentTrace) -> dict[str, Any]:
    calls = [{"model": c.model, "usage": c.usage.to_dict(), "seconds": c.seconds, "cost_usd": cost(c.usage, c.model)}
             for c in a.calls]
    entry: dict[str, Any] = {
        "agent_id": a.agent_id, "role": a.role.value if a.role else None, "parent_id": a.parent_id,
        "status": a.status.value, "model": a.model, "usage": a.usage.to_dict(), "calls": calls,
        "cost_usd": a.cost_usd(), "transcript": f"agents/{a.agent_id}.jsonl", "stop": a.stop, "error": a.error,
        "tool_calls": a.tool_calls, "refused_over_budget": a.refused_over_budget, "turns": a.turns,
        "started": a.started, "ended": a.ended,
    }
    if a.delegation is not None:
        entry.update(round=a.round, objective=a.delegation.objective,
                     claims=len(a.findings.claims) if a.findings else 0,
                     budget=a.delegation.budget.model_dump(), depends_on=list(a.delegation.depends_on))
    if a.attempts > 1:
        entry["attempts"] = a.attempts
    return entry


def governance_of(trace: RunTrace) -> dict[str, Any]:
    """Plan versions with their authors, a person's reviews, replanning decisions, budget state, attempts."""
    options = dict(trace.started.options) if trace.started else {}
    b = trace.budget_reached
    return {
        "approval": options.get("approval", "none"),
        "plan_versions": [{"version": p.version, "round": p.round, "author": p.author, "file": plan_file(p.version),
                           "tasks": len(p.tasks), "changed_lines": sum(1 for line in p.diff.splitlines()
                                                                       if line[:1] in "+-" and line[:3] not in ("+++", "---"))}
                          for p in trace.plans],
        "reviews": [{"version": r.version, "round": r.round, "decision": r.decision.value, "reason": r.reason,
                     "edited_version": r.edited_version} for r in trace.reviews],
        "replans": [{"agent_id": d.agent_id, "strategy": d.strategy.value, "cause": d.cause.value, "reason": d.reason,
                     "next_agent_id": d.next_agent_id, "tools": d.tools} for d in trace.decisions],
        "budget": {"limits": options.get("budget", {}), "used": {"tokens": trace.usage().total(),
                                                                 "cost_usd": trace.cost_usd()},
                   "stopped_by": b.budget if b else None, "used_at_stop": b.used if b else None},
        "attempts": [{"attempt": 1}] + [{"attempt": r.attempt, "previous_status": r.previous_status,
                                         "repaired": r.repaired} for r in trace.attempts],
    }


def manifest_of(trace: RunTrace, sources: int, seconds: float) -> dict[str, Any]:
    s = trace.started
    m: dict[str, Any] = {
        "run_id": trace.run_id, "question": trace.question, "status": trace.status.value,
        "created_at": trace.started_at,
        "options": dict(s.options) if s else {}, "config_file": s.config_file if s else None,
        "models": {"lead": s.lead_model, "subagent": s.subagent_model,
                   "language_model_used": s.language_model_used} if s else {},
        "prompts": {"variant": s.prompt_variant if s else "default", "files": dict(sorted(trace.prompts.items()))},
        "corpus": dict(s.corpus) if s else {},
        "plans": [plan_file(p.version) for p in trace.plans],
        "plans_rejected": len(trace.rejections),
        "agents": [agent_entry(a) for a in trace.ordered_agents()],
        "usage": trace.usage().to_dict(), "cost_usd": trace.cost_usd(),
        "timings": {"started_at": trace.started_at, "seconds": round(seconds, 3),
                    "rounds": [{"round": r.round, "purpose": r.purpose.value, "started": r.started, "ended": r.ended,
                                "subagents": len(r.agent_ids)} for r in trace.rounds.values()]},
        "sources": sources,
        **governance_of(trace),
    }
    if trace.citation is not None:
        c = trace.citation
        m["citation_check"] = {"markers": c.markers, "supported": c.supported, "unsupported": c.unsupported,
                               "unknown": c.unknown, "pass_rate": c.pass_rate, "removed": c.unsupported + c.unknown,
                               "issues": c.issues, "cited_sources": c.cited_sources}
    if trace.estimate is not None:
        m["estimate"] = trace.estimate
    if trace.finished_at is not None:
        m["finished_at"] = trace.finished_at
        m["error"] = trace.error
    return m


class ManifestKeeper:
    def __init__(self, run: RunDir, sources: SourceRegistry, trace: RunTrace | None = None) -> None:
        self.run = run
        self.sources = sources
        self.trace = trace if trace is not None else RunTrace()  # a resumed run: the earlier attempts' fold
        self._t0 = time.monotonic()
        self._saved = 0.0
        self.last: dict[str, Any] = {}

    def on_event(self, record: EventRecord) -> None:
        self.trace.apply(record, keep=False)
        now = time.monotonic()
        if isinstance(record.event, _SAVE_ON) or (isinstance(record.event, ModelResponded)
                                                  and now - self._saved >= THROTTLE):
            self.save(durable=isinstance(record.event, RunEnded))

    def save(self, *, durable: bool = True) -> None:
        """Rewrite sources.json and manifest.json (atomically; fsynced only when `durable`: the
        intermediate versions are folded from the transcripts anyway)."""
        self._saved = time.monotonic()
        self.sources.save(self.run.path / SOURCES, durable=durable)
        self.last = manifest_of(self.trace, len(self.sources), max(self._saved - self._t0, self.trace.last_t))
        self.run.write_manifest(self.last, durable=durable)
