"""The extractive model: the offline default. No language model — a deterministic policy that
drives the same agent loops through the same tool calls a language model would make.

It is stateless like an API model: every decision is read from the request's typed context (role,
allowed tools, the lead's limits and findings so far, a subagent's delegation) and from the tool
results so far. It never reads prompt prose, so any prompt variant drives it the same way.

- Lead, first turn: classify the question (straightforward / breadth-first / depth-first) from
  its structure and call `delegate` with one task per compared entity, listed part or facet.
- Subagent: issue its searches in one turn (run concurrently by the loop), read the best
  passages (reciprocal-rank fusion over the queries), then submit findings made of the retrieved
  sentences that best answer its objective (IDF-weighted term overlap, de-duplicated), each with
  the id of the source it was taken from.
- Lead, after findings: start a gap round for objectives left without enough support (when
  rounds remain), else assemble the report from the ranked claims, citing their sources.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..context import AgentRole, LeadLimits, RequestContext, RoundReport
from ..delegation import QueryType
from ..model import (Message, ModelRequest, ModelResponse, StopReason, TextBlock, ToolResultBlock, ToolUseBlock,
                     Usage)
from ..text import STOPWORDS, WORD, content_term_list, content_terms, sentences, stem, words
from ..tool_names import DELEGATE, FETCH_PAGE, READ_PASSAGE, SEARCH_TOOLS, SUBMIT_FINDINGS

READ_TOOLS = {READ_PASSAGE: "passage_id", FETCH_PAGE: "url"}
MAX_QUERIES = 3
MAX_READS = 4
MAX_CLAIMS = 6
MIN_CLAIMS_OK = 2


def _tag(text: str, name: str) -> str | None:
    m = re.search(rf"<{name}\b[^>]*>\s*(.*?)\s*</{name}>", text, re.S)
    return m.group(1) if m else None


def _material(content: str) -> Any:
    body = _tag(content, "retrieved_material")
    try:
        return json.loads(body if body is not None else content)
    except (json.JSONDecodeError, TypeError):
        return None


def _respond(blocks: list[Any], stop: StopReason) -> ModelResponse:
    return ModelResponse(blocks, stop, Usage(), model="extractive")


def _uses(messages: list[Message]) -> list[tuple[ToolUseBlock, ToolResultBlock | None]]:
    """All tool calls so far with their results, in order."""
    results = {b.tool_use_id: b for m in messages for b in m.content if isinstance(b, ToolResultBlock)}
    return [(b, results.get(b.id)) for m in messages for b in m.content if isinstance(b, ToolUseBlock)]


# ---------------------------------------------------------------- question analysis

_COMPARE = [
    re.compile(r"\b(?:compare|contrast)\s+(?:how\s+|the\s+)?(?P<list>.+?)(?:\s+(?:in terms of|regarding|on|for|when|by)\s+(?P<aspect>.+))?$", re.I),
    re.compile(r"\bdifferences?\s+between\s+(?P<list>.+?)(?:\s+(?:in terms of|regarding|when|for)\s+(?P<aspect>.+))?$", re.I),
    re.compile(r"^(?P<list>.+?\b(?:vs\.?|versus)\b.+?)(?:[:,]\s*(?P<aspect>.+))?$", re.I),
]


def _split_list(text: str) -> list[str]:
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs\.?|versus)\s+", text.strip(" ?.!"))
    return [p.strip(" ?.!\"'`") for p in parts if p.strip(" ?.!\"'`")]


def classify(question: str) -> tuple[str, list[str], str]:
    """Return (query_type, parts, aspect). parts: compared entities / listed items / facets."""
    q = " ".join(question.split()).rstrip("?.! ")
    for pat in _COMPARE:
        m = pat.search(q)
        if m:
            items = _split_list(m.group("list"))
            aspect = (m.groupdict().get("aspect") or "").strip()
            if len(items) >= 2:
                # "compare how X and Y plan research": the trailing verb phrase is the aspect
                last = items[-1].split()
                if not aspect and len(last) > 2:
                    items[-1], aspect = last[0], " ".join(last[1:])
                return "breadth_first", items, aspect
    listed = re.search(r"\b(?:of|between|for|about)\s+([^,]+(?:,\s*[^,]+)+,?\s*(?:and|or)\s+[^,?]+)", q)
    if listed:
        items = _split_list(listed.group(1))
        if len(items) >= 3:
            return "breadth_first", items, q[: listed.start()].strip()
    terms = content_term_list(q)
    if re.match(r"^(why|how)\b", q, re.I) or re.search(r"\bwhat happens\b|\bexplain\b|\bin what way", q, re.I) or len(terms) >= 7:
        return "depth_first", [], ""
    return "straightforward", [], ""


_FACETS = re.compile(r"^(?:\(gap\)\s*)?(?:(?:Answer directly|Mechanism and details behind|"
                     r"Exceptions, errors, caveats and examples related to):\s*)?")  # labels, not topics


def _key_phrase(question: str, n: int = 7) -> str:
    """The question's content words in order (dotted names whole), for a keyword query."""
    seen: list[str] = []
    for m in WORD.finditer(_FACETS.sub("", question)):
        w = m.group(0)
        if w.lower() not in STOPWORDS and len(w) > 1 and w.lower() not in (x.lower() for x in seen):
            seen.append(w)
    return " ".join(seen[:n])


def plan_tasks(question: str, tools: list[str], limits: LeadLimits) -> dict[str, Any]:
    qtype, parts, aspect = classify(question)
    max_tasks = limits.tasks_per_query_type[QueryType(qtype)]
    key = _key_phrase(question)
    tasks: list[dict[str, Any]] = []
    if qtype == "breadth_first":
        aspect_terms = _key_phrase(aspect, 4) if aspect else ""
        for part in parts[:max_tasks]:
            others = [p for p in parts if p != part]
            tasks.append({
                "objective": f"{part}: {aspect} (part of: {question})" if aspect else f"{part} (part of: {question})",
                "queries": [f"{part} {aspect_terms}".strip(), part],
                "boundaries": {"out_of_scope": [f"details of {o}" for o in others]},
            })
        rationale = f"the question compares or lists {len(parts)} parts; one subagent per part"
    elif qtype == "depth_first":
        facets = [
            (f"Answer directly: {question}", [key, question]),
            (f"Mechanism and details behind: {question}", [f"{_key_phrase(question, 3)} how", key]),
            (f"Exceptions, errors, caveats and examples related to: {question}",
             [f"{_key_phrase(question, 3)} error exception", f"{_key_phrase(question, 3)} example"]),
        ]
        for obj, queries in facets[:max(1, max_tasks)]:
            tasks.append({"objective": obj, "queries": queries})
        rationale = "one topic that needs several angles: the direct answer, the mechanism, the caveats"
    else:
        tasks.append({"objective": question, "queries": [key, question]})
        rationale = "a single fact: one subagent"
    for t in tasks:
        t["tools"] = list(tools)
        t["output_format"] = "Up to 6 claims quoted from the sources, each with its source ids."
        t["budget"] = {"max_tool_calls": 1 + MAX_QUERIES + MAX_READS, "max_seconds": 60}
    return {"query_type": qtype, "rationale": rationale, "tasks": tasks}


# ---------------------------------------------------------------- sentence ranking

@dataclass
class Candidate:
    text: str
    source_id: str
    rank: int  # rank of its passage (0 best)
    heading: str = ""
    score: float = 0.0
    terms: set[str] = field(default_factory=set)


_CODE = re.compile(r"(?:^|\s)(?:async\s+def|def|class|import|from\s+\S+\s+import|return|print\()\b|"
                   r"[=!<>]=|\)\s*:|\w\s*=\s*\w|[{};]\s*$|^\s*[$#>]")
_BOILERPLATE = re.compile(r"^(?:New in version|Changed in version|Deprecated since version|See also|Source code:)", re.I)


def _good_sentence(s: str) -> bool:
    """Prose a reader can take as a claim: no code, no version notes, a real sentence length."""
    n = len(s.split())
    if n < 7 or n > 70 or s.endswith(":") or _BOILERPLATE.match(s) or _CODE.search(s):
        return False
    letters = sum(c.isalpha() for c in s)
    return letters >= 0.6 * len(s) and s[0].isalnum() or s[0] in "\"'(`"


def rank_sentences(query: str, candidates: list[Candidate], limit: int) -> list[Candidate]:
    qterms = content_terms(query)
    if not qterms:
        return []
    for c in candidates:
        c.terms = content_terms(c.text)
    n = len(candidates) or 1
    df = {t: sum(1 for c in candidates if t in c.terms) for t in qterms}
    idf = {t: math.log(1 + n / (1 + df[t])) for t in qterms}
    for c in candidates:
        hit = qterms & c.terms
        heading_hit = qterms & content_terms(c.heading)
        if len(hit) < (2 if len(qterms) >= 4 else 1):
            c.score = 0.0
            continue
        coverage = sum(idf[t] for t in hit) / sum(idf.values())
        c.score = (sum(idf[t] for t in hit) + 0.3 * sum(idf[t] for t in heading_hit)) * (0.5 + coverage)
        c.score /= (1 + 0.1 * c.rank) * (1 + 0.02 * max(0, len(c.terms) - 20))
    chosen: list[Candidate] = []
    for c in sorted(candidates, key=lambda c: (-c.score, c.rank)):
        if c.score <= 0 or len(chosen) >= limit:
            break
        if any(len(c.terms & o.terms) / max(1, len(c.terms | o.terms)) > 0.6 for o in chosen):
            continue
        chosen.append(c)
    return chosen


# ---------------------------------------------------------------- the model

class ExtractiveModel:
    name = "extractive"
    is_language_model = False

    async def complete(self, request: ModelRequest) -> ModelResponse:
        ctx = request.context
        if ctx is not None and ctx.role is AgentRole.LEAD and ctx.limits is not None:
            return self._lead(request, ctx, ctx.limits)
        if ctx is not None and ctx.role is AgentRole.SUBAGENT and ctx.delegation is not None:
            return self._subagent(request, ctx)
        return _respond([TextBlock("(extractive model: no task recognised in this request)")], StopReason.END_TURN)

    # ---- lead
    def _lead(self, request: ModelRequest, ctx: RequestContext, limits: LeadLimits) -> ModelResponse:
        question, rounds = ctx.question, list(ctx.rounds)
        sub_tools = list(limits.subagent_tools)
        if ctx.wrap_up:  # the run's budget is reached: the report from what there is
            return _respond([TextBlock(self._report(question, rounds))], StopReason.END_TURN)
        calls = _uses(request.messages)
        last = calls[-1] if calls else None
        if last is not None and last[0].name == DELEGATE and last[1] is not None and last[1].is_error \
                and limits.rounds_left > 0:
            # a plan this model made within the limits in force was refused: nothing more it can do
            return _respond([TextBlock(f"# {question}\n\nNo plan was accepted.")], StopReason.END_TURN)
        if not rounds and limits.rounds_left > 0:
            return self._delegate(len(request.messages), plan_tasks(question, sub_tools, limits))
        gaps = self._gaps(rounds)
        if gaps and limits.rounds_left > 0 and len(rounds) < 2:
            most = limits.tasks_per_query_type[QueryType.DEPTH_FIRST]
            plan = {"query_type": "depth_first", "rationale": "gap round: " + "; ".join(g["why"] for g in gaps),
                    "tasks": [dict(g["task"], tools=sub_tools) for g in gaps[:most]]}
            return self._delegate(len(request.messages), plan)
        return _respond([TextBlock(self._report(question, rounds))], StopReason.END_TURN)

    @staticmethod
    def _delegate(n: int, plan: dict[str, Any]) -> ModelResponse:
        return _respond([ToolUseBlock(f"toolu_ex_{n:03d}_0", DELEGATE, plan)], StopReason.TOOL_USE)

    @staticmethod
    def _gaps(rounds: list[RoundReport]) -> list[dict[str, Any]]:
        latest: dict[str, Any] = {}
        gap_objectives = {s.delegation.objective for r in rounds for s in r.subagents
                          if s.delegation.objective.startswith("(gap)")}
        for rnd in rounds:
            for sub in rnd.subagents:
                obj = re.sub(r"^\(gap\) ", "", sub.delegation.objective)
                prev = latest.get(obj)
                if prev is None or len(sub.findings.claims) >= len(prev.findings.claims):
                    latest[obj] = sub
        gaps = []
        for obj, sub in latest.items():
            claims = sub.findings.claims
            if sub.status.value == "ok" and len(claims) >= MIN_CLAIMS_OK:
                continue
            if obj.startswith("(gap)") or f"(gap) {obj}" in gap_objectives:
                continue
            missing = " ".join(q.split("mentioned:")[-1] for q in sub.findings.open_questions if "mentioned:" in q)
            key = _key_phrase(obj, 4)
            queries = [q for q in (f"{key} {missing}".strip(), key, " ".join(content_term_list(obj)[:3])) if q]
            why = f"“{obj[:60]}” ended {sub.status.value} with {len(claims)} claim(s)"
            gaps.append({"why": why, "task": {"objective": f"(gap) {obj}", "queries": list(dict.fromkeys(queries)),
                                               "output_format": "Up to 6 claims quoted from the sources, with source ids.",
                                               "budget": {"max_tool_calls": 1 + MAX_QUERIES + MAX_READS, "max_seconds": 60}}})
        return gaps

    @staticmethod
    def _report(question: str, rounds: list[RoundReport]) -> str:
        claims: list[Candidate] = []
        sections: list[tuple[str, list[Any], list[str]]] = []
        for rnd in rounds:
            for sub in rnd.subagents:
                sections.append((sub.delegation.objective, sub.findings.claims, sub.findings.open_questions))
                for i, c in enumerate(sub.findings.claims):
                    claims.append(Candidate(c.text, ",".join(c.source_ids), i))
        top = rank_sentences(question, claims, 3)
        lines = [f"# {question}", "", "## Answer", ""]
        if top:
            lines += [f"{c.text} [{', '.join(c.source_id.split(','))}]" for c in top]
        else:
            lines.append("The retrieved sources did not yield passages that answer this question.")
        shown = {c.text for c in top}
        lines += ["", "## Findings"]
        open_qs: list[str] = []
        for objective, sub_claims, oq in sections:
            rest = [c for c in sub_claims if c.text not in shown]
            shown.update(c.text for c in rest)
            open_qs += oq
            if not rest:
                continue
            lines += ["", f"### {objective}", ""]
            lines += [f"- {c.text} [{', '.join(c.source_ids)}]" for c in rest]
        if open_qs:
            lines += ["", "## Open questions", ""] + [f"- {q}" for q in dict.fromkeys(open_qs)]
        return "\n".join(lines)

    # ---- subagent
    def _subagent(self, request: ModelRequest, ctx: RequestContext) -> ModelResponse:
        msgs = request.messages
        assert ctx.delegation is not None
        delegation = ctx.delegation.model_dump(mode="json")
        objective = ctx.delegation.objective
        allowed = list(ctx.allowed_tools)
        calls = _uses(msgs)
        budget = ctx.delegation.budget.max_tool_calls
        used = len(calls)
        search_tools = [t for t in SEARCH_TOOLS if t in allowed]  # corpus and web both, when given both
        searches = [(u, r) for u, r in calls if u.name in SEARCH_TOOLS]
        reads = [(u, r) for u, r in calls if u.name in READ_TOOLS]
        n = len(msgs)
        if not ctx.wrap_up and search_tools and not searches and used < budget:
            focus = _FACETS.sub("", objective)  # "(gap)" is a label, not a search term
            queries = list(dict.fromkeys(delegation.get("queries") or [])) or [_key_phrase(focus), focus]
            queries = list(dict.fromkeys(q for q in queries if content_terms(q)))[: min(MAX_QUERIES, budget - 1)]
            pairs = [(t, q) for q in (queries or [focus]) for t in search_tools][: max(1, budget - 1)]
            return _respond([ToolUseBlock(f"toolu_ex_{n:03d}_{i}", t, {"query": q, "k": 8})
                             for i, (t, q) in enumerate(pairs)], StopReason.TOOL_USE)
        if not ctx.wrap_up and searches and not reads and used < budget:
            picks = self._pick_reads(searches, allowed, min(MAX_READS, budget - used))
            if picks:
                return _respond([ToolUseBlock(f"toolu_ex_{n:03d}_{i}", tool, {arg: value})
                                 for i, (tool, arg, value) in enumerate(picks)], StopReason.TOOL_USE)
        return _respond([ToolUseBlock(f"toolu_ex_{n:03d}_0", SUBMIT_FINDINGS,
                                      self._findings(objective, delegation, searches, reads))], StopReason.TOOL_USE)

    @staticmethod
    def _pick_reads(searches: list[tuple[ToolUseBlock, ToolResultBlock | None]], allowed: list[str],
                    n: int) -> list[tuple[str, str, str]]:
        fused: dict[tuple[str, str, str], float] = {}
        for _, res in searches:
            data = _material(res.content) if res is not None and not res.is_error else None
            for rank, item in enumerate((data or {}).get("results", [])):
                if "passage_id" in item and READ_PASSAGE in allowed:
                    key = (READ_PASSAGE, "passage_id", item["passage_id"])
                elif "url" in item and FETCH_PAGE in allowed:
                    key = (FETCH_PAGE, "url", item["url"])
                else:
                    continue
                fused[key] = fused.get(key, 0.0) + 1.0 / (60 + rank)
        return [k for k, _ in sorted(fused.items(), key=lambda kv: -kv[1])][: max(0, n)]

    @staticmethod
    def _findings(objective: str, delegation: dict[str, Any], searches: list, reads: list) -> dict[str, Any]:
        candidates: list[Candidate] = []
        rank = 0
        for _, res in reads + searches:  # full reads first; snippets only add what reads lack
            data = _material(res.content) if res is not None and not res.is_error else None
            if not isinstance(data, dict):
                continue
            if "results" in data:
                items = [(r.get("source_id"), r.get("snippet", ""), r.get("heading") or r.get("title", "")) for r in data["results"]]
            elif "passages" in data:
                items = [(p.get("source_id"), p.get("text", ""), p.get("heading") or data.get("title", "")) for p in data["passages"]]
            else:
                items = [(data.get("source_id"), data.get("text", ""), f"{data.get('title', '')} {data.get('heading', '')}")]
                for side in ("context_before", "context_after"):
                    ctx = data.get(side)
                    if isinstance(ctx, dict):
                        items.append((ctx.get("source_id"), ctx.get("text", ""), ctx.get("heading", "")))
            for sid, text, heading in items:
                if not sid:
                    continue
                for s in sentences(text or ""):
                    s = re.sub(r"^[-*•]\s+", "", s.strip(" …").strip())
                    if s.endswith("…") or not _good_sentence(s):
                        continue
                    candidates.append(Candidate(s, sid, rank, heading))
                rank += 1
        seen: set[str] = set()
        unique = [c for c in candidates if not (c.text in seen or seen.add(c.text))]
        focus = re.sub(r"\(part of:.*\)$", "", _FACETS.sub("", objective))
        query = " ".join([focus] + list(delegation.get("queries") or []))
        chosen = rank_sentences(query, unique, MAX_CLAIMS)
        wanted = content_terms(re.sub(r"\(part of:.*\)|\(gap\)|Answer directly:|Mechanism and details behind:|"
                                      r"Exceptions, errors, caveats and examples related to:", " ", objective))
        covered = set().union(*(c.terms for c in chosen)) if chosen else set()
        missing = sorted(wanted - covered)
        status = "ok" if len(chosen) >= MIN_CLAIMS_OK and len(wanted & covered) >= 0.5 * max(1, len(wanted)) else (
            "partial" if chosen else "failed")
        orig = {stem(w): w for w in words(objective)}
        open_questions = [f"No retrieved passage mentioned: {' '.join(orig.get(t, t) for t in missing)}"] if missing else []
        summary = " ".join(c.text for c in chosen[:2])
        return {"status": status, "summary": summary[:1000],
                "claims": [{"text": c.text, "source_ids": [c.source_id]} for c in chosen],
                "open_questions": open_questions}
