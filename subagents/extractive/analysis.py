"""What a question asks: its answer type, its subject, the entities it compares, its parts.

    how-to      "How do I …", "What should I use to …"   → an API / command and a code example
    why         "Why …", "What's going on?"               → the sentence giving the reason
    what-is     "What is X?", "What does X do?"           → a definition
    comparison  "X vs Y", "difference between X and Y"    → per-entity properties side by side
    list        "Which Xs …?", "What kinds of …?"         → the items
    fact        anything else                             → the sentence that states it
A question with several sub-questions ("What is X, and how do I Y?") has one part per
sub-question, each analysed on its own; a pronoun in a later part stands for the first part's
subject. A part asking whether ("… and does that check force it?") is a fact however the question it is part
of asks: its answer is the sentence saying yes or no. Objectives written by the lead ("tuple — compared with
list; part of: …") parse the same way.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum

from ..text import sentences
from .terms import KEYWORDS, Term, TermKind, extract_terms, make_term, mentions, text_forms


class AnswerType(StrEnum):
    HOW_TO = "how-to"
    WHY = "why"
    PURPOSE = "purpose"  # what a thing is for: "What is except* for?", "the purpose of __slots__"
    WHAT_IS = "what-is"
    COMPARISON = "comparison"
    LIST = "list"
    FACT = "fact"


@dataclass
class Question:
    text: str
    answer_type: AnswerType
    terms: list[Term]
    subject: list[Term] = field(default_factory=list)  # what the question is about
    entities: list[str] = field(default_factory=list)  # compared things (comparison)
    parts: list["Question"] = field(default_factory=list)  # sub-questions (multi-part)
    clause: str = ""  # a condition ("when one of them raises an exception"), for depth facets

    @property
    def multi(self) -> bool:
        return len(self.parts) > 1

    def named(self) -> list[Term]:
        return [t for t in self.terms if t.named]


_HOW = re.compile(r"^(?:how\s+(?:do|can|could|should|would|to|might)\b|"
                  r"what\s+(?:do|should|can|could|must)\s+(?:i|we)\s+(?:need\s+to\s+|have\s+to\s+)?"
                  r"(?:use|call|run|pass|put|set|add|configure|install|type|write|grant|tune)\b|"
                  r"what(?:'s|\s+is)\s+the\s+\w*\s*way\s+to|what\s+tool|is\s+there\s+a\s+way|"
                  r"is\s+there\s+(?!(?:any|a|some)?\s*(?:good\s+)?reasons?\b)(?:[\w-]+\s+){1,4}?(?:that|which|to|for)\b|which\s+\w+\s+(?:do|should)\s+i\s+use)"
                  r"|\b(?:what|which)\s+(?:should|can)\s+i\s+use\b|\bhow\s+(?:do|can)\s+i\b|\bhow\s+to\b"
                  r"|\bwhat(?:'s|\s+is)\s+the\s+(?:[\w-]+\s+){0,2}?way\s+to\b", re.I)  # "… What's the least-code way to do that?"
_WHY = re.compile(r"^\s*why\b|\bwhy\b|what'?s\s+going\s+on|how\s+come\b|\bthe\s+reason\b", re.I)
_WHAT = re.compile(r"^(?:what(?:'s|\s+is|\s+are|\s+does|\s+do)|what\s+exactly\s+is|define|explain)\b|\bmeaning\s+of\b", re.I)
_PURPOSE = re.compile(r"^\s*what(?:'s|\s+is|\s+are)\s+.+?\s+(?:there\s+|used\s+|good\s+|meant\s+|needed\s+|useful\s+)?for\s*\??$|"
                      r"\b(?:the\s+)?(?:purpose|point)\s+of\b|\bwhat\s+(?:is|are)\s+.+?\s+(?:used|meant|intended)\s+for\b", re.I)
_LIST = re.compile(r"^(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?P<plural>\w+s)\s+(?:can|do|does|are|is|must|should|will|of)\b|"
                   r"^what\s+(?:are\s+the|kinds\s+of|types\s+of|ways\s+of)\b|^list\b|^name\s+the\b", re.I)  # (one kind: no list)
# the setting asked about after the second thing ("… when my list holds lists"); after "different from", not
# "with", which may be the thing itself ("comparing with is")
_SETTING = r"(?:\s+(?:when|if|in|for|regarding|on|with|within|inside|under)\b.*)?$"
_SETTING_AFTER_FROM = r"(?:\s+(?:when|if|in|for|regarding|within|inside|under)\b.*)?$"
_COMPARE = [
    re.compile(r"\bdifferences?\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)" + _SETTING, re.I),
    re.compile(r"^(?:compare|contrast)\s+(?:how\s+)?(?P<list>.+?)(?:\s+(?:in terms of|regarding|for|when)\s+.+)?$", re.I),
    re.compile(r"\bhow\s+(?:is|are|does|do)\s+(?P<a>.+?)\s+(?:different|differ)\s+from\s+(?P<b>.+?)" + _SETTING_AFTER_FROM, re.I),
    re.compile(r"\bhow\s+does\s+(?P<a>.+?)\s+(?:compare|differ)\s+(?:to|with|from)\s+(?P<b>.+?)" + _SETTING_AFTER_FROM, re.I),
    re.compile(r"\b(?:how|in\s+what\s+ways?|where)\s+(?:do|does|are|is)\s+(?!(?:i|you|we)\s)(?P<a>.+?)\s+and\s+"
               r"(?P<b>.+?)\s+(?:differ|different|compare)\b", re.I),  # "How do char and varchar differ?"
    re.compile(r"\b(?:what|which)\s+(?:distinguishes|separates|sets\s+apart)\s+(?P<a>.+?)\s+from\s+(?P<b>.+?)$", re.I),
    re.compile(r"^(?:is|are)\s+(?P<a>.+?)\s+(?:the\s+same\s+(?:thing\s+)?as|equivalent\s+to)\s+(?P<b>.+?)$", re.I),
    re.compile(r"^(?:is|are)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+(?:the\s+same|equivalent)\b", re.I),
    re.compile(r"\b(?:should\s+i\s+use|use)\s+(?:an?\s+)?(?P<a>[\w.()\[\]]+)\s+and\s+when\s+(?:an?\s+)?(?P<b>[\w.()\[\]]+)", re.I),
    re.compile(r"^(?P<a>[^:?]+?)\s+(?:vs\.?|versus)\s+(?P<b>[^:?]+?)(?-i:\s+(?:when|if|in|for|within|inside|under)\b[^:?]*)?"
               r"(?:[:?].*)?$", re.I),  # "is vs == in Python": the setting (in lower case: "EXISTS vs NOT IN")
    re.compile(r"\b(?:call|use|store\s+\w+(?:\s+\w+)?\s+in)\s+(?:an?\s+)?(?P<a>[\w.()\[\]' ]+?)\s+or\s+(?:an?\s+)?"
               r"(?P<b>[\w.()\[\]']+(?:\s+column)?)", re.I),
    re.compile(r"^(?P<a>[^:?,]+?)\s+or\s+(?P<b>[^:?,]+?)\s*[:?]", re.I),
    re.compile(r"\bhow\s+does\s+(?P<a>\S+)\s+\w+\s+compared\s+(?:with|to)\s+(?:an?\s+)?(?P<b>.+?)\??$", re.I),
    # "PostgreSQL's market share compared to MySQL": the owner is compared, what it owns is the context
    re.compile(r"\b(?P<a>[\w.()+#-]+)['’]s\s+(?:[\w-]+\s+){0,3}?(?:compared\s+(?:with|to)|versus|vs\.?)\s+(?:an?\s+)?"
               r"(?P<b>[\w.() ]+?)(?:['’]s\b.*)?\??$", re.I),
    re.compile(r"\b(?P<a>[\w.()]+)\s+(?:compared\s+(?:with|to))\s+(?:an?\s+)?(?P<b>[\w.() ]+?)\??$", re.I),
]
# "is X faster than Y": compared where it is asked; a story's scene that tells "png() output looks worse than on my
# laptop" compares nothing the asker asks about
_BETTER_THAN = re.compile(r"\b(?P<a>[\w.()]+)\s+(?:faster|slower|better|worse|safer)\s+than\s+(?P<b>[\w.()]+)", re.I)
# a question ends ("…? How …") or a new one opens with "and" ("…, and how …") in a sentence that asks: it runs on to a
# "?" (or the end) with no sentence ending before it ("We store blobs, and when rows are deleted they stay behind." tells)
_PART_SPLIT = re.compile(r"\?\s+(?=[A-Z])|,?\s+and\s+(?=(?i:how|what|why|which|can|could|does|do|is|are|where|when)\b)"
                         r"(?=(?:(?![.!]\s+[A-Z\"“'])[^?])*(?:\?|$))")
_PRONOUN = re.compile(r"\b(it|its|them|they|one|this|that)\b", re.I)
_CLAUSE = re.compile(r"\b(when|if|while|after|before|without|unless|once)\b\s+(.+)$", re.I)
_LEAD_NOTE = re.compile(r"\s*\((?:part of|as against|compared with)[^)]*\)\s*|\s+—\s+.*$")


def clean(text: str) -> str:
    return " ".join(text.split()).strip()


def _entity(text: str) -> str:
    text = re.sub(r"^(?:the|a|an|using|calling|comparing\s+with|with)\s+", "", text.strip(" ?.!\"'`,:"), flags=re.I)
    text = re.sub(r"\s+(?:of|for|in)\s+(?:an?|the)\s+\w+$", "", text)
    text = re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)
    return text.strip(" ?.!\"'`,:")


_MEANS = ("with", "using", "via", "through", "by")
_PURPOSE_CLAUSE = re.compile(r"\bto\s+[a-z]{3,}", re.I)


def _shared_frame(a: str, b: str) -> tuple[str, str]:
    """The compared things when both sit in one frame: "emptying a table with DELETE FROM and with TRUNCATE"
    compares what follows "with" in each; the words before it (emptying a table) are the setting, not a thing.
    ("sorting with sorted() and using list.sort()": the two may say it with different words.)"""
    first = b.split(maxsplit=1)[0].lower() if b.strip() else ""
    if first in _MEANS:
        words = a.split()
        at = max((i for i, w in enumerate(words) if w.lower() in _MEANS), default=-1)
        if 0 < at < len(words) - 1:
            return " ".join(words[at + 1:]), b
    return a, b


def _parallel(a: str, b: str, after: str) -> str:
    """The second entity as long as the first when the words after it repeat the first's head ("a LEFT JOIN
    or an INNER JOIN": the pattern took "INNER"; its "JOIN" follows)."""
    head = a.split()[-1] if len(a.split()) >= 2 else ""
    nxt = after.split()[:1]
    if head and nxt and nxt[0].strip("?,.!:;").lower() == head.lower() and b.split()[-1].lower() != head.lower():
        return f"{b} {nxt[0].strip('?,.!:;')}"
    return b


def comparison_entities(q: str) -> list[str]:
    for pat, text in [(pat, q) for pat in _COMPARE] + [(_BETTER_THAN, the_ask(q) or q)]:
        m = pat.search(text)
        if not m:
            continue
        groups = m.groupdict()
        if groups.get("list"):
            items = [_entity(x) for x in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs\.?|versus)\s+", groups["list"])]
        else:
            a, b = _shared_frame(groups["a"], groups["b"])
            items = [_entity(a), _entity(_parallel(a, b, text[m.end("b"):]))]
        # "use the random module to generate passwords or session tokens": "or" joins what the purpose clause
        # names, no alternatives to compare
        items = [i for i in items if i and len(i.split()) <= 5 and not _PURPOSE_CLAUSE.search(i)]
        items = [re.sub(r"\s+column$", "", i) for i in items]
        if len(items) >= 2 and all(extract_terms(i) or re.search(r"[=:<>!]", i) or i.lower() in KEYWORDS for i in items):
            return items
    return []


def answer_type(q: str) -> AnswerType:
    """What kind of answer a question wants; for a question told as a story that the whole text does not say (its
    question words are not at its start), what its first asking sentence that says one wants ("… Is there a way to
    make it do that automatically?": a how-to)."""
    atype = _answer_type(q)
    if atype is AnswerType.FACT:
        for said in (s.strip() for s, asks in scene_and_asks(q) if asks):
            asked = _answer_type(said)
            if asked is not AnswerType.FACT:
                return asked
    return atype


def _answer_type(q: str) -> AnswerType:
    if comparison_entities(q):
        return AnswerType.COMPARISON
    if _WHY.search(q) and not re.match(r"^\s*(?:how|what)\s+(?:do|can|should)\s+i\b", q, re.I):
        return AnswerType.WHY
    if _PURPOSE.search(q):
        return AnswerType.PURPOSE
    m = _LIST.search(q)
    if m and not (m.group("plural") or "").lower().endswith(("ss", "us", "is", "does", "has", "was", "its")):
        return AnswerType.LIST
    if _HOW.search(q):
        return AnswerType.HOW_TO
    if _WHAT.search(q):
        return AnswerType.WHAT_IS
    return AnswerType.FACT


_WHETHER = re.compile(r"^\s*(?:do|does|did|is|are|was|were|can|could|will|would|should|must|has|have|may)\b"
                      r"(?!\s+there\b)", re.I)  # ("is there a helper that …": which one, not whether)


def asks_whether(text: str) -> bool:
    """A yes/no question ("does that check force the argument?"): it asks whether a statement holds, so its
    answer is the sentence stating it, whatever the question it is part of asks."""
    return bool(_WHETHER.match(text))


def _subject(q: str, terms: list[Term], atype: AnswerType) -> list[Term]:
    """The terms of the thing asked about: names and identifiers first, else the phrase after the
    question words."""
    named = [t for t in terms if t.kind in (TermKind.IDENT, TermKind.NAME)]
    if named:
        return named[:3]
    m = re.search(r"^(?:what|who|which)(?:'s|\s+is|\s+are|\s+does|\s+do)?\s+(?:exactly\s+)?(?:an?\s+|the\s+)?(.+?)"
                  r"(?:\s+(?:do|mean|used|for|in|give)\b.*)?$", q, re.I)
    if m and atype in (AnswerType.WHAT_IS, AnswerType.PURPOSE):
        sub = extract_terms(re.sub(r"^(?:the\s+)?(?:purpose|point)\s+of\s+", "", m.group(1), flags=re.I))
        if sub:
            return sub[:3]
    return terms[:2]


def refers_back(text: str) -> bool:
    """A part that names its subject by a pronoun ("how can I raise it?"): its own words mean nothing alone."""
    return bool(_PRONOUN.search(text))


def resolved(text: str, subject: str) -> str:
    """The part with its first pronoun replaced by the subject it refers to ("how can I raise recursion limit")."""
    return _PRONOUN.sub(subject, text, count=1).rstrip("?") if subject else text


# a sentence the asker tells about themselves after the question ("I need a number for a slide."): why they ask,
# no part of what they ask
_TOLD = re.compile(r"^(?:I|I'm|I've|I'd|we|we're|we've|my|our)\b[^?]*[.!]?$", re.I)
# or a remark closing with a full stop that opens with neither a word that asks nor one that bids ("A recent figure
# from a survey would be ideal."; not "Explain why." or "Please list them.")
_REMARK = re.compile(r"^(?!(?:please|also|and|explain|show|give|list|tell|describe|include|compare|name|point|provide|"
                     r"mention|suggest|recommend|what|how|why|which|when|where|who|whom|whose|is|are|can|could|does|do|"
                     r"did|should|would|will|was|were|has|have)\b)[^?]*[.!]$", re.I)


# a follow-up that is a question word alone ("…, and why?"): it asks about the part before it, no part of its own
_BARE_FOLLOW_UP = re.compile(r"^(?:how|what|why|which|where|when|who)\??$", re.I)


def split_parts(q: str) -> list[str]:
    pieces: list[str] = []
    for p in (clean(p).strip(" ,") for p in _PART_SPLIT.split(q) if p and clean(p).strip(" ,?")):
        if pieces and _BARE_FOLLOW_UP.match(p):  # "was the transition handled well, and why?" is one part
            pieces[-1] = f"{pieces[-1].rstrip('?')}, and {p}"
        else:
            pieces.append(p)
    if len(pieces) > 1 and (_TOLD.match(pieces[-1]) or _REMARK.match(pieces[-1])):
        pieces = pieces[:-1]
    return [p if p.endswith("?") else p + "?" for p in pieces] if len(pieces) > 1 else [q]


# What the asker knows from elsewhere, said before the question: "Coming from MySQL, where I used AUTO_INCREMENT,
# …", "In Java I would use a HashMap; …". It sets the scene; the question after it asks for this corpus's way.
_ELSEWHERE = re.compile(
    r"^(?:(?i:i'?m|i\s+am|i\s+was|i'?ve\s+been|we'?re|we\s+are)\s+)?(?i:coming|moving|switching|migrating|porting)"
    r"\s+(?i:over\s+)?(?i:from)\s+[^;,.?!]+(?:,\s*(?i:where|and|in\s+which)\s+[^;,.?!]+)?[;,.]\s+"
    r"|^(?i:in|with)\s+[A-Z][\w+#-]*(?:\s+[A-Z][\w+#-]*)?,?\s+(?i:I|we)\s+(?i:would\s+|'d\s+|used\s+to\s+|usually\s+|always\s+)?"
    r"(?i:use|write|call|type|run)\b[^;.?!]*[;.]\s+")
_AFTER_SCENE = re.compile(r"^(?:so|and|but|now)\b\s*,?\s*", re.I)
# words that ask for a counterpart without saying what it does
_COUNTERPART = frozenset("equivalent equivalents counterpart alternative alternatives replacement instead similar "
                         "same analog analogue thing things way one use".split())


def without_elsewhere(q: str) -> str:
    """The question without the scene the asker sets from another product (`_ELSEWHERE`), when what is left says in
    words of its own what it wants ("what should I use in PostgreSQL for an auto-incrementing id column?"); as it
    is when what is left only asks for a counterpart ("what is the Python equivalent?": then the other product's
    name is what it asks about)."""
    m = _ELSEWHERE.match(q)
    if not m:
        return q
    rest = _AFTER_SCENE.sub("", q[m.end():])
    own = [t for t in extract_terms(rest) if t.kind is TermKind.WORD and t.key not in _COUNTERPART]
    return rest[:1].upper() + rest[1:] if len(own) >= 2 and rest.rstrip().endswith("?") else q


def analyse(text: str) -> Question:
    """Analyse a question or an objective."""
    q = without_elsewhere(clean(_LEAD_NOTE.sub(" ", text)))
    parts = split_parts(q)
    if len(parts) > 1 and not comparison_entities(q):
        subs = [analyse_single(p) for p in parts]
        head = subs[0].subject
        for sub in subs[1:]:  # "how can I empty its cache": its = the first part's subject
            if _PRONOUN.search(sub.text) or not sub.subject or not (set(sub.terms) & set(head)):
                sub.terms = list(dict.fromkeys(sub.terms + head))
                sub.subject = list(dict.fromkeys(head + sub.subject))[:3]
        # a follow-up sentence that only re-asks the first ("How do they differ?") is no new part
        subs = [s for i, s in enumerate(subs) if i == 0 or set(s.terms) - set(subs[0].terms)
                or s.answer_type is not subs[0].answer_type]
        if len(subs) > 1:
            terms = list(dict.fromkeys(t for s in subs for t in s.terms))
            return Question(q, subs[0].answer_type, terms, subs[0].subject, parts=subs)
    return analyse_single(q)


def analyse_single(q: str) -> Question:
    terms = extract_terms(q)
    atype = answer_type(q)
    entities = comparison_entities(q) if atype is AnswerType.COMPARISON else []
    clause = ""
    m = _CLAUSE.search(q)
    if m and atype in (AnswerType.WHY, AnswerType.FACT) and len(extract_terms(q[: m.start()])) >= 2 \
            and len(extract_terms(m.group(2))) >= 2:
        clause = m.group(2).rstrip("?. ")
    if entities:  # the compared things are terms even when they are keywords ("== or is")
        extra = [t for e in entities for t in (extract_terms(e) or [make_term(e, TermKind.IDENT)])]
        terms = list(dict.fromkeys(terms + extra))
    return Question(q, atype, terms, _subject(q, terms, atype), entities, clause=clause)


def holds(longer: str, shorter: str) -> bool:
    """One compared entity holds another's words and more ("materialized view" holds "view")."""
    return set(shorter.lower().split()) < set(longer.lower().split())


def without_holders(text: str, entity: str, entities: list[str]) -> str:
    """The text without the other entities that hold this one's words: "materialized views" does not
    mention a view."""
    for other in entities:
        if other != entity and holds(other, entity):
            text = re.sub(rf"\b{re.escape(other)}(?:e?s)?\b", " ", text, flags=re.I)
    return text


def entity_terms(entity: str) -> list[Term]:
    return extract_terms(entity) or [make_term(entity, TermKind.SYMBOL if re.search(r"[=:<>!]", entity)
                                               else TermKind.IDENT)]


# ---------------------------------------------------------------- a question told as a story

# the words a name setting where the question is asked comes after ("in JavaScript", "with the Django ORM", "using
# Homebrew"): the tool or place asked of
SCENE_BEFORE = r"\b(?:in|with|using|within|inside|under|via|through|on|from)\s+(?:(?:the|an?|my|our|its|their|this)\s+)?"


@functools.lru_cache(maxsize=256)
def scene_and_asks(question: str) -> tuple[tuple[str, bool], ...]:
    """The question's sentences, each with whether it asks, once per question (every name of it is looked up);
    () for a question of one sentence or none that asks: it has no scene apart from what it asks."""
    said = [(s, s.rstrip().endswith("?")) for s in sentences(question)]
    return tuple(said) if len(said) > 1 and any(asks for _, asks in said) else ()


def the_ask(question: str) -> str:
    """The sentences of a question told as a story that ask ("… keeps holding row locks. Is there a server setting
    that will automatically end such sessions?"): what it needs, in fewer words than its scene, whose words
    outnumber it in a search for the whole question (measured: bench/bench_quality.py, the probes' stories); ""
    for a question without a scene."""
    return " ".join(s.strip() for s, asks in scene_and_asks(question) if asks).rstrip("?")


def scene_only(term: Term, question: str) -> bool:
    """A word of a question told as a story that only its scene holds, none of the sentences that ask; False for a
    question without a scene (`scene_and_asks`)."""
    asked = the_ask(question)
    return bool(asked) and not mentions(term, text_forms(asked), asked)


def told_not_asked(term: Term, question: str) -> bool:
    """A word only the scene holds (`scene_only`: "Our nightly export job copies the reports … How do I write a ledger
    file atomically?": "nightly", "reports"): it says where the need arose, not what would meet it; False when the
    asking sentences point back into the scene (`_POINTS_BACK`)."""
    return scene_only(term, question) and not _POINTS_BACK.search(the_ask(question))


# an article or a possessive, then up to two lower-case words ("an old publisher VM"): a common noun's place
_DETERMINED = r"\b(?:[Aa]n?|[Tt]he|[Oo]ur|[Mm]y|[Tt]heir|[Yy]our|[Ee]very|[Ee]ach)\s+(?:[a-z][\w-]*\s+){0,2}"


def common_acronym(term: Term, question: str) -> bool:
    """An acronym of capitals only a story's scene holds, written where a common noun stands, after an article or a
    possessive ("an ETL job", "The DBA just said …", "an old publisher VM"): a kind of thing or person of the asker's
    world, not a product whose documents are asked for ("from MongoDB", "My Python AWS script" keep theirs)."""
    if not re.fullmatch(r"[A-Z]{2,5}s?", term.text) or not scene_only(term, question):
        return False
    return bool(re.search(rf"{_DETERMINED}{re.escape(term.text)}\b", question))


# an ask that points back into its scene ("What exit code does it return …?", "Is there a switch for that?", "end such
# sessions"): the scene names what it asks about ("in that the plan is …" opens a clause, points nowhere)
_POINTS_BACK = re.compile(r"\b(?:it|its|they|them|their|such|this|these|those)\b|"
                          r"\b(?:for|about|with|to|of|do|does|did|on|in)\s+that\b(?!\s+\w+\s+(?:is|are|was|were)\b)",
                          re.I)
