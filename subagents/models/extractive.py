"""The extractive model: the offline default. No language model — a deterministic policy that
drives the same agent loops through the same tool calls a language model would make.

It is stateless like an API model: every decision is read from the request's typed context (role,
allowed tools, the lead's limits and findings so far, a subagent's delegation) and from the tool
results so far. It never reads prompt prose, so any prompt variant drives it the same way. The
method lives in `subagents.extractive`:

- Lead, first turn: analyse the question (answer type, subject, compared entities, parts) and
  call `delegate` with delegations that do not overlap (`planning.plan`).
- Subagent: issue its searches in one turn (run concurrently by the loop), read the passages that
  cover the objective best, then submit the whole sentences that best answer the objective's type,
  above a relevance floor (`selection.select`); when the best evidence is below the threshold, no
  claims — the closest passages go to `related`. An objective that is a whole question in several
  entities or parts is answered per entity or part from one retrieval, each claim saying which.
- Lead, after findings: a gap round for what no claim covers yet (`planning.gap_tasks`), when
  rounds remain; else the report, answer first (`writing.report`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ..corpus.query import Match
from ..context import AgentRole, LeadLimits, RequestContext, RoundReport
from ..delegation import QueryType
from ..extractive.analysis import AnswerType, refers_back, split_parts, the_ask
from ..extractive.evidence import Evidence, Passage, Unit, UnitKind, api_name, entry_name, gather, names_an_entry
from ..extractive.planning import MAX_QUERIES, MAX_READS, asks, gap_tasks, plan, single_queries
from ..extractive.selection import Focus, attachment, documents, focus_of, select
from ..extractive.terms import TermKind, covered, mentions, text_forms
from ..extractive.undocumented import unanswered, unranked
from ..extractive.meaning import Encoder, Meaning
from ..extractive.reading import feedback_query, pick_reads
from ..extractive.vocabulary import reworded
from ..model import (Message, ModelRequest, ModelResponse, StopReason, TextBlock, ToolResultBlock, ToolUseBlock,
                     Usage)
from ..tool_names import DELEGATE, FETCH_PAGE, READ_PASSAGE, SEARCH_CORPUS, SEARCH_TOOLS, SUBMIT_FINDINGS
from ..extractive import writing

READ_TOOLS = {READ_PASSAGE: "passage_id", FETCH_PAGE: "url"}
SEARCH_K = 10


def _respond(blocks: list[Any], stop: StopReason) -> ModelResponse:
    return ModelResponse(blocks, stop, Usage(), model="extractive")


def _uses(messages: list[Message]) -> list[tuple[ToolUseBlock, ToolResultBlock | None]]:
    """All tool calls so far with their results, in order."""
    results = {b.tool_use_id: b for m in messages for b in m.content if isinstance(b, ToolResultBlock)}
    return [(b, results.get(b.id)) for m in messages for b in m.content if isinstance(b, ToolUseBlock)]


def _calls(n: int, calls: list[tuple[str, dict[str, Any]]]) -> ModelResponse:
    return _respond([ToolUseBlock(f"toolu_ex_{n:03d}_{i}", name, args) for i, (name, args) in enumerate(calls)],
                    StopReason.TOOL_USE)


def _final_report(question: str, rounds: list[RoundReport]) -> str:
    """The report from the findings; when no subagent's search or read succeeded, it says so (nothing
    was searched, so nothing can be said about what the documents hold)."""
    subs = [s for r in rounds for s in r.subagents]
    if any(s.searched for s in subs):
        return writing.report(question, rounds)
    why = list(dict.fromkeys(q for s in subs for q in s.findings.open_questions)) or [
        "No subagent ran." if not subs else "No subagent's search or read succeeded."]
    return "\n".join([f"# {question}", "", "## Answer", "",
                      "Nothing was retrieved, so this question is not answered here; the documents were not "
                      "searched successfully.", ""] + [f"- {q}" for q in why])


def _nothing_retrieved(uses: list[tuple[ToolUseBlock, ToolResultBlock | None]]) -> dict[str, Any]:
    """A subagent's findings when none of its tool calls succeeded (none ran, or every one failed)."""
    failed = [u.name for u, r in uses if r is not None and r.is_error]
    why = f"Nothing was retrieved: every tool call failed ({', '.join(dict.fromkeys(failed))})." if failed \
        else "Nothing was retrieved: no search completed." if uses else "Nothing was retrieved: no search ran."
    return {"status": "failed", "summary": "", "claims": [], "open_questions": [why], "related": []}


class ExtractiveModel:
    """`encoder`: the sentence encoder the corpus ranks by meaning with (None: words alone), to tell which
    sentences say what an objective asks; it compares texts and writes none."""

    name = "extractive"
    is_language_model = False

    def __init__(self, encoder: Encoder | None = None) -> None:
        self.encoder = encoder

    async def complete(self, request: ModelRequest) -> ModelResponse:
        ctx = request.context
        if ctx is not None and ctx.role is AgentRole.LEAD and ctx.limits is not None:
            return self._lead(request, ctx, ctx.limits)
        if ctx is not None and ctx.role is AgentRole.SUBAGENT and ctx.delegation is not None:
            return self._subagent(request, ctx)
        if ctx is not None and ctx.role is AgentRole.SINGLE:
            from .extractive_single import complete_single

            return await complete_single(self, request)
        return _respond([TextBlock("(extractive model: no task recognised in this request)")], StopReason.END_TURN)

    # ---- lead
    def _lead(self, request: ModelRequest, ctx: RequestContext, limits: LeadLimits) -> ModelResponse:
        question, rounds = ctx.question, list(ctx.rounds)
        sub_tools = list(limits.subagent_tools)
        if ctx.wrap_up:  # the run's budget is reached: the report from what there is
            return _respond([TextBlock(_final_report(question, rounds))], StopReason.END_TURN)
        calls = _uses(request.messages)
        last = calls[-1] if calls else None
        if last is not None and last[0].name == DELEGATE and last[1] is not None and last[1].is_error \
                and limits.rounds_left > 0:
            # a plan this model made within the limits in force was refused: nothing more it can do
            return _respond([TextBlock(f"# {question}\n\nNo plan was accepted.")], StopReason.END_TURN)
        n = len(request.messages)
        if not rounds and limits.rounds_left > 0:
            return _calls(n, [(DELEGATE, plan(question, sub_tools, limits))])
        if limits.rounds_left > 0 and len(rounds) < 2:
            tasks, why = gap_tasks(question, rounds, sub_tools, limits.tasks_per_query_type[QueryType.DEPTH_FIRST])
            if tasks:
                return _calls(n, [(DELEGATE, {"query_type": QueryType.DEPTH_FIRST.value if len(tasks) > 1
                                              else QueryType.STRAIGHTFORWARD.value, "rationale": why, "tasks": tasks})])
        return _respond([TextBlock(_final_report(question, rounds))], StopReason.END_TURN)

    # ---- subagent
    def _subagent(self, request: ModelRequest, ctx: RequestContext) -> ModelResponse:
        assert ctx.delegation is not None
        d = ctx.delegation
        focus = focus_of(d.objective, list(d.boundaries.out_of_scope))
        allowed = list(ctx.allowed_tools)
        calls = _uses(request.messages)
        budget, used, n = d.budget.max_tool_calls, len(calls), len(request.messages)
        search_tools = [t for t in SEARCH_TOOLS if t in allowed]  # corpus and web both, when given both
        searches = [(u, r) for u, r in calls if u.name in SEARCH_TOOLS]
        reads = [(u, r) for u, r in calls if u.name in READ_TOOLS]
        split = self._asks(d.objective, focus)
        queries = [q for q in dict.fromkeys(d.queries) if q.strip()] or single_queries(focus.question) or [d.objective]
        queries = queries[:MAX_QUERIES * max(1, len(split))]
        if not ctx.wrap_up and search_tools and not searches and used < budget:
            pairs = [(t, q) for q in queries for t in search_tools][: max(1, budget - 1)]
            k = SEARCH_K + (5 if len(pairs) == 1 else 0)  # one query: look further down its list
            return _calls(n, [(t, _search_args(t, q, k, focus)) for t, q in pairs])
        fed = any(u.input.get("query") not in queries for u, _ in searches)
        alone = not focus.siblings and not focus.whole and not split  # the whole question: siblings split it already
        if not ctx.wrap_up and alone and searches and not reads and not fed and used + len(search_tools) < budget:
            first = gather(searches)
            extra = [q for q in dict.fromkeys((feedback_query(focus, first),
                                               reworded(queries[0], focus.terms, first.weights))) if q and q not in queries]
            if extra:
                pairs = [(t, q) for q in extra for t in search_tools][: budget - used - 1]
                return _calls(n, [(t, {"query": q, "k": SEARCH_K}) for t, q in pairs])
        if not ctx.wrap_up and searches and not reads and used < budget:
            found = gather(searches, asked=queries)
            each = [self._pick_reads(f, found, allowed, MAX_READS) for f, _ in split] if split \
                else [self._pick_reads(focus, found, allowed, MAX_READS)]
            picks = list(dict.fromkeys(p for group in itertools.zip_longest(*each) for p in group if p is not None))
            if picks:
                return _calls(n, [(tool, {arg: value}) for tool, arg, value in picks[: budget - used]])
        ev = gather(searches + reads, asked=queries)
        if not any(r is not None and not r.is_error for _, r in searches + reads):
            # no tool call succeeded: say why, not that the documents lack the answer
            return _calls(n, [(SUBMIT_FINDINGS, _nothing_retrieved(searches + reads))])
        if split and not lacks_what_it_names(focus, ev):
            return _calls(n, [(SUBMIT_FINDINGS, joined([(label, self._findings(f, ev, self._meaning(f)))
                                                        for f, label in split]))])
        return _calls(n, [(SUBMIT_FINDINGS, self._findings(focus, ev, self._meaning(focus)))])

    def _meaning(self, focus: Focus) -> Meaning:
        """Closeness in meaning to what the objective asks: its words (and the whole question it is part of), and a
        story's asking sentences apart from its scene (`the_ask`; a part of a question is short, and says what it
        asks)."""
        ask = "" if focus.whole else the_ask(focus.question.text)
        return Meaning(self.encoder, _asked(focus), [ask] if ask else [])

    @staticmethod
    def _asks(objective: str, focus: Focus) -> list[tuple[Focus, str]]:
        """The entities or parts of an objective that is a whole question in several (the lead gave one
        subagent all of them: `planning.retrieved_together`), each with the focus its own subagent would
        have; [] for one question, or one part or entity of a question."""
        if focus.whole or focus.siblings or focus.about:
            return []
        return [(focus_of(t.objective, t.out_of_scope), t.label) for t in asks(objective)]

    @staticmethod
    def _pick_reads(focus: Focus, ev: Evidence, allowed: list[str], n: int) -> list[tuple[str, str, str]]:
        """The passages worth reading in full (`reading.pick_reads`), as tool calls."""
        def call(p: Passage) -> tuple[str, str, str] | None:
            if p.passage_id and READ_PASSAGE in allowed:
                return READ_PASSAGE, "passage_id", p.passage_id
            if p.url and FETCH_PAGE in allowed:
                return FETCH_PAGE, "url", p.url
            return None

        picks = [call(p) for p in pick_reads(focus, ev, max(0, n), readable=lambda p: call(p) is not None)]
        return list(dict.fromkeys(p for p in picks if p is not None))

    @staticmethod
    def _findings(focus: Focus, ev: Evidence, meaning: Meaning) -> dict[str, Any]:
        """The selected units as claims (each with its source), what is missing as open questions."""
        sel = select(focus, ev, meaning=meaning)
        claims: list[dict[str, Any]] = []
        atype = focus.question.answer_type
        for u in sel.claims:
            claims.append({"text": _with_term(u, focus), "source_ids": [u.source_id]})
            extra = attachment(u, atype, focus.terms)
            if extra is not None and not (len(claims) <= 2 or u.intro or extra.kind is UnitKind.SIGNATURE):
                extra = None  # past the first claims, only the short API line a how-to sentence documents
            if extra is not None and not u.intro and extra.kind is UnitKind.CODE and not writing.is_code(extra.text):
                extra = None  # a line only its introducing sentence makes code ("\encoding SJIS") reads as prose
            if extra is None:
                continue
            have = [c for c in claims if c["text"] == extra.text]
            if have and u.intro:  # the code goes right after the sentence that introduces it
                claims.remove(have[0])
            if not have or u.intro:
                claims.append({"text": extra.text, "source_ids": [extra.source_id]})
            if u.intro and not claims[-2]["text"].endswith(":"):  # it leads on to its code, right after it: a PDF's
                claims[-2]["text"] += ":"  # text lost the colon ("… by calling from C")
        open_questions = [f"No retrieved passage mentions {t.text}." for t in sel.missing]
        open_questions += [f"The documents mention {t.text} only in passing: no title or heading names it."
                           for t in sel.passing]
        open_questions += [f"The documents never use the word {t.text}." for t in sel.unknown]
        open_questions += [f"No retrieved passage says {r.text}." for r in sel.unranked]
        open_questions += [f"No claim mentions {t.text}." for t in sel.uncovered if t not in sel.missing]
        open_questions += [f"No sentence close enough to quote mentions {t.text}." for t in sel.elsewhere]
        if not sel.found:
            status = "failed"
            if not sel.missing and not sel.passing and not sel.unknown and not sel.unranked and not sel.elsewhere:
                open_questions.append("No retrieved passage answers this closely enough to quote.")
        else:
            status = "ok" if not sel.uncovered else "partial"
        return {"status": status, "summary": claims[0]["text"] if claims else "",
                "claims": claims, "open_questions": open_questions,
                "related": [{"text": u.text, "source_ids": [u.source_id]} for u in sel.related]}


def _search_args(tool: str, query: str, k: int, focus: Focus) -> dict[str, Any]:
    """A query naming the entities siblings cover as well as this one's looks for where they meet (the sentence
    setting them apart): passages with every one of its words, not those about one entity alone, which each
    sibling retrieves for its own (measured: sibling overlap, bench/bench_quality.py)."""
    args: dict[str, Any] = {"query": query, "k": k}
    if tool == SEARCH_CORPUS and focus.siblings and covered(focus.siblings, text_forms(query), query):
        args["match"] = Match.ALL.value
    return args


def lacks_what_it_names(focus: Focus, ev: Evidence) -> bool:
    """The question as a whole names a thing the documents lack (a name the corpus never uses or mentions only in
    passing, words it never uses: "an renv lockfile"): each of its parts asks within it ("how does a colleague then restore
    the same versions?"), so a part that names it no more is not answered by the documents either. (Compared
    things are not parts: each entity's own subagent judges its names, `x` of "sorted(x) or x.sort()" aside.)"""
    if focus.question.answer_type is AnswerType.COMPARISON:
        return False
    gaps = unanswered(focus, ev, focus.key_names(ev.weights))
    # (a name the corpus holds beyond a passing mention, which this retrieval missed, is no such thing)
    lacked = [t for t in gaps.missing if t.kind in (TermKind.WORD, TermKind.NAME)
              and (ev.weights.absent(t) or ev.weights.incidental(t))]
    return bool(gaps.unknown or lacked) or premise_unstated(focus, ev)


def premise_unstated(focus: Focus, ev: Evidence) -> bool:
    """The first part asks a figure no retrieved sentence states (`unstated.unranked`: how many things a pool
    keeps, a price, a ranking) and every later part points back into it ("How many idle connections does the pool
    keep by default, and how do I raise that limit?"): the later parts ask within what the documents do not say."""
    parts = split_parts(focus.question.text)
    return len(parts) > 1 and all(refers_back(p) for p in parts[1:]) and bool(unranked(focus_of(parts[0]), ev))


def joined(findings: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The findings on each entity or part as one subagent's: each claim says which it answers."""
    claims = [{**c, "about": label} for label, f in findings for c in f["claims"]]
    statuses = {f["status"] for _, f in findings}
    status = "ok" if statuses == {"ok"} else "failed" if statuses == {"failed"} else "partial"
    return {"status": status, "summary": claims[0]["text"] if claims else "", "claims": claims,
            "open_questions": list(dict.fromkeys(q for _, f in findings for q in f["open_questions"])),
            "related": [r for _, f in findings for r in f["related"]]}


def _asked(focus: Focus) -> str:
    """What an objective asks, for its meaning: its own words, and the whole question it is part of."""
    return f"{focus.question.text} ({focus.whole})" if focus.whole else focus.question.text


API_SHOWN = 40  # a longer signature is quoted by its name as a call ("compile()")


def _with_term(u: Unit, focus: Focus) -> str:
    """A definition quoted with the term it defines ("generator expression: An expression that returns an
    iterator.") when the question asks what something is and the term names what it asks about; in a comparison,
    an API entry's first sentence with its signature ("repr(object): Return a string …") when it does not name
    the entity itself. A description under the identifier it describes names it (`names_an_entry`:
    "_R_CHECK_LIMIT_CORES_: If set, …"), and a sentence whose subject is a pronoun the entry it is of
    ("Sys.setFileTime: On a POSIX file system it sets …")."""
    if focus.question.answer_type in (AnswerType.WHAT_IS, AnswerType.PURPOSE) and u.term_line \
            and any(mentions(t, text_forms(u.term_line), u.term_line) for t in focus.terms) \
            or names_an_entry(u):
        return f"{u.term_line.rstrip(':')}: {u.text}"
    shown = u.api if len(u.api) <= API_SHOWN else f"{api_name(u.api)}()" if api_name(u.api) else ""
    if focus.question.answer_type is AnswerType.COMPARISON and shown and documents(u, focus.distinct(focus.terms)) \
            and not any(mentions(t, u.forms, u.text) for t in focus.distinct(focus.terms)):
        # what an entity's API entry says it does, quoted with the call it documents: a table row needs its name
        return f"{shown}: {u.text}"
    if _PRONOUN_SUBJECT.match(u.text):
        name = api_name(u.api) or entry_name(u.passage.heading)
        if name and name not in u.text:  # "it sets both times" of Sys.setFileTime's entry: say which it is
            return f"{name}: {u.text}"
    return u.text


# the subject a pronoun, maybe after a short opening phrase ("On a POSIX file system it sets …"; not the object of a
# verb: "… and hand it back")
_PRONOUN_SUBJECT = re.compile(r"^(?:(?:On|In|For|When|If|Under|With|After|Before|Unlike|Like|Since|As|By|Once|Otherwise|"
                              r"Then|Now|Also|Here)\b[^,.;:]{0,50}?,?\s)??"
                              r"(?:[Ii]t|[Tt]hey|[Tt]his\s+function|[Tt]hese\s+functions)\s+[a-z]")
