"""Answer selection: rank units by how well they answer the question's type, keep those above a
relevance floor, and decide "not found" when the best evidence is below the threshold.

A unit's score is its weighted coverage of the question's terms (term weights are inverse
document frequencies; a term in the sentence counts fully, in its passage's headings in part)
times a bonus for the answer type's pattern (a definition for what-is, an API and an imperative
for how-to, a because-clause for why, both entities and a contrast for a comparison, an
enumeration for a list, a yes or no in the question's words for a yes/no question), times small
quality factors (a self-contained sentence of ordinary length) and the passage's search rank. With the
corpus's sentence encoder (`meaning.py`) the relevance is half the word coverage and half the closeness in
meaning to the objective, for the best sentences by words, and a sentence close in meaning answers though it
shares only a word of the objective. The thresholds are constants calibrated on the dev split.

"Not found" also when the objective asks about what the documents do not cover (`undocumented.py`):
a name no retrieved text mentions or only mentions in passing, a product version, a tool no English word
names, a name of several words no text joins, a ranking no passage states, words the corpus never uses.

A question told as a story (a scene, then the sentences that ask) is weighed for what it asks: a word only its scene
holds counts for less unless the asking sentences point back into it (`analysis.told_not_asked`), and sentences
are compared in meaning with its asking sentences as well as with the whole, whose first word pieces alone the encoder
reads (`meaning.Meaning`'s `also`).

A FAQ's entry answers the question its heading asks, in words of its own: the opening sentences of a section
headed by a question are weighed by their meaning said under that heading as well as alone (`answers_heading`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from . import meaning as meaning_module
from .analysis import (SCENE_BEFORE, AnswerType, Question, analyse, asks_whether, entity_terms, holds, scene_only,
                       told_not_asked, without_holders)
from .evidence import Evidence, Unit, UnitKind, api_name, comments, page_of, page_support, units_of
from .meaning import NO_MEANING, Meaning
from .terms import (INSTANCE_OPENERS, Term, TermKind, Weights, called_name, covered, extract_terms, mentions,
                    only_declined, text_forms, variant_values, weight)
from ..text import has_operator
from .vocabulary import prefers
from .undocumented import derived, english, set_aside, spells, unanswered, unmatchable
from .unstated import Unsaid

MIN_COVERAGE = 0.3  # best unit's weighted coverage below this: the corpus does not answer
STORY_TERMS = 8  # a question with this many words of its own tells a story (its scene, what it tried, its goal)
QUOTED_COVERAGE = 0.5 * MIN_COVERAGE  # the least a quoted sentence covers, unless close in meaning (`select`)
STORY_COVERAGE = QUOTED_COVERAGE  # a story's floor: a sentence answering it names few of its many words
STORY_HITS = 3  # … but at least this many of them
FLOOR = 0.5  # a claim scores at least this share of the best claim
MAX_CLAIMS = 5
CONTEXT_WEIGHT = 0.35  # terms of the whole question, for a part or an entity of it
SCENE_WEIGHT = 0.5  # words only a story's scene holds, none of its sentences that ask (`told_not_asked`)
RANK_WEIGHT = 0.4  # the passage's fused search rank
RELEASE_NOTES_WEIGHT = 0.7  # a sentence of release notes, for a question that names no version
HOW_TO_ENTRY = 0.35  # a how-to sentence that describes the API entry it is under
HOW_TO_HEADING = 1.0  # a how-to passage's opening sentence under a heading made of the question's words
HOW_TO_EXAMPLE = 1.0  # a how-to sentence that names the goal asked about and introduces its example
PAGE_WEIGHT = 0.4  # its page's support over the searches (`evidence.page_support`)
WHETHER = 0.5  # a sentence stating yes or no (a negation, "always", "only") in most of a yes/no question's words
ALIKE = 0.5  # a sentence documenting an API named like the subject, beside the subject's own entry

_NOTE = re.compile(r"\s*\((?P<body>(?:about|compared with|part of):[^()]*(?:\([^()]*\)[^()]*)*)\)\s*$")
_SKIP = re.compile(r"^(?:Changed in version|New in version|Deprecated since|Raises an auditing event|Source code:|"
                   r"See also|Availability:)", re.I)
_CODE = re.compile(r"(?:^|\s)(?:def|class)\s+\w+\s*[(:]|\breturn\s+\w|[=!<>]=|\w\s*=\s*[\w(\[{'\"]|[{};]\s*$|>>>|"
                   r"\bself\.\w+\s*=|\)\s*:\s*\w|"
                   r"[\w.\])]\s*<<?-\s*(?:[\w.]+\s*\(|-?\d|[\"'])|"  # R's `x <- c(1)`
                   r"\bfunction\s*\([^)]*\)\s*[\w{]")  # R's `function(x) x`
_PRONOUN_START = re.compile(r"^(?:This|That|These|Those|It|They|Such|Here|However|Also|But|And|Or|So)\b")
_DEF_VERB = r"\b(?:is|are|refers|stands|means|provides|represents|gives|returns|defines|allows|lets|makes|holds|causes|" \
            r"creates|stores|contains|describes|implements|specifies|acts|behaves|works)\b"
_DEF_ANY = re.compile(r"\b(?:is|are)\s+(?:an?|the|any|used|called|defined|one)\b|\brefers\s+to\b|\bstands\s+for\b|"
                      r"\bknown\s+as\b|\bis\s+called\b|\bmeans\b", re.I)
_WHY_STRONG = re.compile(r"\bbecause\b|\bdue\s+to\b|\bthe\s+reason\b|\bso\s+that\b|\bin\s+order\s+to\b|\bprevents?\b|"
                         r"\bto\s+(?:avoid|prevent|ensure|protect)\b|\btherefore\b|\bthis\s+means\b|\bas\s+a\s+result\b|"
                         r"(?<!version )\bsince\b(?!\s+(?:version|python|\d))|\bthus\b|\bconsequently\b|\bcaused\s+by\b", re.I)
_PURPOSE_SAYS = re.compile(r"\b(?:is|are)\s+(?:used|meant|intended|designed)\s+(?:to|for)\b|\bused\s+(?:to|for)\b|"
                           r"\buseful\s+(?:for|when|to|if)\b|\ballows?\b|\blets?\s+(?:you|us|the|a)\b|\benables?\b|"
                           r"\bmakes?\s+it\s+possible\b|\bserves?\s+to\b|\bpurpose\b|\bby\s+using\b.*\b(?:we|you)\s+can\b|"
                           r"\bto\s+(?:catch|keep|stop|limit|handle|protect|guard)\b", re.I)
_WHY_WEAK = re.compile(r"\bcannot\b|\bcan't\b|\bwould\b|\bonly\b|\bnever\b|\bnot\b|\binstead\b|\bshould\s+not\b|"
                       r"\bunsafe\b|\binsecure\b|\bimmutable\b|\bmutable\b", re.I)
_HOW_VERB = re.compile(r"^(?:To\s+\w+.*?,\s*)?(?:Use|Call|Pass|Set|Run|Create|Add|Make|Import|Open|Write|Read|Define|"
                       r"Specify|Invoke|Try|Wrap|Apply|Give|Put|Install|Enable|Issue|Execute|Start)\b")
_GOAL = re.compile(r"^To\s+(\w+(?:\s+\S+){0,8}?)\s*,")  # "To create a virtual environment, ..."
_HOW_ANY = re.compile(r"\byou\s+can\b|\bcan\s+be\s+used\s+to\b|\buse\s+(?:the|a|an)\b|\bby\s+(?:calling|using|passing|"
                      r"setting)\b|\ballows?\s+you\s+to\b|\blets?\s+you\b|\bway\s+to\b|\bprovides?\s+(?:a|an)\b|"
                      r"\bis\s+used\s+to\b|\bto\s+do\s+this\b|\binstead\s+use\b|\brecommended\b", re.I)
_API = re.compile(r"\b[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+\(?|\b[A-Za-z_]\w*\(\)|`[^`]+`|\b[A-Z][A-Z_]{2,}\b(?:\s+[A-Z]{2,})*")
_SET_APART = (r"\bwhereas\b|\bwhile\b|\bunlike\b|\bin\s+contrast\b|\bon\s+the\s+other\s+hand\b|\bdiffer|"
              r"\bdifference\b|\bcompared\b")
STRONG_CONTRAST = re.compile(_SET_APART, re.I)  # words that set two things apart
_CONTRAST = re.compile(_SET_APART + r"|\bbut\b|\bhowever\b|\bthan\b|\bboth\b|\binstead\b|\bnot\b|\bonly\b", re.I)
_NAMING = r"\b(?:(?:also\s+|often\s+|sometimes\s+)?(?:known|referred\s+to)\s+as|called|named|termed|dubbed|so-called|a\.k\.a\.?)"  # gives a name
_ENUM = re.compile(r",|\bor\b|\band\b|;")
_POLAR = re.compile(r"\b(?:not|never|no|none|always|only|cannot|neither|nor|without)\b|n't\b", re.I)  # says whether


@dataclass
class Focus:
    """What one objective asks, with what the lead said around it (the whole question, the subject
    of a part, the entities siblings cover)."""

    question: Question
    about: list[Term] = field(default_factory=list)
    context: list[Term] = field(default_factory=list)
    siblings: list[Term] = field(default_factory=list)
    whole: str = ""  # the whole question this objective is part of ("" when it is the question)
    compared: list[str] = field(default_factory=list)  # the entities compared, this one first (a comparison's part)

    @property
    def whole_question(self) -> str:
        """The whole question this objective is part of, or the objective itself: where its scene is told."""
        return self.whole or self.question.text

    @property
    def nested(self) -> bool:
        """A sibling's entity holds this one's words ("materialized view" for "view")."""
        return any(holds(o, self.compared[0]) for o in self.compared[1:])

    def own_mention(self, text: str, forms: set[str]) -> tuple[str, set[str]]:
        """A text (and its forms) without the siblings' entities that hold this one's words: "materialized
        views" does not mention the view."""
        if not self.nested:
            return text, forms
        text = without_holders(text, self.compared[0], self.compared)
        return text, text_forms(text)

    @property
    def terms(self) -> list[Term]:
        return list(dict.fromkeys(self.question.terms + self.about))

    def subject(self, weights: Weights) -> list[Term]:
        """What the objective is about, less the corpus's own name ("a descriptor in Python": the
        descriptor); the question's other content words when nothing else is left."""
        subject = [t for t in (self.question.subject or self.about) if t.kind is not TermKind.SYMBOL] \
            or self.question.subject
        kept = [t for t in subject if not weights.domain(t)]
        if kept or not subject:
            return kept
        rest = [t for t in self.terms if t.kind is not TermKind.SYMBOL and not weights.domain(t)]
        return rest[:2]

    def distinct(self, terms: list[Term]) -> list[Term]:
        """The terms that set this entity apart from the siblings it holds ("ALL" of "UNION ALL" against
        "UNION"): a text that names only the shared words is about the sibling."""
        apart = [t for t in terms if not any(t.forms & o.forms for o in self.siblings)]
        return apart or terms

    def key_names(self, weights: Weights) -> list[Term]:
        """The names and identifiers the objective is about (the corpus's own name and the asker's scene aside)."""
        return [t for t in self.terms if t.kind in (TermKind.NAME, TermKind.IDENT) and not weights.domain(t)
                and not set_aside(t, self, weights)]


def focus_of(objective: str, out_of_scope: list[str] | None = None) -> Focus:
    """Parse an objective: "<question> (about: X; compared with: Y; part of: <whole question>)"."""
    notes: dict[str, str] = {}
    m = _NOTE.search(objective)
    main = objective
    if m:
        main = objective[: m.start()]
        for seg in m.group("body").split("; "):
            key, _, val = seg.partition(":")
            notes[key.strip()] = val.strip()
    q = analyse(main)
    about = extract_terms(notes.get("about", ""), sentence=False)
    siblings = [t for e in re.split(r",\s*", notes.get("compared with", "")) if e for t in entity_terms(e)]
    siblings += [t for s in (out_of_scope or []) for t in extract_terms(re.sub(r"\(.*?\)", "", s))]
    context = []
    if notes.get("part of"):
        whole = analyse(notes["part of"])
        _named_as_in(q, whole)
        own = set(q.terms) | set(about)
        context = [t for t in whole.terms if t not in own and t not in siblings]
        if q.answer_type is AnswerType.FACT and whole.answer_type is not AnswerType.COMPARISON \
                and not asks_whether(main):
            q.answer_type = whole.answer_type
        if whole.answer_type is AnswerType.COMPARISON and not q.entities:
            q.answer_type = AnswerType.COMPARISON
    siblings = [t for t in dict.fromkeys(siblings) if t not in set(q.terms) | set(about)]
    others = [e for e in re.split(r",\s*", notes.get("compared with", "")) if e]
    compared = [main.strip().rstrip("?").strip(), *others] if others else []
    return Focus(q, about, context, siblings, notes.get("part of", ""), compared)


def _named_as_in(q: Question, whole: Question) -> None:
    """A word the objective opens with is a name when the whole question writes it as one ("Gizmo (compared
    with: widgets; …)" of "… Gizmo's market share …"): its capital is the name's, not the sentence's."""
    names = {t.text: t for t in whole.terms if t.kind is TermKind.NAME}
    swap = lambda ts: [names.get(t.text, t) if t.kind is TermKind.WORD else t for t in ts]  # noqa: E731
    q.terms, q.subject = swap(q.terms), swap(q.subject)


# ---------------------------------------------------------------- scoring

@dataclass
class Scored:
    unit: Unit
    score: float
    coverage: float
    hits: int = 0  # terms the sentence or its headings mention
    similarity: float | None = None  # closeness in meaning to the objective (None: not embedded)
    factor: float = 0.0  # what multiplies its relevance: answer type, quality, rank, page support (score = relevance x factor)
    exact: bool = True  # uses the operators the objective asks about, if it asks about any (`EXACT_KINDS`)
    shown: float = 0.0  # its coverage with what its example's comments say (`_shows_what_is_asked`)


_IDENT_TOKEN = re.compile(r"[\w.]*_[\w.]*(?:\([^)]*\))?")


def names_as_term(t: Term, line: str) -> bool:
    """The line names the term itself (or spells its acronym), not a longer identifier holding its word: the
    signature "brin_page_type(page bytea)" is no term line of "BRIN"."""
    if t.kind is TermKind.IDENT:
        return mentions(t, text_forms(line), line)
    plain = _IDENT_TOKEN.sub(" ", line)
    return mentions(t, text_forms(plain), plain) or spells(t, plain)


def _definition_bonus(u: Unit, subject: list[Term], starts_with_subject: bool, entries: frozenset[str]) -> float:
    """How much a sentence reads as the definition of the subject (what-is; what-for builds on it). `entries`:
    the subject's names whose own API entry was retrieved (`own_entries`)."""
    s = u.text
    b = 0.0
    if u.term_line and subject and all(names_as_term(t, u.term_line) for t in subject):
        b += 1.3  # the definition that follows the term in a glossary or definition list (or its acronym's)
        if all(any(t.forms & x.forms for x in subject) for t in extract_terms(u.term_line)):
            b += 0.7  # the term exactly ("widget"), not a longer one containing it ("widget toolkit")
    if re.match(r"^(?:An?|The)\s+\w+(?:\s+\w+)?\s+(?:which|that|used|for|whose)\b", s):
        b += 0.3
    if starts_with_subject and re.search(_DEF_VERB, " ".join(s.split()[:5]), re.I):
        b += 0.8
    elif _DEF_ANY.search(s):
        b += 0.3
    b += 0.8 * documents(u, subject, entries)  # the first sentence of the API entry the question names: what it does
    last = u.passage.own_heading
    extra = [t for t in extract_terms(last) if not any(t.forms & x.forms for x in subject)]
    if subject and not extra and all(mentions(t, text_forms(last), last) for t in subject) \
            and u.position <= 1:
        b += 0.4  # the first sentence under a heading that names the subject
    return b


def _type_bonus(u: Unit, focus: Focus, atype: AnswerType, subject: list[Term], entries: frozenset[str]) -> float:
    s = u.text
    head = text_forms(" ".join(s.split()[:3]))
    starts_with_subject = any(mentions(t, head, " ".join(s.split()[:3])) for t in subject)
    if atype is AnswerType.WHAT_IS:
        return _definition_bonus(u, subject, starts_with_subject, entries)
    if atype is AnswerType.WHY:
        b = 0.7 if _WHY_STRONG.search(s) else 0.2 if _WHY_WEAK.search(s) else 0.0
        if u.passage.own_heading.lower().startswith("why") and u.position <= 2:
            b += 0.4
        return b
    if atype is AnswerType.PURPOSE:  # a definition, the more when it says what the subject is there to do
        says = _PURPOSE_SAYS.search(s) or _WHY_STRONG.search(s)
        before = s[: says.start()] if says else ""
        b = 1.0 if says and any(mentions(t, text_forms(before), before) for t in subject) else 0.0  # not another's
        return b + _definition_bonus(u, subject, starts_with_subject, entries)  # a definition often says what for
    if atype is AnswerType.HOW_TO:
        b = 0.0
        if _API.search(s):
            b += 0.35
        if _HOW_VERB.search(s):
            b += 0.35
        if _HOW_ANY.search(s):
            b += 0.3
        if _describes_api(u):
            b += HOW_TO_ENTRY  # what an API entry does, right below its signature: the call that does it
        goal = _GOAL.match(s)
        if goal and u.intro and len(covered(focus.question.terms, text_forms(goal.group(1)), goal.group(1))) >= 2:
            b += HOW_TO_EXAMPLE  # "To create a virtual environment, …, run …:" and its example: the steps asked for
        if (u.position <= 1 or u.intro) and _section_titled_with_goal(u, focus.question.terms):
            b += HOW_TO_HEADING  # the opening of a section titled with what is asked ("Logging to a file")
        return b
    if atype is AnswerType.COMPARISON:
        ents = {id(t) for t in focus.siblings}
        mine, mine_forms = focus.own_mention(s, u.forms)
        own = any(mentions(t, mine_forms, mine) for t in focus.distinct(subject))
        other = any(mentions(t, u.forms, s) for t in focus.siblings) if ents else False
        b = 0.5 if own and other else 0.0
        if _CONTRAST.search(s):
            b += 0.3
        if starts_with_subject:
            b += 0.3
        return b
    if atype is AnswerType.LIST:
        n = len(_ENUM.findall(s))
        return min(0.6, 0.15 * n) + (0.2 if len(_API.findall(s)) >= 2 else 0.0)
    if asks_whether(focus.question.text) and _POLAR.search(s):
        own = focus.question.terms
        if 2 * sum(1 for t in own if mentions(t, u.forms, s)) >= len(own):
            return WHETHER  # "The missing function does not force evaluation" for "does that check force it?"
    return 0.2 if re.search(r"\b(?:is|are|will|default)\b", s) else 0.0


def _section_titled_with_goal(u: Unit, terms: list[Term]) -> bool:
    """The unit's section has a heading of its own made of the question's words, two at least ("Logging to a file"
    for "send my log messages to a file"; a page's title, "jobs — running jobs", is no section), and the section
    names every name the question uses ("use clonetree to copy a widget": not "Copying widgets" on clone())."""
    if " > " not in u.passage.heading:
        return False
    last = u.passage.own_heading
    words = extract_terms(last)
    forms = set().union(*(t.forms for t in terms)) if terms else set()
    if len(words) < 2 or not all(t.forms & forms for t in words):
        return False
    section = f"{last} {u.passage.text}"
    section_forms = text_forms(section)
    return all(mentions(t, section_forms, section) for t in terms if not english(t))


def _describes_api(u: Unit) -> bool:
    """The sentence right below an API signature: what that function, class or statement does."""
    if not u.api or u.position == 0:
        return False
    prev = units_of(u.passage)[u.position - 1]
    return prev.kind is UnitKind.SIGNATURE and prev.text == u.api


def documents(u: Unit, subject: list[Term], entries: frozenset[str] = frozenset()) -> float:
    """The sentence right below an API signature that names the subject: 1.25 when it calls the subject as the
    question writes it, its own entry (`entries`: "repr(object)" for "repr()"), 1.0 when it calls a name ending
    in it ("functools.lru_cache(...)" for "lru_cache"), else 0."""
    if not subject or not _describes_api(u):
        return 0.0
    called, forms = api_name(u.api), api_forms(u.api)
    named = [t for t in subject if _calls(called, t) or t.kind is not TermKind.IDENT and t.named
             and mentions(t, forms, u.api)]
    if not named:
        return 0.0
    return 1.25 if called in entries else 1.0


def named_alike(u: Unit, subject: list[Term], entries: frozenset[str]) -> bool:
    """The sentence documents another thing named like the subject while the subject's own entry was retrieved
    (`entries`): an API ("Repr.repr(obj)" for "repr()") or a term list's entry (2to3's fixer "print" for
    "print()"), or a name only in another case ("Repr"). It is about that other thing."""
    if not entries:
        return False
    if _describes_api(u):
        called = api_name(u.api)
        return called not in entries and any(called_name(t.text) in entries and _calls(called, t) for t in subject)
    own = [called_name(t.text) for t in subject if called_name(t.text) in entries]
    if u.term_line and any(_written(name, u.term_line, re.I) for name in own):
        return True
    # a name in another case only ("Repr instances …" for "repr()"): a class, not the function
    return any(_written(name, u.text, re.I) and not _written(name, u.text) for name in own)


def _written(name: str, text: str, flags: int = 0) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text, flags))


def api_forms(signature: str) -> set[str]:
    """The forms of a signature, with its name as a call: "compile(source, filename, mode, flags=0, …)" is too
    long for `text_forms` to read as one ("compile()")."""
    forms = text_forms(signature)
    called = api_name(signature)
    if called[-1:].isalnum():  # a call's name, not an operator synopsis ("jsonb @> jsonb")
        forms |= text_forms(f"{called}()")
    return forms


def _calls(called: str, t: Term) -> bool:
    """A signature calling `called` ("list.sort") is the entry of an identifier the question names by the same
    last name ("x.sort()", "sort()"), not by a word sharing its stem ("sorted")."""
    if t.kind is not TermKind.IDENT or not called:
        return False
    return called.rsplit(".", 1)[-1] == called_name(t.text).rsplit(".", 1)[-1]


def own_entries(subject: list[Term], ev: Evidence) -> frozenset[str]:
    """The subject's names (as the question writes them, "repr" of "repr()") that a retrieved API signature
    calls exactly: the entry of the thing itself, not of a method or module function named alike."""
    names = {called_name(t.text) for t in subject if t.kind is TermKind.IDENT}
    if not names:
        return frozenset()
    return frozenset(n for p in ev.passages.values() for u in units_of(p)
                     if u.api and (n := api_name(u.api)) in names and _describes_api(u))


_NUMBERING = re.compile(r"^(?:[\dA-Z]{1,3}\.)+\s*")
_VERSION = re.compile(r"\b\d+\.\d+\b")


def release_notes(title: str) -> bool:
    """A page titled by a version ("What's New In Python 3.9", "E.1. Release 15.18"; a section
    number in front is not a version): release notes, where features are mentioned as changes."""
    return bool(_VERSION.search(_NUMBERING.sub("", title)))


ITEM_FRAGMENT = 0.7  # a list item that is no sentence ("Using the tuple() built-in: tuple()"), but for a list


def _quality(u: Unit, atype: AnswerType) -> float:
    words = len(u.text.split())
    q = 1.0
    if u.item and atype is not AnswerType.LIST and not re.search(r"[.!?][\"')\]]?$", u.text):
        q *= ITEM_FRAGMENT
    if _PRONOUN_START.match(u.text):
        q *= 0.8
    if words < 6:
        q *= 0.6
    elif words > 50:
        q *= 0.75
    if u.text.startswith("See "):
        q *= 0.5
    if not u.passage.full:
        q *= 0.8
    return q


def _coverage(terms: list[tuple[Term, float]], u: Unit, ctx_forms: set[str], pass_forms: set[str],
              alias_forms: set[str] | frozenset[str] = frozenset()) -> float:
    """Weighted share of the terms the unit covers: in the sentence (or an index entry naming the
    passage it opens) fully, in its title and headings in part, elsewhere in its passage a little."""
    total = sum(w for _, w in terms) or 1.0
    got = 0.0
    for t, w in terms:
        if mentions(t, u.forms, u.text) or alias_forms and mentions(t, alias_forms, ""):
            got += w
        elif mentions(t, ctx_forms, ""):
            got += 0.45 * w
        elif mentions(t, pass_forms, ""):
            got += 0.15 * w
    return got / total


def weighted_terms(focus: Focus, weights: Weights, indexed: set[str], raw: str) -> list[tuple[Term, float]]:
    """The focus's terms with their weights; terms no passage of the corpus contains are dropped
    (nothing could match them) unless an index entry names them (`indexed`: the forms of the
    entries that led to passages), context terms count for less."""
    out = []
    for t in focus.terms:
        if weights.absent(t) and not t.named and not mentions(t, indexed, "") \
                or t.plain_number:
            if unmatchable(t, weights, focus.question.text) and not derived(t, focus, raw):
                out.append((t, ABSENT_WEIGHT * weight(t, weights)))
            continue
        if t.kind is TermKind.SYMBOL and t.text not in raw:
            continue
        docs = prefers(t, weights)  # "folder" where the corpus says "directory": either word covers it
        if docs:
            out.append((replace(t, forms=t.forms.union(*(d.forms for d in docs))),
                        min(weight(d, weights) for d in docs)))
            continue
        said = focus.whole_question
        shown = CONTEXT_WEIGHT if t.text in variant_values(said) or only_declined(t, said) \
            else SCENE_WEIGHT if told_not_asked(t, said) else 1.0
        out.append((t, weight(t, weights) * shown * (DOMAIN_WEIGHT if weights.domain(t) else 1.0)))
    out += [(t, CONTEXT_WEIGHT * weight(t, weights)) for t in focus.context if not weights.absent(t)]
    return out


DOMAIN_WEIGHT = 0.25  # of the corpus's own name ("a sequence in PostgreSQL"): it says where, not what
ABSENT_WEIGHT = 1.0  # a never-used word of the objective weighs in what a sentence should cover (measured: 0.5 lets more through)



EXACT_KINDS = (TermKind.SYMBOL,)  # matched as written, never by meaning: the encoder's word pieces drop `->>`
# (a sentence is judged by meaning when it, its headings or its passage use the operator as written)
SEM_MIX = 0.5  # with an encoder: a sentence's relevance is this much its closeness in meaning, the rest its words
SEM_BASE = 0.15  # a cosine at or below this says nothing (unrelated sentences score about this)
SEM_ENOUGH = 0.5  # a sentence this close in meaning answers though worded otherwise (with one word of the objective)


def _close_in_meaning(s: Scored) -> bool:
    """Says what the objective asks in other words: close in meaning, whatever its word coverage."""
    return s.similarity is not None and s.similarity >= SEM_ENOUGH


ASKED_ALIKE = 0.6  # an entry headed by a question this close in meaning to the objective asks what it asks


def asked_alike(scored: list[Scored], meaning: Meaning) -> set[str]:
    """The passages (source ids) among `scored` that are entries headed by a question close in meaning to the
    objective (`ASKED_ALIKE`): a FAQ's "Why does summary() report strange results for the R^2 estimate when I fit a
    linear model with no intercept?" for "I refitted my regression without an intercept and the R-squared jumped
    … is R computing something different?". Its sentences answer in the entry's words, which a story of the
    asker's own shares few of."""
    entries = {s.unit.source_id: s.unit.passage.asked_heading for s in scored if s.unit.passage.asked_heading}
    sims = meaning.of(list(entries.values()))
    return {sid for sid, sim in zip(entries, sims) if sim is not None and sim >= ASKED_ALIKE}


def _meaning_share(sim: float | None) -> float:
    return 0.0 if sim is None else max(0.0, (sim - SEM_BASE) / (1 - SEM_BASE))


def score_all(focus: Focus, ev: Evidence, meaning: Meaning = NO_MEANING) -> list[Scored]:
    """Every candidate sentence with its score, best first. Its relevance is its coverage of the objective's
    words; with an encoder, a mix of that and its closeness in meaning (`SEM_MIX`) for the
    `meaning.CANDIDATES` best by words (the rest count as unrelated in meaning)."""
    out = _score_words(focus, ev)
    if not meaning.available or not out:
        return out
    top = [s for s in out[:meaning_module.CANDIDATES] if s.exact]  # the rest: no closeness in meaning
    top += [s for s in out[meaning_module.CANDIDATES:] if s.exact and answers_heading(s.unit, ev)]
    for s, sim in zip(top, meaning.of([_said(s.unit) for s in top])):
        s.similarity = sim
    asked = [s for s in top if answers_heading(s.unit, ev)]  # said under the question it answers, or alone
    for s, sim in zip(asked, meaning.of([f"{s.unit.passage.own_heading} {s.unit.text}" for s in asked])):
        s.similarity = max(s.similarity or 0.0, sim or 0.0)
    if focus.question.answer_type is AnswerType.HOW_TO:
        _shows_what_is_asked(focus, [s for s in out if s.exact], meaning)  # (its own words may rank it low)
    for s in out:
        s.score = ((1 - SEM_MIX) * s.coverage + SEM_MIX * _meaning_share(s.similarity)) * s.factor
    out.sort(key=lambda s: (-s.score, -s.unit.passage.rank, s.unit.position))
    return out


EXAMPLE_SAYS = 2.0  # a how-to sentence whose example's comments say, close in meaning, what is asked


def _shows_what_is_asked(focus: Focus, scored: list[Scored], meaning: Meaning) -> None:
    """A how-to sentence leading to an example whose comments, read with it, say what is asked: close in meaning
    (`SEM_ENOUGH`) and naming two of the question's terms ("A counter tool is provided …" with "# Find the ten most
    common words in Hamlet", for "print the ten words that show up most"). It answers in the example's words, the
    more for it (`EXAMPLE_SAYS`). Comments that share words but not the task ("# Delete everything reachable from
    the directory" for a scratch folder deleted when done) are too far in meaning to count."""
    showing = [s for s in scored if s.unit.shows
               and len(covered(focus.question.terms, text_forms(s.unit.shows), s.unit.shows)) >= 2]
    for s, sim in zip(showing, meaning.of([f"{_said(s.unit)} {s.unit.shows}" for s in showing])):
        if sim is not None and sim >= SEM_ENOUGH:
            s.similarity = max(s.similarity or 0.0, sim)
            s.coverage = max(s.coverage, s.shown)
            s.factor *= EXAMPLE_SAYS


FAQ_OPENING = 2  # the opening sentences of an entry headed by a question: its answer


def answers_heading(u: Unit, ev: Evidence) -> bool:
    """One of the opening sentences of a section headed by a question (a FAQ's entry, "Why does -22 // 10 return
    -3?"): it answers that question, however it words the answer. A passage whose preceding one (when retrieved)
    is under the same heading continues the entry: its first sentences are no opening."""
    p = u.passage
    if not p.full or u.position >= FAQ_OPENING or not p.asks:
        return False
    page, _, no = p.passage_id.rpartition("#")
    before = next((q for q in ev.passages.values() if q.passage_id == f"{page}#{int(no) - 1}"), None) \
        if no.isdigit() else None
    return before is None or before.heading != p.heading


def _said(u: Unit) -> str:
    """What a sentence says, for its meaning: with the term it defines (a glossary entry) when it has one, or
    the name of the call it describes (right below its signature)."""
    if u.term_line:
        return f"{u.term_line}: {u.text}"
    name = api_name(u.api) if _describes_api(u) else ""
    return f"{name}: {u.text}" if name else u.text


def _score_words(focus: Focus, ev: Evidence) -> list[Scored]:
    raw = ev.all_text()
    terms = weighted_terms(focus, ev.weights, ev.alias_forms(), raw)
    if not terms:
        return []
    top_rank = max((p.rank for p in ev.passages.values()), default=1.0) or 1.0
    support = page_support(ev)
    top_page = max(support.values(), default=1.0) or 1.0
    subject = focus.subject(ev.weights)
    entries = own_entries(subject, ev)
    atype = focus.question.answer_type
    out: list[Scored] = []
    versioned = any(t.kind is TermKind.NUMBER and "." in t.text for t in focus.terms)
    exact = [t for t in focus.question.terms if t.kind in EXACT_KINDS and not ev.weights.domain(t)]
    for p in ev.passages.values():
        notes = RELEASE_NOTES_WEIGHT if not versioned and release_notes(p.title) else 1.0
        base_ctx = text_forms(p.context)
        alias_forms = text_forms(" ".join(p.aliases))
        aliased = any(mentions(t, alias_forms, "") for t, _ in terms)
        pass_forms = text_forms(p.text)
        heading_forms = text_forms(p.own_heading)
        for u in units_of(p):
            if u.kind is not UnitKind.SENTENCE or _SKIP.match(u.text) or not u.complete:
                continue
            if not p.full and _CODE.search(u.text):
                continue  # a snippet with its code run together into one line
            ctx_forms = base_ctx | text_forms(f"{u.api} {u.term_line}") if u.api or u.term_line else base_ctx
            # a glossary term spelling out an acronym asked about ("global interpreter lock") names it as fully
            # as the sentence would
            spelled = frozenset(f for t, _ in terms if spells(t, u.term_line) for f in t.forms) if u.term_line \
                else frozenset()
            # the sentence right below a signature is about the call it names ("Returns the number of characters
            # in the string" is what `length ( text ) → integer` does)
            named = api_forms(u.api) if _describes_api(u) else frozenset()
            shows = frozenset(text_forms(u.shows)) if u.shows and atype is AnswerType.HOW_TO else frozenset()
            if not any(mentions(t, u.forms, u.text) or named and mentions(t, named, u.api)
                       or shows and mentions(t, shows, u.shows) for t, _ in terms) and not (
                    u.term_line and (spelled or any(mentions(t, text_forms(u.term_line), u.term_line) for t, _ in terms))) \
                    and not (u.position <= 1 and aliased) \
                    and not (answers_heading(u, ev) and any(mentions(t, heading_forms, "") for t, _ in terms)):
                continue  # (the opening sentences of a passage the index names for the question may say it otherwise)
            full = (alias_forms if u.position <= 1 else frozenset()) | spelled | named
            cov = _coverage(terms, u, ctx_forms, pass_forms, full)
            # what its example does, said around it: counts once the example is found to do what is asked
            shown = _coverage(terms, u, ctx_forms | shows, pass_forms, full) if shows else cov
            factor = (1 + _type_bonus(u, focus, atype, subject, entries)) * _quality(u, atype) * notes * (
                1 + RANK_WEIGHT * p.rank / top_rank + PAGE_WEIGHT * support.get(page_of(p), 0.0) / top_page)
            if named_alike(u, subject, entries):
                factor *= ALIKE  # what a method or module function named like the subject does
            mine, mine_forms = focus.own_mention(u.text, u.forms)
            if focus.siblings and not any(mentions(t, mine_forms, mine) for t in focus.distinct(focus.terms)) \
                    and any(mentions(t, u.forms, u.text) for t in focus.siblings):
                factor *= 0.3  # about what a sibling covers
            hits = sum(1 for t, _ in terms if mentions(t, u.forms, u.text) or mentions(t, ctx_forms, "")
                       or shows and mentions(t, shows, u.shows))
            named = not exact or any(mentions(t, u.forms, u.text) or mentions(t, ctx_forms, "") for t in exact) \
                or p.full and any(has_operator(t.text, p.text) for t in exact)  # (its passage uses the operator)
            out.append(Scored(u, cov * factor, cov, hits, factor=factor, exact=named, shown=shown))
    out.sort(key=lambda s: (-s.score, -s.unit.passage.rank, s.unit.position))
    return out


# ---------------------------------------------------------------- choosing

@dataclass
class Selection:
    claims: list[Unit]
    related: list[Unit]
    missing: list[Term]  # named terms no retrieved text mentions
    coverage: float  # best unit's coverage
    passing: list[Term] = field(default_factory=list)  # the names asked about, each only mentioned in passing
    uncovered: list[Term] = field(default_factory=list)  # focus terms no claim mentions
    unknown: list[Term] = field(default_factory=list)  # words of the objective the corpus never uses
    unranked: list[Unsaid] = field(default_factory=list)  # rankings, figures, people, options no passage states
    elsewhere: list[Term] = field(default_factory=list)  # the names asked about, none of which the closest sentences name

    @property
    def found(self) -> bool:
        return bool(self.claims)


def _distinct(chosen: list[Unit], u: Unit) -> bool:
    for o in chosen:
        inter = len(u.forms & o.forms)
        if inter / max(1, len(u.forms | o.forms)) > 0.6 or u.text == o.text:
            return False
    return True


_IDENT_IN_TEXT = re.compile(r"[A-Za-z_][\w.]*\(\)?|[A-Za-z_]\w*(?:\.\w+)+|\b\w*_\w+\b")


def _about_the_same(code: Unit, u: Unit, terms: list[Term]) -> bool:
    """An example goes with a sentence when it uses a name the sentence gives (`readlines` for "use
    f.readlines()") or a word of the question; not the next example of the page about something else."""
    names = {f for m in _IDENT_IN_TEXT.finditer(u.text) if "(" in m.group(0) or "." in m.group(0) or "_" in m.group(0)
             for f in text_forms(m.group(0)) if len(f) >= 3}
    return bool(names & code.forms) or any(mentions(t, code.forms, code.text) for t in terms)


def _best_example(units: list[Unit], first: Unit, terms: list[Term]) -> Unit:
    """Of the examples shown one after another from `first`, the one whose comments name most of the question's
    terms ("# Find the ten most common words" over "# Tally occurrences"); the first when none says more."""
    run = [first]
    for x in units[first.position + 1:]:
        if x.kind is not UnitKind.CODE:
            break
        run.append(x)

    def named(x: Unit) -> int:
        said = " ".join(comments(x.text))
        return len(covered(terms, text_forms(said), said)) if said else 0

    return max(run, key=lambda x: (named(x), -x.position))


def attachment(u: Unit, atype: AnswerType, terms: list[Term] | None = None) -> Unit | None:
    """The code a sentence introduces ("…, call clone() with deep=True:"); for a how-to answer also
    the API signature the sentence documents: the one right above it (a function table's row, "length ( text )
    → integer" over "Returns the number of characters", names the call only there), else the example after
    it, when that example is about the same thing (`_about_the_same`; every example, when no terms are
    given), else the nearest signature above."""
    units = units_of(u.passage)
    if u.intro:
        return next((x for x in units if x.position == u.position + 1), None)
    if atype is not AnswerType.HOW_TO:
        return None
    if _describes_api(u):
        return units[u.position - 1]  # the entry's signature: it names the call the sentence describes
    first = next((x for x in units if x.position > u.position and x.kind is UnitKind.CODE), None)
    after = _best_example(units, first, terms or []) if first and first.position - u.position <= 3 else None
    if after and (terms is None or _about_the_same(after, u, terms)):
        return after
    before = [x for x in units if x.position < u.position and x.kind is UnitKind.SIGNATURE]
    return before[-1] if before and u.position - before[-1].position <= 4 else None


_DETAIL_AFTER = re.compile(r"\s+(?:for|to|in|into|on|at|by|with|from|as|when|if|or|and|instead|values?)\b|\s*[,.;:?!)]|\s*$",
                           re.I)


def sets_the_scene(name: str, question: str) -> bool:
    """Whether a name sets where the question is asked: after "in", "with", "using" … ("in JavaScript", "with the
    Django ORM"), before an 's ("Kotlin's"), or before the noun it qualifies ("a Kotlin data class"). A name the
    asker wants as a value ("record NaN for the fits that fail"), an example, or what an answer is for ("for
    Excel") is a detail of the question, not its setting."""
    x = re.escape(name)
    if re.search(rf"{SCENE_BEFORE}{x}\b", question, re.I) or re.search(rf"\b{x}['’]s\b", question):
        return True
    after = [question[m.end():] for m in re.finditer(rf"(?<![\w.]){x}(?![\w])", question)]
    return any(not _DETAIL_AFTER.match(rest) for rest in after) and not re.search(
        rf"\bfor\s+(?:the\s+|an?\s+)?{x}\b", question)


def about_none(focus: Focus, chosen: list[Unit], weights: Weights) -> list[Term]:
    """The names the objective asks about when no chosen sentence, nor its passage's titles, headings and index
    entries, names any of them: the closest sentences answer something else ("var" of contextvars for "let and
    var in JavaScript"), so quoting them would be an answer built from word overlap."""
    asked = focus.question.text
    # a name a part carries from the whole question ("And does it reject …?" of "In JavaScript, what's …?") sets the
    # part's scene where it sets the whole question's
    names = [t for t in focus.key_names(weights) if t not in focus.siblings and (
        sets_the_scene(t.text, asked) or t in focus.about and focus.whole and sets_the_scene(t.text, focus.whole))]
    if not names or any(t.kind is not TermKind.NAME for t in names):
        return []  # an identifier or a keyword the sentences leave out may still be what they document
    for u in chosen:
        text = f"{u.text} {u.passage.context}"
        forms = u.forms | text_forms(u.passage.context)
        if any(mentions(t, forms, text) or spells(t, text) for t in names):
            return []
    told = focus.whole or asked  # a name only a story's scene holds says where the need arose, not what is asked
    # (a name of one letter, "C", is no sign of its absence: the pages of its API speak of it without writing it in
    # each sentence; where a sentence writes it, it is a sign of its presence)
    return [t for t in names if not told_not_asked(t, told) and len(t.text) > 1]


def named_by_an_answer(term: Term, enough: list[Scored]) -> bool:
    """A name the corpus mentions only in passing, given as the name of what a sentence that answers on its own
    describes, close in meaning to the objective ("This is also known as UPSERT" under INSERT's ON CONFLICT clause,
    for "insert or update the existing row (an upsert)?"): where it is named is the answer, so it is no passing
    mention. A sentence that only refers to it ("see the Django documentation") does not say what it is."""
    said = re.compile(rf"{_NAMING}\s+(?:an?\s+|the\s+)?[\"“'‘`]?{re.escape(term.text)}\b", re.I)
    return any(_close_in_meaning(s) and said.search(s.unit.text) for s in enough)


# a name given as an instance of a kind the text speaks of ("programs such as newsyslog and logrotate", "e.g. Kerberos")
_INSTANCE_OF = rf"\b(?:{INSTANCE_OPENERS})\s+(?:[\w.+-]+(?:\s*,\s*|\s+(?:and|or)\s+)){{0,4}}"


def scene_instance(term: Term, focus: Focus, ev: Evidence) -> bool:
    """A name only a story's scene holds, none of its asking sentences ("Our server rotates the log file every night
    with logrotate. … Which handler should we use so the process reopens it?") that a retrieved text gives as an
    instance of what it documents ("a file change can happen because of programs such as newsyslog and logrotate"):
    the documents speak of the asker's case there, so the name mentioned in passing is no sign that they do not
    answer. (Unlike `told_not_asked`, an ask pointing back into the scene does not matter: the text names the name.)"""
    if not scene_only(term, focus.whole_question):
        return False
    given = re.compile(rf"{_INSTANCE_OF}{re.escape(term.text)}\b", re.I)
    return any(given.search(p.text) for p in ev.passages.values())


ANSWER_HITS = 3  # the objective's terms (the identifier one of them) an answering sentence naming it holds


def identifier_in_an_answer(term: Term, enough: list[Scored]) -> bool:
    """A snake_case identifier the corpus mentions only in passing that a sentence answering well enough names
    itself, with other words asked ("the bdist_dumb command generates all the "dumb" archive formats (tar, gztar, …)"
    for "which archive formats can bdist_dumb produce?"): a command or a function of what the documents cover,
    described where it is mentioned. (A product's name mentioned beside what it does, "readxl" or the dotted
    "data.table", stays undocumented: what it is used for is not how to use it; five R questions about data.table
    had been answered from such sentences.)"""
    return term.kind is TermKind.IDENT and "_" in term.text and any(
        s.hits >= ANSWER_HITS and mentions(term, s.unit.forms, s.unit.text) for s in enough)


def told_by_an_answer(term: Term, focus: Focus, enough: list[Scored]) -> bool:
    """A name the corpus mentions only in passing that only a story's scene holds, none of its asking sentences, and
    that a sentence answering well enough, or its passage, mentions ("Our old scripts were saved in the
    Windows-1252 encoding … What do I put at the top of such a file …?", "… to declare that Windows-1252
    encoding is to be used, the first line … should be:"; "a helper function creates a PhotoImage … Why does the
    picture vanish …?" under the passage on images naming PhotoImage): the documents speak of the asker's case where
    they answer. (A name the asking sentences hold, "How do I read an Excel file with readxl?", stays a thing the
    documents leave undocumented.)"""
    return scene_only(term, focus.whole_question) and any(
        mentions(term, u.forms, u.text) for s in enough for u in units_of(s.unit.passage))


def select(focus: Focus, ev: Evidence, limit: int = MAX_CLAIMS, meaning: Meaning = NO_MEANING) -> Selection:
    scored = score_all(focus, ev, meaning)
    best = scored[0] if scored else None
    coverage = max((s.coverage for s in scored[:10]), default=0.0)
    related = []
    for s in sorted(scored, key=lambda s: -s.coverage):
        if len(related) >= 3:
            break
        if all(r.source_id != s.unit.source_id for r in related):
            related.append(s.unit)
    terms = weighted_terms(focus, ev.weights, ev.alias_forms(), ev.all_text())
    own = [t for t, _ in terms if t not in focus.context]  # the whole question's other words only help
    need = 2 if len(own) >= 3 else 1
    alike = asked_alike(scored[:10], meaning)
    story = len(own) >= STORY_TERMS  # a question told as a story: no sentence covers as much of its many words
    floor, need = (STORY_COVERAGE, max(need, STORY_HITS)) if story else (MIN_COVERAGE, need)
    enough = [s for s in scored[:10] if s.coverage >= floor and s.hits >= need
              or (_close_in_meaning(s) or s.unit.source_id in alike) and s.hits >= 1]
    gaps = unanswered(focus, ev, focus.key_names(ev.weights))
    gaps.passing = [t for t in gaps.passing if not named_by_an_answer(t, enough) and not scene_instance(t, focus, ev)
                    and not told_by_an_answer(t, focus, enough) and not identifier_in_an_answer(t, enough)]
    if best is None or gaps or not enough:
        return Selection([], related, gaps.missing, coverage, passing=gaps.passing, unknown=gaps.unknown,
                         unranked=gaps.unranked)
    chosen: list[Unit] = []
    for s in scored:
        if len(chosen) >= limit or s.score < FLOOR * best.score:
            break
        if s.coverage < QUOTED_COVERAGE and not _close_in_meaning(s) or not _distinct(chosen, s.unit):
            continue
        chosen.append(s.unit)
    elsewhere = about_none(focus, chosen, ev.weights)
    if elsewhere:
        return Selection([], related, [], coverage, elsewhere=elsewhere)
    forms = set().union(*(u.forms for u in chosen)) if chosen else set()
    said = " ".join(u.text for u in chosen)  # the corpus's own subject (R in R's manuals) goes without saying
    # (a whole number is an example's value, weighed in no score: no claim needs to repeat it; nor a name the question
    # holds but does not ask about, such as the asker's data in a quoted instance)
    uncovered = [t for t in focus.terms if t.named and not t.plain_number and not ev.weights.domain(t)
                 and not ev.weights.everyday(t) and not mentions(t, forms, said) and not set_aside(t, focus, ev.weights)]
    return Selection(chosen, [], gaps.missing, coverage, uncovered=uncovered)
