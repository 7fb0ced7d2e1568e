"""The lead's report from its subagents' findings: the answer first, then the details.

- Answer: the claims that best answer the question's type (re-ranked against the whole question);
  a how-to answer keeps the code or API signature that goes with it; a comparison gets a table
  (entity × what the sources say of it); a question in parts gets one answer per part.
- Details: the other claims, by the subagent that found them (nothing below the floor is kept).
- When no subagent returned a claim: the report says the documents do not answer the question and
  lists the closest passages as "possibly related", cited.
Every sentence is whole and carries the ids of the sources it was taken from.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from ..context import RoundReport
from ..delegation import Claim
from .analysis import AnswerType, analyse, entity_terms, holds, without_holders
from .evidence import (Evidence, Passage, is_code_block, is_one_line_code, is_signature, reads_as_code,
                       runs_code_together)
from .selection import _CONTRAST, _NOTE, STRONG_CONTRAST, focus_of, score_all
from .terms import Term, mentions, text_forms



@dataclass
class Found:
    claim: Claim
    group: int  # which subagent
    order: int  # its rank in that subagent's findings
    label: str  # the subagent's objective, without the lead's note
    introduced: bool = False  # the subagent's claim before it ends in ":" (it introduces this one)

    @property
    def code(self) -> bool:
        return is_code(self.claim.text) or self.introduced and is_one_line_code(self.claim.text)


def is_code(text: str) -> bool:
    """A claim that is an example: a code block, an API signature, a line of code alone or one a PDF ran together."""
    return "\n" in text.strip() and is_code_block(text) or is_signature(text) or reads_as_code(text) \
        or runs_code_together(text)


_SQL = re.compile(r"\b(?:SELECT|CREATE|INSERT|UPDATE)\b")
_PYTHON = re.compile(r">>>|^\s*(?:def|class|import|from|print|return|with|for|if)\b|^\s*[\w.]+\s*=|"
                     r"\b(?![A-Z\d_]+\()[A-Za-z_][\w.]*\(", re.M)  # a call, not an SQL type's "NUMERIC(3, 1)"
# what only Python writes: a statement keyword opening a line, None/True/False, a block's colon, a bare star
# parameter; a call or an assignment alone ("par(col=4, lty=2)") is R as much as Python
_PYTHON_ONLY = re.compile(r">>>|^\s*(?:def|class|import|from|return|with|for|if|elif|while|try|except|raise|yield|"
                          r"async|await|lambda|assert|pass)\b|\b(?:None|True|False)\b|:\s*$|[(,]\s*\*{1,2}\s*[\w,)]",
                          re.M)


def cite(c: Claim) -> str:
    return f"[{', '.join(c.source_ids)}]"


def is_python(code: str) -> bool:
    """Python as an interpreter session shows it (`>>>`), or code that reads like Python, writes something only
    Python writes (`_PYTHON_ONLY`) and parses as it: R's `y <- x[!is.na(x)]` and `par(col=4, lty=2)`, C, a shell
    session and SQL do not (they get a fence with no language)."""
    if ">>>" in code:
        return True
    if not _PYTHON.search(code) or not _PYTHON_ONLY.search(code) or _SQL.search(code):
        return False
    for text in filter(None, (textwrap.dedent(code), _as_def(code))):
        try:
            ast.parse(text)  # (a parse, not a compile: a fragment may `return` or `await`)
            return True
        except (SyntaxError, ValueError):
            continue
    return False


def _as_def(code: str) -> str:
    """An API signature (`spawn.run(args, *, stdin=None)`, `f(x) -> int`) as a def to parse; else ''."""
    text = " ".join(code.split())
    return f"def _{text[text.index('('):]}: pass" if "(" in text and is_signature(text) else ""


_BLOCK_MARK = re.compile(r"^(\s*)(#{1,6}|>|[-+*]|\d{1,9}[.)])(?=\s|$)")


def prose(text: str) -> str:
    """A quoted sentence as a line of Markdown that stays a paragraph: one opening as a block would (an R example's
    comment "## You can create numbers …" as a heading, "> " as a quote, "1. " as a list) has its mark escaped."""
    def escaped(m: re.Match[str]) -> str:
        mark = m.group(2)
        return m.group(1) + (f"{mark[:-1]}\\{mark[-1]}" if mark[0].isdigit() else f"\\{mark}")

    return _BLOCK_MARK.sub(escaped, text)


def line(f: Found) -> list[str]:
    if f.code:
        return [f"```{'python' if is_python(f.claim.text) else ''}", f.claim.text.rstrip(), "```"]
    return [f"{prose(f.claim.text)} {cite(f.claim)}"]


def collect(rounds: list[RoundReport]) -> tuple[list[Found], list[Found]]:
    claims, related = [], []
    group = 0
    for rnd in rounds:
        for sub in rnd.subagents:
            label = _NOTE.sub("", sub.delegation.objective).strip()
            first = group
            # a subagent answering several entities or parts: each is a group of its own, as if its own subagent's
            for about in dict.fromkeys(c.about for c in sub.findings.claims) or [""]:
                cs = [c for c in sub.findings.claims if c.about == about]
                claims += [Found(c, group, i, about or label, i > 0 and cs[i - 1].text.rstrip().endswith(":"))
                           for i, c in enumerate(cs)]
                group += 1
            related += [Found(c, first, i, label) for i, c in enumerate(sub.findings.related)]
    return claims, related


def ranked(question: str, found: list[Found], titles: dict[str, str]) -> list[Found]:
    """The claims re-ranked against the whole question (subagent order as the rank prior)."""
    ev = Evidence()
    by_sid: dict[str, Found] = {}
    for i, f in enumerate(found):
        if f.code:
            continue
        sid = f"c{i}"
        title = " ".join(titles.get(s, "") for s in f.claim.source_ids)
        ev.passages[sid] = Passage(sid, title, "", f.claim.text, True, 1.0 / (2 + f.order))
        by_sid[sid] = f
    scored = score_all(focus_of(question), ev)
    seen, out = set(), []
    for s in scored:
        f = by_sid[s.unit.source_id]
        if id(f) not in seen:
            seen.add(id(f))
            out.append(f)
    return out + [f for f in found if id(f) not in seen and not f.code]


def with_code(f: Found, found: list[Found]) -> list[Found]:
    """A claim and the code claim the same subagent placed right after it, from the same source."""
    nxt = [g for g in found if g.group == f.group and g.order == f.order + 1 and g.code
           and set(g.claim.source_ids) & set(f.claim.source_ids)]
    return [f] + nxt[:1]


ANSWER_SENTENCES = 3  # the Answer: the best claim and the next best from other passages
PART_SENTENCES = 2  # per part of a question in parts


def _page(f: Found, titles: dict[str, str]) -> str:
    """The passage a claim was quoted from (a passage is a section of a page)."""
    return f.claim.source_ids[0] if f.claim.source_ids else ""


def introduces(f: Found) -> bool:
    """A sentence ending in ":" that introduces the code after it."""
    return f.claim.text.rstrip().endswith(":")


def leading(candidates: list[Found], found: list[Found], titles: dict[str, str], most: int,
            used: set[int]) -> list[Found]:
    """The first claim, then the next ones from passages not yet quoted (a second view, not a repeat);
    a sentence introducing code only with its code."""
    picks: list[Found] = []
    pages: set[str] = set()
    for f in candidates:
        if len(picks) >= most:
            break
        if f.code or id(f) in used or (picks and _page(f, titles) in pages):
            continue
        if introduces(f) and len(with_code(f, found)) < 2:
            continue
        if any(f.claim.text == p.claim.text for p in picks):
            continue
        picks.append(f)
        pages.add(_page(f, titles))
    return picks


def _code_too(i: int, f: Found, found: list[Found], atype: AnswerType) -> bool:
    """The first sentence of a how-to answer keeps its code, the others the API line they document;
    a sentence introducing code always keeps it."""
    if introduces(f):
        return True
    if atype is not AnswerType.HOW_TO:
        return False
    return i == 0 or any(is_signature(x.claim.text) for x in with_code(f, found)[1:])


def why_not(rounds: list[RoundReport]) -> dict[str, str]:
    """Per objective (without the lead's note): the first reason its subagent gave for finding nothing."""
    out: dict[str, str] = {}
    for rnd in rounds:
        for sub in rnd.subagents:
            if not sub.findings.claims and sub.findings.open_questions:
                out.setdefault(_NOTE.sub("", sub.delegation.objective).strip(), sub.findings.open_questions[0])
    return out


def _answer(question: str, found: list[Found], titles: dict[str, str],
            reasons: dict[str, str] | None = None) -> tuple[list[str], set[int]]:
    q = analyse(question)
    used: set[int] = set()
    lines: list[str] = []
    if q.answer_type is AnswerType.COMPARISON and len(q.entities) >= 2:
        return _comparison(q.entities, ranked(question, found, titles), found, reasons or {})
    # each subagent ranked its claims with their headings and neighbours in view: its first is its answer
    by_rank = sorted(found, key=lambda f: (f.group, f.order))
    if q.multi:  # one block per part: a gap round's subagent on the same part adds to its block
        said: set[str] = set()
        for label in dict.fromkeys(f.label for f in by_rank):
            part = [f for f in by_rank if f.label == label and f.claim.text not in said]
            picks = leading(part, found, titles, PART_SENTENCES, used)
            said |= {p.claim.text for p in picks}
            for i, p in enumerate(picks):
                for x in with_code(p, found) if _code_too(i, p, found, q.answer_type) else [p]:
                    used.add(id(x))
                    lines += line(x) if x.code else [f"**{label}** {line(x)[0]}" if x is picks[0] else line(x)[0]]
        return lines, used
    picks = leading(by_rank, found, titles, ANSWER_SENTENCES, used)
    for i, p in enumerate(picks):
        for x in with_code(p, found) if _code_too(i, p, found, q.answer_type) else [p]:
            used.add(id(x))
            lines += line(x)
    return lines, used


def written_as(t: Term, text: str) -> bool:
    """The text writes the term as the question does, if the question writes it in capitals (a command,
    "TRUNCATE"); in lower case it may be the English word ("do not truncate empty pages")."""
    if not (t.text.isupper() and t.text.isalpha() and len(t.text) > 1):
        return True
    return re.search(rf"(?<![\w-]){re.escape(t.text)}(?![\w-])", text) is not None


def _comparison(entities: list[str], order: list[Found], found: list[Found],
                reasons: dict[str, str]) -> tuple[list[str], set[int]]:
    used: set[int] = set()
    lines: list[str] = []
    ent_terms = {e: entity_terms(e) for e in entities}

    # what names an entity: any of its words ("VACUUM" names "plain VACUUM"), but for one holding another's
    # words only those the other lacks ("materialized" for "materialized view", not "view"); and "view" only
    # outside "materialized view" (`without_holders`)
    naming = {e: [t for t in ts if not any(holds(e, o) and t in ent_terms[o] for o in entities if o != e)] or ts
              for e, ts in ent_terms.items()}

    def names(f: Found) -> list[str]:
        out = []
        for e in entities:
            text = without_holders(f.claim.text, e, entities)
            forms = text_forms(text)
            if any(mentions(t, forms, text) for t in naming[e]):
                out.append(e)
        return out

    # the sentence that contrasts them: both named, with a word of contrast
    # (a sentence introducing code comes with its code, and never into a table cell)
    contrasting = [f for f in order if len(names(f)) >= 2 and _CONTRAST.search(f.claim.text)
                   and (not introduces(f) or len(with_code(f, found)) == 2)]
    both = next((f for f in contrasting if STRONG_CONTRAST.search(f.claim.text)), contrasting[0] if contrasting else None)
    if both is not None:
        for x in with_code(both, found) if introduces(both) else [both]:
            used.add(id(x))
            lines += line(x)
        lines += [""]
    rows = []
    said: set[str] = {f.claim.text for f in found if id(f) in used}

    def about_another(f: Found, e: str) -> bool:
        """Names another of the entities without contrasting them: it describes neither apart."""
        return any(x != e for x in names(f)) and not _CONTRAST.search(f.claim.text)

    for e in entities:
        mine = sorted((f for f in found if f.label == e and not f.code and not introduces(f) and id(f) not in used
                       and f.claim.text not in said),
                      key=lambda f: (about_another(f, e), len(names(f)) > 1, f.order))  # about it alone first
        elsewhere = [f for f in order if id(f) not in used and not introduces(f) and e in names(f)
                     and len(names(f)) == 1 and f.claim.text not in said]
        # its own subagent's sentence that names it; else another's that names it alone; else its subagent's best
        own = [f for f in mine if e in names(f)] or elsewhere or mine
        own.sort(key=lambda f: not all(written_as(t, f.claim.text) for t in naming[e]))  # as the question writes it
        if own:
            used.add(id(own[0]))
            said.add(own[0].claim.text)
            rows.append(f"| {e} | {own[0].claim.text.replace('|', '/')} {cite(own[0].claim)} |")
        else:  # why its subagent found nothing ("The documents never use the word gevent.")
            why = reasons.get(e, "No retrieved passage describes it.").replace("|", "/")
            rows.append(f"| {e} | ({why.rstrip('.')}) |")
    lines += [f"| | {' / '.join(entities)}: what the documentation says |", "|---|---|"] + rows
    return lines, used


def report(question: str, rounds: list[RoundReport]) -> str:
    found, related = collect(rounds)
    titles = {k: v for r in rounds for k, v in r.source_titles.items()}
    lines = [f"# {question}", "", "## Answer", ""]
    if not found:
        lines.append("The documents searched do not answer this question: no retrieved passage was close enough "
                     "to quote as an answer.")
        lines += _missing(rounds)
        if related:
            lines += ["", "## Possibly related", "",
                      "These passages came closest; they do not answer the question.", ""]
            seen: set[str] = set()
            for f in related:
                if f.claim.text not in seen:
                    seen.add(f.claim.text)
                    lines.append(f"- {prose(f.claim.text)} {cite(f.claim)}")
        return "\n".join(lines)
    answer, used = _answer(question, found, titles, why_not(rounds))
    lines += answer
    shown = {f.claim.text for f in found if id(f) in used}
    details = []
    for f in found:  # each sentence once, however many subagents found it
        if id(f) not in used and f.claim.text not in shown:
            shown.add(f.claim.text)
            details.append(f)
    if details:
        lines += ["", "## Details"]
        for g in sorted({f.group for f in details}):
            mine = [f for f in details if f.group == g]
            if mine:
                lines += ["", f"### {mine[0].label}", ""]
                for f in mine:
                    lines += line(f) if f.code else [f"- {line(f)[0]}"]
    gaps = _missing(rounds)
    if gaps:
        lines += ["", "## Open questions", ""] + gaps
    return "\n".join(lines)


def _missing(rounds: list[RoundReport]) -> list[str]:
    qs = list(dict.fromkeys(q for r in rounds for s in r.subagents for q in s.findings.open_questions))
    return [f"- {q}" for q in qs]
