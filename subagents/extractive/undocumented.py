"""What an objective asks about that the documents do not cover: a name or identifier no retrieved text
mentions, a name only mentioned in passing (no title or heading, no API entry names it), a product version
no release notes title (or, written as one number, no retrieved text names), a year no passage mentions, a
library no heading names, a tool no English word names, a name of several words no retrieved text joins ("SQL
Server"), a name a comparison is made in that the documents lack ("let and var in JavaScript"), or — in a corpus
large enough for its vocabulary to tell — ordinary words the corpus never uses; and what only a sentence stating it
answers, which no retrieved passage states (a ranking, a count, a bound, a price, an opinion …: `unstated.py`).
Each is a reason for "not found" however well the objective's other words are covered (`unanswered`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..text import sentences
from .analysis import SCENE_BEFORE, common_acronym, scene_and_asks, scene_only, told_not_asked
from .evidence import Evidence
from .terms import (EXAMPLE_OPENERS, INSTANCE_OPENERS, STOP, Term, TermKind, Weights, call_spans, called_name,
                    example_words, extract_terms, in_code_string, in_example_literal, is_extension, is_file_name,
                    make_term, mentions, only_inside, placeholder, qualified_parts, standing, text_forms,
                    variant_values, written, zipf)
from .unstated import HEARSAY, Unsaid, unranked

if TYPE_CHECKING:
    from .analysis import Question
    from .selection import Focus


def unmatchable(term: Term, weights: Weights, text: str) -> bool:
    """A word of what is asked that no passage of a large corpus uses ("islands" in a database's manual):
    no sentence can cover it, so it stays in what a sentence should cover, and an answer matching the
    rest only is weaker — a question about something else scores low instead of high on its other words."""
    return (weights.passages >= UNKNOWN_MIN_PASSAGES and term.kind is TermKind.WORD and _never_used(term, weights)
            and not _verb_slot(term, text))


def missing_names(focus: Focus, ev: Evidence) -> list[Term]:
    """Names, identifiers and versions the objective names that no retrieved text mentions; a
    dotted identifier whose package no passage of the corpus holds (`torch.nn.Linear`) is missing
    even when its last part ("linear") is an ordinary word there."""
    forms, raw = ev.all_forms(), ev.all_text()
    names = [t for t in focus.question.terms + focus.about if _asked_by_name(t, focus.question.text)
             and not set_aside(t, focus, ev.weights) and not told_name(t, focus)]
    return [t for t in names if not mentions(t, forms, raw) and not _a_documented_name(t, ev.weights, focus.whole_question)
            and not globbed(t.text, raw)
            or _foreign_package(t, ev.weights) and not _written_whole(t, raw) or not _mentioned_in_its_package(t, ev)]


def globbed(name: str, raw: str) -> bool:
    """A name with a wildcard ("the r* random generators", "pg_stat_*") that a name of the text matches ("rnorm",
    "pg_stat_activity"): the asker's word for a family of names the text writes one by one."""
    if "*" not in name or not name.strip("*"):
        return False
    family = r"[\w.]+".join(re.escape(part) for part in name.split("*"))
    return bool(re.search(rf"(?<![\w.]){family}(?![\w.])", raw))


def told_name(term: Term, focus: Focus) -> bool:
    """A name only a story's scene holds, its asking sentences pointing nowhere back into it (`told_not_asked`: "I'm
    talking to a flaky REST endpoint with http.client.HTTPConnection … Is there a switch to print that traffic?"):
    where the need arose, which the documents need not name; not a name the asker read or heard of (`heard_of`)."""
    return term.kind is TermKind.NAME and told_not_asked(term, focus.whole_question) \
        and not heard_of(term, focus.whole_question)


def _written_whole(term: Term, raw: str) -> bool:
    """A qualified name a retrieved text writes as the question does, owner and all ("python311._pth" in "(python._pth
    or python311._pth)", `proc.wait()` in an example's "await proc.wait()"): whatever the owner is (a file's name, a
    variable of an example), the documents use it there; no package they leave undocumented."""
    return written(called_name(term.text.strip(".@`")), raw)


def _a_documented_name(term: Term, weights: Weights, question: str) -> bool:
    """A name the corpus covers (a title or heading names it, and it is no passing mention: "Linux" in Python's
    documentation) which the retrieved passages leave out: the answer is not particular to it ("works on Linux but
    fails on Windows"), not a thing the documents lack. So is an identifier the corpus covers that only a story's
    scene holds ("each points() and lines() call shows up as it happens. How do I build a whole frame …?"): the
    asker tells their setting in the corpus's words, and the passages that answer the ask need not repeat them."""
    documented = weights.titled.get(term.key, 0) > 0 and not weights.incidental(term)
    return documented and (term.kind is TermKind.NAME or scene_only(term, question))


_COMMAND_LINE = re.compile(r"[\w.-]+(?:\s+[\w./~=-]+)+")


def command_line(code: str) -> bool:
    """Code that is a command with its arguments ("py script.py", "pip install -e ."), not an expression with its
    operators ("lm(...) |> _$coefficients"), whose names are asked about."""
    return bool(_COMMAND_LINE.fullmatch(code.strip("`")))


def _mentioned_in_its_package(term: Term, ev: Evidence) -> bool:
    """A qualified name ("statistics.kde()", "copy.replace()", "Path.walk()") as a retrieved text writes it, or its
    last part in a passage whose title or headings name its package or class (`get` under "Mapping Types — dict"):
    its last part alone elsewhere ("KDE" of a desktop, `os.walk`) is another thing's. True for any other term."""
    whole = called_name(term.text.strip(".@`")).lower()
    parts = [p for p in qualified_parts(whole) if p]
    if term.kind is not TermKind.IDENT or len(parts) < 2 or term.text[0].isdigit() or command_line(whole):
        return True  # (a command line written as code, "`py script.py`", is no qualified name)
    owner, last = parts[-2], parts[-1]
    said = re.compile(rf"\b{re.escape(owner)}\b")
    kinds = r"(?:package|module|class|exception|library)"
    defined = re.compile(rf"\b{kinds}\s+{re.escape(owner)}\b|\b{re.escape(owner)}\s+{kinds}\b")
    # the sections whose heading names the owner, or whose text names it as what it is ("The recommended package
    # foreign provides …" opens the section whose next passage documents read.dta; not "copy" of any sentence)
    owned = {(p.title, p.heading) for p in ev.passages.values()
             if said.search(f"{p.title} {p.heading}".lower()) or defined.search(p.text.lower())}
    for p in ev.passages.values():
        text = p.text.lower()
        if whole in text or whole in p.context.lower():
            return True
        if (p.title, p.heading) in owned and re.search(rf"(?<![\w.]){re.escape(last)}\b", text):
            return True
    return False


def _asked_by_name(t: Term, question: str) -> bool:
    """A term the text must hold to be about the question: a name, an identifier, a version ("3.12"), an
    operator asked about ("::" is named as much as a function); not a value in arithmetic ("0.1 + 0.2")."""
    x = re.escape(t.text)
    if t.kind is TermKind.SYMBOL:
        return not re.search(rf"\d\s*{x}\s*\.?\d", question)  # "+" between numbers is arithmetic
    if t.kind is TermKind.NUMBER:  # a version's parts are short; "0.30000000000000004" is a value, as in arithmetic
        versionlike = "." in t.text and all(len(p) <= 3 for p in t.text.split(".")[1:])
        return versionlike and not re.search(rf"(?<![\w.]){x}\s*[-+*/%<>=]|[-+*/%<>=]\s*{x}(?![\w.])", question) \
            and not _a_value(t.text, question) and not an_argument(t.text, question)
    if t.word_keyword:  # "a for loop", "the with statement": the language's own keyword,
        return False  # which passages on what else is asked need not use (and do not lack: the docs define it)
    return t.named


def _a_value(number: str, question: str) -> bool:
    """A number the question gives as a value, not a version: a fraction of one ("the R-squared jumped from 0.3 to
    0.95") or a number with three decimals or more ("totals like 7.325"; no release is numbered so) that no name or
    "version" precedes ("Python 0.9" is a version)."""
    named = re.search(rf"\b(?:[A-Z][\w+#-]*|(?i:versions?|releases?|v))\s+{re.escape(number)}(?![\w.])", question)
    whole, _, decimals = number.partition(".")
    return not named and number.count(".") == 1 and (whole == "0" or len(decimals) >= 3)


def an_argument(number: str, question: str) -> bool:
    """A number passed to a call the question writes out ("format_string('%.2f', 1234.5, grouping=True)"): the
    asker's example value, not a version the documents must name."""
    written = re.compile(rf"(?<![\w.]){re.escape(number)}(?![\w.])")
    return any(written.search(question, a, b) for a, b in call_spans(question))


_NAMED_VERSION = re.compile(r"\b([A-Z][\w+#-]*)\s+v?(\d+(?:\.\d+)+)\b")


def undocumented_versions(focus: Focus, weights: Weights) -> list[Term]:
    """A version of the corpus's own product ("Python 3.13", "PostgreSQL 17.2") that no title or
    heading names: release notes title the versions a documentation set covers, so this one it does
    not (a number after any other name, "0.1 + 0.2", is left alone)."""
    out = []
    for m in _NAMED_VERSION.finditer(f"{focus.question.text} {focus.whole}"):
        name, number = make_term(m.group(1), TermKind.NAME), make_term(m.group(2), TermKind.NUMBER)
        if weights.domain(name) and weights.titled.get(number.key) == 0:
            out.append(make_term(f"{m.group(1)} {m.group(2)}", TermKind.NAME))
    return list({t.text: t for t in out}.values())


_NAMED_MAJOR = re.compile(r"\b([A-Z][\w+#-]*)\s+v?(\d{1,3})(?![\w.])")


def unmentioned_majors(focus: Focus, ev: Evidence) -> list[Term]:
    """A major version of the corpus's own product written as one number ("PostgreSQL 18") that no retrieved
    text or heading names, as "PostgreSQL 18" (or 18.x) or as a release's heading ("Release 18"): a chapter's
    number titles many a heading, so unlike "3.13" the titles cannot tell."""
    text = f"{ev.all_text()} {_headings(ev)}"
    out = []
    for m in _NAMED_MAJOR.finditer(f"{focus.question.text} {focus.whole}"):
        name, number = m.group(1), m.group(2)
        if not ev.weights.domain(make_term(name, TermKind.NAME)) or _YEAR.match(number):
            continue
        said = rf"(?:{re.escape(name)}|\b(?:release|version))\s+v?{number}(?!\d)"
        if not re.search(said, text, re.I):
            out.append(make_term(f"{name} {number}", TermKind.NAME))
    return list({t.text: t for t in out}.values())


_YEAR = re.compile(r"^(?:19|20)\d\d$")


def in_a_date(number: str, text: str) -> bool:
    """The number is part of a date written out ("2024-01-31", "31/01/2024"): a value, as an example of a
    string to parse or format, not a year asked about."""
    x = re.escape(number)
    return bool(re.search(rf"(?<!\d)(?:\d{{1,2}}[-/.]\d{{1,2}}[-/.]{x}|{x}[-/.]\d{{1,2}}(?:[-/.]\d{{1,2}})?)(?!\d)", text))


def undocumented_years(focus: Focus, weights: Weights) -> list[Term]:
    """A year no passage of the corpus mentions ("what changed in 2031?"): the documents were written before
    it, or never dealt with it. A year inside a date written out is the example value of a question on dates."""
    return [t for t in dict.fromkeys(focus.question.terms) if t.kind is TermKind.NUMBER and _YEAR.match(t.text)
            and weights.absent(t) and not in_a_date(t.text, focus.question.text)]


_PRODUCT = re.compile(r"\bthe\s+([A-Za-z][\w.+-]*)\s+(?:library|package|module|framework|extension|plugin)\b", re.I)
_NOT_A_PRODUCT = frozenset("same whole entire own new following above other third-party external given current main "
                           "standard this that".split()
                           # which of the asker's several it is ("the first module", "the second package")
                           + "first second third fourth fifth last next previous former latter original old".split())
# stop words that cannot stand before a noun in English (adverbs): after "the" and before "package" one is a name
# ("the here package", R's)
_ADVERBS = frozenset("here there now then why how where when so just again once".split())


_GRADED = re.compile(r"^([a-z]{2,}?)(?:er|est)$")  # "older", "newest", "bigger", "earlier"
GRADED_ZIPF = 4.5  # the adjective graded is an everyday word ("old" 5.6, "new" 6.0, "big" 5.4)


def _graded(word: str) -> bool:
    """An everyday adjective graded, written in lower case ("the older framework", "the newest module"): which of
    several it is, not a product's name. ("Flower" or "Tester", capitalised, may be one.)"""
    m = _GRADED.match(word)
    if not m:
        return False
    stem = m.group(1)
    bases = [stem, stem + "e"]  # "old" of "older", "late" of "latest"
    if stem.endswith("i"):
        bases.append(stem[:-1] + "y")  # "early" of "earlier"
    if len(stem) > 2 and stem[-1] == stem[-2]:
        bases.append(stem[:-1])  # "big" of "bigger"
    return any(zipf(b) >= GRADED_ZIPF for b in bases)


def _headings(ev: Evidence) -> str:
    """Every retrieved title and heading, lower-cased: where the documentation names what it covers."""
    return " ".join(f"{p.title} {p.heading}" for p in ev.passages.values()).lower()


def _described(word: str, ev: Evidence) -> bool:
    """A lower-case compound whose every part opens a word of one retrieved title or heading ("the complex-math
    module": "Mathematical functions for complex numbers"): what the module is about, not its name."""
    parts = word.split("-")
    if len(parts) < 2 or not word.islower() or any(len(p) < 2 or not p.isalpha() for p in parts):
        return False
    return any(all(re.search(rf"\b{p}", heading, re.I) for p in parts)
               for passage in ev.passages.values() for heading in (passage.title, passage.heading))


def undocumented_products(focus: Focus, ev: Evidence) -> list[Term]:
    """What the question calls a library, package or module by name ("the requests library") when no retrieved
    title or heading names it as written: the documentation gives each library it covers a page or a section,
    so one it names only in the text it does not document ("requests" is not in "urllib.request", whose stem
    it shares; "widget" is in "Widgets", "test" in "unittest")."""
    headings = _headings(ev)
    out = []
    for m in _PRODUCT.finditer(f"{focus.question.text} {focus.whole}"):
        word = m.group(1)
        if word.lower() in _NOT_A_PRODUCT or word.lower() in STOP and word.lower() not in _ADVERBS \
                or _graded(word):
            continue
        if word.lower() not in headings and not _described(word, ev):  # as written, in a longer word too ("unittest")
            out.append(make_term(word, TermKind.NAME))
    return list({t.text: t for t in out}.values())


# wordfreq's Zipf frequency (log10 of uses per billion words) of a word of English: a capitalised name at or
# above it is a word ("Windows" 5.0; "PyInstaller" 0), an ordinary word at or above the lower one is
# English or its jargon ("checksum" 2.3, "pythonic" 1.1, "iterable" 1.4; "pgbouncer", "pgvector" 0)
ENGLISH_ZIPF, JARGON_ZIPF = 2.5, 1.0


def english(t: Term) -> bool:
    """A word English uses (wordfreq), not a product or a tool's name ("PyInstaller", "pgbouncer")."""
    return zipf(t.text.strip("`")) >= (ENGLISH_ZIPF if t.kind is TermKind.NAME else JARGON_ZIPF)


def qualifies_api(term: Term, q: Question) -> bool:
    """The word stands right before an API's name that is no English ("pandas groupby", "flask jsonify"):
    it names the package that API is asked of, however English the word is."""
    m = re.search(rf"(?<![\w.]){re.escape(term.text)}\s+([A-Za-z_][\w.]*)", q.text)
    if not m or zipf(term.text) >= QUALIFIER_ZIPF:  # "tiny Rscript jobs": an everyday word describes, names no package
        return False
    after = next((t for t in q.terms if t.text.strip("`").rstrip("()") == m.group(1)), None)
    return after is not None and after is not term and (
        after.kind is TermKind.IDENT or after.kind in (TermKind.WORD, TermKind.NAME) and not english(after))


QUALIFIER_ZIPF = 4.0  # a word English uses this often ("tiny", "custom") says what a thing is like, not whose it is


_DECLINED = re.compile(r"(?:\b(?:without|instead\s+of|rather\s+than|avoid(?:ing)?)|(?:\b(?:not|never)|n't)\s+(?:to\s+)?"
                       r"(?:use|using|add|adding|install|depend\s+on|pull\s+in|import|need))\s+(?:(?:a|an|the|any)\s+)?$",
                       re.I)


def declined(term: Term, question: str) -> bool:
    """A name the asker says they do without ("I'd rather not add pytz", "without pandas", "instead of
    BeautifulSoup"): what they ask for is something else, which the documents may well give."""
    spots = standing(term.text, question)
    return bool(spots) and all(_DECLINED.search(question[:at]) for at in spots)


_PLACES = r"on|onto|inside|within|under|across|behind|at"
# where the asker's things are, said of a name ("a cluster that lives on XFS", "too big for our Docker image", "an
# app behind nginx", "on my colleague's Mac"); not "with", "using" or "from" (the tool they do it with), nor "to"
# ("moving to Kotlin")
_PLACED = re.compile(rf"\b(?:{_PLACES}|for\s+(?:our|my))\s+"
                     r"(?:(?:a|an|the|our|my|their|its|this)\s+)?"
                     r"(?:(?!(?:with|using|via|by|from|to|in|of|for|and|or)\b)[\w.+'’-]+\s+){0,2}$", re.I)
# "On my Windows PC", "in our Azure tenant", "I'm on macOS Big Sur": the asker's own machine or platform
_PLACED_OWN = re.compile(rf"\b(?:(?:{_PLACES}|in)\s+(?:our|my)"
                         r"|(?:I['’]m|I\s+am|we['’]re|we\s+are)\s+(?:still\s+|now\s+)?on)\s+$", re.I)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|me|my|we|we're|we've|us|our)\b", re.I)
# the asker's own thing, said of a name that qualifies it ("Our Kubernetes readiness probe calls …", "on my Windows
# PC", "My small TCP client loops …": lower-case describing words between, no name and no stop word)
_DESCRIBING = r"(?:(?-i:[a-z][a-z-]*)\s+){0,2}"  # up to two lower-case words before a noun or a name
_OWNED = re.compile(rf"\b(?:our|my)\s+(?P<describing>{_DESCRIBING})$", re.I)
# or the thing the asker is making, whatever words describe it ("I'm writing a quick RIFF parser and …")
_MAKING = re.compile(rf"\b(?:I['’]m|I\s+am|we['’]re|we\s+are)\s+(?:writing|building|making|developing|implementing|"
                     rf"coding)\s+(?:a|an)\s+{_DESCRIBING}$", re.I)
# words opening a verb's object: the word before them is the name's verb ("our Zorbix needs a restart"), not its noun
_OBJECT_START = frozenset("a an the my our your their its it them him her this that these those to".split())


def in_the_setting(term: Term, question: str) -> bool:
    """A name only the asker's telling of where things are holds ("We're upgrading a 2 TB cluster that lives on XFS.
    … Is there a mode that …?"): the scene, which the sentences that ask leave out, not what they ask about."""
    return _only_in_the_scene(term, question, lambda s, at: bool(_PLACED.search(s[:at])) or _owned(s, at, term))


def placed_as_own(term: Term, question: str) -> bool:
    """A name of several words only the asker's scene holds, as the place of their own things ("On my Windows PC"):
    one not said to be theirs ("On Amazon RDS I can't edit …") or qualifying a thing of theirs ("my AWS Lambda
    function hits …") may be what the question goes on to ask about."""
    return _only_in_the_scene(term, question, lambda s, at: bool(_PLACED_OWN.search(s[:at])))


def _only_in_the_scene(term: Term, question: str, placed: Callable[[str, int], bool]) -> bool:
    """Every mention of the name is in a first-person sentence of the question that asks nothing, `placed` there
    (the sentence and where the name starts in it); False for a question without a scene (`scene_and_asks`)."""
    said = scene_and_asks(question)
    if not said:
        return False
    spots = [(s, asks, at) for s, asks in said for at in standing(term.text, s)]
    return bool(spots) and all(not asks and _FIRST_PERSON.search(s) and placed(s, at) for s, asks, at in spots)


def _owned(sentence: str, at: int, term: Term) -> bool:
    """The name qualifies a thing of the asker's that a word after it names ("our Kubernetes readiness probe", "I'm
    writing a quick RIFF parser")."""
    after = re.match(r"\s+([a-z][\w-]*)\s+(\w+)", sentence[at + len(term.text):])
    owned = _OWNED.search(sentence[:at])
    theirs = bool(owned) and not any(w in STOP for w in owned.group("describing").split()) \
        or bool(_MAKING.search(sentence[:at]))
    return theirs and bool(after) and after.group(2).lower() not in _OBJECT_START


def not_asked(term: Term, focus: Focus) -> bool:
    """A name the question holds but does not ask about: one the asker does without, the place their things are,
    a file of their own, a value they show in variants ("'Alice' and 'alice'"), in a quoted instance ("a string
    like 'session=abc123; theme=dark'"), a bytes literal, their code's string ("LIKE '%@%'") or an instance in a list
    they leave open ("(pnorm, qgamma and so on)")."""
    question = focus.whole_question
    return declined(term, focus.question.text) or in_the_setting(term, question) or own_file(term, question) \
        or term.text in variant_values(question) or in_example_literal(term.text, question) \
        or in_bytes_literal(term.text, question) or in_code_string(term.text, question) \
        or listed_instance(term.text, question)


# a list in brackets closed as open-ended ("distribution functions (pnorm, qgamma and so on)"): instances of a kind
_INSTANCES = re.compile(r"(\()([^()]{1,120}?,[^()]*?\s(?:and\s+so\s+on|and\s+the\s+like|and\s+others|etc\.?)|"
                        r"[^()]{1,120}?,[^()]*?(?:…|\.\.\.))\s*\)", re.I)


# a list of two or more given as instances ("R's distribution functions such as pnorm and qgamma")
_LISTED = re.compile(rf"(\b(?:{INSTANCE_OPENERS})\s+)([\w.+-]+(?:\s*,\s*[\w.+-]+)*,?\s+(?:and|or)\s+[\w.+-]+)", re.I)


def listed_instance(name: str, question: str) -> bool:
    """A name every mention of which is in a bracketed list the asker leaves open ("R's C-level distribution functions
    (pnorm, qgamma and so on)"), or in a list of instances their scene gives ("a small C tool that needs R's
    distribution functions such as pnorm and qgamma"): an instance of the kind they ask about, which the documents may
    cover by the kind. (One named in a sentence that asks, "Is there a tool such as pgbouncer or pgpool?", is asked.)"""
    if only_inside(name, question, _INSTANCES):
        return True
    said = scene_and_asks(question)
    return bool(said) and not any(asks and standing(name, s) for s, asks in said) \
        and only_inside(name, question, _LISTED)


_BYTES_LITERAL = re.compile(r"(?<![\w'\"])[bB]([\"'])(.{1,80}?)\1")  # b'THRM', b"\x89PNG"


def in_bytes_literal(name: str, question: str) -> bool:
    """A name every mention of which is inside a bytes literal ("files that begin with b'THRM'"): the asker's data (a
    magic number, a payload), which no manual names."""
    return only_inside(name, question, _BYTES_LITERAL)


_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")  # customer_id, order_total


def own_data_name(term: Term, focus: Focus, weights: Weights) -> bool:
    """A lower-case name of words joined by underscores, or a call of one, that the corpus never writes or writes only
    in passing (or that no search reported on: a later round's part of the question), and only a story's scene holds,
    none of its asking sentences ("A hot query looks up orders by customer_id … How do I add that extra column?", "I
    wrote EXCLUDE USING gist (room_id WITH =, …) … Why?"): the asker's column, variable or function, which the
    documents have no reason to name."""
    if term.kind is not TermKind.IDENT or not _SNAKE.fullmatch(term.text.strip("`").removesuffix("()")):
        return False  # (a call of it names the asker's function: "I run CALL batch_load() … Why does it fail?")
    if weights.known(term) and not (weights.absent(term) or weights.incidental(term)):
        return False
    return scene_only(term, focus.whole_question) and not heard_of(term, focus.whole_question)


def heard_of(term: Term, question: str) -> bool:
    """A name the asker tells of as something they read or heard of (`unstated.HEARSAY`): a thing of the world they ask
    about, not their own column or function however it is spelled ("pg_combinebackup")."""
    return any(HEARSAY.search(s) and standing(term.text, s) for s in sentences(question))


# the asker names a thing they made ("I … wrote a summary.survey method") or one of theirs by an instance of it ("a
# per-session value like app.current_tenant"): the words before the name
_MADE = re.compile(rf"\b(?:wrote|written|defined|implemented|created|registered)\s+(?:a|an|my|our)\s+{_DESCRIBING}"
                   r"[`'\"]?$", re.I)
# what introduces an instance of a thing, right before it ("like", "e.g.", "called", "say" …)
_AN_INSTANCE = rf"(?:{EXAMPLE_OPENERS}|say|called|named),?\s+[\"'`]?$"
_THEIRS_BY_INSTANCE = re.compile(rf"\b(?:a|an|my|our)\s+{_DESCRIBING}(?:value|setting|variable|name|key|header|field|"
                                 rf"parameter|method|function|class)\s+{_AN_INSTANCE}", re.I)


def said_as_own(term: Term, question: str) -> bool:
    """An identifier only a story's scene holds, where the asker says they made the thing (`_MADE`) or gives it as an
    instance of a thing of theirs (`_THEIRS_BY_INSTANCE`)."""
    if term.kind is not TermKind.IDENT or not scene_only(term, question):
        return False
    return any(_MADE.search(question[:at]) or _THEIRS_BY_INSTANCE.search(question[:at])
               for at in standing(term.text, question))


def own_made_name(term: Term, focus: Focus, weights: Weights) -> bool:
    """A name the corpus never writes that the asker says is theirs (`said_as_own`): their own method or setting,
    which the documents have no reason to name; what they ask is how the documented machinery treats it."""
    return weights.absent(term) and said_as_own(term, focus.whole_question)


def set_aside(term: Term, focus: Focus, weights: Weights) -> bool:
    """A name the question holds but does not ask about (`not_asked`), or the asker's own data (`own_data_name`) or
    thing (`own_made_name`), or an acronym its scene uses as a common noun that no title or heading names
    (`common_acronym`; "a WHERE (…) filter" is the documents' own): no key name, no name the documents must hold,
    nothing a claim must cover."""
    return not_asked(term, focus) or own_data_name(term, focus, weights) or own_made_name(term, focus, weights) \
        or common_acronym(term, focus.whole_question) and not weights.titled.get(term.key)


# a file's name given as an instance ("a file name like report.csv.gz", "e.g. settings.py", "say data.json") or as
# the name of a thing of the asker's, set beside it ("a helper module, helpers.py, which sits on sys.path")
_INSTANCE = re.compile(rf"\b{_AN_INSTANCE}|\b(?:a|an|my|our)\s+{_DESCRIBING}(?-i:[a-z][\w-]*),\s+[\"'`]?$", re.I)
_SLASHED = re.compile(r"[^\s'\"`(),;]*/[^\s'\"`(),;]*")


def own_file(term: Term, question: str) -> bool:
    """A file or folder of the asker's: a name in a path they give ("myapp/service.py", "~/myconf/settings.py"),
    or a file name given as an instance ("a file name like report.csv.gz", "a helper module, helpers.py,"); what
    they ask about is what is done with it, which the documents name otherwise. Names joined by a slash ("TCP/IP",
    "Kotlin/Native") are no path."""
    name = term.text.strip("`")
    if any(name in parts for parts in _paths(question)):
        return True
    return is_file_name(name) and any(
        _INSTANCE.search(question[:at]) for at in standing(name, question))


def _paths(question: str) -> list[list[str]]:
    """The parts of each path the question writes: one rooted in a home, a working or the root folder ("~/…", "./…",
    "/etc/…"), or one ending in a file's name or a slash ("myapp/service.py", "node_modules/"); no address's."""
    out = []
    for token in _SLASHED.findall(question):
        token = token.rstrip(".:!?")
        parts = token.split("/")
        if "://" not in token and (token[:1] in "~./" or token.endswith("/") or is_file_name(parts[-1])):
            out.append([p for p in parts if p])
    return out


def undocumented_names(focus: Focus, ev: Evidence) -> list[Term]:
    """The objective's own names ("PyInstaller", "Homebrew": capitalised, an English word names a product too), its
    words that are no English ("pgbouncer", "pgvector", `english`) or that name an API's package ("pandas groupby"),
    which the corpus mentions only in passing or never, and no retrieved title or heading names: the question asks
    about a tool the documents do not cover, however documented its other words are ("Windows", "index").
    A word that says what is done ("how do I memoize …", "when blorping") is the user's wording, not the thing
    asked about."""
    w = ev.weights
    if w.passages < UNKNOWN_MIN_PASSAGES:  # a small corpus mentions everything in passing
        return []
    headings = _headings(ev)
    raw = ev.all_text()
    examples = example_words(focus.question.text)  # "a typo such as 'stauts'": the asker's instance, no product
    out = []
    for t in dict.fromkeys(focus.question.terms + focus.about):
        word = t.text.strip("`").lower()
        if t.kind not in (TermKind.WORD, TermKind.NAME) or w.domain(t) or not word.isalpha() or len(word) < 4 \
                or t.text in examples or placeholder(t.text):
            continue
        if not (w.incidental(t) or w.absent(t)) or word in headings:
            continue
        if t.kind is TermKind.WORD and english(t) and not qualifies_api(t, focus.question):  # (wordfreq loads in 0.6 s: last)
            continue
        if _verb_slot(t, focus.question.text) \
                or t.kind is TermKind.WORD and (_INFLECTED.search(word) or able_of_a_verb(word)) \
                or derived(t, focus, raw) or api_entry(t, raw) or spelled_out(t, ev) or not_asked(t, focus) \
                or common_acronym(t, focus.whole_question) or filed_under(t, focus, ev):
            continue
        out.append(t)
    return out


_INSTRUMENT = re.compile(SCENE_BEFORE + "$", re.I)  # "… with Homebrew": the tool asked of


def filed_under(term: Term, focus: Focus, ev: Evidence) -> bool:
    """A name a retrieved passage mentions in a section headed by another name or identifier the question asks
    about ("FoxPro" in the section "dBase files (DBF)", asked "load an old FoxPro .dbf table"): the documents cover
    it as a kind of that thing, right where they document it, so it is no name they leave undocumented."""
    question = focus.question.text
    if any(_INSTRUMENT.search(question[:at]) for at in standing(term.text, question)):
        return False  # "install PostgreSQL with Homebrew on macOS": the tool asked of, not a kind of the other name
    others = [t for t in focus.key_names(ev.weights) if t != term and not ev.weights.everyday(t)]
    for p in ev.passages.values():
        if not others or not mentions(term, text_forms(p.text), p.text):
            continue
        head = f"{p.title} {p.heading}"
        if any(mentions(t, text_forms(head), head) for t in others):
            return True
    return False


UNKNOWN_SHARE = 0.2  # words the corpus never uses, at least this share of an objective's terms: not about the corpus
UNKNOWN_MIN_PASSAGES = 1000  # a smaller corpus lacks ordinary words too: that a word is not in it says little
_INFLECTED = re.compile(r"(?:ing|ed|ly)$")
_ABLE = re.compile(r"(?P<stem>[a-z]{4,}?)(?:able|ible)$")


def able_of_a_verb(word: str) -> bool:
    """An adjective made of an English verb and "-able" ("growable", "hashable"): the user's word for what a
    documented thing can do, no product's name."""
    m = _ABLE.fullmatch(word.lower())
    return bool(m) and any(zipf(stem) >= ENGLISH_ZIPF for stem in (m.group("stem"), m.group("stem") + "e"))


def _never_used(term: Term, weights: Weights) -> bool:
    """No passage of the corpus contains the word (its statistics say so): a compound when one of its
    parts is never used ("scikit-learn", not "CPU-heavy"); a verb's -ing/-ed form or an adverb says how
    something is asked ("without stalling"), not what it is about, so it does not count."""
    if placeholder(term.text):  # "mylist": the asker's own name
        return False
    if "-" in term.text:
        parts = [x.lower() for x in re.findall(r"[A-Za-z]{3,}", term.text)]
        return any(weights.df.get(x) == 0 for x in parts)
    return weights.absent(term) and not _INFLECTED.search(term.text.lower())


_AUX_SUBJECT = r"\b(?:do|does|did|can|could|will|would|should|might|must)\s+(?:(?:my|the|a|an|this|that|your|our|its|their)\s+)?[\w.()'-]+\s+"


def _verb_slot(term: Term, text: str) -> bool:
    """Right after a subject or "to" ("how do I wipe …", "a way to squash …", "why does my regex gobble …"):
    the action asked for, worded the user's way, not the thing asked about."""
    word = re.escape(term.text)
    return bool(re.search(rf"\b(?:i|we|you|to)\s+{word}\b|{_AUX_SUBJECT}{word}\b", text, re.I))


_PREFIX = re.compile(r"^(?:sub|super|re|un|non|pre|post|multi|inter|over|under|mis|dis|auto|self|co|de)-?(?=[a-z]{4,})")


def derived(term: Term, focus: Focus, raw: str) -> bool:
    """A word made of an English prefix and a word the question or the retrieved text does use
    ("subfolders": sub + folders): the user's own word for something documented, not a word about
    something else."""
    word = term.text.lower()
    m = _PREFIX.match(word)
    if not m:
        return False
    rest = text_forms(word[m.end():])
    return any(rest & t.forms for t in focus.terms if t is not term) or any(
        re.search(rf"\b{re.escape(f)}", raw, re.I) for f in rest if len(f) >= 4)


def unknown_words(focus: Focus, weights: Weights, raw: str = "") -> list[Term]:
    """The objective's ordinary words that the corpus never uses ("seaborn", "football", "Vue" opening an
    objective), when they are a fifth or more of its content terms: it asks about something the
    documents do not cover, in a corpus large enough for its vocabulary to tell. (Names and identifiers
    no retrieved text mentions are `missing_names`.)"""
    if weights.passages < UNKNOWN_MIN_PASSAGES:
        return []
    # a compared entity is asked about in the words around the entities too ("loc and iloc on a pandas
    # DataFrame": pandas is the whole question's, and so each entity's)
    shared = [t for t in focus.context if focus.compared and t not in focus.siblings]
    terms = [t for t in dict.fromkeys(focus.question.terms + focus.about + shared)
             if t.kind not in (TermKind.SYMBOL, TermKind.NUMBER)]
    unknown = [t for t in terms if t.kind is TermKind.WORD and _never_used(t, weights)
               and not _verb_slot(t, focus.question.text) and not derived(t, focus, raw)]
    return unknown if terms and len(unknown) >= UNKNOWN_SHARE * len(terms) else []


def _foreign_package(term: Term, weights: Weights) -> bool:
    parts = qualified_parts(term.text.strip(".@"))
    if term.kind is not TermKind.IDENT or len(parts) < 2 or term.text[0].isdigit():
        return False
    root = make_term(parts[0].lower(), TermKind.WORD)
    # a package no passage names, or names only in passing with no title of its own ("pandas.merge" where
    # one note mentions pandas): the documents do not document it
    return weights.absent(root) or weights.incidental(root)


def api_entry(term: Term, raw: str) -> bool:
    """An identifier the retrieved text shows with its arguments ("jsonb_set ( target jsonb, …"): an entry of
    the documentation (a row of a function table has no heading of its own), not a mention in passing. A
    hyphenated name counts by the function named after it ("SHA-256": `sha256()`, "CRC-32": `crc32()`), a name
    in camel case written as a call ("saveRDS()") as the function it is. A
    macro's, a constant's or an identifier's name a manual's index lists, dot leaders to its page ("ISNA . . . .
    192"), is documented there too (a package's is not: an index lists the packages it names in passing, readxl)."""
    listed = re.search(rf"(?<![\w.]){re.escape(term.text.strip('`@'))}(?:\s*\.){{4,}}", raw)
    if listed and (term.text.isupper() or term.kind is TermKind.IDENT):
        return True
    if term.kind is TermKind.NAME and "-" in term.text:
        squashed = term.text.replace("-", "")
        return bool(re.search(rf"(?<![\w.]){re.escape(squashed)}\s*\(", raw, re.I))
    if term.kind is TermKind.NAME and _CAMEL.fullmatch(term.text):  # "saveRDS()", "dbWriteTable(conn, …)"
        return bool(re.search(rf"(?<![\w.]){re.escape(term.text)}\((?!{_MARKS}\))", raw))
    name = _CALL_TAIL.sub("", term.text.strip("`@"))
    return term.kind is TermKind.IDENT and bool(name) and bool(
        re.search(rf"(?<![\w.]){re.escape(name)}\s*\((?!\s*(?:https?|ftp)://)", raw))  # "ggplot2 (https://…)": a link


_CALL_TAIL = re.compile(r"\(.*\)$")
# a name written in one word with a capital inside it, as functions are named ("saveRDS", "dbWriteTable"): written
# right before a call's parenthesis, it is the documentation's function; a product's mark ("Oracle(R)") is no call
_CAMEL = re.compile(r"[a-z]+[A-Z][A-Za-z0-9]*")
_MARKS = r"(?:R|TM|r|tm|s|es)"
_TITLE_WORD = re.compile(r"[A-Za-z]+")


def spells(term: Term, text: str) -> bool:
    """The term is an acronym of consecutive words of the text ("GIL": "global interpreter lock"; "WAL":
    "Write-Ahead Logging")."""
    letters = term.text.lower()
    if term.kind is not TermKind.NAME or not term.text.isupper() or not 2 <= len(letters) <= 6 or not letters.isalpha():
        return False
    words = [w.lower() for w in _TITLE_WORD.findall(text)]
    return any("".join(w[0] for w in words[i:i + len(letters)]) == letters for i in range(len(words) - len(letters) + 1))


def spelled_out(term: Term, ev: Evidence) -> bool:
    """An acronym whose words title or head a retrieved passage ("CTE": "WITH Queries (Common Table
    Expressions)"): the documentation names it in full, not in passing."""
    return any(spells(term, f"{p.title} {p.heading}") for p in ev.passages.values())


_TITLE_CASE_SHARE = 0.6  # a question with this share of its words capitalised is written in title case


def _compounds(question: str, terms: list[Term]) -> list[str]:
    """Runs of two or more names written next to each other ("SQL Server", "Oracle Database Enterprise
    Edition"), as the question writes them; none in a question written in title case, whose every word
    looks like a name."""
    words = re.findall(r"[A-Za-z][\w+#.-]*", question)
    if not words or sum(w[0].isupper() for w in words) >= _TITLE_CASE_SHARE * len(words):
        return []
    names = {t.text for t in terms if t.kind is TermKind.NAME}
    keywords = {t.text for t in terms if t.kind is TermKind.IDENT and t.text.isupper() and t.text.isalpha()}
    groups: list[list[str]] = [[]]
    for tok in (t.rstrip(".") for t in re.findall(r"[\w+#.-]+|\S", question)):
        if tok not in names and tok not in keywords:
            groups.append([])
            continue
        # a keyword in capitals joins capitals ("NOT MATCHED BY SOURCE"), not a name ("an Oracle FOR loop": Oracle's)
        last = groups[-1][-1] if groups[-1] else ""
        if last and (tok in keywords or last in keywords) and not (tok.isupper() and last.isupper()):
            groups.append([])
        groups[-1].append(tok)
    return [" ".join(g) for g in groups if len(g) >= 2]


def _phrase(words: str) -> re.Pattern[str]:
    """The words next to each other, in any case, spaces or hyphens between ("Row Level" in "row-level")."""
    return re.compile(r"(?<![\w-])" + r"[\s-]+".join(re.escape(w) for w in words.split()) + r"(?![\w-])", re.I)


# between two keywords of a synopsis: its marks and lower-case placeholders ("{ ALL | name [, ...] } {")
_MARK = r"[{}\[\]|]"
_SYNOPSIS_GAP = rf"(?:\s+|\s*(?:(?:[a-z_]+|\.\.\.|,)\s*){{0,4}}{_MARK}(?:\s*(?:{_MARK}|[a-z_]+|\.\.\.|,)){{0,9}}\s*)"


def _elided_syntax(words: list[str], text: str) -> bool:
    """Keywords in capitals written as a statement with its names left out ("ALTER TABLE ADD COLUMN" for "ALTER
    TABLE name ADD COLUMN …"): the command, then runs of two or more the text writes so, in capitals. "MERGE WHEN NOT
    MATCHED BY SOURCE" is no such statement where no text writes "BY SOURCE"."""
    if not all(w.isupper() and w.isalpha() for w in words):
        return False

    @functools.cache
    def joined(i: int, j: int) -> bool:  # words[i:j] written so, in capitals (not `_phrase`: any case, hyphens),
        # or in a synopsis with its alternatives between ("SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | …")
        return bool(re.search(r"(?<![\w-])" + _SYNOPSIS_GAP.join(map(re.escape, words[i:j])) + r"(?![\w-])", text))

    @functools.cache
    def splits(i: int) -> bool:  # words[i:] as runs of two or more the text writes
        return i == len(words) or any(joined(i, j) and splits(j) for j in range(i + 2, len(words) + 1))

    return joined(0, 1) and splits(1) or splits(0)


def undocumented_compounds(focus: Focus, ev: Evidence) -> list[Term]:
    """A name of several words ("SQL Server", "Oracle Database") that no retrieved text or heading holds, and the
    corpus never or only in passing (the search's phrase counts, `name_runs`: "SQL server" twice, in no title),
    though each word alone is common ("SQL", "server", "database"): the documents name something else with those
    words, not the product asked about. One the corpus titles ("Notes for Windows Users") or uses often is
    documented, though this search missed it. The corpus's own names before another name say where it is
    ("PostgreSQL MVCC" is MVCC in PostgreSQL), and names of what the documents cover are joined in the text
    when both are ("VACUUM FULL", "READ UNCOMMITTED")."""
    text = f"{ev.all_text()} {_headings(ev)}"
    out = []
    for run in _compounds(focus.question.text, focus.question.terms):
        name = make_term(run, TermKind.NAME)
        if declined(name, focus.question.text) or placed_as_own(name, focus.whole_question):
            continue
        words = run.split()
        own = [not ev.weights.domain(make_term(w, TermKind.NAME)) for w in words]
        if any(own):  # the corpus's own names before the thing named ("PostgreSQL MVCC") say where it is
            words = words[own.index(True):]
        name = make_term(" ".join(words), TermKind.NAME)
        if len(words) < 2 or _phrase(name.text).search(text) or _elided_syntax(words, text):
            continue
        if ev.weights.known(name) and not (ev.weights.absent(name) or ev.weights.incidental(name)):
            continue  # the corpus titles it, or uses it often: this search missed it
        out.append(name)
    return out


def compared_in(focus: Focus, weights: Weights) -> list[Term]:
    """The names a comparison is made in, besides the things compared ("let and var in JavaScript", "faster on
    TPC-C benchmarks"): each compared thing's subagent answers only where the documents cover them too."""
    if not focus.compared:
        return []
    compared = {t.key for t in focus.terms + focus.siblings} | {w.lower() for e in focus.compared for w in e.split()}
    return [t for t in focus.context if t.kind in (TermKind.NAME, TermKind.IDENT) and not weights.domain(t)
            and t.key not in compared]


@dataclass
class Unanswered:
    """Why the documents do not answer an objective, however well its other words are covered."""

    missing: list[Term] = field(default_factory=list)  # named terms no retrieved text mentions
    passing: list[Term] = field(default_factory=list)  # the names asked about, each only mentioned in passing
    unknown: list[Term] = field(default_factory=list)  # words of the objective the corpus never uses
    unranked: list[Unsaid] = field(default_factory=list)  # rankings, figures, people, options no passage states

    def __bool__(self) -> bool:
        return bool(self.missing or self.passing or self.unknown or self.unranked)


def unanswered(focus: Focus, ev: Evidence, names: list[Term]) -> Unanswered:
    """Every reason the documents do not cover what the objective asks (`names`: its key names). A name no
    retrieved text mentions is not also said to be mentioned in passing."""
    raw, forms = ev.all_text(), ev.all_forms()
    missing = missing_names(focus, ev)
    passing = names if names and all(ev.weights.incidental(t) and not api_entry(t, raw) and not spelled_out(t, ev)
                                     and not is_extension(t.text) for t in names) else []
    passing += undocumented_versions(focus, ev.weights)
    missing += [t for t in undocumented_years(focus, ev.weights) + unmentioned_majors(focus, ev) if t not in missing]
    for t in undocumented_products(focus, ev):  # named in the text only, or not at all
        if mentions(t, forms, raw):
            passing.append(t)
        elif t not in missing:
            missing.append(t)
    for t in undocumented_names(focus, ev):
        if t in passing or t in missing:
            continue
        (passing if mentions(t, forms, raw) else missing).append(t)
    for t in undocumented_compounds(focus, ev):
        if t not in missing and t not in passing:
            (passing if ev.weights.incidental(t) else missing).append(t)
    for t in compared_in(focus, ev.weights):
        if t in missing or t in passing:
            continue
        if not mentions(t, forms, raw):
            missing.append(t)
        elif ev.weights.incidental(t) and not api_entry(t, raw) and not spelled_out(t, ev):
            passing.append(t)
    for t in uncovered_counterparts(focus, ev.weights):
        if t in missing or t in passing:
            continue
        (missing if ev.weights.absent(t) else passing).append(t)
    return Unanswered(missing, [t for t in passing if t not in missing], unknown_words(focus, ev.weights, raw),
                      unranked(focus, ev))


def uncovered_counterparts(focus: Focus, weights: Weights) -> list[Term]:
    """The names of a thing this one is compared with that no passage of the corpus contains ("Citus" beside
    PostgreSQL's own sharding) or that it mentions only in passing, no title or heading naming it ("MySQL" in
    PostgreSQL's manual): the documents cannot set the two apart, so neither side is answered from them (its own
    row would be words of this side alone)."""
    out: list[Term] = []
    for other in focus.compared[1:]:
        terms = extract_terms(other, sentence=False)  # a name alone, "Citus", though its capital opens it
        if terms and all(t.kind is TermKind.NAME and (weights.absent(t) or weights.incidental(t)) for t in terms):
            out += terms
    return out
