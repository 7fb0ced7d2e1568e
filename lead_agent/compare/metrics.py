"""Metrics of one run, read from its transcripts through the typed run reader (`read_run`); no model.

Every metric is a number or None (not applicable: a single agent has no subagents to duplicate
each other; a question without gold answers has no answer match). `METRICS` describes each one:
its label, which direction is better, and whether differences read best in percent (costs, counts)
or in points (rates and scores in [0, 1]).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Iterable, Mapping

from subagents.context import AgentRole
from subagents.delegation import QueryType
from subagents.events import ModelResponded, ToolCalled, ToolReturned
from subagents.runs import AgentTrace, Run
from subagents.tool_names import DELEGATE, SEARCH_TOOLS, SUBMIT_FINDINGS

from .gold import gold_hit, match_answers
from .questions import Question


class Better(StrEnum):
    LOWER = "lower"
    HIGHER = "higher"
    NEITHER = "neither"  # a description (how many subagents), not a quality


class Scale(StrEnum):
    RELATIVE = "relative"  # differences in percent of the baseline (costs, counts, times)
    POINTS = "points"  # differences in absolute points (rates and scores in [0, 1])


@dataclass(frozen=True)
class MetricInfo:
    key: str
    label: str
    better: Better
    scale: Scale
    words: tuple[str, str] | None = None  # what B does when its value is higher / lower

    def phrase(self, higher: bool) -> str:
        """The verb phrase of a verdict: "is cheaper", "starts more subagents", "scores higher on …"."""
        if self.words is not None:
            return self.words[0 if higher else 1]
        return f"scores {'higher' if higher else 'lower'} on {self.label}"


L, H, N, R, P = Better.LOWER, Better.HIGHER, Better.NEITHER, Scale.RELATIVE, Scale.POINTS


def _more(label: str) -> tuple[str, str]:
    return f"has more {label}", f"has fewer {label}"


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("cost_usd", "cost (USD)", L, R, ("is more expensive", "is cheaper")),
    MetricInfo("input_tokens", "input tokens", L, R, ("uses more input tokens", "uses fewer input tokens")),
    MetricInfo("output_tokens", "output tokens", L, R, ("uses more output tokens", "uses fewer output tokens")),
    MetricInfo("cache_read_tokens", "cache-read tokens", N, R, _more("cache-read tokens")),
    MetricInfo("cache_write_tokens", "cache-write tokens", L, R, _more("cache-write tokens")),
    MetricInfo("wall_seconds", "wall time (s)", L, R, ("is slower", "is faster")),
    MetricInfo("critical_path_seconds", "critical-path bound (s)", L, R,
               ("has a longer critical path", "has a shorter critical path")),
    MetricInfo("wall_over_critical_path", "wall / critical path", L, R),
    MetricInfo("subagents", "subagents", N, R, ("starts more subagents", "starts fewer subagents")),
    MetricInfo("rounds", "rounds", N, R, ("runs more rounds", "runs fewer rounds")),
    MetricInfo("tool_calls", "tool calls", N, R, ("makes more tool calls", "makes fewer tool calls")),
    MetricInfo("plans_rejected", "plans rejected", L, R, _more("plans rejected")),
    MetricInfo("findings_invalid", "findings that failed validation", L, R, _more("findings that failed validation")),
    MetricInfo("tool_calls_refused", "tool calls refused by the allow-list", L, R,
               _more("tool calls refused by the allow-list")),
    MetricInfo("duplicate_queries", "duplicate queries between siblings", L, P),
    MetricInfo("duplicate_sources", "duplicate sources between siblings", L, P),
    MetricInfo("effort_fit", "effort fit", H, P),
    MetricInfo("claims", "claims", N, R, ("returns more claims", "returns fewer claims")),
    MetricInfo("sources_retrieved", "distinct sources retrieved", N, R, ("retrieves more sources", "retrieves fewer sources")),
    MetricInfo("sources_cited", "distinct sources cited", H, R, ("cites more sources", "cites fewer sources")),
    MetricInfo("citation_pass_rate", "citation pass rate", H, P),
    MetricInfo("answer_match", "gold answer contained", H, P),
    MetricInfo("answer_parts", "gold answer parts contained", H, P),
    MetricInfo("answer_f1", "gold answer token F1", H, P),
    MetricInfo("gold_source_cited", "gold source cited", H, P),
    MetricInfo("gold_source_retrieved", "gold source retrieved", H, P),
)
BY_KEY: Mapping[str, MetricInfo] = {m.key: m for m in METRICS}

# Effort that fits a query type (Anthropic's guidance for its research system: a fact needs one agent
# and 3-10 tool calls, a comparison 2-4 subagents with 10-15 calls each; broad research many more).
EFFORT_FIT: Mapping[QueryType, tuple[tuple[int, int], tuple[int, int]]] = {
    QueryType.STRAIGHTFORWARD: ((1, 1), (3, 10)),  # (subagents in round 1, tool calls per subagent)
    QueryType.DEPTH_FIRST: ((2, 4), (3, 15)),
    QueryType.BREADTH_FIRST: ((2, 10), (3, 15)),
}


def fit(x: float, lo: float, hi: float) -> float:
    """1 inside [lo, hi], falling off as the ratio outside it."""
    if x <= 0:
        return 0.0
    return 1.0 if lo <= x <= hi else (x / lo if x < lo else hi / x)


# ---------------------------------------------------------------- pieces


def chain_seconds(agent: AgentTrace) -> float:
    """An agent's own critical path: its model calls plus, per turn, its slowest tool call
    (the delegate tool, which waits for a whole round, excluded)."""
    model = 0.0
    tools: dict[int, float] = defaultdict(float)
    for rec in agent.records:
        e = rec.event
        if isinstance(e, ModelResponded):
            model += e.seconds
        elif isinstance(e, ToolReturned) and e.name != DELEGATE:
            tools[rec.turn] = max(tools[rec.turn], e.seconds)
    return model + sum(tools.values())


def critical_path(run: Run) -> float:
    """The run's lower bound on wall time: the lead's (or single agent's) chain plus, per round, the
    slowest subagent's chain."""
    agents = run.trace.agents
    own = sum(chain_seconds(a) for a in agents.values() if a.role in (AgentRole.LEAD, AgentRole.SINGLE))
    by_round: dict[int, float] = defaultdict(float)
    for a in agents.values():
        if a.role is AgentRole.SUBAGENT:
            by_round[a.round or 0] = max(by_round[a.round or 0], chain_seconds(a))
    return own + sum(by_round.values())


def _queries(agent: AgentTrace) -> set[str]:
    return {" ".join(str(e.input.get("query", "")).lower().split()) for e in _calls(agent) if e.name in SEARCH_TOOLS}


def _calls(agent: AgentTrace) -> Iterable[ToolCalled]:
    """The calls that ran or were answered (not those refused over the agent's budget)."""
    return (r.event for r in agent.records if isinstance(r.event, ToolCalled) and not r.event.over_budget)


def duplicate_share(sets: Mapping[str, set[str]], siblings: Mapping[str, list[str]]) -> float | None:
    """Share of the items each agent produced that a sibling (same round) also produced."""
    total = sum(len(s) for s in sets.values())
    if not total:
        return None
    dup = 0
    for agent, items in sets.items():
        others = set().union(*(sets.get(o, set()) for o in siblings.get(agent, [])))
        dup += len(items & others)
    return dup / total


def effort_fit(run: Run, subagents: list[AgentTrace]) -> float | None:
    if not run.trace.plans:
        return None
    first = run.trace.plans[0]
    (slo, shi), (tlo, thi) = EFFORT_FIT[first.query_type]
    round1 = [a for a in subagents if (a.round or 1) == first.round]
    per_agent = sum(a.tool_calls for a in round1) / len(round1) if round1 else 0
    return (fit(len(first.tasks), slo, shi) + fit(per_agent, tlo, thi)) / 2


# ---------------------------------------------------------------- all metrics of a run


def run_metrics(run: Run, question: Question) -> dict[str, Any]:
    trace = run.trace
    agents = list(trace.agents.values())
    subs = [a for a in agents if a.role is AgentRole.SUBAGENT]
    workers = [a for a in agents if a.role in (AgentRole.SUBAGENT, AgentRole.SINGLE)]
    usage = trace.usage()
    bound = critical_path(run)
    wall = trace.last_t
    siblings = {a.agent_id: [b.agent_id for b in subs if b.round == a.round and b is not a] for a in subs}
    keys_by_agent: dict[str, set[str]] = defaultdict(set)
    for src in run.sources:
        for agent_id in src.retrieved_by:
            keys_by_agent[agent_id].add(src.key)
    multi = bool(subs)
    cited = set(trace.citation.cited_sources) if trace.citation else set()
    by_id = {s.id: s for s in run.sources}
    report = run.report or ""
    match = match_answers(report, question.answers) if run.report is not None else None
    m: dict[str, Any] = {
        "cost_usd": trace.cost_usd(),
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_input_tokens, "cache_write_tokens": usage.cache_creation_input_tokens,
        "wall_seconds": round(wall, 4), "critical_path_seconds": round(bound, 4),
        "wall_over_critical_path": round(wall / bound, 4) if bound > 0 else None,
        "subagents": len(subs), "rounds": len(trace.rounds),
        "tool_calls": sum(a.tool_calls for a in workers),
        "plans_rejected": len(trace.rejections),
        "findings_invalid": sum(1 for a in workers for r in a.records if isinstance(r.event, ToolReturned)
                                and r.event.name == SUBMIT_FINDINGS and r.event.is_error),
        "tool_calls_refused": sum(1 for a in agents for e in _calls(a) if a.allowed_tools and e.name not in a.allowed_tools),
        "duplicate_queries": duplicate_share({a.agent_id: _queries(a) for a in subs}, siblings) if multi else None,
        "duplicate_sources": duplicate_share({a.agent_id: keys_by_agent[a.agent_id] for a in subs}, siblings)
        if multi else None,
        "effort_fit": effort_fit(run, subs) if multi else None,
        "claims": sum(len(a.findings.claims) for a in subs if a.findings) if multi else None,
        "sources_retrieved": len({s.key for s in run.sources}),
        "sources_cited": len({by_id[s].key for s in cited if s in by_id}),
        "citation_pass_rate": trace.citation.pass_rate if trace.citation else None,
        "answer_match": match.contains if match else None,
        "answer_parts": match.parts if match else None,
        "answer_f1": round(match.f1, 4) if match else None,
        "gold_source_cited": gold_hit(question.gold_sources, [x for s in cited if s in by_id for x in _locators(by_id[s])]),
        "gold_source_retrieved": gold_hit(question.gold_sources, [x for s in run.sources for x in _locators(s)]),
    }
    return m


def _locators(source: Any) -> list[str]:
    """Where a source is, as gold sources name it: its path, or for a passage of a PDF one `path#page=N` per
    page it is on."""
    path = str(source.meta.get("path") or source.locator)
    pages = source.meta.get("pages") or ([source.meta["page"]] if source.meta.get("page") is not None else [])
    return [f"{path}#page={n}" for n in pages] if pages and source.meta.get("path") else [path]


def query_type(run: Run) -> str | None:
    return run.trace.plans[0].query_type.value if run.trace.plans else None
