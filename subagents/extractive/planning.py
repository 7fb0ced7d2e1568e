"""The lead's plans: delegations that do not overlap, and gap rounds that fill what is missing.

- comparison: one subagent per compared entity, searching the entity in the question's context
  ("tuple heterogeneous", not the bare "tuple"), told which entities its siblings cover;
- several sub-questions: one subagent per part, the first part's subject carried into the others;
- but entities named alike (`sorted` and `.sort()`, `copy.copy` and `copy.deepcopy`, json and jsonb)
  and the parts of one question (they share its subject) are documented on the same pages: one
  subagent searches with the queries of each and answers each from that one retrieval, every claim
  saying which entity or part it answers (`retrieved_together`);
- anything else — one question, however worded — one subagent with a few distinct queries: a
  second subagent on the same question retrieves the same passages (measured: the sibling overlap
  of bench/bench_quality.py), so no facet template splits it.
An objective carries what the lead knows around it in a parenthesis the subagent parses:
"<question> (about: X; compared with: Y; part of: <the whole question>)".
The gap round delegates exactly what no claim covers yet — an entity or part without claims, a name
of the question no claim mentions — with queries not used before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..context import LeadLimits, RoundReport
from ..delegation import FindingsStatus, QueryType
from .analysis import AnswerType, Question, analyse, entity_terms, holds, refers_back, resolved, the_ask
from .terms import Term, TermKind, extract_terms, in_example_literal, mentions, only_declined, stem, text_forms
from .undocumented import said_as_own

MAX_QUERIES = 4
MAX_READS = 6
OUTPUT_FORMAT = "Up to 5 whole sentences quoted from the sources that answer the objective, each with its source id."


@dataclass
class Task:
    objective: str
    queries: list[str]
    out_of_scope: list[str]
    label: str  # what this task covers, for the rationale and the report
    asks: int = 1  # the entities or parts it answers from one retrieval (`asks`)

    def delegation(self, tools: list[str]) -> dict[str, Any]:
        n = self.asks
        return {"objective": self.objective, "queries": self.queries[:MAX_QUERIES * n], "tools": list(tools),
                "boundaries": {"out_of_scope": self.out_of_scope}, "output_format": OUTPUT_FORMAT,
                "budget": {"max_tool_calls": 2 + (MAX_QUERIES + MAX_READS) * n, "max_seconds": 60}}


def words_of(terms: list[Term]) -> str:
    """The terms as words to search or to note; an ordinary word in lower case (a capital in a note
    marks a name: "about: Poetry")."""
    return " ".join(t.text.strip("`").rstrip("*").lower() if t.kind is TermKind.WORD else t.text.strip("`").rstrip("*")
                    for t in terms if t.kind is not TermKind.SYMBOL)


def note(main: str, **fields: str) -> str:
    body = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in fields.items() if v)
    return f"{main} ({body})" if body else main


def _distinct_queries(*queries: str) -> list[str]:
    """The queries with content words, each once: the same words in another order are the same
    query to a bag-of-words search."""
    out: list[str] = []
    seen: list[frozenset[str]] = []
    for q in queries:
        q = " ".join(q.split())
        words = frozenset(q.lower().split())
        if q and extract_terms(q) and words not in seen:
            out.append(q)
            seen.append(words)
    return out


def single_queries(q: Question) -> list[str]:
    """Distinct queries for one question: all its terms; the question as asked (the search engine
    drops its stop words, keeping words the analysis set aside); what a story asks, without its scene; its names
    and subject; its rarer half."""
    asked = [t for t in q.terms if not only_declined(t, q.text)] or q.terms  # not the way the asker does without
    named = [t for t in asked if t.kind in (TermKind.IDENT, TermKind.NAME)]
    words = [t for t in asked if t.kind is TermKind.WORD]
    focus = list(dict.fromkeys(named + q.subject)) if named else []
    return _distinct_queries(words_of(asked), q.text.rstrip("?"), the_ask(q.text), words_of(focus),
                             words_of(words[len(words) // 2:] + named[:1]) if len(words) > 3 else "")


def _without(question: str, things: list[str]) -> str:
    """The question without the things it names ("What is the difference between and if" for if's subagent)."""
    for t in things:
        question = re.sub(rf"(?<!\w){re.escape(t)}(?!\w)", " ", question)
    return " ".join(question.rstrip("?").split())


def comparison_tasks(question: str, q: Question) -> list[Task]:
    ent_terms = {e: entity_terms(e) for e in q.entities}
    all_ent = {t for ts in ent_terms.values() for t in ts}
    context = [t for t in q.terms if t not in all_ent][:3]
    # an entity whose words another holds ("view", "materialized view"): that one's queries name both already
    nested = any(holds(a, b) for a in q.entities for b in q.entities)
    tasks = []
    for e, terms in ent_terms.items():
        others = [o for o in q.entities if o != e]
        queries = _distinct_queries(words_of(terms + context), words_of(terms) + " " + words_of(context[:1]),
                                    words_of(terms)) or [e, _without(question, others)]  # a keyword compared by
        # name ("is", "if"): as written (the documentation's index lists it), and the question without the other things
        if not tasks and not nested:  # the first entity's subagent also looks for the sentence setting them apart
            queries += _distinct_queries(" ".join([words_of(terms)] + [words_of(ent_terms[o]) for o in others]))
        tasks.append(Task(note(e, compared_with=", ".join(others), part_of=question), queries,
                          [f"{o} (another subagent covers it)" for o in others], e))
    return tasks


_VERSION = re.compile(r"\b[A-Z][\w+#-]*\s+v?\d+(?:\.\d+)+\b")


def part_tasks(question: str, q: Question) -> list[Task]:
    """One task per part; a later part carries the first part's subject, and every part the
    product version the question names ("Python 3.13"), in its note and its first query."""
    tasks = []
    head = q.parts[0].subject
    versions = _VERSION.findall(question)
    for i, part in enumerate(q.parts):
        about = words_of([t for t in head if t not in extract_terms(part.text)]) if i else ""
        carried = [v for v in versions if v not in part.text]
        about = " ".join([about, *carried]).strip()
        queries = single_queries(part)
        if carried and queries:
            queries[0] = f"{queries[0]} {' '.join(carried)}"
        others = [p.text for p in q.parts if p is not part]
        tasks.append(Task(note(part.text, about=about, part_of=question), queries,
                          [f"{o} (another subagent covers it)" for o in others], part.text))
    return tasks


def asks(question: str, q: Question | None = None) -> list[Task]:
    """What a question (analysed: `q`) asks one by one: its compared entities, or its parts, each as the
    task a subagent of its own would get; [] for a single question."""
    q = q or analyse(question)
    if q.answer_type is AnswerType.COMPARISON and len(q.entities) >= 2:
        return comparison_tasks(question, q)
    return part_tasks(question, q) if q.multi else []


def _cores(entity: str) -> tuple[set[str], set[str]]:
    """An entity's name words (its receiver variable aside: the "s" of "s.split()") and the modules
    that qualify it ("copy" of "copy.deepcopy")."""
    words, modules = set(), set()
    for t in entity_terms(entity):
        parts = [w for w in t.key.split() if len(w) > 1]
        if "." in t.text and len(parts) > 1:
            modules.add(parts[0])
        words |= {stem(w) for w in parts}
    return words, modules


def _one_root(x: str, y: str) -> bool:
    """One name word is the other, or begins or ends it ("sort"/"sorted", "json"/"jsonb", "loc"/"iloc")."""
    short, long = sorted((x, y), key=len)
    return short == long or len(short) >= 3 and (long.startswith(short) or long.endswith(short))


def _named_alike(a: str, b: str) -> bool:
    """Two entities of one name ("sorted" and "sort", "else block" and "finally block") or of one module
    (copy.copy, copy.deepcopy): the pages of one are the other's."""
    (wa, ma), (wb, mb) = _cores(a), _cores(b)
    return bool(ma & mb) or any(_one_root(x, y) for x in wa for y in wb)


def retrieved_together(q: Question) -> bool:
    """Whether one subagent should answer every entity or part of the question from one retrieval: the
    parts of a question ask about its one subject, and entities named alike are documented on the same
    pages (measured: siblings for them retrieved 0.3-0.9 of the same passages, bench/bench_quality.py)."""
    if q.answer_type is AnswerType.COMPARISON and len(q.entities) >= 2:
        return all(_named_alike(a, b) for a, b in zip(q.entities, q.entities[1:]))
    return q.multi


def _together(question: str, tasks: list[Task]) -> Task:
    """One task for the whole question, with the queries of each of its asks."""
    queries = _distinct_queries(*(x for t in tasks for x in t.queries[:MAX_QUERIES]))
    return Task(question, queries, [], "the question", asks=len(tasks))


def plan(question: str, tools: list[str], limits: LeadLimits) -> dict[str, Any]:
    q = analyse(question)
    split = asks(question, q)
    if split and retrieved_together(q):
        qtype, tasks = QueryType.STRAIGHTFORWARD, [_together(question, split)]
        what = "things named alike" if q.entities else "sub-questions on one subject"
        why = f"{len(split)} {what}: one subagent answers each from one retrieval (siblings would read the same pages)"
    elif q.answer_type is AnswerType.COMPARISON and len(q.entities) >= 2:
        qtype, tasks = QueryType.BREADTH_FIRST, split
        why = f"a comparison of {len(q.entities)} things: one subagent per entity, each in the question's context"
    elif q.multi:
        qtype, tasks = QueryType.BREADTH_FIRST, split
        why = f"{len(q.parts)} sub-questions: one subagent per part"
    else:
        qtype, tasks = QueryType.STRAIGHTFORWARD, [Task(question, single_queries(q), [], "the question")]
        why = f"a single {q.answer_type.value} question: one subagent with distinct queries"
    if len(tasks) < 2 and qtype is not QueryType.STRAIGHTFORWARD:
        qtype = QueryType.STRAIGHTFORWARD
    tasks = tasks[: max(1, limits.tasks_per_query_type[qtype])]
    return {"query_type": qtype.value, "rationale": why, "tasks": [t.delegation(list(tools)) for t in tasks]}


# ---------------------------------------------------------------- gap round

def _claim_text(rounds: list[RoundReport]) -> str:
    return " ".join(c.text for r in rounds for s in r.subagents for c in s.findings.claims)


def _used_queries(rounds: list[RoundReport]) -> set[str]:
    return {q.lower() for r in rounds for s in r.subagents for q in s.delegation.queries}


def _fresh(queries: list[str], used: set[str]) -> list[str]:
    return [q for q in _distinct_queries(*queries) if q.lower() not in used]


def gap_tasks(question: str, rounds: list[RoundReport], tools: list[str], most: int) -> tuple[list[dict[str, Any]], str]:
    """Tasks for what the findings still lack, with queries not used before; ([], "") when nothing is."""
    q = analyse(question)
    found = _claim_text(rounds)
    if not found.strip():
        return [], ""  # nothing found at all: the corpus does not answer; more word overlap would not help
    forms = text_forms(found)
    used = _used_queries(rounds)
    gaps: list[tuple[Task, str]] = []
    subject = words_of(q.subject)
    if q.answer_type is AnswerType.COMPARISON and len(q.entities) >= 2:
        for e in q.entities:
            terms = entity_terms(e)
            if not any(mentions(t, forms, found) for t in terms):
                others = [o for o in q.entities if o != e]
                queries = _fresh([f"{words_of(terms)} {' '.join(others)}", f"{words_of(terms)} is"], used)
                if queries:
                    gaps.append((Task(note(e, compared_with=", ".join(others), part_of=question), queries,
                                      [f"{o} (covered)" for o in others], e), f"no claim about {e}"))
    elif q.multi:
        for part in q.parts:
            own = [t for t in part.terms if t not in q.parts[0].subject] or part.terms
            if not any(mentions(t, forms, found) for t in own):  # (a part that says "it" is searched with its subject)
                alone = resolved(part.text, subject) if refers_back(part.text) else words_of(own)
                queries = _fresh([f"{words_of(own)} {subject}", alone], used)
                if queries:
                    gaps.append((Task(note(part.text, about=subject, part_of=question), queries, [], part.text),
                                 f"no claim answers “{part.text}”"))
    # a name no claim mentions, unless every subagent of the last round said its objective is answered (one that
    # sees the corpus's statistics knows a keyword the corpus is written in, "WHERE", is no gap of its own), or the
    # asker's data in a quoted instance ("a string like 'session=abc123'") or a thing they say is theirs ("I wrote a
    # summary.survey method": no search for it would find the documents' words)
    answered = all(s.findings.status is FindingsStatus.OK for s in rounds[-1].subagents)
    named = [] if answered else [t for t in q.terms if t.kind in (TermKind.IDENT, TermKind.NAME)
                                 and not mentions(t, forms, found) and not in_example_literal(t.text, question)
                                 and not said_as_own(t, question)]
    for t in named[:2]:
        others = [x for x in q.subject if x is not t]
        queries = _fresh([f"{t.text} {words_of(others)}".strip(), t.text], used)
        if queries and not any(t.text in g.objective for g, _ in gaps):
            gaps.append((Task(note(t.text, about=words_of(others), part_of=question), queries, [], t.text),
                         f"no claim mentions {t.text}"))
    gaps = gaps[:most]
    return [g.delegation(tools) for g, _ in gaps], "gap round: " + "; ".join(why for _, why in gaps)
