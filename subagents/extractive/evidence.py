"""Tool results as evidence: passages (with their rank over the searches), and the units a claim
can be made of — whole sentences of prose, code blocks and API signatures — each with its source.

Sentences are split on sentence-final punctuation followed by a capital, never inside a dotted name
(`os.path.join()`), after a common abbreviation (e.g., i.e., etc.) or inside brackets; a block of
preformatted text (code, a table) stays whole. A unit that does not end a sentence is kept only as
context, never as a claim, so a claim is never a cut sentence.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Collection, Iterable

from ..model import ToolResultBlock, ToolUseBlock
from ..text import ABBREVIATIONS
from .terms import STOP, TermKind, Weights, extract_terms, text_forms


class UnitKind(StrEnum):
    SENTENCE = "sentence"
    CODE = "code"  # a preformatted block: an example, an interactive session
    SIGNATURE = "signature"  # an API entry's first line: name(arguments)


@dataclass
class Passage:
    source_id: str
    title: str
    heading: str
    text: str
    full: bool  # read in full (else a search snippet)
    rank: float = 0.0  # fused reciprocal rank over the searches (higher is better)
    passage_id: str = ""
    url: str = ""
    anchor: str = ""  # the source id of the passage this one neighbours (read with it)
    aliases: list[str] = field(default_factory=list)  # index entries that point here ("Benchmarking")
    semantic: float | None = None  # the best cosine with a query's vector over the searches (None: not ranked so)
    _units: list["Unit"] | None = field(default=None, repr=False, compare=False)

    @property
    def own_heading(self) -> str:
        """The innermost heading of the passage's section ("Logging to a file" of "Logging HOWTO > Logging to a file")."""
        return self.heading.rsplit(" > ", 1)[-1]

    @property
    def asks(self) -> bool:
        """Its own heading is a question (a FAQ's entry, "Why does -22 // 10 return -3?"): the passage answers it."""
        return self.own_heading.rstrip().endswith("?")

    @property
    def asked_heading(self) -> str:
        """The question the passage's entry is headed by, its own heading or the one right above it ("7.41 Why does
        summary() report strange results for" under the whole question: a PDF's heading wrapped over two lines,
        whose outline holds it whole); "" when neither is a question."""
        return next((h for h in reversed(self.heading.split(" > ")[-2:]) if h.rstrip().endswith("?")), "")

    @property
    def context(self) -> str:
        """Title, headings and the index entries pointing here: what the passage is about."""
        return " ".join([self.title, self.heading, *self.aliases])


@dataclass
class Unit:
    text: str
    kind: UnitKind
    passage: Passage
    position: int  # order within its passage
    forms: set[str] = field(default_factory=set)
    term_line: str = ""  # the short line just above (a glossary term, a definition-list term)
    api: str = ""  # the API signature this sentence documents (the nearest one above it in the passage)
    intro: bool = False  # a sentence ending in ":" that introduces the code block right after it
    item: bool = False  # an item of a bulleted list ("- Using the tuple() built-in: tuple() or tuple(iterable)")
    shows: str = ""  # what the example right after it does, in its comments ("# Find the ten most common words")

    @property
    def source_id(self) -> str:
        return self.passage.source_id

    @property
    def complete(self) -> bool:
        """A whole sentence (or a whole block): fit to be a claim."""
        if self.kind is not UnitKind.SENTENCE:
            return True
        if "…" in self.text or _FRAGMENT_START.match(self.text) and self.text.split()[0].lower() in STOP:
            return False  # cut off, or the tail of a sentence a passage boundary split ("are that the view ...")
        return self.intro or bool(_SENTENCE_END.search(self.text)) and not self.text.endswith(":")


_LOST_COLON = re.compile(r"\b(?:from|in|by|with|as|using|calling|call|like|follows|via|to|use)\s+\w+$|"
                         r"\b(?:as\s+follows|such\s+as|for\s+example|e\.g\.|like\s+this|this\s+way)$", re.I)
_FRAGMENT_START = re.compile(r"[a-z]+\b(?![._(])")  # a lower-case plain word first: no sentence starts so


def material(content: str) -> Any:
    """The JSON inside a tool result's <retrieved_material> wrapper (None when there is none)."""
    m = re.search(r"<retrieved_material\b[^>]*>\s*(.*?)\s*</retrieved_material>", content, re.S)
    try:
        return json.loads(m.group(1) if m else content)
    except (json.JSONDecodeError, TypeError):
        return None


# ---------------------------------------------------------------- splitting

_SECTION_NO = r"(?:[A-Z]\.)?\d+(?:\.\d+)+\."  # "11.2.6.", "F.25.4.": a section's number, which opens its title
_ABBREV = re.compile(rf"\b(?:{'|'.join(map(re.escape, (*ABBREVIATIONS, 'resp', 'Fig', 'Sec', 'Ch', 'al')))})\.$|^"
                     + _SECTION_NO + "$", re.I)
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9`\"'(\[])")
_SENTENCE_END = re.compile(r"[.!?][\"')]?$|\)$")  # not "name [,...]": syntax (a SQL synopsis), not a sentence
_KIND = r"(?:(?:class|async def|def|coroutine|awaitable|exception|abstractmethod|classmethod|staticmethod)\s+)?"
SIGNATURE = _SIGNATURE = re.compile(rf"^{_KIND}[A-Za-z_][\w.]*\s*\(.*\)(?:\s*->\s*\S+)?$|^[A-Za-z_][\w]*\.[\w.]+$")
_CALLED = re.compile(rf"^{_KIND}([A-Za-z_][\w.]*)\s*\(")  # the name a signature calls
LONG_SIGNATURE = 400  # characters: a signature with many keyword parameters (subprocess.run's) is still one


_ARROW = re.compile(r"^(?P<synopsis>\S.{0,200}?)\s→\s(?P<result>[^!?→]{0,59}[^.!?→\s])$")  # "jsonb @> jsonb → boolean"
_LITERAL = re.compile(r"['\"]|::|^(?:ARRAY|array)\[|^-?\d")  # a value, not a type: an example's input
_VALUE = re.compile(r"^(?:-?\d|['\"{\[(]|[tf]$|NULL$)")  # an example's result


def is_signature(line: str) -> bool:
    """An API entry's first line, `name(arguments)`: short, or long with keyword parameters and no sentence in
    it; or a function table's synopsis, its arguments then "→" and the result type ("length ( text ) →
    integer", "jsonb @> jsonb → boolean"), not an example ("'[1,2]'::json -> 1 → 2", `is_example`)."""
    line = line.strip()
    arrow = _ARROW.match(line)
    if arrow:
        return not _LITERAL.search(arrow.group("synopsis")) and not _VALUE.match(arrow.group("result")) \
            and len(arrow.group("result").split()) <= 4
    if not _SIGNATURE.match(line):
        return False
    return len(line) < 160 or len(line) < LONG_SIGNATURE and "=" in line and ". " not in line


def names_an_entry(u: Unit) -> bool:
    """A description in a list of settings, variables or options, under the one identifier it describes
    ("_R_CHECK_LIMIT_CORES_" over "If set, check the usage of too many cores …"), that does not name it: quoted
    alone it says nothing of which one it is."""
    m = _ENTRY.match(u.term_line)
    if not m or m.group("name") in u.text:
        return False
    named = extract_terms(m.group("name"), sentence=False)
    return m.group("name").startswith("-") or len(named) == 1 and named[0].kind is TermKind.IDENT


# one name, maybe its type after it ("enable_seqscan (boolean)"), or a command-line flag ("--as-cran")
_ENTRY = re.compile(r"^\s*(?P<name>--?[A-Za-z][\w-]*(?:=\S+)?|[^\s()]+)(?:\s+\([^()]*\))?\s*:?\s*$")


def entry_name(heading: str) -> str:
    """The identifier a reference entry's heading opens with ("Sys.setFileTime Set File Time", R's manual), or ""."""
    for part in heading.split(" > "):
        name, _, title = part.strip().partition(" ")
        named = extract_terms(name, sentence=False)
        if title[:1].isupper() and len(named) == 1 and named[0].kind is TermKind.IDENT:
            return name
    return ""


def api_name(signature: str) -> str:
    """The name a signature calls ("shutil.copyfile" of "shutil.copyfile(src, dst)"), or a function table's
    short operator synopsis ("jsonb @> jsonb"); "" for a long one."""
    m = _CALLED.match(signature)
    if m:
        return m.group(1)
    arrow = _ARROW.match(signature)
    return arrow.group("synopsis") if arrow and len(arrow.group("synopsis")) <= 40 else ""


def _function_row(block: str) -> bool:
    """A function table's row: its synopsis ("… → type") on the first line, then what it does and examples."""
    first = block.strip().splitlines()[0]
    return bool(_ARROW.match(first.strip())) and is_signature(first)


def is_example(line: str) -> bool:
    """A function table's example: an expression on values, "→", what it gives ("length('jose') → 4")."""
    arrow = _ARROW.match(line.strip())
    return bool(arrow) and not is_signature(line)


_CODEISH = re.compile(r"^\s*(?:>>>|\$ |#|[A-Za-z_][\w.]*\s*(?:=|\()|(?:def|class|import|from|for|if|with|return|"
                      r"print|SELECT|CREATE|INSERT|UPDATE|DELETE|ALTER)\b)")


_CONTENTS_ENTRY = re.compile(r"^" + _SECTION_NO + r"\s+[^.!?]*$")  # "7.8. WITH Queries": a contents entry, no claim
_NOT_A_TERM = re.compile(r"::=|\s\|\s|\s=\s")  # a grammar production or an assignment, not a term being defined


_FOOTNOTE_REF = re.compile(r"(?:^|(?<=[.,;:!?)”\"’']))\s?\[\d{1,2}\](?=\s|$)")  # "… by value. [2] This means …"


def split_sentences(block: str) -> list[str]:
    """A prose block's sentences; a footnote's reference after a sentence or a clause ("[2]") is dropped: quoted,
    it would read as a citation of the report."""
    block = _FOOTNOTE_REF.sub("", " ".join(block.split())).strip()
    if not block:
        return []
    out: list[str] = []
    buf = ""
    start = 0
    for m in _BOUNDARY.finditer(block):
        piece = block[start:m.start()] + block[m.start():m.end()].rstrip()
        cand = f"{buf} {piece}".strip() if buf else piece.strip()
        if _ABBREV.search(cand) or cand.count("(") > cand.count(")"):
            buf = cand
        else:
            out.append(cand)
            buf = ""
        start = m.end()
    rest = block[start:].strip()
    if rest:
        out.append(f"{buf} {rest}".strip() if buf else rest)
    elif buf:
        out.append(buf)
    return out


# a shell's or an interpreter's prompt opening a line ("$ ", "~/webapp$ ", "user@host:~$ ", ">>> ")
_PROMPT = re.compile(r"^\s*(?:>>>|(?:[\w.-]+@[\w.-]+:)?[~/][\w./~-]*[$#]|\$)\s")


def is_code_block(block: str) -> bool:
    """Lines of code (half of them read as code), or a session a prompt opens, whatever output it shows."""
    lines = [ln for ln in block.splitlines() if ln.strip()]
    if len(lines) < 2:
        return False
    if _PROMPT.match(lines[0]):
        return True
    codeish = sum(1 for ln in lines if _CODEISH.match(ln) or ln.startswith((" ", "\t")) or ln.rstrip().endswith((":", ";", ")")))
    return codeish >= 0.5 * len(lines) and " | " not in block


def is_one_line_code(line: str) -> bool:
    """A single line that reads as a command, not prose ("python3 -m venv tutorial-env", "deactivate"): what a
    sentence ending in ":" introduces when the example is one line (a block of several lines is `is_code_block`)."""
    line = line.strip()
    # (an elision, "ON ...", ends no sentence: "SELECT a.* FROM t AS a JOIN u AS b ON ...")
    if not line or len(line) > 120 or re.search(r"(?<!\.\.)[.!?:,]['\"”’)\]]*$", line) or " | " in line:
        return False
    return bool(_CODEISH.match(line) or re.search(r"\s--?\w|[/\\=()<>;]|^\w+$", line)
                or re.fullmatch(r"[a-z][\w.-]*(?:\s+\S+)*", line))


def reads_as_code(line: str) -> bool:
    """A line that is code whatever comes before it: a statement or a call, with no sentence's end
    ("SELECT a.* FROM (t AS a JOIN u AS b ON ...) AS c") and a sign of code (a bracket, an operator, a dotted name);
    a bare word, a command or "for each row in the table" needs a sentence introducing it, and a line that holds a
    sentence ("## You can print numbers in fixed notation. format(1e5)") is read as one."""
    return is_one_line_code(line) and bool(_CODEISH.match(line.strip())) \
        and bool(re.search(r"[=();{}<>*\[\]]|\w\.\w", line)) and not re.search(r"[a-z][.!?]\s+\S", line)


_R_ARROW = re.compile(r"<<?-(?!>)")  # (not PostgreSQL's distance operator "<->")
_R_CODE_MARK = re.compile(r"<<?-(?!>)|[{}]|(?:^|\s)#+\s")  # arrows, braces, comments
_OPENS_ASSIGNED = re.compile(r"^(?:#+\s*[^#]*?\s)?[\w.]+\s*<<?-(?!>)\s*\S")  # "iter <- 12 …", "## Line types f <- …"


def runs_code_together(line: str) -> bool:
    """A line of code whose lines a PDF's text ran together ("ex <- function() { old.par <- par(no.readonly = TRUE)
    # all par settings … on.exit(par(old.par)) }"): it opens with an assignment, or it has an assignment arrow and
    three marks of code in all (arrows, braces, comment marks). A sentence that shows one ("The assignment x <- 5
    creates x.") has neither, nor has a function table's row of JSON examples ("jsonb_set('[{"f1":1}]', …)")."""
    return bool(_OPENS_ASSIGNED.match(line)) or bool(_R_ARROW.search(line)) and len(_R_CODE_MARK.findall(line)) >= 3


def navigation(line: str) -> bool:
    """Cells split by " | ", each a few words: a navigation bar ("Prev | Up | Next", "3.2. Views | Home |
    3.4. Transactions" in DocBook pages) or a table row, not prose a claim can be made of."""
    cells = line.split(" | ")
    return len(cells) >= 3 and all(len(c.split()) <= 6 for c in cells)


def units_of(passage: Passage) -> list[Unit]:
    """The passage's sentences, code blocks and signatures (computed once per passage)."""
    if passage._units is None:
        passage._units = _split_units(passage)
    return passage._units


def _split_units(passage: Passage) -> list[Unit]:
    units: list[Unit] = []
    for block in re.split(r"\n\s*\n", passage.text):
        block = block.strip("\n")
        if not block.strip():
            continue
        if "\n" in block.strip():
            if is_code_block(block) and not _function_row(block):
                units.append(Unit(block.rstrip(), UnitKind.CODE, passage, len(units)))
                continue
            lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        else:
            lines = [block.strip()]
        for line in lines:
            if navigation(line):
                continue
            if is_signature(line):
                units.append(Unit(line, UnitKind.SIGNATURE, passage, len(units)))
                continue
            if is_example(line) or runs_code_together(line) or _PROMPT.match(line):  # (a session a snippet ran
                units.append(Unit(line, UnitKind.CODE, passage, len(units)))  # into one line, output and all)
                continue
            if len(lines) == 1 and units and units[-1].kind is UnitKind.SENTENCE and units[-1].text.endswith(":") \
                    and is_one_line_code(line):
                units.append(Unit(line, UnitKind.CODE, passage, len(units)))
                continue
            bare = re.sub(r"^[-*•]\s+", "", line)
            for s in split_sentences(bare):
                if not _CONTENTS_ENTRY.match(s):
                    units.append(Unit(s, UnitKind.SENTENCE, passage, len(units), item=bare != line))
    api = ""
    headings = {passage.title.strip(), *(h.strip() for h in passage.heading.split(" > "))}
    for prev, u in zip([None] + units, units):
        u.forms = text_forms(u.text)
        if u.kind is UnitKind.SIGNATURE:
            api = u.text
        u.api = api
        # (a call after it is its example though it reads as a signature: "…, call sort() on it:" over
        # "gadgets.sort(key=len)")
        if prev is not None and u.kind in (UnitKind.CODE, UnitKind.SIGNATURE) and prev.kind is UnitKind.SENTENCE \
                and (prev.text.endswith(":") or _LOST_COLON.search(prev.text) and u.kind is UnitKind.CODE) \
                and len(prev.text.split()) >= 6:
            prev.intro = True  # (a PDF's text loses the colon: "… by calling from C" over "void R_CheckUserInterrupt(void);")
        if prev is not None and prev.kind is UnitKind.SENTENCE and len(prev.text.split()) <= 5 \
                and not _SENTENCE_END.search(prev.text) and not _NOT_A_TERM.search(prev.text) \
                and prev.text not in headings:  # (the page's title or a heading repeated in its text names no term)
            u.term_line = prev.text
            u.forms |= text_forms(prev.text)  # a definition is about the term it follows
    _mark_examples(units)
    return units


_COMMENT = re.compile(r"^\s*(?:(?:>>>|\.\.\.)\s+)?(?:#+|--)\s*(?!!|(?:include|define|if|ifn?def|else|endif|pragma|undef)\b)"
                      r"(?P<says>[^\W\d_].*)$", re.M)  # Python, R, shell, SQL; no shebang or C preprocessor line
_PROSE = re.compile(r"[^\W\d_]{2,}(?:\s+[^\W\d_]{2,}){2,}")  # three words or more: a comment that says, not code


def comments(code: str) -> list[str]:
    """The comment lines of an example that say what it does ("# Tally occurrences of words in a list"), not code
    commented out."""
    return [c for m in _COMMENT.finditer(code) if _PROSE.search(c := m.group("says").strip())]


def _mark_examples(units: list[Unit]) -> None:
    """Give the sentences that lead to an example (the one before it, and a short "For example:" between) what the
    example's comments say it does: a how-to question worded as a task ("print the ten words that show up most")
    meets the example's own description ("Find the ten most common words") more than the sentence's."""
    i = 0
    while i < len(units):
        if units[i].kind is not UnitKind.CODE:
            i += 1
            continue
        j = i
        while j < len(units) and units[j].kind is UnitKind.CODE:
            j += 1
        says = " ".join(c for u in units[i:j] for c in comments(u.text))
        k = i - 1
        while says and k >= 0 and units[k].kind is UnitKind.SENTENCE:
            units[k].shows = says
            if not units[k].text.endswith(":"):
                break
            k -= 1
        i = j


# ---------------------------------------------------------------- tool results

SEMANTIC_SPREAD = 0.1  # a passage this much less similar in meaning than the closest weighs 1/e as much
PAGE_DECAY = 0.5  # the j-th passage of a page adds PAGE_DECAY**j of its rank to the page
INDEX_WEIGHT = 1.0  # the index entries a search lists count like one more query's results


def page_of(p: Passage) -> str:
    return p.passage_id.rsplit("#", 1)[0] if p.passage_id else p.url or p.source_id


def page_support(ev: "Evidence") -> dict[str, float]:
    """Per page: its passages' fused search ranks, the best counting fully, each next one less —
    a page several queries and several of its passages point to is about the question."""
    return ev.pages


@dataclass
class Evidence:
    passages: dict[str, Passage] = field(default_factory=dict)  # by source id
    weights: Weights = field(default_factory=Weights)
    queries: list[str] = field(default_factory=list)
    pages: dict[str, float] = field(default_factory=dict)  # page -> support (`page_support`)

    def all_forms(self) -> set[str]:
        out: set[str] = set()
        for p in self.passages.values():
            out |= text_forms(f"{p.context} {p.text}")
        return out

    def alias_forms(self) -> set[str]:
        """The forms of the index entries that led to the passages."""
        return text_forms(" ".join(a for p in self.passages.values() for a in p.aliases))

    def all_text(self) -> str:
        return " ".join(f"{p.context} {p.text}" for p in self.passages.values())

    def top_semantic(self) -> float | None:
        """The best similarity in meaning of any passage (None when no search ranked by meaning)."""
        sims = [p.semantic for p in self.passages.values() if p.semantic is not None]
        return max(sims) if sims else None

    def closeness(self, p: Passage) -> float:
        """How close in meaning a passage is, against the closest: 1 for the closest, falling off as
        exp(-(best - its)/SEMANTIC_SPREAD); 1 for all when no search ranked by meaning (a neutral factor)."""
        top = self.top_semantic()
        if top is None:
            return 1.0
        sim = p.semantic if p.semantic is not None else top - 2 * SEMANTIC_SPREAD
        return math.exp(-max(0.0, top - sim) / SEMANTIC_SPREAD)


def _best(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _add(ev: Evidence, p: Passage) -> None:
    have = ev.passages.get(p.source_id)
    if have is None or (p.full and not have.full):
        if have is not None:
            p.rank = max(p.rank, have.rank)
            p.aliases = list(dict.fromkeys(have.aliases + p.aliases))
            p.semantic = _best(p.semantic, have.semantic)
        ev.passages[p.source_id] = p
    else:
        have.rank = max(have.rank, p.rank)
        have.aliases = list(dict.fromkeys(have.aliases + p.aliases))
        have.semantic = _best(have.semantic, p.semantic)


def _search(ev: Evidence, use: ToolUseBlock, data: dict[str, Any], fused: dict[str, float], meant: bool) -> None:
    """A search's results (and the index entries it listed: one more ranked list), with its term statistics;
    their closeness in meaning counts only when `meant` (the query says what was asked)."""
    ev.queries.append(str(use.input.get("query", "")))
    stats = data.get("corpus") or {}
    if isinstance(stats, dict) and isinstance(stats.get("term_passages"), dict):
        titled = stats.get("term_titles")
        ev.weights.add(int(stats.get("passages") or 0), stats["term_passages"], titled if isinstance(titled, dict) else None)
    for weight_, hits in ((1.0, data["results"]), (INDEX_WEIGHT, data.get("index") or [])):
        for rank, r in enumerate(hits):
            sid = r.get("source_id")
            if not sid:
                continue
            fused[sid] = fused.get(sid, 0.0) + weight_ / (4 + rank)
            sem = r.get("semantic")
            _add(ev, Passage(sid, r.get("title", ""), r.get("heading", ""), r.get("snippet") or r.get("text", ""),
                             False, 0.0, r.get("passage_id", ""), r.get("url", ""),
                             aliases=[r["entry"]] if r.get("entry") else [],
                             semantic=float(sem) if meant and isinstance(sem, (int, float)) else None))


def _read(ev: Evidence, data: dict[str, Any]) -> None:
    """A passage read in full, with its neighbours; or a fetched web page's passages."""
    if data.get("source_id"):
        _add(ev, Passage(data["source_id"], data.get("title", ""), data.get("heading", ""), data.get("text", ""),
                         True, 0.0, data.get("passage_id", ""), data.get("url", "")))
        for side in ("context_before", "context_after"):
            nb = data.get(side)
            if isinstance(nb, dict) and nb.get("source_id"):
                _add(ev, Passage(nb["source_id"], data.get("title", ""), nb.get("heading", ""), nb.get("text", ""),
                                 True, 0.0, nb.get("passage_id", ""), anchor=data["source_id"]))
    elif "passages" in data:
        for p in data["passages"]:
            if p.get("source_id"):
                _add(ev, Passage(p["source_id"], data.get("title", ""), p.get("heading", ""), p.get("text", ""),
                                 True, 0.0, url=data.get("url", "")))


def gather(calls: Iterable[tuple[ToolUseBlock, ToolResultBlock | None]],
           asked: Collection[str] | None = None) -> Evidence:
    """Every passage the agent's tools returned (search snippets, full reads and their
    neighbours), with a fused rank per passage and per page, plus the corpus term statistics the
    searches reported. Given `asked`, a passage's closeness in meaning is to those queries alone: a
    query made of the words the best results share (feedback) finds more, but is by construction close
    to those results, and would count them as close to the question."""
    ev = Evidence()
    fused: dict[str, float] = {}
    for use, res in calls:
        data = material(res.content) if res is not None and not res.is_error else None
        if isinstance(data, dict) and "results" in data:
            _search(ev, use, data, fused, asked is None or use.input.get("query") in asked)
        elif isinstance(data, dict):
            _read(ev, data)
    by_page: dict[str, list[float]] = {}
    for sid, r in fused.items():
        if sid in ev.passages:
            by_page.setdefault(page_of(ev.passages[sid]), []).append(r)
    ev.pages = {page: sum(r * PAGE_DECAY ** j for j, r in enumerate(sorted(rs, reverse=True)))
                for page, rs in by_page.items()}
    by_url: dict[str, float] = {}
    for sid, r in fused.items():
        if sid in ev.passages:
            p = ev.passages[sid]
            p.rank = max(p.rank, r)
            if p.url:
                by_url[p.url] = max(by_url.get(p.url, 0.0), r)
    for p in ev.passages.values():  # neighbours and fetched pages rank a little below what led to them
        if p.anchor and p.anchor in ev.passages:
            anchor = ev.passages[p.anchor]
            p.rank = max(p.rank, 0.6 * anchor.rank)
            if anchor.semantic is not None:
                p.semantic = _best(p.semantic, anchor.semantic - NEIGHBOUR_DROP)
        elif p.url and not p.rank:
            p.rank = 0.8 * by_url.get(p.url, 0.0)
    return ev


NEIGHBOUR_DROP = 0.05  # a neighbour read along with a passage: a little less close in meaning than it, unless
                       # a search ranked it itself
