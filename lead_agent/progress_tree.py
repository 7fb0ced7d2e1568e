"""What a run is doing right now, folded from its typed events: the lead, each round's subagents,
every agent's status, current step (planning, searching "…", reading a page, condensing,
submitting), model call in flight, tool calls, tokens, cost and elapsed time, and the run's totals.

The live tree (`lead_agent/live.py`), `research show --follow` and the tests read this fold; it
imports no terminal library, so it is cheap to use anywhere. Times are the events' run-relative
`t` seconds; `now` is given by the caller (the live view's clock, or the last event's `t`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from subagents.context import AgentRole, AgentStatus, Strategy
from subagents.events import (RUN_AGENT, AgentEnded, AgentFailed, AgentStarted, BudgetExhausted, CitationChecked,
                              ContextCondensed, EventRecord, FindingsSubmitted, ModelRequested, ModelResponded,
                              ModelRetried, PlanAccepted, PlanRejected, ReplanDecided, ReportWritten, RoundEnded,
                              RoundPurpose, RoundStarted, RunEnded, RunStarted, RunStatus, ToolCalled, ToolReturned)
from subagents.model import Usage
from subagents.models.pricing import cost
from subagents.tool_names import DELEGATE, FETCH_PAGE, READ_PASSAGE, SEARCH_CORPUS, SUBMIT_FINDINGS, WEB_SEARCH


def _clip(text: str, n: int) -> str:
    """Shorten at a word boundary (never mid-word), with an ellipsis."""
    text = " ".join(str(text).split())
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > n // 2 else cut).rstrip(" ,;:") + "…"


def fmt_tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def fmt_cost(usd: float | None) -> str:
    return "cost unknown" if usd is None else f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"


def fmt_secs(s: float) -> str:
    return f"{s:.1f}s" if s < 60 else f"{int(s // 60)}m{int(s % 60):02d}s"


def tool_step(name: str, tool_input: dict[str, Any]) -> str:
    """What a tool call is doing, in words: `searching "query"`, `reading page URL`, …"""
    if name in (SEARCH_CORPUS, WEB_SEARCH):
        where = "the web" if name == WEB_SEARCH else "the corpus"
        return f'searching {where} "{_clip(tool_input.get("query", ""), 48)}"'
    if name == READ_PASSAGE:
        return f"reading passage {_clip(tool_input.get('passage_id', ''), 48)}"
    if name == FETCH_PAGE:
        return f"reading page {_clip(tool_input.get('url', ''), 60)}"
    if name == SUBMIT_FINDINGS:
        return "submitting findings"
    if name == DELEGATE:
        return "delegating"
    return f"calling {name}"


@dataclass
class InFlight:
    """A model call or a tool call that has started and not yet returned."""

    what: str  # "model" or a tool name
    step: str
    since: float
    call_id: str = ""


@dataclass
class AgentNode:
    agent_id: str
    role: AgentRole | None = None
    model: str = ""
    round: int | None = None
    objective: str = ""
    status: AgentStatus = AgentStatus.RUNNING
    started: float | None = None
    ended: float | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    model_calls: int = 0
    tool_calls: int = 0  # the calls its budget counted, as the manifest counts them
    refused_over_budget: int = 0  # calls refused without running: its tool-call budget was spent
    tool_errors: int = 0
    max_tool_calls: int | None = None
    claims: int | None = None
    error: str | None = None
    note: str = ""  # the last thing worth saying that is not in flight (condensed, budget, retry)
    condensed: int = 0  # times its context was condensed to fit the window
    wrapping_up: str = ""  # the budget that ran out, while the agent is asked for its findings
    model_call: InFlight | None = None
    tools: dict[str, InFlight] = field(default_factory=dict)
    turns: int = 0

    @property
    def finished(self) -> bool:
        return self.status is not AgentStatus.RUNNING

    def elapsed(self, now: float) -> float:
        if self.started is None:
            return 0.0
        return max(0.0, (self.ended if self.ended is not None else now) - self.started)

    def step(self) -> str:
        """The current step in words (empty once the agent has ended)."""
        if self.finished:
            return ""
        if self.tools:
            steps = [t.step for t in self.tools.values()]
            return steps[-1] + (f" (+{len(steps) - 1} more)" if len(steps) > 1 else "")
        if self.model_call is not None:
            return self.model_call.step
        if self.note:
            return self.note
        return "working" if self.model_calls or self.tool_calls else "starting"

    def busy_since(self) -> float | None:
        """When the call in flight started (a spinner and an elapsed counter show while it runs)."""
        if self.finished:
            return None
        starts = [t.since for t in self.tools.values()] + ([self.model_call.since] if self.model_call else [])
        return min(starts) if starts else None


@dataclass
class RoundNode:
    round: int
    agent_ids: list[str]
    started: float
    ended: float | None = None
    query_type: str = ""
    rationale: str = ""
    purpose: RoundPurpose = RoundPurpose.RESEARCH

    @property
    def label(self) -> str:
        """"round 2", or "round 2 (replan)" for a new plan after failed tasks (not one of --max-rounds)."""
        return f"round {self.round}" + (" (replan)" if self.purpose is RoundPurpose.REPLAN else "")


@dataclass
class ProgressTree:
    """The fold. `apply(record)` for every event, in order; read the fields to draw."""

    run_id: str = ""
    question: str = ""
    lead_model: str = ""
    subagent_model: str = ""
    language_model_used: bool = True
    status: RunStatus = RunStatus.RUNNING
    error: str | None = None
    budget_usd: float | None = None  # a run-wide cost budget, when the run states one
    max_rounds: int | None = None
    agents: dict[str, AgentNode] = field(default_factory=dict)
    rounds: dict[int, RoundNode] = field(default_factory=dict)
    plans_rejected: int = 0
    replans_asked: set[str] = field(default_factory=set)  # failed agents the lead is asked to replan for, now
    citations: str = ""
    report_path: str = ""
    corpus_lines: list[str] = field(default_factory=list)
    last_t: float = 0.0
    ended: float | None = None

    def apply(self, rec: EventRecord) -> None:
        self.run_id = self.run_id or rec.run_id
        self.last_t = max(self.last_t, rec.t)
        if rec.agent_id == RUN_AGENT:
            self._run_event(rec)
            return
        node = self.agents.get(rec.agent_id)
        if node is None:
            node = self.agents[rec.agent_id] = AgentNode(rec.agent_id)
        node.turns = max(node.turns, rec.turn)
        self._agent_event(node, rec)

    def apply_all(self, records: Iterable[EventRecord]) -> "ProgressTree":
        for rec in records:
            self.apply(rec)
        return self

    # ---- run-level events
    def _run_event(self, rec: EventRecord) -> None:
        e = rec.event
        if isinstance(e, RunStarted):
            self.question, self.lead_model, self.subagent_model = e.question, e.lead_model, e.subagent_model
            self.language_model_used = e.language_model_used
            rounds = e.options.get("max_rounds")
            self.max_rounds = rounds if isinstance(rounds, int) else None
            budget = e.options.get("max_cost")
            self.budget_usd = float(budget) if isinstance(budget, (int, float)) else None
        elif isinstance(e, CitationChecked):
            self.citations = f"{e.supported}/{e.markers} citations supported"
        elif isinstance(e, ReportWritten):
            self.report_path = e.path
        elif isinstance(e, RunEnded):
            self.status, self.error, self.ended = e.status, e.error, rec.t

    # ---- an agent's events
    def _agent_event(self, node: AgentNode, rec: EventRecord) -> None:
        e, t = rec.event, rec.t
        if isinstance(e, AgentStarted):
            node.role, node.model, node.round, node.started = e.role, e.model, e.round, t
            if e.delegation is not None:
                node.objective = e.delegation.objective
                node.max_tool_calls = e.delegation.budget.max_tool_calls
        elif isinstance(e, ModelRequested):
            node.model_call = InFlight("model", self.thinking(node), t)
        elif isinstance(e, ModelResponded):
            node.model_call = None
            node.model_calls += 1
            node.usage = node.usage + e.usage
            c = cost(e.usage, e.model)
            node.cost_usd = None if c is None or node.cost_usd is None else node.cost_usd + c
        elif isinstance(e, ModelRetried):
            node.note = f"retrying ({e.status}, attempt {e.attempt}, wait {e.wait:.0f}s)"
            if node.model_call is not None:
                node.model_call.step = f"{self.thinking(node)}: {node.note}"
        elif isinstance(e, ToolCalled) and e.over_budget:  # never runs: not a call in flight, nor counted
            node.refused_over_budget += 1
        elif isinstance(e, ToolCalled):
            node.tools[e.id] = InFlight(e.name, tool_step(e.name, e.input), t, e.id)
            if e.name != SUBMIT_FINDINGS:
                node.tool_calls += 1
        elif isinstance(e, ToolReturned):
            node.tools.pop(e.id, None)
            node.tool_errors += e.is_error and e.ran
        else:
            self._agent_other(node, rec)

    def _agent_other(self, node: AgentNode, rec: EventRecord) -> None:
        e, t = rec.event, rec.t
        if isinstance(e, ContextCondensed):
            node.condensed += 1
            node.note = f"condensed its context ({len(e.notes)} change(s))"
        elif isinstance(e, BudgetExhausted):
            node.wrapping_up = e.budget.replace("_", " ")
            node.note = f"{node.wrapping_up} used up: wrapping up"
        elif isinstance(e, FindingsSubmitted):
            node.claims = len(e.findings.claims)
        elif isinstance(e, AgentFailed):
            node.error = e.error
        elif isinstance(e, AgentEnded):
            node.status, node.ended, node.model_call = e.status, t, None
            node.tools.clear()
            node.error = e.error or node.error
        elif isinstance(e, PlanAccepted):
            self.rounds.setdefault(e.round, RoundNode(e.round, [task.agent_id for task in e.tasks], t))
            self.rounds[e.round].query_type, self.rounds[e.round].rationale = e.query_type.value, e.rationale
        elif isinstance(e, PlanRejected):
            self.plans_rejected += 1
            node.note = f"plan rejected: {_clip('; '.join(e.problems), 80)}"
        elif isinstance(e, RoundStarted):
            r = self.rounds.setdefault(e.round, RoundNode(e.round, list(e.agent_ids), t))
            r.started, r.agent_ids, r.purpose = t, list(e.agent_ids), e.purpose
            self.replans_asked.clear()
            for call in node.tools.values():  # the delegate call lasts as long as its round
                if call.what == DELEGATE:
                    call.step = f"waiting for {r.label} ({len(e.agent_ids)} subagents)"
        elif isinstance(e, RoundEnded) and e.round in self.rounds:
            self.rounds[e.round].ended = t
        elif isinstance(e, ReplanDecided) and e.strategy is Strategy.REPLAN:
            self.replans_asked.add(e.agent_id)
        elif isinstance(e, ReplanDecided):  # a later decision for it (stop: the lead wrote the report instead)
            self.replans_asked.discard(e.agent_id)

    def thinking(self, node: AgentNode) -> str:
        """What a model call in flight is for, in words."""
        if node.wrapping_up:
            return f"wrapping up ({node.wrapping_up} used up)"
        if node.role is AgentRole.LEAD:
            if not self.rounds:
                return "planning"
            if any(r.ended is None for r in self.rounds.values()):
                return "thinking"
            if self.replans_asked:  # failed tasks: a replan (bounded by --max-replans, not --max-rounds)
                return "reading findings: a replan or the report"
            research = sum(r.purpose is RoundPurpose.RESEARCH for r in self.rounds.values())
            if self.max_rounds is not None and research >= self.max_rounds:  # replans are not in --max-rounds
                return "reading findings, writing the report"  # no round left: this call writes the report
            return "reading findings: a gap round or the report"
        return "thinking"

    # ---- reading
    @property
    def lead(self) -> AgentNode | None:
        """The agent at the top: the lead, or the one agent of a single-agent run."""
        tops = [a for a in self.agents.values() if a.role is not None and a.role is not AgentRole.SUBAGENT]
        return next((a for a in tops if a.role is AgentRole.LEAD), tops[0] if tops else None)

    def subagents_of(self, round_no: int) -> list[AgentNode]:
        r = self.rounds.get(round_no)
        ids = r.agent_ids if r else []
        known = [self.agents[a] for a in ids if a in self.agents]
        pending = [AgentNode(a, role=AgentRole.SUBAGENT, round=round_no) for a in ids if a not in self.agents]
        return known + pending

    def usage(self) -> Usage:
        total = Usage()
        for a in self.agents.values():
            total = total + a.usage
        return total

    def cost_usd(self) -> float | None:
        total: float | None = 0.0
        for a in self.agents.values():
            total = None if total is None or a.cost_usd is None else total + a.cost_usd
        return total

    def counts(self) -> dict[str, int]:
        subs = [a for a in self.agents.values() if a.role is AgentRole.SUBAGENT]
        return {"subagents": len(subs), "running": sum(not a.finished for a in subs),
                "done": sum(a.finished for a in subs),
                "failed": sum(a.status is AgentStatus.FAILED for a in subs),
                "tool_calls": sum(a.tool_calls for a in self.agents.values()),
                "model_calls": sum(a.model_calls for a in self.agents.values())}

    def elapsed(self, now: float) -> float:
        return self.ended if self.ended is not None else now


__all__ = ["AgentNode", "InFlight", "ProgressTree", "RoundNode", "fmt_cost", "fmt_secs", "fmt_tokens", "tool_step"]
