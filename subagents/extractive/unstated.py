"""What a question asks that only a sentence stating it answers: a ranking ("the most popular web framework"), a
figure of a market (stars, users, market share), who holds a role, the latest release, which companies use
something, how many things a collection holds or something keeps or does, a price, a population's share, a person's
life, a ratio, an amount measured of the world, a bound or an exact figure, a quantity in its unit, which of named
things is the better choice, the reader's own view — and an option of a named thing, which its owner's passages must
speak of. Documentation describes what things do; these it states rarely, so a retrieved passage must state each
(`unranked`), or the documents do not answer."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from itertools import takewhile
from typing import TYPE_CHECKING

from .evidence import Evidence, Passage, UnitKind, units_of
from .terms import STOP, Term, TermKind, Weights, extract_terms, text_forms, zipf

if TYPE_CHECKING:
    from .selection import Focus


# what a market counts: stars, downloads, users (a measure ending in one of them is had, not been)
_COUNT_WORDS = ("stars", "downloads", "installs", "installations", "users", "developers", "contributors", "customers",
                "employees", "members")
_COUNT_NOUNS = "(?:" + "|".join(_COUNT_WORDS) + ")"
# a ranking by opinion or by the market ("the best IDE", "the most popular framework", "the cheapest host")
_MEASURE = (r"(?P<measure>best|worst|cheapest|fastest|most[\s-]+popular|most[\s-]+(?:widely\s+)?used|"
            r"most[\s-]+recommended|favou?rite|most[\s-]+(?:(?!of\b)[\w-]+\s+)?(?:downloads|downloaded|stars|starred|"
            r"installs|installed|users|contributors)|"
            r"largest\s+market\s+share|(?:highest|top)[\s-]+rated|top[\s-]+(?:\d+|two|three|four|five|six|seven|eight|nine|"
            r"ten|twenty)|(?:largest|greatest|highest|biggest)\s+number\s+of\s+(?:[\w-]+\s+){0,3}?" + _COUNT_NOUNS +
            r")(?![\w-])")  # (counts of a market: no manual has them)
# what the ranking is for ("best for deep learning"): a sentence ranking things for something else does not answer
_PURPOSE = r"(?:\s+(?P<purpose>(?:for|at|in)\s+[^?.!,;]+?)(?=\s*[?.!,;]|\s*$))?"
_WAY = frozenset("way ways method methods approach approaches practice practices idiom technique techniques strategy "
                 "solution option options means".split())
_RANKED = (
    re.compile(r"\b(?:which|what)\s+(?P<category>(?:[\w.+#-]+\s+){0,3}?[\w.+#-]+)\s+(?:is|are|was|were|has|have|had|"
               r"gets?|got|offers?|gives?|provides?|runs?|performs?|works?|employs?|hires?|ships?|sells?|hosts?|"
               r"attracts?|draws?)\s+(?:the\s+)?" + _MEASURE + _PURPOSE, re.I),
    re.compile(r"\b(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:the(?:\s+(?:\d+|two|three|four|five|ten))?|"
               r"(?:[\w.-]+\s+){0,3}?[\w.-]+'s)\s+" + _MEASURE +
               r"\s+(?P<category>(?:[\w.+#-]+\s+){0,3}?[\w.+#-]+?)(?=\s+(?:for|to|in|on|of|with|that|which|among|"
               r"available|today|now|right|when|if|\d)\b|\s*[?.!,]|\s*$)" + _PURPOSE, re.I),
)
_CHOICE = re.compile(r"^of\b|\b(?:or|and|vs\.?|versus)\b|,", re.I)  # named things to choose among, not a kind
RANK_SPAN = 5  # a word of the measure this close to the ranked kind's word states the ranking
# the words a passage ranking things by each measure says it with
_STATED = {"best": ("best", "preferred", "recommended", "recommend", "ideal", "optimal"), "worst": ("worst",),
           "cheapest": ("cheapest", "least expensive"), "fastest": ("fastest", "quickest"),
           "popular": ("popular", "popularity"), "used": ("widely used", "commonly used", "most used"),
           "recommended": ("recommended", "recommend", "preferred"), "favourite": ("favourite", "favorite"),
           "download": ("most downloaded", "most downloads"), "star": ("most stars", "most starred"),
           "install": ("most installed", "most installs"), "users": ("most users",),
           "contributors": ("most contributors",), "market share": ("market share",), "rated": ("rated",),
           "top": ("top", "ranked", "ranking"), "number of": ("largest number", "greatest number", "highest number")}


@dataclass(frozen=True)
class Ranking:
    """The question asks which of a kind of thing ranks first by a measure ("the most popular web framework")."""

    measure: str  # "most popular"
    category: str  # "web framework"
    purpose: str = ""  # "for deep learning" (of "best for deep learning")

    @property
    def text(self) -> str:
        """What no passage says: "which is the most popular web framework", "which CRAN packages have the most
        downloads" (a count is had, not been)."""
        plural = self.category.endswith("s")
        if self.measure.split()[-1] in (*_COUNT_WORDS, "share"):
            said = f"which {self.category} {'have' if plural else 'has'} the {self.measure}"
        elif self.measure.startswith("top"):
            said = f"which {self.category} {'are' if plural else 'is'} the {self.measure}"
        else:
            said = f"which {'are' if plural else 'is'} the {self.measure} {self.category}"
        return f"{said} {self.purpose}" if self.purpose else said

    def stated_by(self, sentence: str) -> bool:
        """The sentence ranks that kind of thing by that measure: a word of the measure and the kind's own word
        ("framework" for "web framework") in it (a heading's word is no ranking: "fastest" in an example under
        "Brief Tour of the Standard Library" says nothing of JSON libraries)."""
        key = next(k for k in _STATED if k in self.measure.replace("favorite", "favourite"))
        head = text_forms(self.category.split()[-1])
        forms = text_forms(sentence)
        purpose = {f for t in extract_terms(self.purpose, sentence=False) for f in t.forms}
        words = re.findall(r"[\w+#-]+", sentence)
        at_head = [i for i, w in enumerate(words) if text_forms(w) & head]
        at_measure = [i for i in range(len(words)) for said in _STATED[key]
                      if [w.lower() for w in words[i:i + len(said.split())]] == said.split()]
        # the measure says it of the kind: within a few words of its word ("the preferred text search index type",
        # not "the best way to get started … is through the IDLE integrated development environment")
        near = any(abs(i - j) <= RANK_SPAN for i in at_head for j in at_measure)
        return near and (not purpose or bool(purpose & forms))


def rankings(question: str) -> list[Ranking]:
    """The rankings a question asks for: "which X is the best", "what is the most popular X" (someone's
    "favourite X" too); not "the best way to …" or "the best practice for …", which ask how, nor "which of
    json or pickle is the fastest", which compares the things it names."""
    out = []
    for pattern in _RANKED:
        for m in pattern.finditer(question):
            if _CHOICE.search(m.group("category")):  # "which of json or pickle is the fastest": a comparison
                continue
            category = " ".join(w for w in m.group("category").split() if w.lower() not in STOP)
            if category and category.split()[-1].lower() not in _WAY:
                measure = re.sub(r"\s+|(?<=^most)-", " ", m.group("measure").lower())  # ("most-downloaded")
                out.append(Ranking(measure, category, m.group("purpose") or ""))
    return out


# a number of its own, in digits or words ("16-byte", "two thousand"; not the 4 of S4Vectors): what gives a figure
_NUMBER_WORDS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
                 r"hundreds?|thousands?|millions?|billions?|dozens?")
_NUMBER = re.compile(rf"(?<![A-Za-z_\d])\d[\d,.]*(?![A-Za-z_\d])|\b(?:{_NUMBER_WORDS})\b", re.I)

# a figure of a market: how many stars, downloads or users a thing has, its market share (no manual keeps them)
_FIGURES = (
    re.compile(r"\bhow\s+many\s+(?P<measure>(?:[\w-]+\s+)?" + _COUNT_NOUNS + r")\s+(?:does|do|did|has|have|had)\s+"
               r"(?P<subject>.+?)(?:\s+(?:have|has|had|get|got|gets|receive|count)\b.*)?\s*\??$", re.I),
    re.compile(r"\b(?P<measure>market\s+share|download\s+(?:counts?|numbers|statistics|stats)|(?:github|gitlab)\s+stars|"
               r"number\s+of\s+(?:[\w-]+\s+)?" + _COUNT_NOUNS + r")\s+(?:of|for)\s+(?P<subject>.+?)"
               r"(?:\s+(?:among|in|on|compared|versus|vs)\b.*)?\s*\??$", re.I),
    re.compile(r"\b(?P<subject>[\w.+#-]+)['’]s\s+(?P<measure>market\s+share|download\s+(?:counts?|numbers|statistics|"
               r"stats)|(?:github|gitlab)\s+stars|number\s+of\s+(?:[\w-]+\s+)?" + _COUNT_NOUNS + r")\b", re.I),
    # "How many active R users are there worldwide?": the thing's people counted, a name before them
    re.compile(r"\bhow\s+many\s+(?:[a-z-]+\s+){0,2}?(?P<subject>(?-i:[A-Z])[\w.+#-]*)\s+(?P<measure>" + _COUNT_NOUNS
               + r")\s+(?:are|were)\s+there\b", re.I),
)


@dataclass(frozen=True)
class Figure:
    """The question asks for a figure of a market: "how many stars the CPython repository has", "the market
    share of Python"."""

    measure: str  # "stars", "market share"
    subject: str  # "the CPython repository", "Python"

    @property
    def text(self) -> str:
        return f"the {self.measure} of {self.subject}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence giving the figure: the measure's own words and the subject's head word ("repository" of
        "the CPython repository"), with a number beside what a count counts ("12,000 stars"; not "available for
        download" by a footnote's "[1]"); "market share" needs none."""
        words = [w for w in re.findall(r"[a-z]+", self.measure.lower()) if w not in STOP and w != "number"]
        head = [w for w in re.findall(r"[A-Za-z]+", self.subject) if w.lower() not in STOP][-1:]
        forms = text_forms(sentence)
        has_words = bool(words) and all(text_forms(w) & forms for w in words + head)
        counted = self.measure.lower().split()[-1]
        return has_words and (counted not in _COUNT_WORDS or _counts_beside(counted, sentence, after=CAPACITY_SPAN))


def figures(question: str) -> list[Figure]:
    """The figures of a market a question asks for ("How many stars does X have on GitHub?", "What is the market
    share of X?")."""
    out = []
    for pattern in _FIGURES:
        for m in pattern.finditer(question):
            subject = m.group("subject").strip(" ?.!")
            if subject:
                out.append(Figure(" ".join(m.group("measure").lower().split()), subject))
    return out


# the latest (or next) release of something: "What is the latest NumPy release?", "Which is the newest version of
# pip?", "When is the next PostgreSQL release?" — a manual is written for one release and rarely says which came after
_LATEST = {"latest": ("latest", "newest", "most recent", "current"), "next": ("next", "upcoming", "forthcoming")}
_LATEST_WORDS = r"(?P<when>latest|newest|most\s+recent|next|upcoming|forthcoming)"
_RELEASE_ASKED = (
    re.compile(r"^\s*(?:what|which|when)(?:'s|\s+is|\s+are|\s+was|\s+will\s+be)\s+the\s+" + _LATEST_WORDS +
               r"\s+(?:(?:stable|major|minor|lts)\s+)?(?:release|version)\s+of\s+(?P<subject>(?:the\s+)?(?:[\w.+#-]+\s+){0,2}?"
               r"[\w.+#-]+)\s*(?:[?,;]|$|\s+and\b)", re.I),
    re.compile(r"^\s*(?:what|which|when)(?:'s|\s+is|\s+are|\s+was|\s+will\s+be)\s+the\s+" + _LATEST_WORDS +
               r"\s+(?P<subject>(?:[\w.+#-]+\s+){0,2}?[\w.+#-]+)\s+(?:(?:stable|major|minor|lts)\s+)?(?:release|version)\b",
               re.I),
)


@dataclass(frozen=True)
class Release:
    """The question asks which release of something is the latest (or the next)."""

    when: str  # "latest", "next"
    subject: str  # "NumPy"

    @property
    def text(self) -> str:
        return f"which is the {self.when} release of {self.subject}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence saying which release is the latest (or next) of that thing: a word of the kind ("latest",
        "newest"), "release" or "version", and the subject's own last word."""
        lowered, forms = sentence.lower(), text_forms(sentence)
        head = [w for w in re.findall(r"[A-Za-z][\w+#-]*", self.subject) if w.lower() not in STOP][-1:]
        return (any(re.search(rf"\b{w}\b", lowered) for w in _LATEST[self.when])
                and bool(re.search(r"\b(?:release[sd]?|versions?)\b", lowered))
                and all(text_forms(w) & forms for w in head))


def releases(question: str) -> list[Release]:
    """The latest (or next) release the question asks for, if it asks which one that is."""
    for pattern in _RELEASE_ASKED:
        m = pattern.search(question)
        if m:
            when = "next" if m.group("when").lower() in _LATEST["next"] else "latest"
            subject = re.sub(r"^(?:the|a|an)\s+", "", m.group("subject").strip(), flags=re.I)
            if subject:
                return [Release(when, subject)]
    return []


# who holds a role: "Who leads the PostgreSQL core team?", "Who is the current CEO of Microsoft?" (not "who can drop a
# table?" or "who owns a new table?", which documentation answers with roles and privileges)
# (asked in any of the question's sentences: "Who is the president of X? I want to address a letter to them.")
_WHO = re.compile(r"(?:^|(?<=[.?!])\s)\s*who\s+(?:(?:currently|now|still|actually|originally|first)\s+)?"
                  r"(?P<verb>is|are|was|were|leads?|led|heads?|runs?|founded|created|invented|wrote|"
                  r"maintains?|designed|started|chairs?|manages?|(?:sits|serves)\s+on|belongs\s+to)\b\s*"
                  r"(?:(?:currently|now|still)\s+)?"
                  r"(?P<role>[^?]*?)\s*(?:\?|$)", re.I)
_ROLE_NOUNS = frozenset("ceo cto cfo coo founder founders creator creators author authors inventor inventors maintainer "
                        "maintainers leader leaders lead head president chair chairman chairwoman director manager "
                        "bdfl committer committers member members".split())
# a person's or an organisation's name: two capitalised words in a row, the first not opening the sentence
# ("Guido van Rossum", "the PostgreSQL Global Development Group")
_NAMED = re.compile(r"(?<=[a-z,;:(]\s)[A-Z][^\W\d_A-Z][\w'’.-]*(?:\s+(?:van|von|de|del|der|da|di|la|le))?\s+"
                    r"[A-Z][^\W\d_A-Z][\w'’-]*")


# the words a sentence naming a role's holder says it with ("led by", "the author of")
_ROLE_SAID = {"led": ("lead", "leads", "led", "leader", "leaders"), "wrote": ("wrote", "written", "write", "author", "authors"),
              "founded": ("founded", "founder", "founders"), "created": ("created", "creator", "creators"),
              "invented": ("invented", "inventor"), "designed": ("designed", "designer"), "started": ("started",),
              "heads": ("head", "heads", "headed"), "runs": ("run", "runs"), "maintains": ("maintained", "maintainer",
              "maintainers", "maintains"), "chairs": ("chair", "chairs", "chaired"), "manages": ("manager", "managed"),
              "members": ("member", "members")}
_ROLE_KEY = {"lead": "led", "leads": "led", "head": "heads", "run": "runs", "maintain": "maintains", "chair": "chairs",
             "manage": "manages",
             "sits": "members", "serves": "members", "belongs": "members"}  # who sits on a board: its members


@dataclass(frozen=True)
class Person:
    """The question asks who holds a role ("Who leads the PostgreSQL core team?"): a manual rarely names them."""

    verb: str  # "leads", "is"
    role: str  # "the PostgreSQL core team", "the current CEO of Microsoft"

    @property
    def text(self) -> str:
        return f"who {self.verb} {self.role}"

    def said_with(self) -> tuple[str, ...]:
        """The words of the role itself: its verb's ("led by", "the author"), or its nouns (CEO, founder)."""
        verb = self.verb.lower().split()[0]  # ("sits on")
        key = _ROLE_KEY.get(verb, verb)
        if key in _ROLE_SAID:
            return _ROLE_SAID[key]
        nouns = [w for w in re.findall(r"[A-Za-z]+", self.role.lower()) if w in _ROLE_NOUNS]
        return tuple(dict.fromkeys(x for w in nouns for x in next((g for g in _ROLE_SAID.values() if w in g), (w,))))

    def stated_by(self, sentence: str) -> bool:
        """A sentence naming someone (two capitalised words, not the sentence's opening) in the role's own words, and
        with a word of what the role is of ("team" of "leads the core team": "the POSTGRES project, led by Michael
        Stonebraker" names who led something else)."""
        lowered, forms = sentence.lower(), text_forms(sentence)
        said = self.said_with()
        of = [w for w in re.findall(r"[A-Za-z]+", self.role)
              if w[0].islower() and w not in STOP and w not in said and w != "current"] or [
            w for w in re.findall(r"[A-Za-z]{2,}", self.role) if w.lower() not in STOP and w.lower() not in said
            and w.lower() != "current"]  # a role of a name alone ("the President of the R Foundation")
        return (bool(_NAMED.search(sentence)) and any(re.search(rf"\b{w}\b", lowered) for w in said)
                and (not of or any(text_forms(w) & forms for w in of)))


def persons(question: str) -> list[Person]:
    """Who holds a role the question asks: "who" with a verb of leading or making, or a role's noun (CEO, founder)."""
    m = _WHO.search(question)
    if not m:
        return []
    person = Person(m.group("verb"), " ".join(m.group("role").split()))
    if person.said_with() == _ROLE_SAID["members"] and not re.search(r"\b[A-Z]", person.role):
        return []  # the members of a role or a group the documents define ("of the pg_monitor role") are roles
    return [person] if person.said_with() else []


_ORGS = r"compan(?:y|ies)|organi[sz]ations?|business(?:es)?|firms?|enterprises?|corporations?"
_WHICH_ORGS = re.compile(rf"^\s*(?:which|what)\s+(?:(?:big|large|major|famous|well-known|other)\s+)?(?P<kind>{_ORGS})\s+"
                         r"(?:\w+\s+)?(?P<verb>use|uses|used|run|runs|rely\s+on|relies\s+on|adopted|deploy|deploys|sponsor|"
                         r"sponsors|fund|funds|contribute\s+to)\b\s*(?P<what>[^?]*)\??\s*$", re.I)
_ORG_WORD = re.compile(rf"\b(?:{_ORGS})\b", re.I)
_CAPITALISED = re.compile(r"(?<=[a-z,;:(]\s)[A-Z][\w&.-]+")  # a name inside the sentence, not its opening word


@dataclass(frozen=True)
class Adopters:
    """The question asks which companies use (or fund) something: the market, which a manual rarely names."""

    kind: str  # "companies"
    verb: str  # "use"
    what: str  # "R in production"

    @property
    def text(self) -> str:
        return f"which {self.kind} {self.verb} {self.what}".strip()

    def stated_by(self, sentence: str) -> bool:
        """A sentence naming one (a capitalised name inside it) beside a word for a company."""
        return bool(_ORG_WORD.search(sentence)) and bool(_CAPITALISED.search(sentence))


def adopters(question: str) -> list[Adopters]:
    m = _WHICH_ORGS.match(question)
    return [Adopters(m.group("kind").lower(), " ".join(m.group("verb").split()), " ".join(m.group("what").split()))] \
        if m else []


# a hedge before "how many" ("Roughly how many …", "Exactly how many …")
_HEDGED = r"(?:(?:exactly|roughly|approximately|about)\s+)?"
# how many things a collection holds: "How many packages are on Bioconductor?", "How many bytes are in a UUID?"
_COUNT_ASKED = re.compile(r"^\s*" + _HEDGED + r"how\s+many\s+(?P<noun>(?:[\w-]+\s+){0,2}?[\w-]+)\s+"
                          r"(?:are|is|were|was)\s+(?:there\s+)?"
                          r"(?:(?:currently|now|presently|already|still|actually)\s+)?(?:[\w-]+(?:ed|en)\s+)?"
                          r"(?P<prep>on|in|at|inside|within)\s+(?P<place>[^?,;]+?)\s*(?:\?|$)", re.I)


@dataclass(frozen=True)
class Count:
    """The question asks how many things a collection holds; only a sentence giving the number answers it."""

    noun: str  # "packages"
    place: str  # "Bioconductor"
    prep: str = "in"  # "on"

    @property
    def text(self) -> str:
        return f"how many {self.noun} are {self.prep} {self.place}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence with the collection's word and a number beside the counted thing's word ("16-byte" and UUID,
        "over two thousand packages"; not "packages for old versions of R (released more than 5 years ago)")."""
        heads = [w for part in (self.noun, self.place)
                 for w in [x for x in re.findall(r"[A-Za-z]+", part) if x.lower() not in STOP][-1:]]
        forms = text_forms(sentence)
        return bool(heads) and all(text_forms(w) & forms for w in heads) \
            and _counts_beside(_counted(self.noun), sentence)


def counts(question: str) -> list[Count]:
    m = _COUNT_ASKED.match(question)
    return [Count(" ".join(m.group("noun").split()), " ".join(m.group("place").split()), m.group("prep").lower())] \
        if m else []


# how many things something keeps or does at most or by default: "How many idle connections does the pool keep?", "How
# many pending events can a scheduler hold?", "How many digits does it show by default?", "How many retries does it
# make?" (not "how many arguments does it take" nor "how many threads does it use", which a signature or a formula
# answers without a sentence counting them)
_KEEPING = r"keep|hold|store|cache|retain|remember|buffer|queue|accept|show|display|print|" \
           r"follow|make|attempt|try|retry|perform"  # ("how many redirects will the handler follow")
_CAPACITY_ASKED = re.compile(
    r"(?:^|(?<=[.?!:])\s+)\s*" + _HEDGED + r"how\s+many\s+(?P<noun>(?:[\w-]+\s+){0,2}?[\w-]+)\s+"
    r"(?:does|do|did|can|could|will|would|should|may|might)\s+(?P<subject>(?:[\w.()'’-]+\s+){1,5}?)"
    rf"(?P<verb>{_KEEPING})\b(?!\s+(?:{_KEEPING})\b)", re.I)  # ("does that cache hold": a noun, then the verb)
CAPACITY_SPAN = 3  # a number this many words before the counted thing's word counts it ("128 most recent results")
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")
# words between a number and the thing's word that say the number is of something else ("0 after each event")
_LINKS = frozenset("after before each every of for in on to from with by at than when if the a an this that its their "
                   "is are was were".split())
# a name given a number ("maxsize=128", "maxsize = 128"): the count a default states in a signature; not a word of the
# asking ("by default": any signature's "default=0")
_ASSIGNED = r"(?<![\w.]){name}\s*=\s*\d"
_ASKING = frozenset({"many", "default", "defaults"})


@dataclass(frozen=True)
class Capacity:
    """The question asks how many things something keeps (at most, or by default): a figure a manual states in a
    sentence counting them, or as a named setting's number; without one, what is retrieved describes the thing."""

    noun: str  # "idle connections"
    subject: str  # "its per-host connection pool"
    verb: str  # "keep"
    named: tuple[str, ...] = ()  # the words and identifiers the question writes ("maxsize")

    @property
    def text(self) -> str:
        verb = re.sub(r"(?<=[^aeiou])y$", "ie", self.verb)  # ("retry": "retries")
        return f"how many {self.noun} {self.subject} {verb}s"

    def stated_by(self, sentence: str) -> bool:
        """A sentence with a number in digits a few words from the counted thing's word ("saves up to 128 results",
        "connections (default 100)"; not another name's default, "count=0"; for "how many times", not a ratio, "3
        times faster"), or one giving a number to a name the question writes ("maxsize=128")."""
        if self.noun.lower() == "times":
            sentence = _RATIO_SAID.sub(" ", sentence)
        return (_numbered(_counted(self.noun), sentence)
                or any(re.search(_ASSIGNED.format(name=re.escape(n)), sentence) for n in self.named))


_RATIO_SAID = re.compile(r"\btimes\s+(?:more|less|fewer|faster|slower|longer|shorter|larger|smaller|bigger|higher|"
                         r"lower|as)\b", re.I)  # "3 times faster": a ratio, no count of times


def _numbered(counted: str, sentence: str, after: int = 0, spelled: bool = False) -> bool:
    """A number in digits a few words before the counted thing's word ("saves up to 128 results"; not "0 after each
    event"), a default or a bound said after it ("connections (default 100)"), or a number within `after` words after
    it, no linking word between ("columns per table 1600"); `spelled`: a number in words too ("two thousand"). A
    number joined to a word is a name ("Thread-2: Hello World 1" counts no threads)."""
    head = text_forms(counted)
    words = re.findall(r"[A-Za-z_][\w.=]*-\d[\w.]*|[\w.=]+|[,;:]", sentence)  # ("Thread-2", "UTF-8": a name, no count)
    for i, w in enumerate(words):
        if "-" in w or not text_forms(w) & head:
            continue
        # (a number before, in a clause of its own, is of something else: "Since 2016, … packages"; one after may
        # follow a comma: "limited to characters, 64 in all")
        rest = [x for x in words[i + 1:] if x not in ",;:"]
        for side in (words[max(0, i - CAPACITY_SPAN):i][::-1], rest[:after]):
            for word in side:
                if _DIGITS.fullmatch(word) or spelled and re.fullmatch(_NUMBER_WORDS, word, re.I):
                    return True
                if word.lower() in _LINKS or word in ",;:":
                    break
        following = " ".join(rest[:1 + CAPACITY_SPAN])  # "connections (default 100)", "digits … default 7"
        if re.match(r"(?:\w+\s+)?(?:defaults?|maximum|max|limit|is|are)\s+(?:to\s+|of\s+|at\s+)?\d", following, re.I):
            return True
    return False


def _counts_beside(counted: str, sentence: str, after: int = 0) -> bool:
    """A number that counts (no version: `_counts_something`), in digits or words, beside the counted thing's word
    (`_numbered`): "over two thousand packages", not "Since March 2016, … packages" nor a footnote's "[1]"."""
    return _counts_something(sentence) and _numbered(counted, sentence, after, spelled=True)


def _counted(noun: str) -> str:
    """The word for what is counted: the last content word ("connections" of "idle connections"; "" of "of them"), or
    "times" ("how many times does download.file retry": the times it does it, "retries up to 3 times")."""
    if noun.lower() == "times":
        return noun
    return next((w for w in reversed(re.findall(r"[A-Za-z]+", noun)) if w.lower() not in STOP), "")


def capacities(question: str) -> list[Capacity]:
    """The capacities a question asks, each at the opening of one of its sentences or after a colon, of a thing it
    names ("How many of them does the pool keep?" says not what is counted)."""
    named = tuple(dict.fromkeys(w for w in re.findall(r"[A-Za-z_][\w.]*\w", question)
                                if w.lower() not in STOP and w.lower() not in _ASKING))
    return [Capacity(" ".join(m.group("noun").split()), " ".join(m.group("subject").split()), m.group("verb").lower(),
                     named) for m in _CAPACITY_ASKED.finditer(question) if _counted(m.group("noun"))]


# what something costs, asked of a thing bought ("How much does a yearly PSF sponsorship cost?", "What is the price
# of a Posit Workbench licence?"); not a planner's cost ("How much does a sequential scan cost?")
_PRICE_ASKED = (
    re.compile(r"\bhow\s+much\s+(?:does|do|did|would|will|should|might)\s+(?P<subject>.+?)\s+(?:\w+ly\s+)?cost\b", re.I),
    # ("What is the annual price of a support subscription", "the usual yearly fee for …")
    re.compile(r"\bwhat\s+(?:is|are|was|were)\s+the\s+(?:[\w-]+\s+){0,2}?(?:price|pricing|fees?)\s+(?:of|for)\s+"
               r"(?P<subject>[^?.;]+)", re.I),
    re.compile(r"\bwhat\s+(?:does|do|did|would|will)\s+(?P<subject>[^?.;]+?)\s+cost\b", re.I),  # "what does a licence cost"
)
_BOUGHT = re.compile(r"\b(?:licen[cs]es?|subscriptions?|sponsorships?|contracts?|memberships?|seats?|tiers?|plans?|"
                     r"hosting|support|per\s+(?:year|month|user|seat|hour)|yearly|monthly|annual|annually)\b", re.I)
_MONEY = re.compile(r"[$€£¥]\s?\d|\d\s?(?:USD|EUR|GBP|dollars?|euros?|pounds)\b|\b(?:USD|EUR|GBP)\s?\d", re.I)


def _figure_of(sentence: str, figure: re.Pattern[str], subject: str) -> bool:
    """The sentence gives such a figure (an amount of money, a percentage) and names the subject's head word."""
    head = [w for w in re.findall(r"[A-Za-z]+", subject) if w.lower() not in STOP][-1:]
    forms = text_forms(sentence)
    return bool(figure.search(sentence)) and all(text_forms(w) & forms for w in head)


@dataclass(frozen=True)
class Price:
    """The question asks what something bought costs: documentation gives no prices."""

    subject: str  # "a yearly corporate sponsorship of the Python Software Foundation"

    @property
    def text(self) -> str:
        return f"what {self.subject} costs"

    def stated_by(self, sentence: str) -> bool:
        """A sentence giving an amount of money and naming the subject's head word."""
        return _figure_of(sentence, _MONEY, self.subject)


def prices(question: str) -> list[Price]:
    """What a thing bought (a licence, a subscription, a contract, a sponsorship) costs, if the question asks."""
    for pattern in _PRICE_ASKED:
        m = pattern.search(question)
        if m and _BOUGHT.search(question):
            return [Price(" ".join(m.group("subject").split()))]
    return []


# a share of a population ("what percentage of Python developers had moved to 3.11"): a survey's figure
_SHARE_ASKED = re.compile(r"\b(?:what|which)\s+(?:percentage|percent|proportion|share|fraction)\s+of\s+"
                          r"(?P<subject>[\w.+#-]+(?:\s+[\w.+#-]+){0,3})", re.I)  # (`shares` ends it at its population)
_PERCENT = re.compile(r"\d\s?%|\bper\s?cent\b|\bpercent\b", re.I)


@dataclass(frozen=True)
class Share:
    """The question asks what share of a population does something: a survey's figure, no manual's."""

    subject: str  # "Python developers"

    @property
    def text(self) -> str:
        return f"what share of {self.subject}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence with a percentage that names the population's head word."""
        return _figure_of(sentence, _PERCENT, self.subject)


_POPULATION = re.compile(r"(?:developers|users|programmers|engineers|people|companies|organi[sz]ations|businesses|"
                         r"enterprises|teams|respondents|projects|websites|sites|students|scientists|analysts|"
                         r"installations|installs|deployments|servers|machines|customers|contributors|maintainers|"
                         r"packages|vendors|downloads)", re.I)


_SHARE_ENDS = frozenset("in on at that who which whose where from for with by".split())


def shares(question: str) -> list[Share]:
    """What share of a population (developers, users, companies) the question asks for ("what percentage of the
    table" is a setting's, which manuals give)."""
    m = _SHARE_ASKED.search(question)
    words = m.group("subject").split() if m else []
    # a place or a clause ends it ("of the rows in the users table", "of the people who …") …
    words = list(takewhile(lambda w: w.lower() not in _SHARE_ENDS, words))
    # … and the population's word, whatever follows ("professional developers worldwide", "downloads currently comes")
    at = next((i for i, w in enumerate(words) if _POPULATION.fullmatch(w)), None)
    return [] if at is None else [Share(" ".join(words[:at + 1]))]


# a ratio of two speeds, sizes or durations ("Roughly how many times longer does rebuilding an index concurrently take
# compared with a normal rebuild?", "How much slower does the interpreter run when no probe is attached?"): a
# benchmark's figure, which manuals give in words ("takes longer") if at all. ("How much more memory …" asks an
# amount of a thing, said in its own unit: no ratio.)
_RATIO_ASKED = re.compile(r"\b(?:(?P<how>how\s+many\s+times)\s+(?P<more>more|less|longer|shorter|faster|slower|larger|"
                          r"bigger|smaller|quicker|higher|lower|as\s+\w+)"
                          r"|(?P<much>how\s+much)\s+(?P<comparative>longer|shorter|faster|slower|larger|bigger|smaller|"
                          r"quicker)(?!\s+(?:than|to)\b))\b"
                          r"\s*(?:(?P<aux>do|does|did|is|are|was|were|will|would|can)\s+)?"
                          r"(?P<subject>[^?,;]+?)(?=\s+(?P<verb>take|takes|run|runs|use|uses|cost|costs|compared|than|versus|"
                          r"vs)\b|\s*[?,;]|$)", re.I)
_MULTIPLE = re.compile(rf"\b(?:\d+(?:\.\d+)?|{_NUMBER_WORDS})\s*(?:times|x)\b|\b\d+(?:\.\d+)?x\b|"
                       rf"\b(?:\d+|{_NUMBER_WORDS})-?fold\b|\btwice\b|\bhalf\s+as\b|\d\s?%", re.I)  # (not "scaffold")


@dataclass(frozen=True)
class Ratio:
    """The question asks how many times faster, longer or bigger one thing is than another: a measured figure."""

    more: str  # "longer"
    subject: str  # "rebuilding an index concurrently"
    how: str = "how many times"  # or "how much"

    @property
    def text(self) -> str:
        return f"{self.how} {self.more} {self.subject} is"

    def stated_by(self, sentence: str) -> bool:
        """A sentence giving a multiple ("three times", "2x", "tenfold", "twice", a percentage) that names the
        subject's head word."""
        return _figure_of(sentence, _MULTIPLE, self.subject)


def ratios(question: str) -> list[Ratio]:
    """The ratios a question asks for ("how many times longer does X take"); "how many times is it called" asks
    how often, no ratio."""
    return [Ratio(" ".join((m.group("more") or m.group("comparative")).lower().split()), _ratio_subject(m),
                  " ".join((m.group("how") or m.group("much")).lower().split()))
            for m in _RATIO_ASKED.finditer(question) if m.group("subject").strip()]


def _ratio_subject(m: re.Match[str]) -> str:
    """What the ratio is of: after "does", "do" or "did" a clause ends with its verb ("how much faster does the thin
    variant build"), which is no part of its subject, though no listed verb ("take", "run") ended it."""
    words = m.group("subject").split()
    if (m.group("aux") or "").lower() in ("do", "does", "did") and not m.group("verb") and len(words) > 1:
        words = words[:-1]
    return " ".join(words)


# an amount measured of the world, not described by a manual, asked at the opening of a clause of the question (not
# "which setting limits how many standbys can connect", "how do I see how long each query takes", which ask how):
# how long an operation takes ("Roughly how many minutes will the upgrade take?"), a speed-up or a ratio ("What
# speedup factor does byte-compilation give?", "by what factor does it shrink"), how many people (or downloads) a
# thing has ("How many people use R?", "How many times was R downloaded in 2022?")
class AmountKind(StrEnum):
    DURATION = "duration"  # how long an operation takes
    FACTOR = "factor"  # a speed-up, a ratio, a percentage
    PEOPLE = "people"  # how many people (users, companies) do something
    DOWNLOADS = "downloads"  # how many times a thing was downloaded (installed, cloned)
    RATE = "rate"  # how much of something per unit of time (a throughput, a growth)


_OPENS = r"(?:^|(?<=[.?!;:])\s+|,\s*(?:and\s+|but\s+)?|\s(?:and|but)\s+)" \
         r"(?:(?:roughly|approximately|about|so|then|also|just|exactly|on\s+average)\s+)*"
_AUX = r"(?:does|do|did|will|would|should|could|can|might|may|is|are|was|were)"
_TIME_UNITS = r"(?:milli|micro|nano)?seconds?|minutes?|hours?|days?|weeks?|months?|years?|ms"
_PEOPLE = r"(?:people|persons|users|developers|programmers|engineers|companies|organi[sz]ations|businesses|students|" \
          r"scientists|analysts|customers|contributors|visitors|subscribers)"
_LASTING = r"(?:take|wait|last|sleep|block|pause|hang|stay|remain)"  # the verbs of a duration ("does the lock wait")
_PER_TIME = rf"(?:per|an?|each|every)\s+(?:{_TIME_UNITS})"  # "per hour", "a second"
_AMOUNT_ASKED = (
    (AmountKind.DURATION, re.compile(
        _OPENS + rf"how\s+(?:long|many\s+(?:{_TIME_UNITS}))\s+(?:of\s+[\w-]+\s+(?:per\s+\w+\s+)?)?"
                 rf"(?P<subject>{_AUX}\s+(?:[^?.;]|\.(?=\S))+?\s+{_LASTING})\b", re.I)),
    # the time to set aside for something: "how long should we budget for regenerating the statistics"
    (AmountKind.DURATION, re.compile(
        _OPENS + r"how\s+(?:long|much\s+time)\s+(?:should|must|do|would|will|can)\s+(?:I|we|you|they)\s+"
                 r"(?:budget|allow|plan|reserve|set\s+aside)\s+for\s+(?P<subject>[^?.;,]+)", re.I)),
    (AmountKind.FACTOR, re.compile(
        _OPENS + r"(?:(?:what|which)\s+(?:kind\s+of\s+)?|(?P<by>by)\s+(?:roughly\s+|about\s+|approximately\s+|around\s+)?"
                 r"what\s+)(?P<noun>(?:percentage\s+)?"
                 r"speed-?\s?ups?(?:\s+factor)?|(?:compression\s+|speed\s+)?(?:ratio|factor)|percentage\s+"
                 r"(?:speed-?\s?up|improvement|gain|increase|decrease|reduction|slowdown|overhead)|"
                 r"percentage|percent)\s+(?P<subject>[^?.;,]+)", re.I)),
    (AmountKind.PEOPLE, re.compile(  # (people who do something, not "how many users can connect")
        _OPENS + rf"how\s+many\s+(?P<noun>(?:[\w-]+\s+)?{_PEOPLE})\s+(?P<subject>(?:(?:still|now|currently|"
                 r"actually|actively|regularly)\s+)?(?:use[sd]?|using|know|knows|learn(?:ed|t)?|prefer(?:red)?|"
                 r"cho(?:o)?se|adopt(?:ed)?|contribute[sd]?|attend(?:ed)?|download(?:ed)?|install(?:ed)?|program|"
                 r"code|work\s+(?:with|in))\b[^?.;,]*)", re.I)),
    (AmountKind.DOWNLOADS, re.compile(
        _OPENS + r"how\s+many\s+times\s+(?:was|were|has|have|had|is|are)\s+(?P<subject>[^?.;,]+?)\s+"
                 r"(?P<noun>downloaded|installed|cloned|forked|starred|viewed)\b", re.I)),
    # a throughput or a growth: "how many gigabytes per hour does pg_upgrade get through", "what load rate, in rows
    # per second, should I expect" (a benchmark's figure; not "how many times per second", a frequency a manual sets)
    (AmountKind.RATE, re.compile(
        _OPENS + rf"(?P<asked>how\s+(?:many|much)|what)\s+(?P<noun>(?!times\b)(?:[\w-]+\s+){{0,2}}?"
                 rf"(?:[\w-]+,?\s+in\s+)?[\w-]+\s+{_PER_TIME}),?\s+(?P<subject>{_AUX}\s+[^?.;,]+)", re.I)),
)
# the amount itself, said in its unit: "45 minutes", "two hours"; "3 times", "a factor of 2", "20%"
# (a unit's letter only after digits: "seldom-updated ones" is no "one s")
_DURATION_SAID = re.compile(rf"(?:(?<![\w.])\d[\d,.]*\s*-?\s*(?:{_TIME_UNITS}|s|min|h)|\b(?:{_NUMBER_WORDS})\s*-?\s*"
                            rf"(?:{_TIME_UNITS}))\b", re.I)
_AMOUNT_SAID = {
    AmountKind.DURATION: _DURATION_SAID,
    # a number of something per unit of time ("100 MB/s", "1000 rows per second"; not an interval, "every 20 msecs")
    AmountKind.RATE: re.compile(rf"(?:(?<![\w.])\d[\d,.]*|\b(?:{_NUMBER_WORDS}))\s*(?:[\w-]+\s*){{0,3}}?"
                                rf"(?:/\s*(?:s|secs?|h|hr|min|{_TIME_UNITS})\b|{_PER_TIME}\b)", re.I),
    AmountKind.FACTOR: re.compile(
        _MULTIPLE.pattern + r"|\b(?:ratio|factor|speed-?\s?ups?)\s+(?:of\s+)?(?:about\s+|around\s+|up\s+to\s+|"
                            r"roughly\s+|some\s+)?\d", re.I)}
_ASKING_VERBS = frozenset(("take", "give", "achieve", "expect", "get"))  # the question's, not what is measured
# a version, not a count: "4.2.0", "R 4.2", "version 3"
_VERSION = re.compile(r"^\d+\.\d+\.\d|^\d+(?:\.\d+)?$")
_NAMED_BEFORE = re.compile(r"(?:\b[A-Z][\w+#-]*|\b(?i:version|release|v))\s*$")


def _counts_something(sentence: str) -> bool:
    """A number in the sentence that counts (digits or words), not a version ("R 4.2.0", "version 3")."""
    for m in _NUMBER.finditer(sentence):
        number = m.group(0)
        if number[0].isdigit() and (_VERSION.match(number) and _NAMED_BEFORE.search(sentence[:m.start()])
                                    or number.count(".") >= 2):
            continue
        return True
    return False


@dataclass(frozen=True)
class Amount:
    """The question asks an amount measured of the world: how long an operation takes, a speed-up or ratio, how many
    people use a thing or how often it was downloaded. A manual describes what a thing does; the figure, if any,
    comes from a benchmark, a survey or a download counter."""

    kind: AmountKind
    noun: str  # "time", "speedup factor", "people", "downloaded"
    subject: str  # "will the upgrade itself take", "does byte-compilation give …", "use R worldwide today"
    asked: str = "what"  # how a factor is asked: "what" (speed-up), "by what" (factor)

    @property
    def text(self) -> str:
        if self.kind is AmountKind.DURATION and not re.match(_AUX + r"\s", self.subject, re.I):
            return f"how long {self.subject} takes"  # (the time to budget for it)
        if self.kind is AmountKind.DURATION:  # "will the upgrade take" → "how long the upgrade will take"
            aux, _, rest = self.subject.partition(" ")
            rest, _, verb = rest.rpartition(" ")
            said = {"does": f"{verb}s", "do": verb}.get(aux.lower(), "took" if verb == "take" and aux.lower() == "did"
                                                          else f"{aux} {verb}")
            return f"how long {rest} {said}"
        if self.kind is AmountKind.DOWNLOADS:
            return f"how many times {self.subject} was {self.noun}"
        return f"{'how many' if self.kind is AmountKind.PEOPLE else self.asked} {self.noun} {self.subject}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence giving a number in the amount's own unit (a time unit, a multiple or a ratio's word, the people
        counted) beside a word of what it is the amount of."""
        forms = text_forms(sentence)
        said = _AMOUNT_SAID.get(self.kind)
        if said is not None and not said.search(sentence):
            return False
        if said is None and not (_counts_something(sentence) and text_forms(self.noun.split()[-1]) & forms):
            return False
        return _of_subject(self.subject, forms)


def _of_subject(subject: str, forms: set[str]) -> bool:
    """A sentence (its `forms`) names a word of what a figure is of ("upgrade" of "will the upgrade take", "earth()"
    of "does earth() return"), the asking's own verbs aside; any sentence does for a subject of no such word."""
    words = [w for w in re.findall(r"[A-Za-z_][\w.()+#-]*", subject) if w.lower() not in STOP
             and w.lower() not in _ASKING_VERBS]
    return not words or any(text_forms(w) & forms for w in words)


# a duration asked as a measurement: in a time unit, or estimated ("how long does a checkpoint take" alone a manual
# answers in words: "until all dirty buffers are written")
_ESTIMATED = re.compile(rf"\b(?:roughly|approximately|approx|typically|on\s+average|ballpark|estimate|expect|budget|"
                        rf"how\s+many\s+(?:{_TIME_UNITS}))\b", re.I)


def amounts(question: str) -> list[Amount]:
    """The amounts of the world a question asks for, each at the opening of one of its clauses."""
    out = []
    for kind, pattern in _AMOUNT_ASKED:
        if kind is AmountKind.DURATION and not _ESTIMATED.search(question):
            continue
        for m in pattern.finditer(question):
            noun = " ".join((m.groupdict().get("noun") or "time").split())
            asked = "by what" if m.groupdict().get("by") else " ".join((m.groupdict().get("asked") or "what").split())
            out.append(Amount(kind, noun if kind is AmountKind.PEOPLE else noun.lower(),
                              " ".join(m.group("subject").split()), asked.lower()))
    return out


# a bound or an exact figure asked by name: "What is the maximum number of characters a package name may have?",
# "what exact value in meters does earth() return?" (not "what value does it have", which a manual says in words)
_BOUNDS = r"maximum|minimum|max|min|largest|smallest|highest|lowest|greatest|exact"
_THE_OWNERS = r"(?:the\s+(?:(?:[\w.-]+\s+){0,2}?[\w.-]+['’]s\s+)?|(?:[\w.-]+\s+){0,2}?[\w.-]+['’]s\s+)"  # "the csv module's"
# the words a counted thing's name ends before ("characters that …", "threads a server …", "connections per …")
_NOUN_ENDS = r"that|which|a|an|the|one|each|per|in|on|for|I|we|you|it|my|our|your|can|could|may|might|will|is|are"
_IS_THERE = r"\b(?:is|are)\s+there\s+(?:a|an|any)\s+"  # asking whether there is one ("Is there a maximum …")
_LIMIT_ASKED = (
    re.compile(_OPENS + r"(?:(?:what|which)(?:['’]s|\s+(?:is|are|was|were))\s+" + _THE_OWNERS + r"|(?P<there>"
               + _IS_THERE + r"))(?P<bound>" + _BOUNDS + r")\s+"
               r"(?:allowed\s+|permitted\s+|possible\s+|supported\s+)?(?P<measure>number|count|length|size)"
               r"(?:\s*,\s*[^,?.;]{1,40},)?\s+of\s+"  # ("the maximum length, in bytes, of a …")
               r"(?P<noun>(?:[\w-]+\s+){0,3}?[\w-]+?)(?=\s+(?:" + _NOUN_ENDS + r"|"
               r"allowed|permitted|possible|supported|accepted)\b|"
               r"\s*[?,;.]|$|"
               # what has the bound, named before its verb ("headers HTTPConnection will accept")
               r"\s+[\w.()-]+\s+(?:can|could|may|might|will|would|should|must|accepts?|allows?|takes?|supports?)\b)",
               re.I),
    re.compile(_OPENS + r"(?:what|which)\s+(?P<bound>exact|precise|specific)\s+(?P<measure>number|value|figure|"
               r"amount|size|count|limit)(?:\s+in\s+(?P<noun>[\w-]+))?\s+"
               r"(?P<subject>(?:does|do|did|is|are|will|would)\s+(?:[^?.;,]|\.(?=\S))+)", re.I),
    # the size or length of a thing named before it ("What's the default maximum field size the csv reader allows?")
    re.compile(_OPENS + r"(?:what|which)(?:['’]s|\s+(?:is|are|was|were))\s+" + _THE_OWNERS + r"(?P<before>(?:default|"
               r"built-in|hard|documented|current|actual)\s+)?(?P<bound>maximum|minimum|max|min|largest|smallest)\s+"
               r"(?:allowed\s+|permitted\s+|possible\s+|supported\s+)?(?P<noun>(?:[\w-]+\s+)??(?!number\b)[\w-]+)\s+"
               r"(?P<measure>length|size)\b(?!\s+of\b)", re.I),
    # a bound named a limit ("What is the default upper limit on concurrent handler threads?"): on what is counted
    re.compile(_OPENS + r"(?:what|which)(?:['’]s|\s+(?:is|are|was|were))\s+" + _THE_OWNERS + r"(?:(?:default|built-in|"
               r"hard|documented|current|actual)\s+)?(?P<bound>upper|lower)\s+(?P<measure>limit|bound)\s+(?:on|of|for)\s+"
               r"(?:the\s+(?:number|count)\s+of\s+)?(?P<noun>(?:[\w-]+\s+){0,3}?[\w-]+?)(?=\s+(?:" + _NOUN_ENDS
               + r"|and|or)\b|\s*[?,;.]|$)", re.I),
)


@dataclass(frozen=True)
class Limit:
    """The question asks a bound or an exact figure by name ("the maximum number of characters", "what exact value in
    meters"): only a sentence giving a number of that thing answers it; one describing the thing in words does not."""

    bound: str  # "maximum", "exact"
    measure: str  # "number", "value"
    noun: str = ""  # what is counted or its unit: "characters", "meters" ("" if the question names neither)
    subject: str = ""  # what the exact figure is of, asked: "does it pass to listen()"
    of: str = ""  # what has the bound, said after what is counted: "name" of "characters a package name may have"
    whether: bool = False  # asked whether there is one ("Is there a maximum number of …?"): a sentence must bound it
    named_first: bool = False  # what is bounded named before the measure ("the maximum field size")

    @property
    def text(self) -> str:
        if self.subject:  # "what exact value in meters does earth() return"
            return f"what {self.bound} {self.measure}" + (f" in {self.noun}" if self.noun else "") + f" {self.subject}"
        if self.named_first:
            return f"the {self.bound} {self.noun} {self.measure}"
        return f"the {self.bound} {self.measure} of {self.noun}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence with a number in digits beside what is counted or its unit ("6378168 meters", "at most 64
        characters"; not "Returns 1 if connection is busy") — any number, for a figure asked in no unit — naming what
        has the bound ("title … 65 characters" is not of a name) and a word of what an exact figure is of."""
        forms = text_forms(sentence)
        if self.of and not text_forms(self.of) & forms:
            return False
        head = _counted(self.noun)
        if head and _NO_BOUND.search(sentence) and text_forms(head) & forms:
            return True  # "There is no limit on the number of arguments": the bound asked is none
        if self.whether and not (_BOUND_WORDS.search(sentence) or _BOUNDING.search(sentence)):
            return False  # "32 bytes of randomness is sufficient" bounds nothing
        if self.named_first and text_forms(head) & forms and (_EXTENT_SAID.search(sentence)
                                                               or _numbered(self.measure, sentence, CAPACITY_SPAN)):
            return True  # "32 KiB is currently the minimum supported stack size value", "field size limit is 131072"
        if head and not _numbered(head, sentence, after=CAPACITY_SPAN):
            return False
        if not head and not (_counts_something(sentence) and re.search(r"\d", sentence)):
            return False
        return _of_subject(self.subject, forms)


# a sentence saying a thing has no bound ("no limit on the number of …", "any number of …", "arbitrarily long")
_NO_BOUND = re.compile(r"\b(?:no\s+(?:upper\s+|hard\s+|fixed\s+|predefined\s+)?(?:limit|maximum|bound)|unlimited|"
                       r"any\s+number\s+of|arbitrar(?:y|ily)\s+(?:many|large|long|number)|not\s+limited)\b", re.I)
# words bounding something besides a bound's own (`_BOUND_WORDS`): "limited to", "must not exceed", "no more than"
_BOUNDING = re.compile(r"\b(?:limits|limited|exceeds?|exceeding|(?:no\s+)?(?:more|fewer|less)\s+than|capped)\b", re.I)
_BOUNDED = frozenset("allowed permitted possible supported accepted in for per on of that which".split())
_HOLDER_ENDS = frozenset("can could may might will would should must is are has have does do gets get holds hold "
                         "keeps keep takes take accepts accept".split())
_DETERMINERS = frozenset("a an the one each any my our your its their".split())


def _holder(rest: str) -> str:
    """The head word of what has the bound, said after what is counted ("a package name may have" → "name", "allowed
    in an R package name" → "name"); "" if the clause says none."""
    words = re.findall(r"[\w.'-]+", re.split(r"[?.;,!]", rest, maxsplit=1)[0])
    while words and (words[0].lower() in _BOUNDED or words[0].lower() in _DETERMINERS):
        words.pop(0)
    phrase = []
    for w in words[:4]:
        if w.lower() in _HOLDER_ENDS or w.lower() in _BOUNDED:
            break
        phrase.append(w)
    return phrase[-1] if phrase and phrase[-1].lower() not in STOP else ""


_LIMIT_BOUND = {"upper": "maximum", "lower": "minimum"}


def limits(question: str) -> list[Limit]:
    """The bounds and exact figures a question asks by name, each at the opening of one of its clauses."""
    out = []
    for pattern in _LIMIT_ASKED:
        for m in pattern.finditer(question):
            found = m.groupdict()
            subject = " ".join((found.get("subject") or "").split())
            bound, measure = m.group("bound").lower(), m.group("measure").lower()
            if measure in ("limit", "bound"):  # "the upper limit on threads": the maximum number of them
                bound, measure = _LIMIT_BOUND.get(bound, bound), "number"
            out.append(Limit(bound, measure, " ".join((found["noun"] or "").split()),
                             subject, "" if subject or "before" in found else _holder(question[m.end():]),
                             bool(found.get("there")), "before" in found))  # (named first: the noun is the holder)
    return out


# a person's life ("Which university did Guido van Rossum graduate from?"): a person named (`_NAMED`) and a word of a
# biography
_LIFE = re.compile(r"\b(?:graduat\w*|born|birth\w*|died|death|married|spouse|wife|husband|salary|net\s+worth|retir\w*|"
                   r"alma\s+mater|hometown|childhood|grew\s+up|stud(?:y|ied)\s+at|doctora\w*|ph\.?\s?d|"
                   r"(?:bachelor|master)['’]?s?\s+degree)\b", re.I)


@dataclass(frozen=True)
class Life:
    """The question asks about a named person's life: a manual names people for what they made, not their lives."""

    person: str  # "Guido van Rossum"
    about: str  # "graduate"

    @property
    def text(self) -> str:
        if self.about == _WORKS_FOR:
            return f"whom {self.person} {self.about}"
        return f"when or where {self.person} {self.about}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence naming the person (by their last name) with a word of a biography (of an employment, asked
        whom they work for: "continued his work on Python at CNRI" is a history, no employer)."""
        last = self.person.split()[-1]
        said = _EMPLOYED if self.about == _WORKS_FOR else _LIFE
        return bool(re.search(rf"\b{re.escape(last)}\b", sentence)) and bool(said.search(sentence))


def lives(question: str) -> list[Life]:
    """A named person's life or employer the question asks ("when was Guido van Rossum born", "Which company does
    Guido van Rossum work for these days?")."""
    named, life = _NAMED.search(question), _LIFE.search(question)
    if named and _EMPLOYER_ASKED.search(question):
        return [Life(named.group(0), _WORKS_FOR)]
    return [Life(named.group(0), life.group(0).lower())] if named and life else []


# whom someone works for, asked: "Which company does X work for", "Where does X work now?", "Who employs X?"
_EMPLOYER_ASKED = re.compile(r"(?:\b(?:which|what)\s+(?:compan(?:y|ies)|organi[sz]ations?|employers?|firms?)\s+(?:does|do|did)"
                             r"|\bwhere\s+(?:does|do|did))\b[^?]*?\bwork(?:s|ing)?\b|\bwho\s+(?:employs|pays)\b", re.I)
_EMPLOYED = re.compile(r"\b(?:works|working|worked)\s+(?:for|at)\b|\bemploy(?:s|ed|er|ee|ment)\b|\bjoined\b", re.I)
_WORKS_FOR = "works for"


_SIZE_UNITS = r"bytes?|kilobytes?|megabytes?|gigabytes?|terabytes?|bits?|[kmgt]i?b"
# a quantity asked in its unit at a clause's opening: "Exactly how many megabytes of stack does each new thread get by
# default?", "After how many minutes of inactivity does the help server shut itself down?" (not "I'd like to see how
# many milliseconds each query takes", nor "How do I find out how many bytes an object takes", which ask how)
_QUANTITY_ASKED = re.compile(
    _OPENS + r"(?:(?:after|within|in|for)\s+)?how\s+many\s+(?P<unit>" + _SIZE_UNITS + "|" + _TIME_UNITS + r")\s+"
    r"(?:of\s+(?P<of>[\w-]+(?:\s+[\w-]+)?)\s+)?(?P<subject>" + _AUX + r"\s+(?:[^?.;]|\.(?=\S))+)", re.I)
# a size asked by what it is of: "how much memory does each registered channel take?" (a number of bytes answers it)
# (not "space": "how much space does the map spend on each page?" is answered "one byte to represent each page")
_SPACE_WORDS = r"memory|RAM"
_SPACE_ASKED = re.compile(_OPENS + r"how\s+much\s+(?P<unit>" + _SPACE_WORDS + r")\s+(?P<subject>" + _AUX
                          + r"\s+(?:[^?.;]|\.(?=\S))+)", re.I)
# (a "64-bit" machine is a word size, no amount of bits)
_SIZE_SAID = re.compile(rf"(?:(?<![\w.])\d[\d,.]*|\b(?:{_NUMBER_WORDS}))(?:\s*-\s*(?!bit\b)|\s*)(?:{_SIZE_UNITS})\b", re.I)
# a size or a length in its unit ("32 KiB", "8192 bytes", "255 characters")
_EXTENT_SAID = re.compile(rf"(?<![\w.])\d[\d,.]*\s*(?:{_SIZE_UNITS}|characters?|chars?|digits?|lines?)\b", re.I)
# a bound said before a figure ("at least 32,768 (32 KiB)", "up to 8 MB"): how far it may go, not how much it is
_BOUND_BEFORE = re.compile(r"(?:\b(?:at\s+(?:least|most)|up\s+to|no\s+(?:more|less|fewer)\s+than|(?:more|less|fewer)\s+than|"
                           r"minimum(?:\s+of)?|maximum(?:\s+of)?|as\s+(?:little|few|much|many)\s+as)|[<>]=?)\s*"
                           r"(?:[\d,.]+\s*\(?\s*)?$", re.I)
_DEFAULT = re.compile(r"\bdefaults?\b|\bby\s+default\b", re.I)
# a bound named ("the minimum supported stack size", "up to"), asked or said ("min" may be minutes: not one)
_BOUND_WORDS = re.compile(r"\b(?:at\s+(?:least|most)|up\s+to|minimum|maximum|max|limit|largest|smallest)\b", re.I)


@dataclass(frozen=True)
class Quantity:
    """The question asks a quantity in its unit ("how many megabytes of stack", "how many minutes of inactivity"): only
    a sentence giving a number in a unit of that kind (a size, a time) answers it, of what is asked, and not as a bound
    ("at least 32,768 (32 KiB)" is the least a stack may be, not what a thread gets), unless a bound is what is asked."""

    unit: str  # "megabytes"
    of: str  # "stack" ("" when the question names no such thing)
    subject: str  # "does each new thread get by default on Linux"
    bound: bool = False  # the question asks a bound itself ("at most how many bytes")

    @property
    def text(self) -> str:
        of = f" of {self.of}" if self.of else ""
        much = "much" if re.fullmatch(_SPACE_WORDS, self.unit, re.I) else "many"
        return f"how {much} {self.unit}{of} {self.subject}"

    def stated_by(self, sentence: str) -> bool:
        """A sentence giving a number in a unit of the asked one's kind, no bound ("32 KiB is currently the minimum
        supported stack size", unless it also says what the default is), and naming what the quantity is of."""
        said = _DURATION_SAID if re.fullmatch(_TIME_UNITS, self.unit, re.I) else _SIZE_SAID
        if not self.bound and _BOUND_WORDS.search(sentence) and not _DEFAULT.search(sentence):
            return False
        if not any(self.bound or not _BOUND_BEFORE.search(sentence[:m.start()]) for m in said.finditer(sentence)):
            return False
        forms = text_forms(sentence)
        return _of_subject(self.of, forms) if self.of else _of_thing(self.subject, forms)


# where a quantity's thing ends and its setting begins ("an empty list | in CPython 3.11 on a 64-bit machine")
_SETTING_OPENS = re.compile(r"\s(?:in|on|at|under|with|by|when|if|before|after|per|during|from|since|until)\s", re.I)


def _of_thing(subject: str, forms: set[str]) -> bool:
    """A sentence names the thing a quantity is asked of by two of its words (all, if it has fewer), the setting
    after it aside: "an empty list" is not named by "Each list item requires space for a pointer, which is 4 bytes"."""
    thing = _SETTING_OPENS.split(f" {subject} ", maxsplit=1)[0]
    words = [w for w in re.findall(r"[A-Za-z_][\w.()+#-]*", thing) if w.lower() not in STOP
             and w.lower() not in _ASKING_VERBS]
    return sum(bool(text_forms(w) & forms) for w in words) >= min(2, len(words))


def quantities(question: str) -> list[Quantity]:
    """The quantities in a unit the question asks, each at the opening of one of its clauses."""
    bound = bool(_BOUND_WORDS.search(question))
    found = [*_QUANTITY_ASKED.finditer(question), *_SPACE_ASKED.finditer(question)]
    return [Quantity(m.group("unit").lower(), " ".join((m.groupdict().get("of") or "").split()),
                     " ".join(m.group("subject").split()), bound) for m in found]


# which of two named things is the better choice, asked as an opinion: "Which is better for publication-quality
# figures, lattice or base graphics?", "Is R or SAS the better choice?", "Between A and B, which do you prefer?" (not
# "is TRUNCATE better than DELETE", which a manual answers by what each does, nor "why is Decimal a better choice")
_JUDGED = r"(?:better|nicer|preferable|preferred|prefer|recommend(?:ed|ation)?)"
_NAMED_SPAN = r"(?:[^?,;.]|\.(?=\w))+?"  # ("data.table")
_CHOICE_SPAN = rf"(?P<a>{_NAMED_SPAN})\s+or\s+(?P<b>{_NAMED_SPAN})"
_PREFERENCE_ASKED = (
    re.compile(rf"\bwhich\b[^?.;]*?\b{_JUDGED}\b[^?.;]*?,\s*(?:between\s+)?{_CHOICE_SPAN}\s*\?", re.I),
    re.compile(rf"\b(?:is|are|would)\s+{_CHOICE_SPAN}\s+(?:the\s+|a\s+)?{_JUDGED}\b", re.I),
    re.compile(rf"\bbetween\s+(?P<a>{_NAMED_SPAN})\s+and\s+(?P<b>{_NAMED_SPAN})\s*,\s*which\b[^?.;]*?\b{_JUDGED}\b", re.I),
)
# the asker wants the reader's own view ("In your view, …", "Honestly, which do you think …"): then "is A a better
# first language than B" asks an opinion too, not what each does
_VIEW_ASKED = re.compile(r"\b(?:in\s+your\s+(?:view|opinion)|do\s+you\s+(?:think|prefer|recommend)|would\s+you\s+"
                         r"(?:recommend|pick|choose)|your\s+(?:honest\s+|personal\s+)?"
                         r"(?:opinion|view|recommendation|pick))\b", re.I)
_VIEW_PREFERENCE = re.compile(rf"\b(?:is|are)\s+(?P<a>{_NAMED_SPAN})\s+(?:really\s+|actually\s+)?(?:the\s+|a\s+)?"
                              rf"{_JUDGED}\b[^?.;]*?\bthan\s+(?P<b>{_NAMED_SPAN})"
                              r"(?=\s*(?:[?,]|$)|\s+(?:these\s+days|nowadays|today|now|or)\b)", re.I)
# the words of a sentence that ranks one thing over another
_JUDGING = re.compile(r"\b(?:better|best|worse|worst|nicer|prefer\w*|recommend\w*|superior|inferior|faster|slower|easier|"
                      r"harder|simpler|rather\s+than|instead\s+of|(?:more|less)\s+[\w-]+\s+than)\b", re.I)


@dataclass(frozen=True)
class Preference:
    """The question asks which of the things it names is the better choice: an opinion, which a manual gives only
    where it ranks them itself ("TRUNCATE … is faster than DELETE")."""

    choices: tuple[str, ...]  # ("lattice", "base graphics")

    @property
    def text(self) -> str:
        return f"which of {' or '.join(self.choices)} is the better choice"

    def stated_by(self, sentence: str) -> bool:
        """A sentence naming every choice (each of its words) and ranking them ("better", "rather than", "faster")."""
        forms = text_forms(sentence)
        named = all(all(text_forms(w) & forms for w in re.findall(r"[\w.+#-]+", c) if w.lower() not in STOP)
                    for c in self.choices)
        return named and bool(_JUDGING.search(sentence))


def _choice(text: str) -> str:
    return re.sub(r"^(?:the|a|an|using|use)\s+", "", " ".join(text.split()), flags=re.I)


# the words of asking a view and of judging, not what it is of ("is tkinter still worth teaching")
_VIEW_WORDS = frozenset("view views opinion opinions think thoughts honest honestly personal personally recommend "
                        "recommendation pick choose worth better best worse nicer prefer preferable".split())


@dataclass(frozen=True)
class View:
    """The asker wants the reader's own view ("In your opinion, is tkinter still worth teaching?"): an opinion,
    which a manual gives only where it judges the thing itself ("tkinter is recommended for …")."""

    clause: str  # the sentence asking it, from its view's words on

    @property
    def text(self) -> str:
        return f"what a reader thinks ({self.clause})"

    def about(self) -> list[str]:
        """The words of what the view is of: the clause's content words, not the asking or the judging."""
        return [t.text for t in extract_terms(self.clause) if t.text.lower() not in _VIEW_WORDS]

    def stated_by(self, sentence: str) -> bool:
        """A sentence judging ("better", "recommended", "worth") with half the words of what is judged, one at least."""
        if not re.search(r"\bworth\b", sentence, re.I) and not _JUDGING.search(sentence):
            return False
        about, forms = self.about(), text_forms(sentence)
        return sum(bool(text_forms(w) & forms) for w in about) >= max(1, -(-len(about) // 2))


def views(question: str) -> list[View]:
    """The reader's view, asked ("in your opinion", "do you think"), of what no choice between named things says
    (`preferences` judges those)."""
    m = _VIEW_ASKED.search(question)
    if not m or preferences(question):
        return []
    start = max(question.rfind(mark, 0, m.start()) for mark in ".?!")  # the asking sentence, from its opening
    end = min([i for i in (question.find(mark, m.end()) for mark in ".?!") if i >= 0] or [len(question)])
    return [View(" ".join(question[start + 1:end].split()))]


def preferences(question: str) -> list[Preference]:
    """Which of the things a question names it asks to be judged the better choice, in any of its sentences ("is A
    better than B" only when it asks the reader's view); a choice of more than a few words is a clause, no thing
    named."""
    for pattern in _PREFERENCE_ASKED + ((_VIEW_PREFERENCE,) if _VIEW_ASKED.search(question) else ()):
        m = pattern.search(question)
        if m:
            choices = (_choice(m.group("a")), _choice(m.group("b")))
            if all(c and len(c.split()) <= 3 for c in choices):
                return [Preference(choices)]
    return []


# an option of a named thing asked for what it does: "Which command-line flag of http.server takes the certificate?",
# "Which pg_dump option takes a timestamp …?", "Which keyword argument of extractall makes it skip …?" (the thing named
# right before the option's word or after "of"/"to"/"for"; "Which server setting …" names no thing)
_OPTION_KIND = r"(?:options?|flags?|switch(?:es)?|arguments?|parameters?|settings?|args?)"
_OPTION_ASKED = (
    re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?" + _OPTION_KIND + r"\s+(?:of|to|for)\s+(?:the\s+)?"
               r"(?P<owner>[\w.()-]+)(?P<does>[^?]*)\?", re.I),
    re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?P<owner>[\w.()-]+)\s+(?:command-line\s+|keyword\s+)?"
               + _OPTION_KIND + r"\b(?P<does>[^?]*)\?", re.I),
    # asked whether there is one: "Is there a pg_basebackup option that caps …?", "Is there a parameter on gzip.open
    # or GzipFile that switches on …?" (the first of two owners named)
    re.compile(_IS_THERE + r"(?P<owner>[\w.()-]+)\s+(?:command-line\s+|keyword\s+)?" + _OPTION_KIND
               + r"\s+(?:that|which)\b(?P<does>[^?]*)\?", re.I),
    re.compile(_IS_THERE + r"(?:[\w-]+\s+){0,2}?" + _OPTION_KIND
               + r"\s+(?:on|of|to|for|in)\s+(?:the\s+)?(?P<owner>[\w.()-]+)(?:\s+or\s+[\w.()-]+)?\s+(?:that|which)\b"
               r"(?P<does>[^?]*)\?", re.I),
)
OWNER_ZIPF = 2.5  # a word English uses less than this names a thing ("initdb", "coplot"; not "server", "configure")
# what ends an option's purpose: its setting ("when I create a new cluster"), an example, another part
_PURPOSE_ENDS = re.compile(r"\b(?:when|if|so\s+that|such\s+as|rather\s+than|instead\s+of|while|before|after)\b|,\s*and\b|;",
                           re.I)
# the verbs an option is asked with, not what it does
_OPTION_VERBS = frozenset("make makes do does pass use take takes set sets give gives let lets point produce produces "
                          "turn turns need accept accepts control controls get keep keeps run runs show shows".split())


@dataclass(frozen=True)
class Option:
    """The question asks which option of a thing it names does something: where the thing's own documentation
    (passages its title or headings name) speaks of none of that, the option does not exist there ("Which flag of
    http.server takes the certificate and key?" against http.server's --bind and --directory)."""

    owner: str  # "http.server"
    does: str  # "take the certificate and key"

    @property
    def text(self) -> str:
        return f"which option of {self.owner} {self.aim}"

    @property
    def aim(self) -> str:
        """What the option should do, to its purpose's end (not "…, and how many threads does it use by default")."""
        return " ".join(_PURPOSE_ENDS.split(self.does, maxsplit=1)[0].split())

    @property
    def owner_forms(self) -> set[str]:
        """The owner's name as texts write it, with or without its call's brackets ("Sys.sleep()", "Sys.sleep")."""
        return text_forms(self.owner) | text_forms(self.owner.strip("()"))

    def purpose(self, weights: Weights) -> list[Term]:
        """The words of what the option does: not the asking verbs, the owner's own words or the corpus's subject."""
        return [t for t in extract_terms(self.aim)
                if t.text.lower() not in _OPTION_VERBS and not t.forms & self.owner_forms and not weights.domain(t)]

    def documented_in(self, ev: Evidence) -> bool:
        """A sentence of the owner's passages (with the term it describes, "--data-checksums") holds half the
        purpose's words, two at least, its rarest in the corpus among them ("Use checksums on data pages …" for "turns
        on page checksums"; "gzip compression" is not "multithreaded gzip compression"); True when no retrieved
        passage is the owner's or the purpose has no words: nothing to judge by."""
        purpose, owner = self.purpose(ev.weights), self.owner_forms
        own = [p for p in ev.passages.values() if text_forms(p.context) & owner]
        if not purpose or not own:
            return True
        return _holds_most(purpose, own, ev.weights)


def _holds_most(words: list[Term], passages: list[Passage], weights: Weights) -> bool:
    """A sentence of the passages (with the term it describes, "--data-checksums") holds half the words, two at
    least, the rarest in the corpus among them (what sets the thing apart: "multithreaded" of "… gzip compression")."""
    need = min(len(words), max(2, -(-len(words) // 2)))
    rarest = max(words, key=weights.idf)
    return any(rarest.forms & forms and sum(bool(t.forms & forms) for t in words) >= need
               for p in passages for u in units_of(p) for forms in [u.forms | text_forms(u.term_line)])


# what the asker calls the owner right after its name ("of the json module makes …"): a thing named, however common
# its name is as a word
_OWNER_KIND = re.compile(r"\s+(?:module|package|library|function|method|class|command|tool|utility|program)\b", re.I)
# an option asked of a thing the asking sentence refers back to ("I found Sys.setFileTime, but … Which argument makes it
# change the access time only?")
_OPTION_OF_IT = re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?" + _OPTION_KIND + r"\s+(?:makes?|lets?|gets?)\s+"
                           r"(?:it|that\s+(?:function|method|command|tool|call))\b(?P<does>[^?]*)\?", re.I)


def options(question: str) -> list[Option]:
    """The option of a named thing the question asks for, with what it should do; a thing the asking sentence
    refers back to ("makes it …") is the last call or dotted name written before it."""
    option = _option_named(question) or _option_of_it(question)
    return [option] if option and not _AIMS_BACK.search(option.aim) else []


def _option_named(question: str) -> Option | None:
    for pattern in _OPTION_ASKED:
        m = pattern.search(question)
        if not m:
            continue
        owner, does = m.group("owner"), m.group("does")
        kind = _OWNER_KIND.match(does) if does.startswith(" ") else None
        if re.search(r"[._()]", owner) or zipf(owner.strip("()")) < OWNER_ZIPF or kind:
            return Option(owner, such_as_told(does[kind.end() if kind else 0:].strip(), question[:m.start()]))
    return None


def _option_of_it(question: str) -> Option | None:
    """An option of the last dotted name or call written before the asking sentence refers back to it."""
    m = _OPTION_OF_IT.search(question)
    named = [t.text for t in extract_terms(question[:m.start()]) if t.kind is TermKind.IDENT
             and re.search(r"[.(]", t.text)] if m else []
    return Option(named[-1], m.group("does").strip()) if named else None


# what an option should do said of what the story told before ("… lets me move it?", "… do that?"): its words are not
# the purpose, nothing to judge by
_AIMS_BACK = re.compile(r"\b(?:it|them|this|that|these|those)\W*$", re.I)


_IRREGULAR_PARTICIPLES = "made|built|kept|held|sent|run|done|taken|written|given|shown|read|split|set|put|cut"


def such_as_told(does: str, told: str) -> str:
    """What an option should do, its "such a backup" said as the asker told it before ("you can now take a backup
    containing only the blocks changed since the previous one"): the words that set the thing apart are there."""
    m = re.search(r"\bsuch\s+an?\s+(?P<noun>[\w-]+)", does, re.I)
    if not m:
        return does
    noun = re.escape(m.group("noun"))
    said = list(re.finditer(rf"\ban?\s+(?:[\w-]+\s+){{0,2}}?{noun}\s+(?P<which>(?:that|which|with|without|of|\w+ing|"
                            rf"\w+ed|{_IRREGULAR_PARTICIPLES})\b[^.;?!]*)", told, re.I))
    return f"{does[:m.start()]}a {m.group('noun')} {said[-1].group('which')}{does[m.end():]}" if said else does


# the asker calls what they show new ("the new `type Pair[T] = tuple[T, T]` statement syntax"): a later release's
_NEWLY = re.compile(r"\b(?:new|newer|newest|now|recent|recently|latest|modern)\b", re.I)
# code shown in a sentence: a backticked span, or what follows "like" or "such as" to the sentence's end or a comma
_CODE_SHOWN = re.compile(r"`(?P<ticked>[^`\n]{3,80})`|"
                         r"\b(?:something\s+like|like|such\s+as)\s+(?P<bare>[^\s`'\"][^;?!`]{2,80})", re.I)
_CODE_TOKEN = re.compile(r"[A-Za-z_][\w.]*|\d[\w.]*|\"[^\"]*\"|'[^']*'|\S")
_SYNTAX_MARKS = re.compile(r"[\[\]=(){}<>|%@*:]")  # what makes a line of code a form, not a name


@dataclass(frozen=True)
class Syntax:
    """The question shows code it calls new: a form of a later release when no retrieved text writes that form (its
    names aside: "type Pair[T] = tuple[T, T]" is any "type X[Y] = Z[Y, Y]")."""

    code: str  # "type Pair[T] = tuple[T, T]"

    @property
    def text(self) -> str:
        return f"how to write `{self.code}`"

    @property
    def form(self) -> re.Pattern[str]:
        """The code's form: its punctuation as written, its names any names, an opening keyword as it is ("type",
        "match", "async" before a name), its literals any literal."""
        tokens = _CODE_TOKEN.findall(self.code)
        parts = []
        for i, t in enumerate(tokens):
            if t[0].isalpha() or t[0] == "_":
                keyword = i == 0 and t.islower() and len(tokens) > 1 and bool(re.match(r"[A-Za-z_]", tokens[1]))
                parts.append(re.escape(t) if keyword else r"[A-Za-z_][\w.]*")
            else:
                parts.append(r"\S+" if t[0].isdigit() or t[0] in "'\"" else re.escape(t))
        return re.compile(r"(?<![\w.])" + r"\s*".join(parts))

    def documented_in(self, ev: Evidence) -> bool:
        """A retrieved text (a sentence or an example) writes the code's form."""
        form = self.form
        return any(form.search(p.text) for p in ev.passages.values())


def syntaxes(question: str) -> list[Syntax]:
    """The code a sentence of the question shows and calls new ("new", "newer", "now", "recent" outside the code),
    when it is a form (four tokens at least, with brackets, an operator or an equals sign), not a name alone."""
    out = []
    for sentence in re.split(r"(?<=[.?!])\s+", question):
        for m in _CODE_SHOWN.finditer(sentence):
            shown = "ticked" if m.group("ticked") else "bare"
            code = m.group(shown) if shown == "ticked" else _balanced(m.group(shown))
            start = m.start(shown)
            rest = sentence[:start] + sentence[start + len(code):]  # (the sentence's own words: "now" in code is none)
            if len(_CODE_TOKEN.findall(code)) >= 4 and _SYNTAX_MARKS.search(code) and _NEWLY.search(rest):
                out.append(Syntax(code.strip()))
    return out


def _balanced(bare: str) -> str:
    """Code written bare in a sentence, to where its brackets close and a comma, a full stop or the end follows."""
    depth = 0
    for i, c in enumerate(bare):
        depth += (c in "([{") - (c in ")]}")
        if depth <= 0 and (i + 1 == len(bare) or bare[i + 1] in ",." and (i + 2 == len(bare) or bare[i + 2] == " ")):
            return bare[:i + 1]
    return bare


# a sentence telling what the asker read or heard of the world ("I've read that pg_basebackup can now take incremental
# backups that are later merged with pg_combinebackup.", "A colleague says …"): a claim the question rests on
HEARSAY = re.compile(r"\b(?:I(?:['’]ve|\s+have)?\s+(?:read|heard|seen|saw|learned|learnt)|"
                     r"(?:someone|somebody|a\s+colleague|a\s+friend|a\s+coworker|people|they)\s+"
                     r"(?:says?|said|told|tells|claims?|claimed)|(?:is|are)\s+said\s+to|reportedly|apparently|"
                     r"supposedly)\b", re.I)


@dataclass(frozen=True)
class Heard:
    """The asker heard of something new ("A colleague says recent Python can run with the GIL switched off …", "I've
    read there is now an experimental free-threaded CPython build", "Newer R versions are said to ship a penguins data
    set"): a later release's, unless a retrieved sentence states the claim (`documented_in`)."""

    claim: str  # "recent Python can run with the GIL switched off, controlled by an environment variable at startup"

    @property
    def text(self) -> str:
        return f"that {self.claim}"

    def words(self, weights: Weights) -> list[Term]:
        """The claim's words that say what is new: not the words saying it is new, a version or the corpus's
        subject."""
        return [t for t in extract_terms(self.claim)
                if not (_NEWLY.fullmatch(t.text) or _LATELY.fullmatch(t.text)) and t.kind is not TermKind.NUMBER
                and not weights.domain(t)]

    def documented_in(self, ev: Evidence) -> bool:
        """A retrieved sentence holds half the claim's words, two at least, its rarest in the corpus among them; True
        when the claim has fewer than two words: nothing to judge by."""
        words = self.words(ev.weights)
        return len(words) < 2 or _holds_most(words, list(ev.passages.values()), ev.weights)


_LATELY = re.compile(r"\b(?:now|newer|newest|recent|recently|latest|nowadays)\b", re.I)  # (not "new": any new thing)
# what follows the telling: "that …", or the clause itself ("I've read there is now …"); "X are said to Y" is "X Y"
_TOLD = re.compile(r"^\W*(?:that\s+)?(?P<claim>.+?)[.?!]*$", re.S)
_SAID_TO = re.compile(r"^(?P<subject>.*?)\s+(?:is|are)\s+said\s+to\s+(?P<rest>.+?)[.?!]*$", re.I | re.S)


def heard(question: str) -> list[Heard]:
    """What the asker heard is new, each from a sentence that tells it as heard (`HEARSAY`) and calls it new
    (`_LATELY`: "now", "newer", "recent" …; not "new", which may be any new thing: "pointing a file at the new
    library")."""
    out = []
    for sentence in re.split(r"(?<=[.?!])\s+", question.strip()):
        told = HEARSAY.search(sentence)
        if not told or not _LATELY.search(sentence):
            continue
        said = _SAID_TO.match(sentence)
        if said:
            out.append(Heard(f"{said.group('subject').strip()} {said.group('rest').strip()}"))
            continue
        m = _TOLD.match(sentence[told.end():])
        if m and _LATELY.search(m.group("claim")):
            out.append(Heard(m.group("claim").strip()))
    return out


# what a question asks that only a sentence stating it answers
Unstated = (Ranking | Figure | Person | Release | Adopters | Count | Capacity | Price | Share | Life | Ratio | Amount | Limit
            | Quantity | Preference | View)


# what the documents are found not to say: a thing stated nowhere, an option its owner's passages do not speak of, new
# code no retrieved text writes
Unsaid = Unstated | Option | Syntax | Heard


def unranked(focus: Focus, ev: Evidence) -> list[Unsaid]:
    """Rankings and figures of a market the question asks for that no retrieved sentence states: documentation
    describes what each thing does; which product is the best, the cheapest or the most popular, or how many
    users or stars it has, it does not say (the sentence calling GIN "the preferred text search index type"
    does). So an option of a named thing that its own passages do not speak of (`Option`), code the asker calls new
    whose form no retrieved text writes (`Syntax`), and something new the asker heard of that no retrieved sentence
    states (`Heard`)."""
    return [*_unstated(focus, ev), *(o for o in options(focus.question.text) if not o.documented_in(ev)),
            *(c for c in syntaxes(focus.question.text) if not c.documented_in(ev)),
            *(h for h in heard(focus.question.text) if not h.documented_in(ev))]


def _unstated(focus: Focus, ev: Evidence) -> list[Unstated]:
    text = focus.question.text
    asked: list[Unstated] = [*rankings(text), *figures(text), *persons(text), *releases(text), *adopters(text),
                             *counts(text), *capacities(text), *prices(text), *shares(text), *lives(text),
                             *ratios(text), *limits(text), *preferences(text), *views(text)]
    asked += [a for a in amounts(text) if not asked]  # (what the others ask already, said once)
    asked += [q for q in quantities(text) if not asked]
    if focus.compared and focus.whole:  # "X's market share compared to Y": the figure of each compared thing
        asked += [Figure(f.measure, focus.compared[0]) for f in figures(focus.whole) if f.subject in focus.compared]
        # "what share of R users run it on Windows compared with macOS": what the whole asks of each compared thing
        asked += [u for u in [*persons(focus.whole), *counts(focus.whole), *prices(focus.whole),
                              *shares(focus.whole), *lives(focus.whole), *ratios(focus.whole), *amounts(focus.whole)]
                   if u not in asked]
    if not asked:
        return []
    # an example's values are its writer's choice, not a figure the text states (`pattern = re.compile("d")`)
    said = [u.text for p in ev.passages.values() for u in units_of(p) if u.kind is not UnitKind.CODE]
    return [r for r in asked if not any(r.stated_by(s) for s in said)]
