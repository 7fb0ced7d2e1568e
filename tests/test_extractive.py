"""The offline (extractive) method: question analysis, plans that do not overlap, typed answer
selection, "not found", gap rounds — through the model seam and the Python API on small corpora
written here, plus a few end-to-end checks on the real python3-doc (skipped when absent)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from dataclasses import replace

import pytest

from subagents.context import AgentRole, AgentStatus, LeadLimits, RequestContext, RoundReport, SubagentReport
from subagents.delegation import Claim, Delegation, Findings, FindingsStatus, QueryType, tasks_per_query_type
from subagents.extractive.analysis import AnswerType, analyse, the_ask
from subagents.extractive.evidence import Evidence, Passage
from subagents.extractive.planning import MAX_QUERIES, MAX_READS, asks, single_queries
from subagents.extractive.selection import CONTEXT_WEIGHT, SCENE_WEIGHT, focus_of, weighted_terms
from subagents.extractive.terms import (TermKind, Weights, extract_terms, make_term, mentions, only_declined, placeholder,
                                       text_forms, variant_values)
from subagents.extractive.unstated import Release, persons, rankings, releases
from subagents.model import Message, ModelRequest, TextBlock, ToolResultBlock, ToolUseBlock
from subagents.models.extractive import ExtractiveModel
from subagents.runs import read_run

from .conftest import write_tree

PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")

DOCS = {
    "glossary.html": """<html><head><title>Glossary</title></head><body><div role="main"><h1>Glossary</h1><dl>
<dt id="term-widget">widget</dt><dd><p>A reusable screen element that draws itself and reacts to input events.</p></dd>
<dt id="term-gadget">gadget</dt><dd><p>A small helper object that a widget delegates drawing to.</p></dd>
</dl></div></body></html>""",
    "library/widgets.html": """<html><head><title>widgets — screen elements</title></head><body><div role="main">
<h1>widgets — screen elements</h1>
<p>The widgets module holds the widget classes; every widget instance keeps widget state in widget.state.</p>
<p>Widget code often reads widget.state and widget.parent several times in one widget method.</p>
<h2>Copying widgets</h2>
<dl><dt id="widgets.clone">widgets.clone(widget, deep=False)</dt>
<dd><p>Return a copy of the widget; with deep set to true the children are copied as well.</p>
<p>To copy a widget together with its children, call clone() with deep=True:</p>
<pre>from widgets import clone
copy = clone(window, deep=True)
copy.show()</pre></dd></dl>
<h2>Why widgets share themes</h2>
<p>Widgets share one theme object because themes are created exactly once, when the application starts.</p>
</div></body></html>""",
    "faq.txt": "Gadgets and widgets\n\nGadgets are stateless, whereas widgets keep state between events.\n\n"
               "A gadget never draws on its own; a widget draws itself.\n",
}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "docs", DOCS)


def run(question: str, docs: Path, tmp_path: Path, **options):
    """A run on `docs`, saved under `tmp_path`. Runs on the same documents share one index (beside them), as a
    user's runs do: a test's later runs re-index only what it changed, not its 1,000 notes again."""
    from lead_agent import research_sync

    return research_sync(question, corpus=[docs], runs_dir=tmp_path / "runs", cache_dir=docs.parent / "cache",
                         use_config_file=False, environ={}, **options)


def answer_to(question: str, docs: Path, tmp_path: Path, **options) -> str:
    """The Answer section of a run on `docs`."""
    return section(run(question, docs, tmp_path, **options).report, "Answer")


def section(report: str, title: str) -> str:
    m = re.search(rf"^## {title}\s*$(.*?)(?=^## |\Z)", report, re.S | re.M)
    return m.group(1) if m else ""


# ---------------------------------------------------------------- question analysis

@pytest.mark.parametrize("question, terms", [
    # "like" introduces an example, and a number written with its thousands separators shows a format: neither is
    # asked about (before, "like", "1", "234" and "567" weighed as much as "thousands" did)
    ("How can I print a large integer with commas between groups of thousands, like 1,234,567?",
     ["print", "large", "integer", "commas", "groups", "thousands"]),
    ("I would like to sort a list", ["sort", "list"]),
    # a lone capital letter where a number would stand is the asker's count, no name (before, "No sentence close enough
    # to quote mentions N" made a question not found); a letter that names something stays ("T as shorthand")
    ("How do I skip the first N rows of a file and retry a failing read N times?",
     ["skip", "first", "rows", "file", "retry", "failing", "read"]),
    ("I used T as shorthand for TRUE", ["T", "shorthand", "TRUE"]),
    ("My query with WHERE name LIKE 'abc%' is slow", ["query", "WHERE", "name", "LIKE", "abc", "slow"]),  # SQL's
    ("What does the like operator do?", ["like", "operator"]),
    ("Why does f(1,234) fail?", ["f(1,234)", "fail"]),  # a call's arguments, no number written out
    # numbered names given as examples are the asker's own instances, which no page names; a quoted message is not
    ('My names are built with paste(), like "score_1", "score_2". How do I fetch a value by name?',
     ["names", "built", "paste()", "fetch", "value"]),
    ("What does an error like 'x1 is not defined' mean?", ["error", "x1", "defined", "mean"]),
    # the asker's own names for their things; "the function called print" is a documented one
    ("I have a table called orders_archive. How do I add a column?", ["table", "called", "add", "column"]),
    ('A tool created my table as "OrderItems"; why does FROM OrderItems fail?', ["tool", "created", "table", "FROM", "fail"]),
    ("What does the function called print do?", ["function", "called", "print"]),
    # the tail of a contraction is no word: "they're" named the `re` module, which stays a name when written
    ("Comparing them with == says they're different; we've checked", ["==", "says", "checked"]),
    ("How do I use the re module?", ["re", "module"]),
    # an IPv4 address or network written out is a value, no version; a place passed to a call is the asker's value
    ("Is an address like 10.1.2.3 inside 192.168.1.0/24?", ["address", "inside"]),
    ("My script does ZoneInfo('Europe/Berlin') and fails", ["script", "ZoneInfo", "fails"]),
    ("Does Europe/Berlin or Berlin work?", ["Europe", "Berlin", "work"])])  # not passed to a call: named
def test_an_example_and_a_number_written_out_with_separators_are_no_terms(question: str, terms: list[str]) -> None:
    assert [t.text for t in extract_terms(question)] == terms


def test_the_corpus_own_subject_is_a_name_in_a_large_share_of_it_a_letter_in_most() -> None:
    from subagents.extractive.terms import TermKind, Weights, make_term

    w = Weights(passages=10_000, df={"python": 4_500, "postgresql": 2_000, "r": 10_000, "c": 2_100, "json": 300})
    named = lambda text: make_term(text, TermKind.NAME)  # noqa: E731
    assert w.domain(named("Python")) and w.domain(named("PostgreSQL")) and w.domain(named("R"))
    assert not w.domain(named("C"))  # a letter in a fifth of the passages: a variable's name as often as not
    assert not w.domain(named("JSON"))


@pytest.mark.parametrize("question, terms", [
    ("What does the -> operator mean in a def?", ["->", "mean", "def"]),
    ("What does the `**` operator do?", ["**"]),
    ("What is the matrix multiplication operator?", ["matrix", "multiplication", "operator"]),
    ("Which operator compares identity?", ["operator", "compares", "identity"]),
    ("What does the ->> operator return for jsonb?", ["return", "jsonb", "->>"]),  # not "->", cut from "->>"
    ("What is the difference between -> and ->> on jsonb?", ["->", "jsonb", "->>"])])
def test_operator_after_a_symbol_only_says_what_the_symbol_is(question: str, terms: list[str]) -> None:
    assert [t.text for t in extract_terms(question)] == terms


async def test_a_symbol_called_an_operator_is_searched_for_without_the_word_operator() -> None:
    # "operator" would find the operator module's pages (titled by it) before the def statement's "-> expression";
    # the query of the question's terms leaves it out (the question as asked, another query, keeps its words)
    plan = (await ExtractiveModel().complete(lead_request("What does the -> operator mean in a def?"))).tool_uses()[0].input
    queries = plan["tasks"][0]["queries"]
    assert queries[0] == "mean def", queries


def test_identifiers_stay_whole_and_domain_stop_words_count_when_named() -> None:
    texts = {t.text for t in extract_terms("What does __import__ return, and is csv.DictReader like zip()?")}
    assert {"__import__", "csv.DictReader", "zip()"} <= texts and "import__" not in texts
    assert "self" in {t.text for t in extract_terms("What exactly is self in a method?")}
    assert "WHERE" in {t.text for t in extract_terms("What is the difference between WHERE and HAVING?")}
    assert "where" not in {t.text.lower() for t in extract_terms("Where do I find the logs?")}


@pytest.mark.parametrize("question, terms", [
    ("I wrote def add(x) and calls keep failing. Why?", ["def", "calls", "failing"]),
    ("My script fails. I tried json.loads but it raises.", ["script", "fails", "json.loads", "raises"]),
    ("I noticed that sorted() is slow", ["sorted()", "slow"]),
    ("How do I sort a list?", ["sort", "list"]),  # the action asked for
    ("I embed Python in C", ["embed", "Python", "C"]),  # no past tense
    ("I exceed the recursion limit", ["exceed", "recursion", "limit"]),
    # a contraction's stem ("shouldn't" splits into "shouldn") and what the asker got are no subject
    ("Why shouldn't I use the random module?", ["random", "module"]),
    ("I computed 0.1 + 0.2 and got FALSE", ["0.1", "0.2", "FALSE", "+"])])
def test_what_the_asker_says_they_did_is_no_term(question: str, terms: list[str]) -> None:
    # "I wrote …" was the subject of "I wrote def add(item, bucket=[]) and items … keep showing up. Why?": the
    # Answer had to be about writing, and no sentence was close enough
    assert [t.text for t in extract_terms(question)] == terms


@pytest.mark.parametrize("question, terms", [
    ("I wrote def f(items=[]) and the list keeps growing. Why?", ["def", "default", "list", "growing"]),
    ("Why does class Point: need self?", ["class", "self"]),
    ("What is a class method?", ["class", "method"]),  # no code: "method" is what is asked about
    ("def handler(signum, frame, extra, more): runs twice", ["def", "signum", "frame", "extra", "runs", "twice"])])
def test_a_name_the_questions_own_code_defines_is_no_term(question: str, terms: list[str]) -> None:
    # the asker's function or class name is theirs (no page is about `f`); a parameter given a value in its
    # list is what the documentation calls a default
    assert [t.text for t in extract_terms(question)] == terms


async def test_the_askers_own_function_is_not_searched_for() -> None:
    # the real docs have pages full of `f` (operator's "After f = itemgetter(2), the call f(r) ..."): searched for as a
    # name, they filled the Answer of "I wrote def f(items=[]) ... Why?"; the parameter's value is searched as a default
    q = "I wrote def paint(widget, theme=None) and the theme keeps changing across calls. Why does that happen?"
    queries = (await ExtractiveModel().complete(lead_request(q))).tool_uses()[0].input["tasks"][0]["queries"]
    assert queries[0] == "def default theme changing across calls", queries
    assert not any(query.startswith("paint(") or query.endswith(")") for query in queries), queries


def test_a_keyword_named_in_passing_is_no_reason_for_not_found(docs: Path, tmp_path: Path) -> None:
    # "my for loop": the language's own keyword, which the passage answering the rest need not use as one
    (docs / "state.txt").write_text("Widget state\n\nChanging widget.state while iterating over it raises StateError, "
                                    "because the iterator holds a snapshot of its size.\n")
    answer = answer_to("Why does my for loop over widget.state raise StateError?", docs, tmp_path)
    assert answer.strip().startswith("Changing widget.state while iterating over it raises StateError"), answer


def test_a_format_written_in_its_placeholders_is_no_name(docs: Path, tmp_path: Path) -> None:
    # "YYYY-MM-DD" is a value's shape, shown by pages as an example, never a heading: taken as a name (like "UTF-8")
    # only mentioned in passing, "how do I format a date as YYYY-MM-DD" was "not found"
    (docs / "clock.txt").write_text("Clock\n\nclock.stamp(widget) returns the time a widget was drawn as a string, "
                                    "HH-MM, in local time.\n")
    answer = answer_to("How do I get the time a widget was drawn as HH-MM?", docs, tmp_path)
    assert answer.strip().startswith("clock.stamp(widget) returns the time a widget was drawn"), answer
    assert {t.text: t.kind for t in extract_terms("Format it as YYYY-MM-DD HH24:MI")} == {
        "Format": TermKind.WORD, "YYYY-MM-DD": TermKind.WORD, "HH24": TermKind.WORD, "MI": TermKind.WORD}
    assert [t.kind for t in extract_terms("Is UTF-8 the default on TPC-C?")] == [TermKind.NAME, TermKind.WORD, TermKind.NAME]
    # a pattern of %-directives: its pieces are no names ("postgresql-%a.log" had asked for a name "a.log")
    assert {t.text: t.kind for t in extract_terms("I named the logs zorbserver-%a.log by weekday")} == {
        "named": TermKind.WORD, "logs": TermKind.WORD, "zorbserver": TermKind.WORD, "a.log": TermKind.WORD,
        "weekday": TermKind.WORD}


def test_a_messages_severity_label_is_no_name(docs: Path, tmp_path: Path) -> None:
    # a pasted log line ("FATAL: password authentication failed for user postgres") is about its message: its label
    # is no name a page must mention (it made the question "not found: no retrieved passage mentions FATAL")
    (docs / "errors.txt").write_text("Theme errors\n\nA theme that cannot be loaded makes the widget fall back to "
                                     "the default theme and log the failure.\n")
    answer = answer_to("How do I fix 'FATAL: theme could not be loaded for widget main'?", docs, tmp_path)
    assert answer.strip().startswith("A theme that cannot be loaded makes the widget fall back"), answer
    assert [t.kind for t in extract_terms("What is JSON: a format?")][0] is TermKind.NAME  # a name a phrase explains


def test_a_statement_written_without_its_names_is_no_undocumented_name(docs: Path, tmp_path: Path) -> None:
    # users write "ALTER TABLE ADD COLUMN" for "ALTER TABLE name ADD COLUMN ...": a run of capitals no text joins, it
    # was "not found" as a name like "SQL Server"; each run of keywords is written so in the synopsis
    (docs / "gadget-sql.txt").write_text("ALTER GADGET\n\nALTER GADGET name ADD PART part_name [ DEFAULT value ] adds a "
                                         "part to a gadget.\n\nAdding a part with a default value rewrites the whole "
                                         "gadget and every widget it holds.\n")
    answer = answer_to("I tried ALTER GADGET ADD PART with a default on a big gadget. Will it rewrite the gadget?",
                       docs, tmp_path)
    assert answer.strip().startswith("Adding a part with a default value rewrites the whole gadget"), answer
    # the command alone, then keywords the text writes together ("INSERT ON CONFLICT DO NOTHING")
    (docs / "gadget-sql.txt").write_text("ALTER GADGET\n\nALTER GADGET name ADD PART part_name [ ON CONFLICT KEEP ] adds a "
                                         "part to a gadget.\n\nA part added with ON CONFLICT KEEP leaves the part the "
                                         "gadget had.\n")
    answer = answer_to("What does ALTER ON CONFLICT KEEP do to a part the gadget had?", docs, tmp_path)
    assert "do not answer" not in answer and "ON CONFLICT KEEP" in answer, answer
    # a clause no text writes is still no statement of this corpus
    answer = answer_to("Can ALTER GADGET ADD PART BY SOURCE rewrite the gadget?", docs, tmp_path)
    assert "do not answer" in answer, answer


def test_a_clause_of_keywords_no_text_writes_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "MERGE with a WHEN NOT MATCHED BY SOURCE clause" (a later version's syntax): keywords in capitals ("NOT", "BY")
    # broke the run into words each documented, so the clause was answered as if the docs had it
    (docs / "gadget-sql.txt").write_text("REBUILD GADGET\n\nREBUILD GADGET name [ WHEN NOT FOUND THEN SKIP ] rebuilds a "
                                         "gadget; only the owner of a gadget may rebuild it.\n\nWhen a part is not "
                                         "found, the rebuild skips it.\n")
    report = run("How do I use REBUILD GADGET with a WHEN NOT FOUND BY OWNER clause to skip parts?", docs, tmp_path).report
    assert "No retrieved passage mentions NOT FOUND BY OWNER." in section(report, "Answer"), report
    answer = answer_to("How do I use REBUILD GADGET with a WHEN NOT FOUND clause?", docs, tmp_path)
    assert answer.strip().startswith("REBUILD GADGET name [ WHEN NOT FOUND THEN SKIP ]"), answer


@pytest.mark.parametrize("question, kind", [
    ("How do I copy a file?", AnswerType.HOW_TO),
    # the way asked for comes after the task is told
    ("I want to count the words of a text. What's the least-code way to do that?", AnswerType.HOW_TO),
    ("Why are default values shared between objects?", AnswerType.WHY),
    ("What is a metaclass?", AnswerType.WHAT_IS),
    ("What is the difference between an argument and a parameter?", AnswerType.COMPARISON),
    ("How is comparing with == different from comparing with is?", AnswerType.COMPARISON),
    ("Which exceptions can json.dumps raise?", AnswerType.LIST),
    ("What kinds of parameters can a function have?", AnswerType.LIST),
    ("What kind of object does open() return?", AnswerType.FACT),  # one kind: no list of items
    ("What is except* for?", AnswerType.PURPOSE),
    ("What is the recursion limit there for?", AnswerType.PURPOSE),
    ("What is the purpose of __slots__?", AnswerType.PURPOSE),
    ("What are decorators used for?", AnswerType.PURPOSE),
    # "or" joins what the purpose clause names ("to generate passwords or session tokens"): nothing to compare
    ("Why shouldn't I use the random module to generate passwords or session tokens?", AnswerType.WHY),
    # a story: what kind of answer it wants is said by its asking sentences, not by its opening words
    ("The gadget cache is cold after every restart. Is there a way to make it reload what it held?", AnswerType.HOW_TO),
    ("The shell should answer a typo with a suggestion. Is there something built in that finds the closest word?",
     AnswerType.HOW_TO),
    ("I ran VACUUM on the gadget table, as the manual said. What does that command actually do?", AnswerType.WHAT_IS),
    ("We keep a widget per user. Which widget settings can each user change?", AnswerType.LIST),
    # a reason is asked for, not a thing that does something
    ("We exchange files with saveRDS. Is there any reason not to use it for downloads?", AnswerType.FACT),
    ("Is there a gadget helper that returns the widget count?", AnswerType.HOW_TO),
    # what to do, call or put somewhere: the way to do it, not what a thing is
    ("A gadget query has been running for an hour. What do I call to stop it?", AnswerType.HOW_TO),
    ("What do I put in the gadget file so widgets load first?", AnswerType.HOW_TO),
    ("What do I get back from gadget.read()?", AnswerType.WHAT_IS),
])
def test_answer_type(question: str, kind: AnswerType) -> None:
    assert analyse(question).answer_type is kind


@pytest.mark.parametrize("question, entities", [
    ("Should I use a LEFT JOIN or an INNER JOIN to keep rows without a match?", ["LEFT JOIN", "INNER JOIN"]),
    ("Should I use a list or a tuple for fixed records?", ["list", "tuple"]),
    ("Should I call os.system or subprocess.run to start a program?", ["os.system", "subprocess.run"]),
    ("How do char and varchar differ?", ["char", "varchar"]),
    ("How are a B-tree index and a GIN index different?", ["B-tree index", "GIN index"]),
    ("In what ways do streaming replication and logical replication differ?",
     ["streaming replication", "logical replication"]),
    ("What distinguishes a tuple from a list?", ["tuple", "list"]),
    ("Is a tuple the same as a list?", ["tuple", "list"]),
    ("Are VACUUM and VACUUM FULL the same?", ["VACUUM", "VACUUM FULL"]),
    # the setting asked about follows the second thing, as it may after "the difference between"
    ("How is a tuple different from a list when used as a dict key?", ["tuple", "list"]),
    ("How does CHAR differ from VARCHAR in storage?", ["CHAR", "VARCHAR"]),
    ("is vs == in Python: when do I use which?", ["is", "=="]),  # and after "vs", in lower case
    ("list vs tuple for storing coordinates?", ["list", "tuple"]),
    ("EXISTS vs NOT IN", ["EXISTS", "NOT IN"]),  # a keyword in capitals is a thing
    # both in one frame: what follows "with" (or "using") in each is compared, the words before it are the setting
    ("What's the difference between emptying a table with DELETE FROM and with TRUNCATE?", ["DELETE FROM", "TRUNCATE"]),
    ("What is the difference between sorting with sorted() and using list.sort()?", ["sorted()", "list.sort()"]),
    ("How do I sort and compare lists?", []),  # one thing done two ways: no comparison
    ("How do you open and close a file?", []),
])
def test_compared_entities_are_parallel(question: str, entities: list[str]) -> None:
    assert analyse(question).entities == entities


def test_what_the_asker_tells_after_the_question_is_no_part_of_it() -> None:
    # "… within a year of its release? I need a number for a slide.": before, the second sentence was a part of its
    # own, answered from word overlap while the first was not found
    assert not analyse("What share of widget users moved to 3.11? I need a number for a slide.").multi
    assert not analyse("Why does copy() fail? We use widgets 2.0 on our servers.").multi
    # a remark closing it, not the asker's ("A recent figure from a survey would be ideal.") had been a part of its own
    assert not analyse("What share of widget users moved to 3.11? A recent figure from a survey would be ideal.").multi
    assert len(analyse("How do I copy a widget? Explain the options.").parts) == 2  # a bidding sentence asks
    assert len(analyse("How do I copy a widget? And how do I delete it?").parts) == 2


def test_what_the_asker_tells_before_the_question_is_split_into_no_parts() -> None:
    # "…, and when the rows … are deleted …." and "…, and can't end in a dot, …." tell: before, each "and" opened a
    # part of its own, asked as a question and answered from word overlap (the maximum a part asked went unasked)
    told = "We store widgets as blobs, and when the rows are deleted the blobs stay behind. How do I remove them?"
    assert not analyse(told).multi
    told = "A widget name must start with a letter and can't end in a dot. What is the longest name allowed?"
    assert not analyse(told).multi
    # an "and" in a sentence that asks still opens a part, whatever marks come before its "?"
    assert len(analyse("How do they differ, and which one shows the usual >>> and ... prompts?").parts) == 2
    assert len(analyse("What does widgets.clone() return, and how is it copied").parts) == 2  # no "?" at all
    # a question word alone after "and" asks about the part before it ("…, and why?" had been a part, "why?")
    assert analyse("Some say it is dated. Was the widget redesign handled well, and why?").parts == []
    assert len(analyse("What does widgets.clone() return, and why does it copy?").parts) == 2


def test_parts_carry_the_first_subject_into_the_next() -> None:
    q = analyse("What does the @lru_cache decorator do, and how can I empty its cache?")
    assert len(q.parts) == 2 and q.parts[1].answer_type is AnswerType.HOW_TO
    assert "@lru_cache" in {t.text for t in q.parts[1].terms}


# ---------------------------------------------------------------- the lead's plan, through the model seam

def lead_request(question: str, rounds: tuple[RoundReport, ...] = (), rounds_left: int = 2) -> ModelRequest:
    limits = LeadLimits(tasks_per_query_type(5), max_rounds=2, rounds_left=rounds_left,
                        subagent_tools=("search_corpus", "read_passage"))
    ctx = RequestContext(role=AgentRole.LEAD, agent_id="lead", allowed_tools=("delegate",), question=question,
                         limits=limits, rounds=rounds)
    return ModelRequest(system="(any prompt)", messages=[Message("user", [TextBlock("(any words)")])], context=ctx)


async def gap_objectives(question: str) -> list[str]:
    """The objectives of the gap round the lead starts after one partial subagent whose claim names no name."""
    d = Delegation(objective=question, tools=["search_corpus"], queries=[question])
    partial = SubagentReport("r1-sub", d, AgentStatus.PARTIAL, Findings(
        status=FindingsStatus.PARTIAL, claims=[Claim(text="A raw header is split into names and values.",
                                                     source_ids=["S1"])]))
    resp = await ExtractiveModel().complete(lead_request(question, (RoundReport(1, (partial,)),), rounds_left=1))
    return [t["objective"] for t in resp.tool_uses()[0].input["tasks"]]


async def test_the_gap_round_leaves_out_the_askers_data_in_a_quoted_instance() -> None:
    # "a string like 'session=abc123; theme=dark'": a gap round searching "abc123" finds nothing the asker needs;
    # a name the question asks of ("Cookie") that no claim mentions is still a gap
    objectives = await gap_objectives("My app gets the raw header as a string like 'session=zq123; theme=dark'. How do "
                                      "I parse a Cookie header?")
    assert any(o.startswith("Cookie") for o in objectives) and not any("zq123" in o.split("(")[0] for o in objectives), \
        objectives


async def test_the_gap_round_leaves_out_a_name_the_asker_says_they_made() -> None:
    # "I wrote a summary.survey method …": a gap round searching "summary.survey" found a survey dataset's page and
    # added it to the report as a part of its own; a name the question asks of ("Cookie") is still a gap
    objectives = await gap_objectives("I wrote a cookie.split_raw method that splits the raw header. It loses values. "
                                      "How do I parse a Cookie header?")
    assert any(o.startswith("Cookie") for o in objectives), objectives
    assert not any("split_raw" in o.split("(")[0] for o in objectives), objectives


async def test_a_comparison_gets_one_subagent_per_entity_with_distinct_queries_and_boundaries() -> None:
    resp = await ExtractiveModel().complete(lead_request("What is the difference between a gadget and a widget?"))
    plan = resp.tool_uses()[0].input
    assert plan["query_type"] == QueryType.BREADTH_FIRST.value
    tasks = plan["tasks"]
    assert [t["objective"].split(" (")[0] for t in tasks] == ["gadget", "widget"]
    assert not set(tasks[0]["queries"]) & set(tasks[1]["queries"])  # no sibling searches the same
    assert "widget" in tasks[0]["boundaries"]["out_of_scope"][0] and "gadget" in tasks[1]["boundaries"]["out_of_scope"][0]
    # one of them (only one) also searches both names: the sentence setting them apart
    assert [any({"gadget", "widget"} <= set(q.split()) for q in t["queries"]) for t in tasks] == [True, False]


async def test_a_single_question_gets_one_subagent_with_distinct_queries() -> None:
    resp = await ExtractiveModel().complete(lead_request("Why do widgets share one theme object?"))
    plan = resp.tool_uses()[0].input
    assert plan["query_type"] == QueryType.STRAIGHTFORWARD.value and len(plan["tasks"]) == 1
    queries = plan["tasks"][0]["queries"]
    assert len(queries) == len({q.lower() for q in queries}) >= 2
    assert not any(w in " ".join(queries).lower() for w in ("mechanism", "caveat", "exception error"))


def test_an_entity_held_by_another_gets_no_joint_query() -> None:
    # "materialized view" already names both: a joint query would look for the view on the other's pages
    view = asks("What is the difference between a view and a materialized view?")[0]
    assert view.objective.startswith("view (") and not any("materialized" in q for q in view.queries)


def test_a_parts_inherited_subject_is_noted_as_a_word_unless_it_is_a_name() -> None:
    # (a capital in the note marks a name: "about: Poetry"; a sentence's first word is no name)
    for question, about in [("Gadgets are what, and how do I clone them?", "about: gadgets"),
                            ("How do I start a project with Zorblax, and how do I pin its versions?", "about: Zorblax")]:
        assert about in asks(question)[1].objective


@pytest.mark.parametrize("question", [
    "tools.gizmo versus tools.gadget: what is the difference?",  # one module
    "Should I call sorted(x) or x.sort()?",  # one name
    "What is the difference between a view and a materialized view?",  # one holds the other
    "Gadgets are what, and how do I clone them?",  # parts on one subject
])
async def test_what_one_retrieval_answers_is_one_subagent_with_the_queries_of_each(question: str) -> None:
    # siblings on things named alike read the same pages (bench_quality's overlap: 0.5-0.9 of their passages)
    plan = (await ExtractiveModel().complete(lead_request(question))).tool_uses()[0].input
    split = asks(question)
    assert len(plan["tasks"]) == 1 and plan["query_type"] == QueryType.STRAIGHTFORWARD.value, plan
    task = plan["tasks"][0]
    assert task["objective"] == question and len(split) == 2
    assert all(t.queries[0] in task["queries"] for t in split)  # each one's own search
    assert task["budget"]["max_tool_calls"] == 2 + 2 * (MAX_QUERIES + MAX_READS)


TOOLS_DOCS = {"library/tools.html": """<html><head><title>tools — wrappers</title></head><body><div role="main">
<h1>tools — wrappers</h1>
<dl><dt id="tools.gizmo">tools.gizmo(x)</dt><dd><p>Return a gizmo of x: a thin wrapper that shares the parts of x.</p></dd>
<dt id="tools.gadget">tools.gadget(x)</dt><dd><p>Return a gadget of x: a thick wrapper that copies every part of x.</p>
<p>To drop the copies a gadget made, call tools.release(gadget).</p></dd></dl>
</div></body></html>"""}


@pytest.mark.parametrize("question, labels", [
    ("tools.gizmo versus tools.gadget: what is the difference?", ["tools.gizmo", "tools.gadget"]),
    ("What does tools.gadget return, and how do I drop its copies?",
     ["What does tools.gadget return?", "how do I drop its copies?"])])
def test_one_subagent_answers_each_entity_and_each_part_and_says_which(question: str, labels: list[str],
                                                                      tmp_path: Path) -> None:
    result = run(question, write_tree(tmp_path / "docs", TOOLS_DOCS), tmp_path)
    subs = [a for a in read_run(result.run_dir).trace.ordered_agents() if a.round == 1]
    assert len(subs) == 1
    assert [c.about for c in subs[0].findings.claims if c.about == labels[0]] \
        and [c.about for c in subs[0].findings.claims if c.about == labels[1]], subs[0].findings.claims
    answer = section(result.report, "Answer")
    if "versus" in question:  # the table's rows, each from the claims about its entity
        rows = {line.split("|")[1].strip(): line.split("|")[2] for line in answer.splitlines() if line.startswith("| tools.")}
        assert "thin wrapper" in rows["tools.gizmo"] and "thick wrapper" in rows["tools.gadget"], answer
    else:  # one block per part
        first, second = answer.index(f"**{labels[0]}**"), answer.index(f"**{labels[1]}**")
        assert "thick wrapper" in answer[first:second] and "tools.release" in answer[second:], answer


def sub(objective: str, claims: list[str], queries: list[str]) -> SubagentReport:
    d = Delegation(objective=objective, tools=["search_corpus"], queries=queries)
    status = AgentStatus.OK if claims else AgentStatus.FAILED
    return SubagentReport("r1-sub", d, status, Findings(status=FindingsStatus(status.value),
                                                        claims=[Claim(text=c, source_ids=["S1"]) for c in claims]))


async def test_the_gap_round_delegates_only_the_entity_without_claims_with_new_queries() -> None:
    q = "What is the difference between a gadget and a widget?"
    r1 = RoundReport(1, (sub(f"gadget (compared with: widget; part of: {q})", ["A gadget is a small helper object."],
                             ["gadget"]),
                         sub(f"widget (compared with: gadget; part of: {q})", [], ["widget"])))
    resp = await ExtractiveModel().complete(lead_request(q, (r1,), rounds_left=1))
    plan = resp.tool_uses()[0].input
    assert "widget" in plan["rationale"] and len(plan["tasks"]) == 1
    task = plan["tasks"][0]
    assert task["objective"].startswith("widget") and "(gap)" not in task["objective"]
    assert "widget" not in [x.lower() for x in task["queries"]]  # never a query used before
    # nothing found at all: no gap round (more word overlap would not make an answer)
    empty = RoundReport(1, (sub("Who is the CEO?", [], ["CEO"]),))
    resp = await ExtractiveModel().complete(lead_request("Who is the CEO?", (empty,), rounds_left=1))
    assert not resp.tool_uses() and "do not answer" in resp.text()


async def test_a_gap_for_a_part_that_says_it_is_searched_with_the_subject_it_refers_to() -> None:
    q = "What is the depth limit there for, and how can I raise it?"
    r1 = RoundReport(1, (sub(f"What is the depth limit there for? (part of: {q})",
                             ["This depth limit prevents runaway nesting."], ["depth limit"]),
                         sub(f"how can I raise it? (about: depth limit; part of: {q})",
                             ["The depth limit is checked on every nesting."], ["raise depth limit"])))
    resp = await ExtractiveModel().complete(lead_request(q, (r1,), rounds_left=1))
    task = resp.tool_uses()[0].input["tasks"][0]
    assert task["queries"] and all("depth limit" in x for x in task["queries"]), task["queries"]  # never "raise" alone


async def test_a_part_a_gap_round_asked_again_is_one_block_without_repeats() -> None:
    q = "What is the depth limit there for, and how can I raise it?"
    part2 = f"how can I raise it? (about: depth limit; part of: {q})"
    r1 = RoundReport(1, (sub(f"What is the depth limit there for? (part of: {q})",
                             ["This depth limit prevents runaway nesting.", "The depth limit was fixed in 1.0."],
                             ["depth limit"]),
                         sub(part2, ["The depth limit was fixed in 1.0."], ["raise depth limit"])))
    r2 = RoundReport(2, (sub(part2, ["Call setdepthlimit() to raise the depth limit.",
                                     "The depth limit was fixed in 1.0."], ["how can I raise depth limit"]),))
    resp = await ExtractiveModel().complete(lead_request(q, (r1, r2), rounds_left=0))
    answer = section(resp.text(), "Answer")
    assert answer.count("**how can I raise it?**") == 1, answer
    assert answer.count("The depth limit was fixed in 1.0.") <= 1, answer


# ---------------------------------------------------------------- answers, through the Python API

def assert_whole_sentences(report: str) -> None:
    """Every line ends a sentence, or introduces the code block right below it."""
    fence = False
    lines = (section(report, "Answer") + section(report, "Details")).splitlines()
    for line, nxt in zip(lines, lines[1:] + [""]):
        if line.startswith("```"):
            fence = not fence
            continue
        text = re.sub(r"\[\d+(?:, \d+)*\]", "", line).strip(" -|")
        if fence or not text or line.startswith(("#", "|")):
            continue
        assert re.search(r"[.!?)\"'”]$", text) or (text.endswith(":") and nxt.startswith("```")), f"cut: {line!r}"


def test_what_is_answers_with_the_definition(docs: Path, tmp_path: Path) -> None:
    result = run("What is a widget?", docs, tmp_path)
    answer = section(result.report, "Answer")
    assert "A reusable screen element that draws itself" in answer.splitlines()[1]
    assert result.manifest["citation_check"]["pass_rate"] == 1.0
    assert_whole_sentences(result.report)


def test_how_to_keeps_the_api_and_its_code_example(docs: Path, tmp_path: Path) -> None:
    result = run("How do I copy a widget with its children?", docs, tmp_path)
    answer = section(result.report, "Answer")
    assert "clone() with deep=True" in answer
    assert "```python\nfrom widgets import clone\ncopy = clone(window, deep=True)" in answer
    assert_whole_sentences(result.report)


def test_how_to_answers_with_what_an_api_entry_does_worded_otherwise(tmp_path: Path) -> None:
    # the user's words ("at the same time", "all of them") fit a sentence about something else better than
    # the entry's own description; what the entry below its signature does is how it is done
    docs = write_tree(tmp_path / "docs", {"library/jobs.html": """<html><head><title>jobs — running jobs</title></head>
<body><div role="main"><h1>jobs — running jobs</h1>
<p>In the log you can see several jobs that run and wait at the same time, each with its start time.</p>
<dl><dt id="jobs.gather">jobs.gather(*jobs)</dt><dd><p>Run the given jobs concurrently and wait for them.</p></dd></dl>
</div></body></html>"""})
    answer = answer_to("How can I run several jobs at the same time and wait for all of them?", docs, tmp_path,
                       embedding_model="off")  # by words alone, the other sentence fits better
    assert answer.strip().startswith("Run the given jobs concurrently and wait for them."), answer
    assert "jobs.gather(*jobs)" in answer  # with the signature it describes


def test_why_answers_with_the_reason(docs: Path, tmp_path: Path) -> None:
    result = run("Why do widgets share one theme object?", docs, tmp_path)
    first = section(result.report, "Answer").strip().splitlines()[0]
    assert first.startswith("Widgets share one theme object because themes are created exactly once")


def test_a_comparison_is_a_table_of_the_entities(docs: Path, tmp_path: Path) -> None:
    result = run("What is the difference between a gadget and a widget?", docs, tmp_path)
    answer = section(result.report, "Answer")
    assert "Gadgets are stateless, whereas widgets keep state between events." in answer
    rows = [line for line in answer.splitlines() if line.startswith("| gadget") or line.startswith("| widget")]
    assert len(rows) == 2 and all(re.search(r"\[\d+\] \|$", r) for r in rows)
    assert result.manifest["citation_check"]["pass_rate"] == 1.0


def test_a_comparison_row_says_what_its_entity_is_not_a_sentence_naming_both(tmp_path: Path) -> None:
    # each subagent finds the sentence naming both first (its words match best); the table needs what
    # tells them apart, and one sentence twice tells nothing
    docs = write_tree(tmp_path / "docs", {
        "library/tools.html": """<html><head><title>tools — wrappers</title></head><body><div role="main">
<h1>tools — wrappers</h1>
<p>In general, try tools.gizmo() or tools.gadget() for the general case.</p>
<dl><dt id="tools.gizmo">tools.gizmo(x)</dt><dd><p>Return a gizmo of x: a thin wrapper that shares the parts of x.</p></dd>
<dt id="tools.gadget">tools.gadget(x)</dt><dd><p>Return a gadget of x: a thick wrapper that copies every part of x.</p></dd></dl>
</div></body></html>""",
        "faq.html": """<html><head><title>FAQ</title></head><body><div role="main"><h1>FAQ</h1><h2>How do I wrap an object?</h2>
<p>In general, try tools.gizmo() or tools.gadget() for the general case.</p></div></body></html>"""})
    answer = answer_to("tools.gizmo versus tools.gadget: what is the difference?", docs, tmp_path)
    rows = {line.split("|")[1].strip(): line.split("|")[2] for line in answer.splitlines() if line.startswith("| tools.")}
    assert "a thin wrapper that shares the parts of x" in rows["tools.gizmo"], answer
    assert "a thick wrapper that copies every part of x" in rows["tools.gadget"], answer


def test_a_comparison_row_quotes_a_command_written_as_the_question_writes_it(tmp_path: Path) -> None:
    # "zap" in lower case is the English verb, in a sentence with more of the question's words; ZAP is the command
    docs = write_tree(tmp_path / "docs", {
        "sql-zap.html": """<html><head><title>ZAP</title></head><body><div role="main"><h1>ZAP</h1>
<h2>Description</h2><p>ZAP quickly removes all gadgets from a set of shelves.</p></div></body></html>""",
        "sql-sweep.html": """<html><head><title>SWEEP</title></head><body><div role="main"><h1>SWEEP</h1>
<h2>Parameters</h2><p>Do not zap empty shelves at the end of an emptied shelf run; they stay empty.</p></div></body></html>""",
        "sql-wipe.html": """<html><head><title>WIPE</title></head><body><div role="main"><h1>WIPE</h1>
<h2>Description</h2><p>WIPE removes the gadgets that satisfy a condition from a shelf.</p></div></body></html>"""})
    answer = answer_to("What's the difference between emptying a shelf with WIPE and with ZAP?", docs, tmp_path)
    rows = {line.split("|")[1].strip(): line.split("|")[2] for line in answer.splitlines() if line.startswith("| ")}
    assert "ZAP quickly removes all gadgets" in rows["ZAP"], answer
    assert "WIPE removes the gadgets" in rows["WIPE"], answer


def test_a_comparison_opens_with_the_sentence_that_sets_them_apart(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {
        "library/tools.html": """<html><head><title>tools — wrappers</title></head><body><div role="main">
<h1>tools — wrappers</h1>
<p>Use gizmo() or gadget() only on objects that are not frozen.</p>
<dl><dt id="tools.gizmo">tools.gizmo(x)</dt><dd><p>Return a gizmo of x: a thin wrapper that shares the parts of x.</p></dd>
<dt id="tools.gadget">tools.gadget(x)</dt><dd><p>Return a gadget of x: a thick wrapper that copies every part of x.</p></dd></dl>
</div></body></html>""",
        "tutorial.html": """<html><head><title>Tutorial</title></head><body><div role="main"><h1>Tutorial</h1>
<h2>Wrapping objects</h2><p>The gizmo() function is meant for wrappers read by people, whereas gadget() is meant
for wrappers read by machines.</p></div></body></html>"""})
    # the first sentence naming both, by the question's words, only says "not"; the one to open with sets them apart
    answer = answer_to("gizmo() or gadget(): which one should I use for frozen objects?", docs, tmp_path)
    assert answer.strip().startswith("The gizmo() function is meant for wrappers read by people, whereas"), answer


ROTATE_DOCS = {
    "library/functions.html": """<html><head><title>Built-in Functions</title></head><body><div role="main">
<h1>Built-in Functions</h1><dl>
<dt id="rotate">rotate(obj, turns=1, axis=None, clockwise=True, reverse=False, strict=False)</dt>
<dd><p>Spin the object once around its axis and hand it back.</p></dd>
<dt id="whirl">whirl(obj)</dt><dd><p>Spin the object many times until it is dizzy.</p></dd></dl></div></body></html>""",
    "library/dials.html": """<html><head><title>dials — dial objects</title></head><body><div role="main">
<h1>dials — dial objects</h1><p>A dial is an object that turns.</p>
<p>Whirl objects spin the object many times, each time around its axis, at the speed of the dial.</p>
<dl><dt id="dials.Dial.rotate">Dial.rotate(obj)</dt><dd><p>The equivalent to the built-in rotate() for a dial object,
with the speed of the dial.</p></dd></dl></div></body></html>""",
    "library/fixers.html": """<html><head><title>fixers — old code</title></head><body><div role="main">
<h1>fixers — old code</h1><dl><dt>rotate</dt><dd><p>Converts the old rotate statement of an object to the rotate() call.</p>
</dd><dt>whirl</dt><dd><p>Converts the old whirl statement of an object to the whirl() call.</p></dd></dl></div></body></html>""",
}


def test_a_call_is_answered_from_its_own_entry_not_from_things_named_alike(tmp_path: Path) -> None:
    """The question names the builtin rotate(): its own entry (its signature too long to read as one call) says what
    it does, though the sentence does not repeat the name. A dial's method, a fixer and a class ("Whirl objects")
    named alike, which do say "rotate", are other things; a table row quotes the entry with its call."""
    docs = write_tree(tmp_path / "docs", ROTATE_DOCS)
    answer = answer_to("What does rotate() do?", docs, tmp_path)
    assert answer.strip().startswith("Spin the object once around its axis and hand it back."), answer
    answer = answer_to("What does whirl() do?", docs, tmp_path / "w")  # not the class "Whirl"
    assert answer.strip().startswith("Spin the object many times until it is dizzy."), answer
    result = run("What's the difference between rotate() and whirl()?", docs, tmp_path / "b")
    rows = {line.split("|")[1].strip(): line.split("|")[2] for line in section(result.report, "Answer").splitlines()
            if line.startswith("| ") and "|---" not in line}
    assert "rotate(): Spin the object once around its axis" in rows["rotate()"], rows
    assert "whirl(obj): Spin the object many times" in rows["whirl()"], rows
    assert result.manifest["citation_check"]["pass_rate"] == 1.0


def test_an_entity_inside_another_is_not_mentioned_by_it(tmp_path: Path) -> None:
    # "a materialized view" says "view", but not about a view: the view's row is what the view is
    docs = write_tree(tmp_path / "docs", {
        "sql-createview.html": """<html><head><title>CREATE VIEW</title></head><body><div role="main"><h1>CREATE VIEW</h1>
<p>CREATE VIEW defines a view of a query. The view is not physically stored; instead, the query is run every time
the view is referenced in a query.</p></div></body></html>""",
        "rules-matview.html": """<html><head><title>Materialized Views</title></head><body><div role="main">
<h1>Materialized Views</h1><p>A materialized view keeps the rows of its query in a table-like form. When a materialized
view is referenced in a query, the data is returned directly from the materialized view. The information about a
materialized view in the catalogs is the same as for a table or view. Refreshing a materialized view runs its query
again.</p></div></body></html>"""})
    result = run("What is the difference between a view and a materialized view?", docs, tmp_path)
    answer = section(result.report, "Answer")
    rows = {line.split("|")[1].strip(): line.split("|")[2] for line in answer.splitlines() if line.startswith("| ")}
    assert "materialized" not in rows["view"].lower() and "view" in rows["view"], answer
    assert "materialized view" in rows["materialized view"], answer
    assert "CREATE VIEW defines a view of a query." in result.report  # the view's subagent found its own page


def test_not_found_says_so_and_lists_possibly_related_passages(docs: Path, tmp_path: Path) -> None:
    result = run("Who designed the Zorblax widget toolkit in 1997?", docs, tmp_path)
    report = result.report
    assert "do not answer this question" in section(report, "Answer")
    assert "No retrieved passage mentions Zorblax" in report
    related = section(report, "Possibly related")
    assert re.search(r"^- .+ \[\d+\]$", related, re.M)  # closest passages, cited
    assert result.manifest["citation_check"]["pass_rate"] == 1.0
    run_ = read_run(result.run_dir)
    subs = [a for a in run_.trace.ordered_agents() if a.delegation is not None]
    assert subs and all(a.findings and not a.findings.claims and a.findings.related for a in subs)
    assert len(result.manifest["plans"]) == 1  # no gap round for a question the corpus does not answer


# ---------------------------------------------------------------- the real Python docs

needs_docs = pytest.mark.skipif(not PYTHON_DOCS.is_dir(), reason="python3-doc is not installed")


@needs_docs
@pytest.mark.parametrize("question, expected", [
    ("How do I read a CSV file with a header row into dicts?", "DictReader"),
    ("What is a context manager?", "with statement"),
])
def test_python_docs_answers(question: str, expected: str, tmp_path: Path, python_docs_index: Path) -> None:
    result = _docs_run(question, tmp_path)
    assert expected in section(result.report, "Answer"), result.report
    assert_whole_sentences(result.report)


@needs_docs
def test_compared_things_are_judged_each_by_its_own_names_not_as_parts_of_one_question(tmp_path: Path,
                                                                                        python_docs_index: Path) -> None:
    # "sorted(x) or x.sort()": the question as a whole names `x`, which no entry documents; each entity's own
    # search judges its names, so the whole question's are no reason to say "not found" (as they are for parts)
    answer = section(_docs_run("Should I call sorted(x) or x.sort()? How do they differ?", tmp_path).report, "Answer")
    assert "do not answer this question" not in answer and "sort" in answer, answer


@needs_docs
@pytest.mark.parametrize("question, opening", [
    ("What does compile() do?", "Compile the source into a code or AST object."),  # not py_compile.compile()
    ("What does print() do?", "Print objects to the text stream file"),  # not 2to3's fixer "print"
])
def test_a_builtin_is_answered_from_its_own_entry_not_from_things_named_alike(question: str, opening: str,
                                                                             tmp_path: Path, python_docs_index: Path) -> None:
    """py_compile.compile() and 2to3's fixer "print" say the name the question writes (or a stem of it); once the
    builtin's own entry is retrieved, they document other things."""
    answer = section(_docs_run(question, tmp_path).report, "Answer")
    assert answer.strip().startswith(opening), answer


@needs_docs
def test_a_faq_entry_worded_otherwise_answers(tmp_path: Path, python_docs_index: Path) -> None:
    """The FAQ's "What is the most efficient way to concatenate many strings together?" ranks low on the question's
    words; closest in meaning, it gets a read of its own, and its sentences, in a passage that uses `+=`, are judged
    by meaning: the question is answered from it, not found "not answered"."""
    result = _docs_run("Why is building up a long string with += inside a loop slow?", tmp_path)
    answer = section(result.report, "Answer")
    assert "do not answer" not in answer and "faq/programming.html" in result.report, result.report
    assert re.search(r"immutable|quadratic", answer), answer


@needs_docs
def test_python_docs_do_not_answer_who_runs_microsoft(tmp_path: Path, python_docs_index: Path) -> None:
    result = _docs_run("Who is the current CEO of Microsoft?", tmp_path)
    assert "do not answer this question" in result.report and "Possibly related" in result.report
    assert result.manifest["citation_check"]["pass_rate"] == 1.0


@needs_docs
def test_a_name_not_retrieved_is_not_also_said_to_be_mentioned_in_passing(tmp_path: Path, python_docs_index: Path) -> None:
    # the docs name Australia somewhere (a time zone), not in anything a search for its capital retrieves
    report = _docs_run("What is the capital of Australia?", tmp_path).report
    assert "No retrieved passage mentions Australia." in report
    assert "Australia only in passing" not in report


@needs_docs
def test_a_tool_no_english_word_names_that_the_docs_mention_in_passing_is_not_found(tmp_path: Path,
                                                                                      python_docs_index: Path) -> None:
    # multiprocessing says freeze_support() "has been tested with py2exe, PyInstaller and cx_Freeze": no page
    # documents PyInstaller, however documented Windows is; "checksum" is English jargon and stays asked
    report = _docs_run("How do I package my app as a Windows exe with PyInstaller?", tmp_path).report
    assert "do not answer this question" in report and "PyInstaller only in passing" in report, report
    report = _docs_run("How can I compute the SHA-256 checksum of a file with the standard library?", tmp_path).report
    assert "sha256()" in section(report, "Answer") and "do not answer" not in report, report


def _docs_run(question: str, tmp_path: Path):
    """On the user's index cache: indexing python3-doc takes far longer than a test should."""
    from lead_agent import research_sync

    return research_sync(question, corpus=[PYTHON_DOCS], runs_dir=tmp_path / "runs", use_config_file=False,
                         environ={})


def test_question_sets_meet_the_issue_sizes() -> None:
    data = Path(__file__).resolve().parents[1] / "lead_agent" / "compare" / "data"
    py = [json.loads(x) for x in (data / "python_docs.jsonl").read_text().splitlines() if x.strip()]
    pg = [json.loads(x) for x in (data / "postgresql_docs.jsonl").read_text().splitlines() if x.strip()]
    assert len([q for q in py if q["answers"]]) >= 60 and len([q for q in py if not q["answers"]]) >= 15
    assert len(pg) >= 15 and {q["split"] for q in py + pg} == {"dev", "test", "holdout", "holdout2"}


def test_a_name_the_documents_only_mention_in_passing_is_not_found(docs: Path, tmp_path: Path) -> None:
    (docs / "porting.txt").write_text("Porting\n\nSome teams port their widget code to a toolkit such as Qt before "
                                      "drawing widgets on a window.\n")
    result = run("How do I add a button to a Qt window?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "mention Qt only in passing" in result.report
    # named in a title or heading, the same name is about something the documents cover
    (docs / "qt.txt").write_text("Qt\n\nQt windows hold widgets; a widget is added to a Qt window with add().\n")
    result = run("How do I add a widget to a Qt window?", docs, tmp_path / "again")
    assert "do not answer this question" not in result.report


@pytest.mark.parametrize("note, scene, ask, asked, name", [
    # the text speaks of the asker's case, giving the name as an instance ("a toolkit such as Qt")
    ("Porting\n\nSome teams port their widget code to a toolkit such as Qt before drawing widgets on a window.\n",
     "Last year our team moved all of its widget code over to Qt.", "Now how do I copy a widget together with its "
     "children?", "How do I add a button to a Qt window?", "Qt"),
    # the sentence that answers names the asker's case ("Our old scripts were saved in the Windows-1252 encoding …
    # What do I put at the top of such a file …?": "to declare that Windows-1252 encoding is to be used, the first
    # line … should be:"); before, the name mentioned in passing made the question "not found"
    ("Legacy widgets\n\nTo copy a widget built with Zorblax together with its children, call clone() with deep=True "
     "as for any other widget.\n", "Our old widgets were all built with Zorblax years ago.",
     "How do I copy one of them together with its children?", "Which Zorblax setting makes a widget draw faster?",
     "Zorblax"),
    # the passage that answers names it, though not the answering sentence ("Tk will display an empty box wherever the
    # image was used" under the passage naming PhotoImage, for "a helper creates a PhotoImage … Why does the picture
    # vanish?")
    ("Legacy widgets\n\nTo copy a widget together with its children, call clone() with deep=True as for any other "
     "widget:\n\n    w = Zorblax.load('old.zbx')\n    copy = clone(w, deep=True)\n",
     "Our old widgets were all built by Zorblax.",
     "How do I copy one of them together with its children?", "Which Zorblax setting makes a widget draw faster?",
     "Zorblax"),
])
def test_a_scenes_name_the_text_speaks_of_where_it_answers_is_no_passing_mention(
        note: str, scene: str, ask: str, asked: str, name: str, docs: Path, tmp_path: Path) -> None:
    (docs / "note.txt").write_text(note)
    result = run(f"{scene} {ask}", docs, tmp_path)
    assert "do not answer this question" not in section(result.report, "Answer"), result.report
    assert "only in passing" not in result.report, result.report
    # asked about, the same name is still mentioned in passing only
    result = run(f"{scene} {asked}", docs, tmp_path / "asked")
    assert f"mention {name} only in passing" in result.report, result.report


def test_an_identifier_an_answering_sentence_names_is_no_passing_mention(docs: Path, tmp_path: Path) -> None:
    # "the bdist_dumb command generates all the "dumb" archive formats (tar, gztar, …)" had left "which archive formats
    # can bdist_dumb make?" not found: the command is mentioned in passing only, but where it is, it is described
    (docs / "note.txt").write_text("Packing widgets\n\nSome packing commands make several formats; for instance, the "
                                   "wpack_flat command makes all the flat archive formats (tar, zip and cpio).\n")
    result = run("With the old wpack_flat command, which archive formats can I make for my widgets?", docs, tmp_path)
    assert "tar, zip and cpio" in section(result.report, "Answer"), result.report
    # asked what no sentence naming it says (one more word of the question than the name), it is still mentioned in
    # passing only
    result = run("How do I get wpack_flat to print its version number?", docs, tmp_path / "other")
    assert "mention wpack_flat only in passing" in result.report, result.report
    # a product's plain name beside what it does is no description of how to use it
    (docs / "note.txt").write_text("Packing widgets\n\nSome packing tools make several formats; for instance, the "
                                   "Zorblax tool makes all the flat archive formats (tar, zip and cpio).\n")
    result = run("With the old Zorblax tool, which archive formats can I make for my widgets?", docs, tmp_path / "plain")
    assert "mention Zorblax only in passing" in result.report, result.report



def test_only_a_snake_case_identifier_named_by_an_answering_sentence_is_described_there() -> None:
    # a dotted name is a package as often ("data.table"): five R questions about it had been answered from sentences
    # mentioning the package beside what it does
    from subagents.extractive.evidence import units_of
    from subagents.extractive.selection import Scored, identifier_in_an_answer

    def enough(sentence: str, hits: int) -> list:
        ev = _searched("Which archive formats can it make?", sentence, {"archive": 40}, {"archive": 2})
        return [Scored(u, 1.0, 0.9, hits=hits) for p in ev.passages.values() for u in units_of(p)]

    said = enough("The wpack_flat command makes all the flat archive formats (tar, zip and cpio).", hits=4)
    assert identifier_in_an_answer(make_term("wpack_flat", TermKind.IDENT), said)
    assert not identifier_in_an_answer(make_term("wpack_flat", TermKind.IDENT), enough(
        "The wpack_flat command makes all the flat archive formats (tar, zip and cpio).", hits=2))  # too few words asked
    dotted = enough("The zorb.pack package makes all the flat archive formats (tar, zip and cpio).", hits=4)
    assert not identifier_in_an_answer(make_term("zorb.pack", TermKind.IDENT), dotted)


def test_a_name_of_the_askers_own_data_in_the_scene_is_no_undocumented_name(tmp_path: Path) -> None:
    # "room_id" is the asker's column: the documents never write it, the sentences that ask do not name it
    docs = write_tree(tmp_path / "docs", {
        "constraints.txt": "Gadget EXCLUDE constraints\n\nAn EXCLUDE USING gist constraint on a plain integer column needs the "
                           "gadget_gist extension, because integers have no default gist operator class.\n",
        "tables.txt": "Gadget tables\n\nA gadget table holds rows of typed columns.\n"})
    scene = "I'm building a booking table whose room_id column is a plain integer, and my EXCLUDE USING gist " \
            "constraint fails saying integers have no default gist operator class."
    report = run(f"{scene} Why, and what do I need to install?", docs, tmp_path).report
    assert "gadget_gist extension" in section(report, "Answer"), report
    assert "room_id" not in report.split("## References")[0].split("## Answer")[1].replace(scene, ""), report
    # asked about, the same name is one the documents must hold
    report = run(f"{scene} What does the room_id column of the gadget bookings view hold?", docs, tmp_path / "b").report
    assert "No retrieved passage mentions room_id" in report, report
    # so is a call of the asker's own function ("I run CALL batch_load() … Why does it fail?")
    scene = "My nightly job calls book_rooms(), which adds an EXCLUDE USING gist constraint on a plain integer " \
            "column, and it fails saying integers have no default gist operator class."
    report = run(f"{scene} Why, and what do I need to install?", docs, tmp_path / "c").report
    assert "gadget_gist extension" in section(report, "Answer"), report
    # a name the asker read or heard of is a thing of the world, not theirs ("I've read that pg_basebackup can now
    # take incremental backups that are later merged with pg_combinebackup" had set pg_combinebackup aside)
    scene = "I've read that gist constraints on plain integer columns can now be checked by gadget_intcheck."
    report = run(f"{scene} Why do they fail, and what do I need to install?", docs, tmp_path / "d").report
    assert "No retrieved passage mentions gadget_intcheck" in report, report


def test_an_identifier_the_corpus_documents_told_in_the_scene_is_not_missing_from_the_passages() -> None:
    from subagents.extractive.undocumented import unanswered

    # plotd() has headings of its own (5 of 60 passages): the scene tells the setting with it, the asking sentence
    # does not name it, and the passages answering the ask need not repeat it
    passages = {"S1": Passage("S1", "Frames", "Double buffering", "To show a whole frame at once, call hold() before "
                              "drawing and flush() after it.", True)}
    weights = Weights(passages=10_000, df={"plotd": 60, "gizmod": 3, "zorbd": 60, "frame": 400, "flicker": 40},
                      titled={"plotd": 5, "gizmod": 0, "zorbd": 0})
    ev = Evidence(passages, weights)
    ask = "How do I show a whole frame at once?"

    def missing(question: str) -> list[str]:
        return [t.text for t in unanswered(focus_of(question), ev, []).missing]

    assert missing(f"Each frame flickers while plotd() draws my points. {ask}") == []
    # one the corpus mentions in passing, or uses with no heading naming it, is still missing; so is one asked about
    assert missing(f"Each frame flickers while gizmod() draws my points. {ask}") == ["gizmod()"]
    assert missing(f"Each frame flickers while zorbd() draws my points. {ask}") == ["zorbd()"]
    assert missing("Each frame flickers. How do I show a whole frame at once with plotd()?") == ["plotd()"]


def test_a_library_named_by_an_ordinary_word_the_documents_give_no_page_is_not_found(tmp_path: Path) -> None:
    # "fetches" shares its stem with the documented urlfetch.fetch pages, but no title or heading names it
    docs = write_tree(tmp_path / "docs", {
        "library/urlfetch.html": """<html><head><title>urlfetch — fetch URLs</title></head><body><div role="main">
<h1>urlfetch — fetch URLs</h1><h2>Timeouts</h2>
<p>To set a timeout on a GET request, pass timeout=5 to urlfetch.fetch(); the fetch fails after five seconds.</p>
<p>See also: the Fetches package is recommended for a higher-level HTTP client interface.</p>
</div></body></html>""",
        "library/other.html": "<html><head><title>other — colours</title></head><body><div role='main'><h1>other</h1>"
                              "<p>This page is about colours and fetches nothing.</p></div></body></html>"})
    result = run("How do I set a timeout on a GET request with the fetches library?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "mention fetches only in passing" in result.report
    # a library a page is titled by is documented; "the standard library" names no library
    for i, lib in enumerate(("the urlfetch module", "the standard library")):
        result = run(f"How do I set a timeout on a GET request with {lib}?", docs, tmp_path / f"again{i}")
        assert "pass timeout=5 to urlfetch.fetch()" in section(result.report, "Answer"), result.report


def test_a_long_signature_is_code_not_a_sentence_that_crowds_out_the_others(tmp_path: Path) -> None:
    params = ", ".join(f"{name}=None" for name in ("stdin", "input", "stdout", "stderr", "cwd", "timeout", "check",
                                                     "encoding", "errors", "text", "env", "universal_newlines"))
    docs = write_tree(tmp_path / "docs", {"library/spawn.html": f"""<html><head><title>spawn — run commands</title>
</head><body><div role="main"><h1>spawn — run commands</h1><dl><dt id="spawn.run">spawn.run(args, *, {params},
capture_output=False, shell=False)</dt><dd><p>Run the command described by args and wait for it to complete.</p>
<p>If capture_output is true, the output of the command is captured and returned.</p></dd></dl>
</div></body></html>"""})
    report = run("How can I run a shell command and capture its output?", docs, tmp_path).report
    answer = section(report, "Answer")
    assert "```python\nspawn.run(args, *, stdin=None" in answer, answer  # an example, not a quoted sentence
    assert answer.strip().startswith("Run the command described by args"), answer  # what the entry does
    assert "- If capture_output is true, the output of the command is captured" in report, report  # still a claim


def test_a_number_in_arithmetic_is_a_value_not_a_version_the_text_must_name(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {"floats.txt": "Widget arithmetic\n\nWidget floats are binary fractions, so "
                                          "a decimal such as 0.1 cannot be represented exactly and sums are rounded.\n"})
    report = run("Why is widget float arithmetic slightly wrong, like 0.1 + 0.2?", docs, tmp_path).report
    assert "cannot be represented exactly" in section(report, "Answer"), report


def test_a_qualified_name_a_retrieved_text_writes_whole_is_no_undocumented_package(tmp_path: Path) -> None:
    # "proc" is a variable of the page's example, in no other passage and no title: a package mentioned in passing,
    # had "await proc.wait()" not been written there as the asker writes it
    docs = write_tree(tmp_path / "docs", {"library/spawn.html": """<html><head><title>spawn — child processes</title>
</head><body><div role="main"><h1>spawn — child processes</h1><h2>Waiting for a child</h2>
<p>The wait() method waits for the child to exit. It can deadlock when the child writes enough output to fill the
pipe, because the child blocks until the pipe is read; use communicate() to read the output while waiting.</p>
<h2>Example</h2><pre>proc = spawn.start(cmd, stdout=spawn.PIPE)
line = proc.stdout.readline()
await proc.wait()</pre></div></body></html>""",
                                          "library/pipes.html": "<html><head><title>pipes</title></head><body>"
                                          "<div role='main'><h1>pipes</h1><p>A pipe holds output until it is read."
                                          "</p></div></body></html>"})
    report = run("My tool starts a child with spawn.start and awaits proc.wait() before reading its output. With big "
                 "outputs it hangs. Why?", docs, tmp_path).report
    assert "do not answer this question" not in section(report, "Answer"), report
    assert "deadlock" in section(report, "Answer"), report


def test_an_identifier_of_a_package_the_documents_lack_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "clone" is documented here (widgets.clone), the package "gizmolib" is not
    result = run("What does gizmolib.clone do?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "No retrieved passage mentions gizmolib.clone" in result.report
    assert "do not answer this question" not in run("What does widgets.clone do?", docs, tmp_path / "b").report


def test_a_later_part_about_the_first_parts_unknown_name_is_not_answered_from_its_other_words(
        docs: Path, tmp_path: Path) -> None:
    # "its" is Zorblax's: the copying section answers "how do I copy ... with its children" for widgets,
    # not for Zorblax, which no document mentions
    result = run("What is Zorblax, and how do I copy a widget together with its children?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "call clone() with deep=True" not in section(result.report, "Answer")
    result = run("What is a gadget, and how do I copy a widget together with its children?", docs, tmp_path / "b")
    assert "call clone() with deep=True" in result.report


def test_a_hyphenated_name_documented_by_its_function_is_answered(tmp_path: Path) -> None:
    # "QUUX-256" is in one passage and no heading (a mention in passing, were it not for quux256())
    docs = write_tree(tmp_path / "docs", {
        "library/digests.html": """<html><head><title>digests — message digests</title></head><body><div role="main">
<h1>digests — message digests</h1><h2>Digest algorithms</h2>
<p>Constructors for the digest algorithms of this module are quux128() and quux256().</p>
<p>To compute the checksum of a file, use quux256() to create a QUUX-256 digest object and feed it the file.</p>
</div></body></html>""",
        "library/other.html": "<html><head><title>other — unrelated</title></head><body><div role='main'><h1>other</h1>"
                              "<p>Nothing about digests lives here; this page is about colours.</p></div></body></html>"})
    result = run("How can I compute the QUUX-256 checksum of a file?", docs, tmp_path)
    assert "use quux256() to create a QUUX-256 digest object" in section(result.report, "Answer"), result.report


def test_an_acronym_spelled_out_in_a_title_is_documented_not_mentioned_in_passing(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {
        "queries-with.html": """<html><head><title>WITH Queries (Common Table Expressions)</title></head><body>
<div role="main"><h1>WITH Queries (Common Table Expressions)</h1>
<p>WITH provides a way to write auxiliary statements for use in a larger query.</p>
<p>To write a recursive query, use WITH RECURSIVE: a recursive WITH query can refer to its own output.</p>
</div></body></html>""",
        "release.html": """<html><head><title>Release 9.9</title></head><body><div role="main"><h1>Release 9.9</h1>
<p>Fix planner errors with a CTE reference inside an aggregate.</p></div></body></html>"""})
    report = run("What is a CTE and how do I write a recursive one?", docs, tmp_path).report
    assert "only in passing" not in report, report
    assert "a recursive WITH query can refer to its own output" in section(report, "Answer"), report


def test_what_is_an_acronym_answers_with_the_glossary_entry_that_spells_it_out(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {
        "glossary.html": """<html><head><title>Glossary</title></head><body><div role="main"><h1>Glossary</h1><dl>
<dt id="term-gwl">global widget lock</dt><dd><p>The mechanism that lets only one thread draw widgets at a time.
Also, the GWL is always released while waiting for input.</p></dd></dl></div></body></html>""",
        "api.html": """<html><head><title>Threads and drawing</title></head><body><div role="main"><h1>Threads</h1>
<p>A thread must hold the GWL before it draws a widget. Releasing the GWL lets other threads draw.</p>
</div></body></html>"""})
    answer = answer_to("What is the GWL?", docs, tmp_path)
    assert "The mechanism that lets only one thread draw widgets at a time." in answer, answer


def test_what_for_answers_with_what_the_subject_is_there_to_do(tmp_path: Path) -> None:
    # the limit's own page says what it prevents; the other sentences use the limit, or tell its history
    docs = write_tree(tmp_path / "docs", {
        "library/nesting.html": """<html><head><title>nesting — widget nesting</title></head><body><div role="main">
<h1>nesting — widget nesting</h1><dl><dt id="nesting.getdepthlimit">nesting.getdepthlimit()</dt>
<dd><p>Return the current value of the depth limit, the maximum nesting of widgets. This depth limit prevents runaway
nesting from exhausting the drawing stack. It can be set with setdepthlimit().</p></dd></dl></div></body></html>""",
        "library/layout.html": """<html><head><title>layout — placing widgets</title></head><body><div role="main">
<h1>layout — placing widgets</h1><p>The maxlevels parameter is used to limit the depth of the layout; it defaults
to the depth limit.</p></div></body></html>""",
        "library/build.html": """<html><head><title>build — building the toolkit</title></head><body><div role="main">
<h1>build — building the toolkit</h1><p>Previously this depth limit was fixed when you built the toolkit, but now
the depth limit can be read with getdepthlimit().</p></div></body></html>"""})
    answer = answer_to("What is the depth limit there for?", docs, tmp_path)
    first = answer.strip().splitlines()[0]
    assert "This depth limit prevents runaway nesting from exhausting the drawing stack." in first, answer


def test_a_starred_keyword_is_not_the_plain_word(tmp_path: Path) -> None:
    # "frob*" is a keyword of its own: "frobs" and "frobbing" (stem "frob") do not mention it
    docs = write_tree(tmp_path / "docs", {
        "reference/frobs.html": """<html><head><title>Frobs</title></head><body><div role="main"><h1>Frobs</h1>
<p>All frobs are derived from the base frob class, and frobbing a frob is always allowed.</p>
<p>Frobs are grouped by kind when they are frobbed together.</p></div></body></html>""",
        "tutorial/groups.html": """<html><head><title>Frob groups</title></head><body><div role="main"><h1>Frob groups</h1>
<p>By using frob* instead of frob, we can selectively handle only the frobs in a group that match a kind.</p>
</div></body></html>"""})
    answer = answer_to("What is frob* for?", docs, tmp_path)
    assert "By using frob* instead of frob" in answer.strip().splitlines()[0], answer


SANDBOX_DOCS = {
    "library/sandbox.html": """<html><head><title>sandbox — isolated widget sandboxes</title></head><body>
<div role="main"><h1>sandbox — isolated widget sandboxes</h1>
<p>A widget sandbox is created on top of an existing widget installation and may optionally be isolated from the
widgets of the project, so only those explicitly installed in the widget sandbox are available.</p>
<p>When a widget sandbox has been activated, the SANDBOX variable is set to the path of the widget sandbox.</p>
</div></body></html>""",
    "tutorial/sandbox.html": """<html><head><title>Widget sandboxes</title></head><body><div role="main">
<h1>Widget sandboxes</h1><h2>Creating widget sandboxes</h2>
<p>The module used to create and manage widget sandboxes is called sandbox.</p>
<p>To create a widget sandbox, decide upon a directory where you want to place it, and run the sandbox module
as a script with the directory path:</p>
<pre>python3 -m sandbox tutorial-box</pre>
<p>This will create the tutorial-box directory if it does not exist.</p></div></body></html>""",
}


def test_how_to_answers_with_the_steps_for_the_goal_and_their_one_line_command(tmp_path: Path) -> None:
    # the tutorial's "To create a widget sandbox, ..., run ...:" and its one-line command answer the how-to;
    # the reference page's description of a sandbox shares more of the question's words
    docs = write_tree(tmp_path / "docs", SANDBOX_DOCS)
    report = run("How do I set up an isolated widget sandbox for a project?", docs, tmp_path).report
    answer = section(report, "Answer").strip()
    assert answer.startswith("To create a widget sandbox, decide upon a directory"), answer
    assert "```\npython3 -m sandbox tutorial-box\n```" in answer, answer
    assert_whole_sentences(report)


def test_the_tail_of_a_sentence_split_by_a_passage_boundary_is_no_claim(tmp_path: Path) -> None:
    # a paragraph that starts in the middle of a sentence ("are that ...") is a fragment, however relevant
    docs = write_tree(tmp_path / "docs", {"views.txt": "Stored views\n\n"
        "are that the stored view cannot be updated directly and that its stored query is kept.\n\n"
        "A stored view keeps the result of its query, and REFRESH updates the stored view.\n"})
    answer = answer_to("Can a stored view be updated directly?", docs, tmp_path)
    assert "are that" not in answer and "REFRESH updates the stored view" in answer, answer


def test_the_answer_quotes_the_best_sentences_of_distinct_passages(docs: Path, tmp_path: Path) -> None:
    result = run("Why do widgets share one theme object?", docs, tmp_path)
    prose = [line for line in section(result.report, "Answer").splitlines() if re.search(r"\[\d+\]$", line)]
    assert prose[0].startswith("Widgets share one theme object because")
    cited = [re.findall(r"\[(\d+)\]$", line)[0] for line in prose]
    assert 1 <= len(prose) <= 3 and len(set(cited)) == len(cited)  # never two sentences of one passage


INDEX_PAGE = ("<html><head><title>Index</title></head><body><div role='main'><h1>Index</h1><ul>{items}</ul>"
              "</div></body></html>")


def test_the_documentation_index_leads_to_a_passage_worded_otherwise(docs: Path, tmp_path: Path) -> None:
    """The question says "duplicate a document"; the page says "clone a file", and only the
    documentation's own index entry ("duplicating documents") ties the two."""
    (docs / "library" / "shuttle.html").write_text(
        "<html><head><title>shuttle — moving things</title></head><body><div role='main'><h1>shuttle — moving "
        "things</h1><p>The shuttle module moves things between disks.</p><hr id='index-0'/><h2>Cloning</h2>"
        "<p>Call shuttle.clone2() to copy a file together with its metadata.</p></div></body></html>")
    entries = sorted([(f"gizmo_{i:02d}() (in module gizmos)", f"library/widgets.html#g{i}") for i in range(34)]
                     + [("duplicating documents", "library/shuttle.html#index-0")], key=lambda e: e[0])
    (docs / "genindex.html").write_text(INDEX_PAGE.format(
        items="".join(f'<li><a href="{href}">{term}</a></li>' for term, href in entries)))
    result = run("How can I duplicate documents?", docs, tmp_path)
    answer = section(result.report, "Answer")
    assert "shuttle.clone2() to copy a file" in answer, result.report
    assert "genindex.html" not in result.report  # an index page is never quoted or cited


def test_a_version_of_the_product_no_release_notes_cover_is_not_found(docs: Path, tmp_path: Path) -> None:
    for version, change in (("2.0", "Widgets 2.0 adds themes to every widget."),
                            ("2.1", "Widgets 2.1 draws each widget twice as fast. Old themes will be "
                                    "removed in Widgets 2.4.")):  # 2.4 is mentioned, in passing
        (docs / "whatsnew").mkdir(exist_ok=True)
        (docs / "whatsnew" / f"{version}.html").write_text(
            f"<html><head><title>What's New In Widgets {version}</title></head><body><div role='main'>"
            f"<h1>What's New In Widgets {version}</h1><p>{change}</p><p>Widgets keep their state.</p></div></body></html>")
    result = run("What changed in Widgets 2.4, and how do I enable it?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "Widgets 2.4" in result.report
    assert "do not answer this question" not in run("What changed in Widgets 2.1?", docs, tmp_path / "b").report


def test_a_comparisons_query_naming_both_things_asks_for_passages_where_they_meet(docs: Path, tmp_path: Path) -> None:
    """Only the query naming the sibling's entity too asks for every word: passages about one entity alone are
    each sibling's own search (the sibling overlap of bench/bench_quality.py)."""
    result = run("What is the difference between a widget and a gadget?", docs, tmp_path)
    run_ = read_run(result.run_dir)
    subs = [a for a in run_.trace.ordered_agents() if a.delegation is not None and a.round == 1]
    assert len(subs) == 2, [a.delegation.objective for a in subs]
    calls = [(a.agent_id, r.event.input) for a in subs for r in a.records
             if getattr(r.event, "kind", "") == "tool_call" and r.event.name == "search_corpus"]
    every = [args["query"] for _, args in calls if args.get("match") == "all"]
    assert every and all({"widget", "gadget"} <= set(q.lower().split()) for q in every), calls
    assert all(args.get("match") != "all" for _, args in calls if len(set(args["query"].lower().split())
                                                                       & {"widget", "gadget"}) < 2), calls


def test_a_subagent_searches_again_with_words_its_best_results_share(docs: Path, tmp_path: Path) -> None:
    """Pseudo-relevance feedback: one more query, the subject plus words the best candidates share."""
    question = "How do I copy a widget with its children?"
    result = run(question, docs, tmp_path)
    trace = read_run(result.run_dir).trace
    sub = next(a for a in trace.ordered_agents() if a.delegation is not None)
    searches = [r.event.input["query"] for r in sub.records
                if getattr(r.event, "kind", "") == "tool_call" and r.event.name == "search_corpus"]
    extra = [q for q in searches if q not in sub.delegation.queries]
    assert len(extra) == 1, searches
    new_words = set(extra[0].lower().split()) - set(re.findall(r"\w+", question.lower())) - {"widgets"}
    assert new_words, extra  # words from the results, not from the question
    text = " ".join(f"{s.title} {s.text}" for s in read_run(result.run_dir).sources).lower()
    assert all(w in text for w in new_words)  # (titles and texts of what the searches returned)


def _notes(docs: Path, n: int) -> None:
    """`n` one-passage notes: a corpus large enough for a word it lacks to say something."""
    (docs / "notes").mkdir()
    for i in range(n):
        (docs / "notes" / f"n{i:04d}.txt").write_text(f"Note {i}\n\nThe register {i} holds a value and its flag.\n")


def test_a_word_the_documents_never_use_makes_the_question_not_found(docs: Path, tmp_path: Path) -> None:
    """"copy" and "widget" are documented; "gizmoflux" is no word of the corpus: the question is about
    something else, however well its other words match."""
    _notes(docs, 1000)
    result = run("How do I copy a widget with gizmoflux?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "never use the word gizmoflux" in result.report
    # the user's own wording of the action ("how do I zorble …") or a verb's -ing form is no such thing
    for i, question in enumerate(("How do I zorble a widget together with its children?",
                                  "How do I copy a widget with its children when blorping?",
                                  "Why does my widget zorble its children when I copy it deep?")):
        report = run(question, docs, tmp_path / f"ok{i}").report
        assert "do not answer this question" not in report, report
        assert "clone() with deep=True" in report


def test_a_part_of_a_question_asks_within_the_thing_its_other_part_names(docs: Path, tmp_path: Path) -> None:
    # "How do I record versions in an renv lockfile, and how does a colleague then restore them?": the second part
    # names renv no more, but asks within it; before, its quotes on restoring made the report answer a question about
    # a tool the documents never name
    _notes(docs, 1000)
    question = "How do I draw a widget on a gizmoflux screen, and how do I then copy a widget together with its children?"
    assert len(asks(question)) == 2
    report = run(question, docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "mentions gizmoflux" in report or "never use the word gizmoflux" in report
    answer = answer_to(question.replace("a gizmoflux screen", "the screen"), docs, tmp_path / "ok")
    assert "clone() with deep=True" in answer, answer


@pytest.mark.parametrize("counts, lacked", [({"zorblin": 0}, True),  # the corpus never uses it: it lacks it
                                             ({"zorblin": 1}, True),  # mentioned in passing only
                                             ({"zorblin": 60}, False)])  # used often: this retrieval missed it
def test_a_question_in_parts_lacks_a_name_the_corpus_lacks_not_one_its_retrieval_missed(counts, lacked) -> None:
    from subagents.models.extractive import lacks_what_it_names

    question = "How do I draw a gadget on a Zorblin screen, and how do I then copy a gadget deeply?"
    ev = _searched(question, "To copy a gadget deeply, copy its children first.", counts, {"zorblin": 0})
    assert lacks_what_it_names(focus_of(question), ev) is lacked


def _mentioned_once(docs: Path, sentence: str) -> None:
    """A corpus large enough to tell (`_notes`), one note of which mentions a name in passing."""
    _notes(docs, 1000)
    (docs / "notes" / "n0000.txt").write_text(f"Note 0\n\n{sentence}\n")


def _not_found_for_a_name_in_passing(question: str, name: str, docs: Path, tmp_path: Path) -> None:
    report = run(question, docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer") and f"{name} only in passing" in report, report


def test_a_lower_case_tool_name_the_documents_mention_in_passing_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "zorbtool" is no English word (wordfreq) and one note mentions it: a tool the documents do not cover,
    # however well "copy", "widget" and "children" match; too few of the question's words for `unknown_words`
    _mentioned_once(docs, "The zorbtool register holds a value and its flag.")
    question = "How do I copy a widget together with its children and its deep state using zorbtool?"
    _not_found_for_a_name_in_passing(question, "zorbtool", docs, tmp_path)
    report = run(question.replace("zorbtool", "the register"), docs, tmp_path / "ok").report  # English: asked
    assert "clone() with deep=True" in report, report


def test_an_english_word_naming_the_package_of_an_api_the_documents_mention_in_passing_is_not_found(
        docs: Path, tmp_path: Path) -> None:
    # "pandas groupby": pandas is English (the animal), but right before an API's name that is no English word
    # it names the package asked about; the documents mention "otter" once, in passing, and document clonetree
    _mentioned_once(docs, "The otter register holds a value and its flag.")
    (docs / "library" / "trees.html").write_text(
        "<html><head><title>trees — widget trees</title></head><body><div role='main'><h1>trees — widget trees</h1>"
        "<h2>clonetree</h2><p>The clonetree() function copies a widget together with all of its children.</p></div></body></html>")
    _not_found_for_a_name_in_passing("How do I use otter clonetree to copy a widget with its children?", "otter",
                                     docs, tmp_path)
    for i, question in enumerate(("How do I use clonetree to copy a widget with its children?",
                                  "How do I use clonetree to copy an otter widget with its children?")):
        report = run(question, docs, tmp_path / f"ok{i}").report  # not before a name that is no English: asked
        assert "clonetree() function copies a widget" in section(report, "Answer"), report



def test_a_tool_the_asker_does_without_is_not_what_they_ask_about(docs: Path, tmp_path: Path) -> None:
    # "I'd rather not add pytz as a dependency": they ask for what the documents give instead; before, "No retrieved
    # passage mentions pytz" was the whole report. Asked to use it, it is still not found
    _mentioned_once(docs, "The zorbtool register holds a value and its flag.")
    for i, question in enumerate(("How do I copy a widget together with its children without zorbtool?",
                                  "How do I copy a widget together with its children, not using zorbtool?")):
        report = run(question, docs, tmp_path / f"ok{i}").report
        assert "clone() with deep=True" in section(report, "Answer"), report
    _not_found_for_a_name_in_passing("How do I copy a widget together with its children with zorbtool?", "zorbtool",
                                     docs, tmp_path / "asked")


@pytest.mark.parametrize("question, declined", [
    ("I'd rather not add pytz as a dependency. What should I use?", True),
    ("How do I parse it without pytz?", True),
    ("We don't use pytz; what then?", True),
    ("What can I use instead of pytz?", True),
    ("How do I use pytz?", False),
    ("Should I use pytz, or not use pytz?", False),  # asked about once, declined once: asked
])
def test_a_name_is_declined_where_each_mention_says_the_asker_does_without_it(question: str, declined: bool) -> None:
    from subagents.extractive.undocumented import declined as is_declined

    assert is_declined(make_term("pytz", TermKind.WORD), question) is declined


def test_an_everyday_word_before_an_api_name_describes_it_and_names_no_package(docs: Path, tmp_path: Path) -> None:
    # "hundreds of tiny Rscript jobs": "tiny" says what the jobs are like (wordfreq: common English), unlike "otter
    # clonetree"; before, "No retrieved passage mentions tiny" was the whole report
    _mentioned_once(docs, "The tiny register holds a value and its flag.")
    (docs / "library" / "trees.html").write_text(
        "<html><head><title>trees — widget trees</title></head><body><div role='main'><h1>trees — widget trees</h1>"
        "<h2>clonetree</h2><p>The clonetree() function copies a widget together with all of its children.</p></div></body></html>")
    report = run("How do I use tiny clonetree calls to copy a widget with its children?", docs, tmp_path).report
    assert "clonetree() function copies a widget" in section(report, "Answer"), report

def test_a_human_language_named_in_passing_is_the_askers_setting_not_a_product(docs: Path, tmp_path: Path) -> None:
    # "my R session prints its messages in German", "a German locale": a language is no tool the documents lack,
    # however rarely they name it; another capitalised name mentioned once still is
    _mentioned_once(docs, "The German register holds a value and its flag.")
    (docs / "notes" / "n0001.txt").write_text("Note 1\n\nThe Zorbian register holds a value and its flag.\n")
    report = run("My widget labels are in German. How do I copy a widget together with its children?", docs,
                 tmp_path).report
    assert "clone() with deep=True" in section(report, "Answer"), report
    _not_found_for_a_name_in_passing("My widget labels are in Zorbian. How do I copy a widget together with its "
                                     "children?", "Zorbian", docs, tmp_path / "other")


def test_a_name_mentioned_in_passing_by_the_answering_sentence_itself_is_documented(docs: Path, tmp_path: Path) -> None:
    # "(an upsert)": the documents name UPSERT once, as the name of what the sentence of INSERT's ON CONFLICT clause
    # describes, which answers: a name given where the answer is, is no passing mention
    _notes(docs, 1000)
    page = docs / "library" / "widgets.html"
    page.write_text(page.read_text().replace(
        "<p>To copy a widget together with its children, call clone() with deep=True:</p>",
        "<p>Copying a widget together with all of its children is also known as a zorbcopy.</p>"
        "<p>To copy a widget together with its children, call clone() with deep=True:</p>"))
    question = "How do I copy a widget together with all of its children (a zorbcopy)?"
    report = run(question, docs, tmp_path).report
    assert "clone() with deep=True" in section(report, "Answer"), report
    # a sentence that only refers to it does not say what it is ("see the Django documentation" for "a Django model")
    page.write_text(page.read_text().replace("is also known as a zorbcopy", "is shown in the zorbcopy guide"))
    _not_found_for_a_name_in_passing(question, "zorbcopy", docs, tmp_path / "elsewhere")


def test_a_package_named_with_a_number_the_documents_link_in_passing_is_not_found(docs: Path, tmp_path: Path) -> None:
    # letters then digits name a package ("ggplot2"); one note links it in passing: "plotkit2 (https://…)" is a
    # link, no call with its arguments (an entry of the documentation)
    _mentioned_once(docs, "Widgets can also be drawn with the plotkit2 (https://example.org/plotkit2) package.")
    _not_found_for_a_name_in_passing("How do I copy a widget with its children in plotkit2?", "plotkit2", docs, tmp_path)


def test_a_name_qualified_by_its_package_is_documented_by_its_own_name_unless_the_package_is_unknown(
        docs: Path, tmp_path: Path) -> None:
    """"widgets::clone()" (R's and C++'s "::") is the clone() the widgets module documents; "tiger::clone" is a
    clone of a package no passage names, whatever the documents say of their own clone()."""
    _notes(docs, 1000)
    answer = answer_to("What does widgets::clone() do?", docs, tmp_path)
    assert answer.strip().startswith("Return a copy of the widget"), answer
    report = run("How do I copy a widget together with all its children and their state using tiger::clone?", docs, tmp_path / "no").report
    assert "do not answer this question" in section(report, "Answer") and "tiger::clone" in report, report

def test_a_comparison_with_a_name_the_documents_never_contain_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "Zorblax" is in no passage: the documents cannot set it apart from widget drawing, and the widget row
    # alone would be an answer to another question
    report = run("What is the difference between Zorblax and widget drawing?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No retrieved passage mentions Zorblax." in report
    report = run("What is the difference between a gadget and widget drawing?", docs, tmp_path / "both").report
    assert "do not answer this question" not in section(report, "Answer"), report


def test_a_name_qualified_by_a_package_the_documents_mention_only_in_passing_is_not_found(
        docs: Path, tmp_path: Path) -> None:
    # "tiger.clone": one note mentions tiger in passing (no title names it), so the clone() the widgets module
    # documents is not tiger's, as with a package no passage names
    _mentioned_once(docs, "Some teams draw widgets with tiger on their laptops.")
    report = run("How do I copy a widget together with all its children and their state using tiger.clone?", docs,
                 tmp_path).report
    assert "do not answer this question" in section(report, "Answer") and "tiger.clone" in report, report
    answer = answer_to("What does widgets.clone() do?", docs, tmp_path / "own")
    assert "do not answer this question" not in answer, answer


def test_a_package_named_by_an_adverb_is_a_name_the_documents_must_title(docs: Path, tmp_path: Path) -> None:
    # "the here package" (R's): no English puts an adverb between "the" and "package", so "here" names one, which
    # no title or heading of these documents does; "the same package" names none
    report = run("How do I copy a widget with its children using the here package?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer") and "mentions here" in report, report
    report = run("How do I copy a widget with its children using the same package?", docs, tmp_path / "same").report
    assert "do not answer this question" not in section(report, "Answer"), report


def test_a_graded_adjective_before_framework_names_no_product(docs: Path, tmp_path: Path) -> None:
    # "the older framework" (R's installer removing the earlier R.framework): which framework, not one named "older";
    # before, "older" was a library no heading names and the question was not found
    for word in ("older", "newest", "bigger"):
        report = run(f"How do I copy a widget with its children when the {word} framework is installed?", docs,
                     tmp_path / word).report
        assert "clone() with deep=True" in section(report, "Answer"), report
    report = run("How do I copy a widget with its children when the zorbic framework is installed?", docs,
                 tmp_path / "named").report
    assert "do not answer this question" in section(report, "Answer"), report  # a name: no heading has it


def test_an_ordinal_before_module_names_no_product(docs: Path, tmp_path: Path) -> None:
    # "the second one needs … the first module" (which of the asker's two): before, "first" and "second" were
    # libraries no heading names, mentioned in passing, and the question was not found
    report = run("My app has two modules and the second module draws what the first module builds. How do I copy "
                 "a widget with its children?", docs, tmp_path).report
    assert "clone() with deep=True" in section(report, "Answer"), report


def test_a_keyword_in_capitals_after_a_name_makes_no_compound_name(docs: Path, tmp_path: Path) -> None:
    # "a Zorblang FOR loop" is Zorblang's loop: before, "Zorblang FOR" was a name of two words no text holds
    (docs / "porting.txt").write_text("Porting from Zorblang\n\nZorblang counts a FOR loop with REVERSE down from the "
                                      "second bound to the first, while widget scripts count down from the first bound "
                                      "to the second, so the bounds are swapped when porting.\n")
    answer = answer_to("When porting a Zorblang FOR loop that counts down with REVERSE, how are the two bounds treated "
                       "differently?", docs, tmp_path)
    assert "bounds are swapped" in answer, answer
    answer = answer_to("When porting a Zorblang Turbo FOR loop that counts down with REVERSE, how are the two bounds "
                       "treated differently?", docs, tmp_path / "turbo")
    assert "do not answer" in answer, answer  # names still join each other: no text holds "Zorblang Turbo"


@pytest.mark.parametrize("scene", [
    "I wrote a widget.copy_tree method that copies a widget, and a colleague says it loses the children.",
    "I keep a per-window value like app.copy_depth that says how deep to copy, and the children still get lost.",
])
def test_a_name_the_asker_made_is_their_own_not_an_undocumented_name(scene: str, docs: Path, tmp_path: Path) -> None:
    # the asker's own method ("wrote a summary.survey method") or value ("a per-session value like
    # app.current_tenant"): the documents never write it, the asking sentence does not name it
    answer = answer_to(f"{scene} How do I copy a widget with its children?", docs, tmp_path)
    assert "clone() with deep=True" in answer, answer
    # told as something the asker uses, not made, the same name is one the documents lack
    answer = answer_to("I call widget.copy_tree to copy a widget, and the children get lost. How do I copy a widget "
                       "with its children?", docs, tmp_path / "uses")
    assert "do not answer" in answer, answer


def test_a_name_the_asker_made_is_set_aside_only_where_the_corpus_never_writes_it() -> None:
    from subagents.extractive.undocumented import set_aside

    focus = focus_of("I wrote a widget.copy_tree method that copies widgets, and the children get lost. How do I copy "
                     "a widget with its children?")
    name, = [t for t in focus.question.terms if t.text == "widget.copy_tree"]
    assert set_aside(name, focus, Weights(passages=10_000, df={name.key: 0}))
    # a name the corpus writes is the documents' thing, whoever says they made one
    assert not set_aside(name, focus, Weights(passages=10_000, df={name.key: 3}, titled={name.key: 0}))


def test_a_name_mentioned_under_the_heading_of_another_asked_name_is_covered_there(docs: Path, tmp_path: Path) -> None:
    # "FoxPro" is mentioned once, in the section "dBase files (DBF)", and the question asks "a FoxPro .dbf table":
    # the documents cover it as a kind of what they document there. The same mention in a note under no such
    # heading is one in passing: a tool the documents leave undocumented
    _notes(docs, 1000)
    question = "How can I load an old Zorbix .gdf table as a data frame?"
    (docs / "gdf.txt").write_text("Reading GDF files (.gdf)\n\nTables written by Zorbix and its clones use the .gdf "
                                  "format. To load a .gdf table as a data frame, call read_gdf() on its path.\n")
    report = run(question, docs, tmp_path).report
    assert "read_gdf()" in section(report, "Answer"), report
    # the tool the question asks to do it with ("install PostgreSQL with Homebrew on macOS") must be documented
    report = run("How can I load a .gdf table as a data frame with Zorbix?", docs, tmp_path / "with").report
    assert "do not answer this question" in section(report, "Answer") and "Zorbix only in passing" in report, report
    (docs / "gdf.txt").write_text("Reading GDF files (.gdf)\n\nTo load a .gdf table as a data frame, call read_gdf() "
                                  "on its path.\n")
    (docs / "notes" / "n0001.txt").write_text("Note 1\n\nSome teams keep tables in Zorbix on their laptops.\n")
    report = run(question, docs, tmp_path / "passing").report
    assert "do not answer this question" in section(report, "Answer") and "Zorbix only in passing" in report, report


def test_a_description_under_the_identifier_it_describes_is_quoted_with_it(docs: Path, tmp_path: Path) -> None:
    # a list of variables: the description alone ("If set, limits how deep …") does not say which one it is
    (docs / "variables.html").write_text(
        "<html><head><title>Environment variables</title></head><body><div role='main'><h1>Environment variables</h1>"
        "<dl><dt>WIDGET_DEPTH_LIMIT</dt><dd><p>If set, limits how many levels of children a deep copy of a widget "
        "goes down.</p></dd><dt>WIDGET_THEME</dt><dd><p>If set, names the theme every new widget starts with.</p>"
        "</dd></dl></div></body></html>")
    answer = answer_to("Which environment variable limits how many levels of children a deep widget copy goes down?",
                       docs, tmp_path)
    assert "WIDGET_DEPTH_LIMIT: If set, limits how many levels" in answer, answer


def test_a_sentence_whose_subject_is_a_pronoun_is_quoted_with_the_entry_it_belongs_to(docs: Path,
                                                                                     tmp_path: Path) -> None:
    # R's reference manual: "Sys.setFileTime Set File Time > Details": "On a POSIX file system it sets both …"
    (docs / "reference.md").write_text("# zorb.setTime Set Widget Time\n\n## Details\n\nOn a POSIX system it sets "
                                       "both the access and the modification time of a widget's saved file.\n")
    answer = answer_to("How can I set the modification time of a widget's saved file?", docs, tmp_path)
    assert "zorb.setTime: On a POSIX system it sets both" in answer, answer


def test_a_documented_name_only_a_storys_scene_holds_need_not_be_in_the_quoted_sentences(docs: Path,
                                                                                       tmp_path: Path) -> None:
    # "I need to turn integer IDs such as 7 and 42 into fixed-width codes … How can I pad numbers with zeros in
    # front?": the scene's name says where the need arose; the sentences answering the ask need not name it
    (docs / "zorbix.txt").write_text("Zorbix\n\nZorbix is the drawing server that widgets run on. Zorbix keeps one "
                                     "window per screen.\n")
    scene = "With Zorbix, the application draws every widget and keeps its state."
    report = run(f"{scene} How do I copy a widget together with the children of the widget?", docs, tmp_path).report
    assert "clone() with deep=True" in section(report, "Answer"), report
    # asked of the name, the answer must name it: the sentences about copying a widget do not
    report = run("How do I copy a widget together with the children of the widget with Zorbix?", docs,
                 tmp_path / "asked").report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No sentence close enough to quote mentions Zorbix." in report, report


@pytest.mark.parametrize("question, text, unwritten, answered, name", [
    # R's `*tmp*`: the manual writes it in other quotes ("‘*tmp*‘"), whose text reads as "tmp*"; it was "No retrieved
    # passage mentions *tmp*" for a passage saying what becomes of it. Inside a longer name ("*zorb*x") it is not there
    ("Why did my variable named `*zorb*` vanish after a replacement function call?",
     "Replacement functions and *zorb*\n\nAny existing variable called ‘*zorb*‘ is overwritten and deleted by a "
     "replacement function call.\n",
     "Replacement functions and *zorb*x\n\nAny existing variable called ‘*zorb*x‘ is overwritten and deleted by a "
     "replacement function call.\n", "overwritten and deleted", "*zorb*"),
    # cmd.Cmd's "do_*() method": a program's own `do_deploy` is one of the family the documents describe; a family the
    # documents do not write is no cover (asked in one sentence: told apart, in a scene, it is the asker's own name)
    ("What runs when an empty line is entered in my command shell with do_deploy and do_status?",
     "Command shells\n\nThe shell runs the do_*() method named after the command that was typed, and calls "
     "emptyline() when an empty line is entered.\n",
     "Command shells\n\nThe shell runs the method named after the command that was typed, and calls emptyline() "
     "when an empty line is entered.\n", "emptyline()", "do_deploy"),
])
def test_a_name_is_mentioned_as_the_documents_write_it(question: str, text: str, unwritten: str, answered: str,
                                                       name: str, docs: Path, tmp_path: Path) -> None:
    (docs / "entry.txt").write_text(text)
    answer = answer_to(question, docs, tmp_path)
    assert answered in answer, answer
    (docs / "entry.txt").write_text(unwritten)
    report = run(question, docs, tmp_path / "unwritten").report
    assert "do not answer this question" in section(report, "Answer") and name in report, report


def test_a_lower_case_compound_a_heading_spells_out_describes_the_module(docs: Path, tmp_path: Path) -> None:
    # "Which function in the complex-math module gives me the angle?": cmath's title is "Mathematical functions for
    # complex numbers"; the compound says what the module is about, it names no product the documents lack
    (docs / "zmath.txt").write_text("zmath: Geometry of widgets\n\nzmath.angle(w) returns the angle of "
                                    "a widget in radians.\n")
    question = "Which function in the widget-geometry module gives the angle of a widget in radians?"
    assert "zmath.angle(w)" in answer_to(question, docs, tmp_path)
    # a part no heading opens a word with is a name: "zorbix-geometry" is not documented
    report = run(question.replace("widget-geometry", "zorbix-geometry"), docs, tmp_path / "named").report
    assert "do not answer this question" in section(report, "Answer") and "zorbix-geometry" in report, report


def test_a_value_inside_a_quoted_instance_is_the_askers_data(docs: Path, tmp_path: Path) -> None:
    # "a string like 'session=abc123; theme=dark'": abc123 is the asker's data, not a name the documents must hold
    (docs / "cookies.txt").write_text("Cookies\n\nparse_cookie() splits a raw Cookie header into a dictionary of "
                                      "names and values, and handles quoted values.\n")
    question = ("My app gets the raw Cookie header as a string like 'session=zq123; theme=dark'. How do I split "
                "the header into names and values?")
    result = run(question, docs, tmp_path)
    assert "parse_cookie()" in section(result.report, "Answer"), result.report
    assert "mentions zq123" not in result.report and "gap round" not in result.report, result.report  # nor a gap round
    # the same string given as the one to split, not as an instance, is the question's own: not found
    report = run("How do I split the Cookie header 'session=zq123; theme=dark' into names and values?", docs,
                 tmp_path / "asked").report
    assert "do not answer this question" in section(report, "Answer"), report


def test_a_capitalised_english_name_the_documents_mention_in_passing_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "Homebrew", "Snowflake", "Oracle": English words, but capitalised in the question they name a product; one
    # note mentions Homebrew in passing, no title or heading does (Widget, the other name, is documented)
    _mentioned_once(docs, "Some teams copy widgets with Homebrew on their laptops.")
    question = "How do I copy a Widget together with its children with Homebrew?"
    _not_found_for_a_name_in_passing(question, "Homebrew", docs, tmp_path)
    # titled by a page, the same name is documented
    (docs / "homebrew.txt").write_text("Homebrew\n\nWith Homebrew, a widget is copied with its children by "
                                       "brew-clone.\n")
    report = run(question, docs, tmp_path / "titled").report
    assert "do not answer this question" not in report, report


def test_a_capitalised_hyphenated_name_no_passage_mentions_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "Gizmo-Tools" is written as a name inside the sentence (a capital, not the sentence's): the question is
    # about that tool, however well "copy", "widget" and "children" match
    report = run("How do I copy a widget together with its children in Gizmo-Tools?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No retrieved passage mentions Gizmo-Tools." in report
    report = run("Copy-deep: how do I copy a widget together with its children?", docs, tmp_path / "first").report
    assert "clone() with deep=True" in section(report, "Answer"), report  # the sentence's capital names nothing


def test_a_major_version_of_the_corpus_product_no_passage_names_is_not_found(tmp_path: Path) -> None:
    # Gizmo is the corpus's own product; its notes cover release 4, and chapter 5 titles a heading: "Gizmo 5"
    # is a release the documents never name, however well "released" matches
    pages = {f"chapter{i}.txt": f"Chapter {i}. Gizmo part {i}\n\nGizmo draws widget number {i} and keeps its "
                                 f"state between events.\n" for i in range(1, 7)}
    pages["release4.txt"] = ("Release 4\n\nGizmo 4 was released in spring; it added deep copies of widgets. "
                             "Gizmo 4 is released under the same licence as Gizmo 3.\n")
    docs = write_tree(tmp_path / "docs", pages)
    report = run("When will Gizmo 5 be released?", docs, tmp_path / "five").report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No retrieved passage mentions Gizmo 5." in report
    # told in a story's scene, a version still says which documents would answer
    report = run("We upgraded every desk to Gizmo 5 last week. How do I make deep copies of widgets?", docs,
                 tmp_path / "told").report
    assert "do not answer this question" in section(report, "Answer") and "Gizmo 5" in report, report
    report = run("When was Gizmo 4 released?", docs, tmp_path / "four").report
    assert "do not answer this question" not in report and "Gizmo 4 " in section(report, "Answer"), report


def test_a_long_decimal_in_the_question_is_a_value_not_a_version(tmp_path: Path) -> None:
    # "0.30000000000000004" is what the user saw printed: the documents explain it without that literal
    docs = write_tree(tmp_path / "docs", {"floats.txt": "Floating point arithmetic\n\nBinary floating point cannot "
                      "represent 0.1 exactly, so adding 0.1 and 0.2 gives a sum slightly above 0.3.\n",
                      "other.txt": "Colours\n\nThis page is about colours and nothing else.\n"})
    report = run("Why does adding 0.1 and 0.2 give 0.30000000000000004 instead of 0.3?", docs, tmp_path).report
    assert "cannot represent 0.1 exactly" in section(report, "Answer"), report
    # a fraction of one is a value too ("jumped from 0.3 to 0.95"), unless a name or "version" comes before it
    (docs / "fit.txt").write_text("Fit scores\n\nWithout an intercept the fit score is measured against zero, not "
                                  "against the mean, so it comes out higher.\n")
    report = run("My fit score jumped from 0.3 to 0.95 when I dropped the intercept. Why?", docs, tmp_path / "fit").report
    assert "measured against zero" in section(report, "Answer"), report
    report = run("Why did the fit score change in Gizmo 0.3?", docs, tmp_path / "gizmo").report
    assert "do not answer this question" in section(report, "Answer"), report


def test_sentences_that_name_none_of_the_names_asked_about_answer_something_else(docs: Path, tmp_path: Path) -> None:
    # a page titles Gadgetscript (documented, not in passing), but no sentence close to the question names it:
    # the widget sentences answer how to copy a widget, not how to do it in Gadgetscript
    (docs / "gadgetscript.txt").write_text("Gadgetscript\n\nGadgetscript is a scripting language that draws "
                                           "gadgets on a canvas.\n")
    report = run("How do I copy a widget together with its children in Gadgetscript?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No sentence close enough to quote mentions Gadgetscript." in report
    # a name the answer is for ("for Gadgetscript") is a purpose, not what is asked about
    report = run("How do I copy a widget together with its children for Gadgetscript?", docs, tmp_path / "for").report
    assert "clone() with deep=True" in section(report, "Answer"), report
    # a name of one letter ("From C I'm building a record type …", "a multithreaded C service") is no sign: an API's
    # pages speak of its language without writing it in each sentence
    (docs / "g.txt").write_text("G\n\nG is a scripting language that draws gadgets on a canvas.\n")
    report = run("How do I copy a widget together with its children in G?", docs, tmp_path / "letter").report
    assert "clone() with deep=True" in section(report, "Answer"), report
    # where a sentence writes it, it is still the sign that the sentences answer what is asked ("I call a C routine …
    # and pressing Ctrl-C does nothing …" is answered by the sentence on C code's interrupts)
    (docs / "loops.txt").write_text("Interrupts\n\nA long G routine becomes stoppable when its loop calls "
                                    "check_interrupt() now and then.\n")
    (docs / "keys.txt").write_text("Keyboard\n\nThe console reads Zap-Q as a request to interrupt.\n")
    report = run("I run a G routine with a long loop, and pressing Zap-Q does nothing until it ends. How can I make it "
                 "stoppable?", docs, tmp_path / "letter-said").report
    assert "check_interrupt()" in section(report, "Answer"), report


def test_a_later_part_is_asked_in_the_name_the_whole_question_opens_in(docs: Path, tmp_path: Path) -> None:
    # "In JavaScript, what's the equivalent of asyncio.gather …? And does it reject as soon as one of them fails?":
    # the second part asks of JavaScript too; before, it was answered from gather()'s own entry
    (docs / "gadgetscript.txt").write_text("Gadgetscript\n\nGadgetscript is a scripting language that draws "
                                           "gadgets on a canvas.\n")
    report = run("In Gadgetscript, how do I copy a widget? And does clone keep the children?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No sentence close enough to quote mentions Gadgetscript." in report, report
    # asked without that opening, the parts are about widgets, which the widget sentences answer
    report = run("How do I copy a widget? And does clone keep the children?", docs, tmp_path / "own").report
    assert "children are copied as well" in section(report, "Answer"), report


def test_a_comparison_made_in_a_name_no_passage_mentions_is_not_found(docs: Path, tmp_path: Path) -> None:
    # each compared thing is documented; the comparison is asked in Zorbscript, which no passage mentions
    report = run("What is the difference between widgets and gadgets in Zorbscript?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No retrieved passage mentions Zorbscript." in report
    report = run("What is the difference between widgets and gadgets?", docs, tmp_path / "plain").report
    assert "whereas widgets keep state" in section(report, "Answer"), report


def test_a_users_word_the_documents_say_otherwise_is_searched_and_covered_in_their_words(tmp_path: Path) -> None:
    # the documents say "temporary directory" (many passages) and "folder" once: "a scratch folder" is asked
    # in their words too, and their sentence answers it
    pages = {f"dirs/d{i}.txt": f"Directory {i}\n\nThe directory {i} holds widget files in a temporary tree.\n"
             for i in range(12)}
    pages["tempdir.txt"] = ("Temporary directories\n\nTemporaryDirectory() creates a temporary directory; the "
                            "directory and everything in it are removed when the context ends.\n")
    pages["mail.txt"] = "Mail\n\nA mail folder keeps messages.\n"
    docs = write_tree(tmp_path / "docs", pages)
    report = run("How do I get a scratch folder that disappears when I am done with it?", docs,
                 tmp_path / "run").report
    assert "TemporaryDirectory() creates a temporary directory" in section(report, "Answer"), report


def test_a_users_word_the_documents_say_otherwise_is_searched_in_their_words(tmp_path: Path) -> None:
    # the corpus says "folder" in under 1% of its passages and "directory" in five times as many: the question is
    # searched in the documents' words too
    pages = {f"notes/n{i:04d}.txt": f"Note {i}\n\nThe register {i} holds a value and its flag.\n" for i in range(1000)}
    pages |= {f"mail/m{i}.txt": f"Mail folder {i}\n\nThe scratch mail folder {i} disappears when you are done "
                                f"reading it.\n" for i in range(8)}
    pages |= {f"dirs/d{i}.txt": f"Directory {i}\n\nThe directory {i} holds widget files.\n" for i in range(40)}
    pages["tempdir.txt"] = ("Temporary directories\n\nTemporaryDirectory() creates a temporary directory; the "
                            "directory and everything in it are removed when the context ends.\n")
    docs = write_tree(tmp_path / "docs", pages)
    result = run("How do I get a scratch folder that disappears when I am done with it?", docs, tmp_path / "run")
    events = [r.event for a in read_run(result.run_dir).trace.ordered_agents() for r in a.records]
    searched = {e.id: e.input["query"] for e in events if getattr(e, "kind", "") == "tool_call"
                and e.name == "search_corpus"}
    reworded = [q for q in searched.values() if "temporary directory" in q]
    assert reworded and all("scratch" not in q and "folder" not in q for q in reworded), searched
    # (whether that retrieves more than the question's words did is measured: bench/bench_quality.py, py-006)


def test_a_users_word_is_said_otherwise_only_where_the_corpus_prefers_the_other_word() -> None:
    from subagents.extractive.terms import TermKind, Weights, make_term
    from subagents.extractive.vocabulary import prefers, reworded

    folder = make_term("folder", TermKind.WORD)
    says_directory = Weights(passages=10_000, df={"folder": 13, "directory": 710, "scratch": 20, "temporary": 100})
    assert [t.text for t in prefers(folder, says_directory)] == ["directory"]
    assert reworded("scratch folder deleted", [make_term("scratch", TermKind.WORD), folder],
                    says_directory) == "temporary directory deleted"
    says_folder = Weights(passages=10_000, df={"folder": 400, "directory": 500})  # a corpus that says "folder"
    assert prefers(folder, says_folder) == [] and reworded("folder deleted", [folder], says_folder) == ""


def test_a_word_a_small_corpus_lacks_does_not_decide(docs: Path, tmp_path: Path) -> None:
    report = run("How do I copy a widget with gizmoflux?", docs, tmp_path).report
    assert "do not answer this question" not in report and "clone() with deep=True" in report, report


def test_a_name_the_answer_does_not_mention_is_reported_as_uncovered_not_as_in_passing(docs: Path,
                                                                                    tmp_path: Path) -> None:
    result = run("Why do widgets share one theme object, unlike widgets.clone?", docs, tmp_path)
    sub = next(a for a in read_run(result.run_dir).trace.ordered_agents() if a.findings is not None)
    assert sub.findings.claims, result.report
    assert "No claim mentions widgets.clone." in sub.findings.open_questions
    assert sub.findings.status is FindingsStatus.PARTIAL
    assert not any("only in passing" in q for q in sub.findings.open_questions)


def test_a_navigation_bar_is_never_quoted(docs: Path, tmp_path: Path) -> None:
    """DocBook pages carry "Prev | Up | Next" bars in their text: cells, not a sentence of the answer."""
    (docs / "keys.txt").write_text("3.3. Foreign Keys\nPrev | Up | Chapter 3. Advanced Features | Home | Next\n\n"
                                   "A foreign key ties the values in a column to the rows of another table.\n\n"
                                   "Prev | Up | Next\n3.2. Foreign Views | Home | 3.4. Foreign Transactions\n")
    report = run("What is a foreign key?", docs, tmp_path).report
    assert "A foreign key ties the values in a column" in section(report, "Answer"), report
    assert "Home" not in report and "Prev" not in report, report


def test_a_synopsis_line_is_not_taken_for_a_sentence(docs: Path, tmp_path: Path) -> None:
    """"DROP GADGET [ IF EXISTS ] name [,...]" ends in a period inside brackets: syntax, not a sentence."""
    (docs / "drop.txt").write_text("DROP GADGET\n\nDROP GADGET [ IF EXISTS ] name [,...]\n\n"
                                   "DROP GADGET removes a gadget from the gadget registry of a widget.\n")
    report = run("How do I drop a gadget that may not exist?", docs, tmp_path).report
    prose = [ln for ln in (section(report, "Answer") + section(report, "Details")).splitlines()
             if re.search(r"\[\d+\]$", ln)]
    assert prose and not any("[,...]" in ln for ln in prose), report


def test_a_grammar_rule_above_a_sentence_is_no_term_it_defines(docs: Path, tmp_path: Path) -> None:
    """A glossary term right above a sentence marks its definition; a grammar production
    ("expression ::= conditional_expression | gizmo_expr") names no term the sentence below defines."""
    (docs / "expressions.txt").write_text(
        "Expressions\n\nexpression ::= conditional_expression | gizmo_expr\n"
        "Conditional expressions have the lowest priority of all operations.\n\n"
        "Gizmo expressions (sometimes called gizmo forms) are used to create anonymous gizmos.\n")
    answer = answer_to("What is a gizmo expression?", docs, tmp_path)
    first = next(ln for ln in answer.splitlines() if ln.strip())
    assert first.startswith("Gizmo expressions (sometimes called gizmo forms)"), answer


def test_a_numbered_contents_entry_or_a_signature_above_a_sentence_is_no_term_it_defines(docs: Path,
                                                                                          tmp_path: Path) -> None:
    """A page's contents ("11.2.6. Gizmo" last) right above its first paragraph, or a function's signature holding
    the word ("gizmo_page_type(page bytea)"), name no term the sentence below defines: the definition is the
    sentence that says what a gizmo is."""
    (docs / "types.txt").write_text(
        "Gizmo types\n\n11.2.5. Gadget\n11.2.6. Gizmo\nThe toolkit provides several gizmo kinds: round, square "
        "and flat.\n")
    (docs / "gizmos.txt").write_text("Introduction\n\nGizmo stands for General Isolated Zone Module. It keeps "
                                     "widgets apart.\n")
    answer = answer_to("What is a gizmo?", docs, tmp_path)
    first = next(ln for ln in answer.splitlines() if ln.strip())
    assert first.startswith("Gizmo stands for General Isolated Zone Module."), answer


def test_x_stands_for_opens_a_definition(docs: Path, tmp_path: Path) -> None:
    # an acronym's expansion defines it, as "X is" does: it comes before a sentence that only says what X is like
    (docs / "gizmos.txt").write_text("Introduction\n\nGizmo stands for General Isolated Zone Module. Because a "
                                     "gizmo is very small, scanning a gizmo adds little overhead to a widget.\n")
    answer = answer_to("What is a gizmo?", docs, tmp_path)
    first = next(ln for ln in answer.splitlines() if ln.strip())
    assert first.startswith("Gizmo stands for General Isolated Zone Module."), answer


def test_a_signature_holding_the_word_is_no_term_line_of_it() -> None:
    # PostgreSQL's function tables put "brin_page_type(page bytea) returns text" right above what the function
    # does: that line names brin_page_type, not BRIN, so the sentence below is no definition of BRIN
    from subagents.extractive.selection import names_as_term
    from subagents.extractive.terms import TermKind, make_term

    brin = make_term("BRIN", TermKind.NAME)
    assert not names_as_term(brin, "brin_page_type(page bytea) returns text")
    assert names_as_term(brin, "BRIN") and names_as_term(brin, "BRIN indexes")
    assert names_as_term(make_term("brin_page_type", TermKind.IDENT), "brin_page_type(page bytea) returns text")
    assert names_as_term(make_term("WAL", TermKind.NAME), "write-ahead log")  # an acronym spelled out


def test_a_numbered_contents_entry_is_no_sentence_to_quote() -> None:
    from subagents.extractive.evidence import Passage, units_of

    text = ("7.8. WITH Queries (Common Table Expressions)\nF.25.4. BRIN Functions\n"
            "WITH provides a way to write auxiliary statements.")
    said = [u.text for u in units_of(Passage("S1", "Queries", "Queries", text, True))]
    assert said == ["WITH provides a way to write auxiliary statements."], said


def test_a_sentence_whose_colon_the_pdf_lost_still_introduces_its_code() -> None:
    # R's manuals (PDF text): "… by calling from C" over "void R_CheckUserInterrupt(void);" had no colon, so the
    # sentence was no whole sentence and never a claim; its code is what a how-to answer needs
    from subagents.extractive.evidence import Passage, units_of

    text = ("Long loops cannot be stopped, so make them stoppable at suitable points by calling from C\n\n"
            "#include <gadget.h>\nvoid gadget_check(void);\n\n"
            "The gadgets are drawn in the order they were added to the screen\n\n"
            "#include <gadget.h>\nvoid gadget_draw(void);")
    units = units_of(Passage("S1", "Interrupts", "", text, True))
    said = {u.text: (u.intro, u.complete) for u in units if u.text[0].isupper()}
    assert said["Long loops cannot be stopped, so make them stoppable at suitable points by calling from C"] == (
        True, True), said
    # a cut sentence that does not lead on to what follows stays no claim
    assert said["The gadgets are drawn in the order they were added to the screen"] == (False, False), said


def test_the_answer_gives_back_the_colon_a_pdf_lost_before_the_code_it_introduces(docs: Path, tmp_path: Path) -> None:
    # R's manuals: "… by calling from C" over its code was quoted as it stood, a line that ends in no stop and reads
    # as cut, and the report's writer, which knows an introducing sentence by its colon, could part it from its code
    (docs / "interrupts.txt").write_text(
        "Interrupting gadget loops\n\n"
        "A long gadget loop cannot be interrupted, so make the gadget loop stoppable at suitable points by calling from C\n\n"
        "#include <gadget.h>\nvoid gadget_check(void);\n")
    answer = answer_to("How do I make a long gadget loop stoppable?", docs, tmp_path)
    assert re.search(r"stoppable at suitable points by calling from C: \[\d+\]\n```\n#include <gadget.h>", answer), answer


def test_a_line_of_code_is_quoted_as_code_not_as_a_sentence(docs: Path, tmp_path: Path) -> None:
    # PostgreSQL's "For example:" over "SELECT a.* FROM my_table AS a JOIN your_table AS b ON ..." (its "..." an
    # elision, no full stop), then "is valid SQL, but:" over a line ending in "AS c": both were quoted as prose
    (docs / "aliases.txt").write_text(
        "Gadget aliases\n\n"
        "When an alias is applied to the output of a gadget join, the alias hides the original gadget names. For example:\n\n"
        "SELECT a.* FROM gadgets AS a JOIN widgets AS b ON ...\n\n"
        "is valid SQL, but:\n\n"
        "SELECT a.* FROM (gadgets AS a JOIN widgets AS b ON ...) AS c\n\n"
        "is not valid; the gadget alias a is not visible outside the alias c.\n")
    report = run("Is a gadget alias visible outside a gadget join that has an alias of its own?", docs, tmp_path).report
    fenced = False
    for line in report.splitlines():
        fenced = fenced != line.startswith("```")
        assert fenced or "SELECT a.*" not in line, report  # (quoted, it is inside a code block)


def test_code_whose_lines_a_pdf_ran_together_is_code_not_a_sentence() -> None:
    # R's reference manual (PDF text): an example's lines come as one line, quoted as a long "sentence" of code
    from subagents.extractive.evidence import Passage, UnitKind, units_of

    text = ("Gadget settings are restored on exit.\n\n"
            "ex <- function() { old <- gadget_par(no.readonly = TRUE) # all settings on.exit(gadget_par(old)) } ex()\n\n"
            "retry <- 12 try(if(retry > 10) stop(\"too many\"))\n\n"
            "Examples follow. ## Alternatively, op <- gadget_par() # all of them ## then reset: gadget_par(op)\n\n"
            "The assignment x <- gadget_par() keeps the old settings in x.\n\n"
            "Nested gadget settings read as in {\"a\": {\"b\": 1}}, and the distance p <-> q is in pixels.")
    kinds = {u.text[:12]: u.kind for u in units_of(Passage("S1", "Gadgets", "Examples", text, True))}
    assert kinds == {"Gadget setti": UnitKind.SENTENCE, "ex <- functi": UnitKind.CODE, "retry <- 12 ": UnitKind.CODE,
                     "Examples fol": UnitKind.CODE,
                     "The assignme": UnitKind.SENTENCE, "Nested gadge": UnitKind.SENTENCE}, kinds


def test_a_session_a_prompt_opens_is_code_output_and_all() -> None:
    # a console session's output ("Thread-3 (process_request) app1 …") had been read as a sentence counting threads
    from subagents.extractive.evidence import Passage, UnitKind, units_of

    text = ("The log files show each thread.\n\n"
            "~/zorb-webapp$ python main.py\napp1 processed 51 requests\napp2 processed 49 requests\n\n"
            "$ zorb --version\nzorb 1.2\n\n"
            "~/zorb-webapp$ head -3 app1.log Thread-3 (process_request) app1 jim 192.168.3.21 POST started\n\n"
            "~ is the home directory.\nIt expands to the user's folder.")
    kinds = {u.text[:12]: u.kind for u in units_of(Passage("S1", "Logs", "Logs", text, True))}
    assert kinds == {"The log file": UnitKind.SENTENCE, "~/zorb-webap": UnitKind.CODE, "$ zorb --ver": UnitKind.CODE,
                     "~ is the hom": UnitKind.SENTENCE, "It expands t": UnitKind.SENTENCE}, kinds


def test_an_example_a_pdf_ran_together_is_shown_as_code(docs: Path, tmp_path: Path) -> None:
    # the how-to sentence's example, one long line in a PDF's text: the writer took it for prose (a bullet that ends in
    # no stop, so "cut"); the subagent had it as code
    (docs / "gadgets.txt").write_text(
        "Gadget settings\n\nTo restore gadget settings when a function exits, save them first and reset them on exit.\n\n"
        "ex <- function() { old <- gadget_par(no.readonly = TRUE) # all gadget settings which could be changed "
        "on.exit(gadget_par(old)) ## draw lots of gadgets } ex()\n")
    report = run("How do I restore gadget settings when my function exits?", docs, tmp_path).report
    assert "```\nex <- function() { old <- gadget_par(no.readonly = TRUE)" in report, report
    assert "- ex <- function()" not in report, report


def test_a_section_number_opens_a_title_and_a_version_still_ends_a_sentence() -> None:
    from subagents.extractive.evidence import split_sentences

    assert split_sentences("11.2.6. BRIN") == ["11.2.6. BRIN"]
    assert split_sentences("F.25.4. BRIN Functions") == ["F.25.4. BRIN Functions"]
    assert split_sentences("It came with Python 3.11. It is new.") == ["It came with Python 3.11.", "It is new."]


def test_a_footnote_reference_is_not_quoted_as_if_it_cited_a_source(docs: Path, tmp_path: Path) -> None:
    # Sphinx writes "… not by value. [2] This means …": quoted as it stood, the page's footnote "[2]" read as the
    # report's own citation of its second source
    (docs / "library" / "pickling.html").write_text(
        '<html><head><title>pickling widgets</title></head><body><div role="main"><h1>pickling widgets</h1>'
        '<p>Widgets are pickled by their fully qualified name, not by value. <a class="footnote-reference brackets" '
        'href="#id7" id="id1" role="doc-noteref"><span class="fn-bracket">[</span>2<span class="fn-bracket">]</span>'
        '</a> This means that only the name of a widget is pickled, never its state (for protocol 0) '
        '<a class="footnote-reference brackets" href="#id8" role="doc-noteref">[5]</a> or its theme.</p>'
        '</div></body></html>')
    answer = answer_to("Why is only the name of a widget pickled?", docs, tmp_path)
    assert "This means that only the name of a widget is pickled, never its state (for protocol 0) or its theme." \
        in answer, answer
    assert "[2] This means" not in answer and "[5] or" not in answer, answer


def test_a_compared_entity_needs_only_its_own_words_in_the_answering_sentence(docs: Path, tmp_path: Path) -> None:
    """The gizmo's subagent also carries the question's other words (timers, screens) as context: a sentence
    naming the gizmo alone still answers its part, as long as the whole question's words are elsewhere."""
    (docs / "gizmos.txt").write_text("Gizmos\n\nA gizmo is a stateless helper that a widget calls to measure text.\n")
    (docs / "timers.txt").write_text("Timers\n\nTimers fire at a fixed rate.\n")
    (docs / "screens.txt").write_text("Screens\n\nScreens show pixels.\n")
    result = run("Should I use a gizmo or a widget for timers on screens?", docs, tmp_path)
    table = section(result.report, "Answer")
    row = next(ln for ln in table.splitlines() if ln.startswith("| gizmo |"))
    assert "A gizmo is a stateless helper" in row, result.report


def test_a_function_documented_in_a_table_row_is_not_mentioned_in_passing(docs: Path, tmp_path: Path) -> None:
    """A function table (PostgreSQL's) gives no function a heading: the row that shows the function with its
    arguments is its entry, so the question about it is answered, not "mentioned only in passing"."""
    (docs / "functions.txt").write_text(
        "Gadget functions\n\nThe functions below operate on gadget values.\n\n"
        "gadget_set ( target gadget, path text ) → gadget Returns target with the item at path replaced.\n")
    report = run("What does gadget_set do?", docs, tmp_path).report
    assert "only in passing" not in report, report
    assert "Returns target with the item at path replaced" in section(report, "Answer"), report


def test_keywords_compared_by_name_are_searched_and_matched_as_written(docs: Path, tmp_path: Path) -> None:
    """SQL keywords are English stop words: written in capitals they are what the question compares. Each is
    searched (a query of only "HAVING" is not refused) and a sentence of ordinary "having" is no mention."""
    (docs / "clauses.md").write_text(
        "# Clauses\n\n## WHERE\n\nThe WHERE clause removes input rows before any grouping happens.\n\n"
        "## HAVING\n\nThe HAVING clause removes whole groups after the grouping is done.\n\n"
        "## Privileges\n\nObjects having default privileges keep them where the owner set them.\n")
    result = run("What is the difference between WHERE and HAVING?", docs, tmp_path)
    assert result.manifest["status"] == "completed", result.report
    table = section(result.report, "Answer")
    row = next(ln for ln in table.splitlines() if ln.startswith("| HAVING |"))
    assert "removes whole groups" in row, result.report


def test_a_keyword_that_is_an_english_word_is_mentioned_only_where_used_as_the_keyword(tmp_path: Path) -> None:
    # "is" the verb is in nearly every sentence; `is` the operator only where it is named or between operands
    docs = write_tree(tmp_path / "docs", {"comparisons.md": "# Comparisons\n\n## Sequences\n\n"
        "Comparing sequences is done by comparing items in order until either sequence is exhausted.\n\n"
        "## Values\n\nThe == operator compares the values of two objects and is defined for every type.\n\n"
        "## Identity\n\nThe operators is and is not test for identity: x is y is true only for the same object.\n"})
    report = run("How is comparing with == different from comparing with is?", docs, tmp_path).report
    row = next(ln for ln in section(report, "Answer").splitlines() if ln.startswith("| is |"))
    assert "test for identity" in row, report
    assert "either sequence is exhausted" not in report, report  # no claim about `is` at all
    forms = text_forms("Comparing goes on until either sequence is exhausted; the == operator is defined for all.")
    assert not mentions(make_term("is", TermKind.IDENT), forms)
    for used in ("The operators is and is not test for identity.", "Then x is y is true.", "Use the in operator."):
        assert any(mentions(make_term(k, TermKind.IDENT), text_forms(used)) for k in ("is", "in")), used


def test_a_name_that_starts_with_a_dot_is_mentioned_where_the_text_writes_it(tmp_path: Path) -> None:
    # dot files and R's dotted names (.Rprofile, .pgpass, .libPaths()) are names like any other: a passage that
    # writes one mentions it, so the question about it is answered, not "no retrieved passage mentions .Rprofile"
    for text in ("Edit ~/.Rprofile first.", "the .Rprofile file", "Call .libPaths() to see them."):
        name = ".libPaths" if "libPaths" in text else ".Rprofile"
        assert mentions(make_term(name, TermKind.IDENT), text_forms(text)), text
    docs = write_tree(tmp_path / "docs", {"startup.md": "# Startup\n\n## The .Rprofile file\n\n"
        "R reads the .Rprofile file in the home directory at startup and runs the code in it.\n\n"
        "## Libraries\n\nThe library directories are listed by .libPaths() in the order they are searched.\n"})
    answer = answer_to("When is my .Rprofile read?", docs, tmp_path)
    assert "reads the .Rprofile file in the home directory at startup" in answer, answer

def test_a_longer_entity_is_described_by_the_words_that_set_it_apart(tmp_path: Path) -> None:
    # "MERGE ALL" holds "MERGE": a sentence naming only MERGE is about the sibling; a parenthesized sentence
    # that contrasts them is prose, never a code block
    docs = write_tree(tmp_path / "docs", {"merge.md": "# Combining queries\n\n## MERGE\n\n"
        "MERGE appends the rows of the second query to the rows of the first query, and MERGE removes duplicate "
        "rows from the merged result.\n\nMERGE evaluates its queries left to right.\n\n## MERGE ALL\n\n"
        "(Therefore, MERGE ALL is usually much quicker than MERGE; use ALL when you can.)\n\n"
        "With ALL, every row of both queries is kept, duplicates included (unlike plain MERGE)\n"})
    report = run("What is the difference between MERGE and MERGE ALL?", docs, tmp_path).report
    answer = section(report, "Answer")
    assert "```" not in answer, answer
    row = next(ln for ln in answer.splitlines() if ln.startswith("| MERGE ALL |"))
    assert "ALL" in row.split("|")[2], answer


def test_the_corpus_own_name_in_a_question_says_where_not_what(tmp_path: Path) -> None:
    # "in WidgetKit" names the product every page documents: a sentence naming it is no better an answer
    pages = {f"page{i}.txt": f"Topic {i}\n\nWidgetKit draws topic {i} widgets on screen.\n" for i in range(8)}
    pages["gizmo.txt"] = ("Gizmos\n\nThe gizmo privilege clause is also a WidgetKit extension to the standard.\n\n"
                          "A gizmo is a special helper object that a widget delegates its drawing to.\n")
    docs = write_tree(tmp_path / "docs", pages)
    answer = answer_to("What is a gizmo in WidgetKit?", docs, tmp_path)
    assert answer.strip().startswith("A gizmo is a special helper object"), answer


def test_a_never_used_word_counts_against_a_sentence_matching_only_the_rest(docs: Path, tmp_path: Path) -> None:
    """Example data in a manual ("the capitals table inherits the columns of cities") matches a world-facts
    question on two of its words; "islands", a word the large corpus never uses, is part of what the answer
    must cover, so the match is too weak to quote (it is fewer than a fifth of the words: that rule is not it)."""
    _notes(docs, 1000)
    (docs / "inherit.txt").write_text("Inheritance\n\nThe capitals table inherits every column of the cities table.\n")
    for i, word in enumerate(("seven", "largest", "northern", "sea")):  # words the corpus uses, each elsewhere
        (docs / f"w{i}.txt").write_text(f"Word {i}\n\nA register may be named {word} by its owner.\n")
    result = run("What are the capital cities of the seven largest islands in the northern sea?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "never use" not in result.report  # (not the fifth-of-the-words rule)


def test_a_contrasting_sentence_that_introduces_code_comes_with_its_code_or_not_at_all(docs: Path,
                                                                                        tmp_path: Path) -> None:
    """The comparison's opening sentence and its table cells are whole: a sentence ending in ":" that
    introduces a code block is never shown without that block (in a table cell it cannot have it)."""
    (docs / "sprockets.md").write_text(
        "# Sprockets and cogs\n\nUnlike a cog, a sprocket spins freely whereas a cog needs a shaft, as shown below:\n\n"
        "    sprocket = Sprocket()\n    sprocket.spin()\n    cog = Cog(shaft)\n\n"
        "A cog turns a shaft; a sprocket turns a chain.\n")
    report = run("What is the difference between a sprocket and a cog?", docs, tmp_path).report
    lines = section(report, "Answer").splitlines()
    for i, ln in enumerate(lines):
        text = re.sub(r"\s*\[\d+(?:, \d+)*\]\s*\|?$", "", ln.strip())
        if text.endswith(":"):
            assert not ln.startswith("|") and lines[i + 1].startswith("```"), report


def test_a_sentence_introducing_code_keeps_it_when_an_earlier_claim_took_the_same_example(docs: Path,
                                                                                          tmp_path: Path) -> None:
    """A how-to sentence takes the example after it; when the next claim is the sentence that introduces that
    example ("…can be called directly:"), the example moves to follow it: no claim ends in ":" without code."""
    (docs / "renaming.md").write_text(
        "# Renaming widgets\n\nRenaming a widget with rename() after it is created does not notify the widget "
        "parent of the new widget name. If needed, rename() can notify the widget parent directly:\n\n"
        "    w.rename('x', notify=True)\n    w.parent.refresh()\n\nThe widget name is kept in widget.name.\n")
    result = run("How do I rename a widget and notify its parent?", docs, tmp_path)
    claims = [c for a in read_run(result.run_dir).trace.agents.values() if a.findings for c in a.findings.claims]
    texts = [c.text for c in claims]
    intro = next(i for i, t in enumerate(texts) if t.startswith("If needed, rename() can notify"))
    assert intro + 1 < len(texts) and texts[intro + 1].strip().startswith("w.rename("), texts


def test_a_line_of_code_only_its_own_introducing_sentence_makes_code_goes_with_no_other_sentence(docs: Path,
                                                                                                 tmp_path: Path) -> None:
    """PostgreSQL's "\\encoding SJIS" and a one-line pg_hba.conf example had been quoted as prose lines (cut
    sentences) under a how-to sentence above their own introducing sentence: a line read as code only after the sentence
    introducing it is not attached to another."""
    (docs / "encoding.md").write_text(
        "# Widget shell encodings\n\nTo switch the widget encoding in the widget shell, use its encoding command.\n\n"
        "Type:\n\n\\encoding SJIS\n\nThe widget encoding is kept.\n")
    result = run("How do I switch the widget encoding in the widget shell?", docs, tmp_path)
    claims = [c.text for a in read_run(result.run_dir).trace.agents.values() if a.findings for c in a.findings.claims]
    at = [i for i, t in enumerate(claims) if t.strip() == "\\encoding SJIS"]
    assert all(i > 0 and claims[i - 1].endswith(":") for i in at), claims
    assert not re.search(r"^(?:- )?\\\\encoding SJIS", result.report.replace("```\n\\encoding SJIS\n```", ""), re.M), \
        result.report


def test_a_how_to_sentence_does_not_take_the_next_example_when_it_is_about_something_else(docs: Path,
                                                                                          tmp_path: Path) -> None:
    """The example after a how-to sentence goes with it only when it uses a name the sentence gives or a word
    of the question: "use w.children()" does not come with the page's next example, which paints a window."""
    (docs / "listing.md").write_text(
        "# Listing widgets\n\nTo list the children of a widget you can use w.children() or iterate over w.\n\n"
        "    >>> w.paint(color='red')\n    >>> w.show()\n\nPainting is covered elsewhere.\n")
    result = run("How do I list the children of a widget?", docs, tmp_path)
    claims = [c.text for a in read_run(result.run_dir).trace.agents.values() if a.findings for c in a.findings.claims]
    assert any("w.children()" in c for c in claims), claims
    assert not any("w.paint" in c for c in claims), claims


def test_a_glossary_definition_is_quoted_with_the_term_it_defines(docs: Path, tmp_path: Path) -> None:
    """"A small helper object that a widget delegates drawing to." says nothing of what it defines: quoted
    for a what-is question, the definition carries its term (and the citation still checks)."""
    result = run("What is a gadget?", docs, tmp_path)
    assert "gadget: A small helper object that a widget delegates drawing to." in result.report, result.report
    assert result.manifest["citation_check"]["pass_rate"] == 1.0


def test_the_words_around_the_compared_things_are_asked_about_too(docs: Path, tmp_path: Path) -> None:
    """"gadgets and widgets on a gizmoflux board": each of the two is asked about on that board, which the
    documents never name; so neither is answered. (The words after "and" were the second entity's alone.)"""
    from subagents.extractive.analysis import comparison_entities

    assert comparison_entities("What is the difference between loc and iloc on a pandas DataFrame?") == ["loc", "iloc"]
    assert comparison_entities("My loop is slow. Is zorb.load faster than zorb.read for this?") == ["zorb.load", "zorb.read"]
    # a scene telling how something looks compares nothing asked ("looks" and "on" had been compared)
    assert comparison_entities("I built it, but png() output looks worse than on my laptop. What release do I need?") == []
    _notes(docs, 1000)
    report = run("What is the difference between gadgets and widgets on a gizmoflux board?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "never use the word gizmoflux" in report, report
    report = run("What is the difference between gadgets and widgets on a screen?", docs, tmp_path / "known").report
    assert "Gadgets are stateless, whereas widgets keep state between events." in report, report


def test_a_prefixed_form_of_a_word_the_documents_use_is_no_unknown_word(docs: Path, tmp_path: Path) -> None:
    """"subwidgets" is no word of the corpus, but "widgets" is: the user's own word for the children of a
    widget, not a sign that the question is about something else."""
    _notes(docs, 1000)
    report = run("How do I copy a widget together with its subwidgets?", docs, tmp_path).report
    assert "do not answer this question" not in report and "never use the word" not in report, report
    assert "clone() with deep=True" in report
    # an unprefixed word the corpus never uses still is one
    report = run("How do I copy a widget together with its gizmofluxes?", docs, tmp_path / "other").report
    assert "never use the word gizmofluxes" in report, report


def _index_with(docs: Path, items: str) -> None:
    """A documentation index page listing `items` (HTML list items) among 34 entries for other things."""
    entries = sorted((f"gizmo_{i:02d}() (in module gizmos)", f"library/widgets.html#g{i}") for i in range(34))
    filler = "".join(f'<li><a href="{href}">{term}</a></li>' for term, href in entries)
    (docs / "genindex.html").write_text(INDEX_PAGE.format(items=items + filler))


def test_an_operator_asked_about_is_found_through_the_documentation_index(docs: Path, tmp_path: Path) -> None:
    """"What does := do?" has no word to search; the documentation's index lists the operator (":= (colon
    equals)", and "**" heading its uses) and leads to the section that explains it in words."""
    (docs / "reference").mkdir()
    (docs / "reference" / "ops.html").write_text(
        "<html><head><title>Operators</title></head><body><div role='main'><h1>Operators</h1>"
        "<p>Gadgets combine values.</p><hr id='index-1'/><h2>Naming expressions</h2>"
        "<p>A naming expression binds a value to a name while also returning the value.</p>"
        "<hr id='index-2'/><h2>The raising operation</h2>"
        "<p>The raising operation gives its left operand raised to the power of its right operand.</p>"
        "</div></body></html>")
    _index_with(docs, '<li><a href="reference/ops.html#index-1">:= (colon equals)</a></li>'
                      '<li>**<ul><li><a href="reference/ops.html#index-2">operator</a></li></ul></li>')
    walrus = run("What does := do?", docs, tmp_path / "a")
    assert walrus.manifest["status"] == "completed", walrus.report
    assert "binds a value to a name" in section(walrus.report, "Answer"), walrus.report
    power = run("What does ** do?", docs, tmp_path / "b")
    assert "raised to the power" in section(power.report, "Answer"), power.report


def test_a_keyword_that_is_a_stop_word_compared_by_name_is_found_through_the_documentation_index(
        docs: Path, tmp_path: Path) -> None:
    """"is" of "== and is" has no word a search keeps: the index lists it ("is — operator") and leads to the section
    saying what it does; its subagent searches the keyword itself, not its objective's notes."""
    (docs / "reference").mkdir()
    (docs / "reference" / "ops.html").write_text(
        "<html><head><title>Comparisons</title></head><body><div role='main'><h1>Comparisons</h1>"
        "<h2>Value comparisons</h2><p>The == operator compares the values of two gadgets.</p>"
        "<hr id='index-7'/><h2>Sameness</h2>"
        "<p>The operators is and is not test whether two names refer to the very same gadget.</p>"
        "</div></body></html>")
    _index_with(docs, '<li>is<ul><li><a href="reference/ops.html#index-7">operator</a></li></ul></li>')
    result = run("What is the difference between == and is?", docs, tmp_path)
    rows = {ln.split("|")[1].strip(): ln for ln in section(result.report, "Answer").splitlines() if ln.startswith("| ")}
    assert "refer to the very same gadget" in rows["is"], result.report
    assert "Nothing was retrieved" not in result.report  # the search for "is" itself found it, not a later round
    trace = read_run(result.run_dir).trace
    queries = [r.event.input["query"] for a in trace.ordered_agents() if a.delegation is not None for r in a.records
               if getattr(r.event, "kind", "") == "tool_call" and r.event.name == "search_corpus"]
    assert "is" in queries and not any("compared with" in q for q in queries), queries


def test_a_keyword_compared_by_name_is_also_searched_in_its_question_where_no_index_lists_it(
        docs: Path, tmp_path: Path) -> None:
    """Without an index page "if" alone has nothing to search: its subagent also searches the question without the
    other thing, whose words and meaning find the statement."""
    (docs / "control.md").write_text(
        "# Control flow\n\n## Conditional execution\n\nThe if statement runs its body only when its condition holds.\n\n"
        "## Choosing values\n\nThe choose() function picks, for every element of a vector, one of two values.\n")
    result = run("What is the difference between choose() and if?", docs, tmp_path)  # "if" second: no joint query
    rows = {ln.split("|")[1].strip(): ln for ln in section(result.report, "Answer").splitlines() if ln.startswith("| ")}
    assert "runs its body only when its condition holds" in rows["if"], result.report
    assert "Nothing was retrieved" not in result.report  # found by its own subagent, not a later round

def test_a_page_title_above_a_sentence_is_no_term_it_defines(docs: Path, tmp_path: Path) -> None:
    """faq.txt opens with its title, "Gadgets and widgets": the sentence after it is no definition of that
    title (no glossary bonus, no "Gadgets and widgets:" in front of the quote)."""
    report = run("What are gadgets and widgets?", docs, tmp_path).report
    assert "Gadgets and widgets:" not in report, report


def test_an_operator_without_an_index_entry_is_found_as_written(docs: Path, tmp_path: Path) -> None:
    """The full-text index drops punctuation: passages that use "->>" itself (not inside "<->>") are found
    literally; an operator no passage uses makes the question not found instead of a match on its words."""
    (docs / "ops.txt").write_text(
        "Gadget operators\n\nThe gadget operators are listed below, each with what it returns.\n\n"
        "gadget ->> text → text Extracts the named field of a gadget as text.\n\n"
        "gadget <->> gadget → real Returns the distance between two gadgets.\n")
    report = run("What does the ->> operator do?", docs, tmp_path / "a").report
    answer = section(report, "Answer")
    assert "Extracts the named field of a gadget as text." in answer, report
    assert "Returns the distance" not in answer, report
    report = run("What does the ~~> operator do?", docs, tmp_path / "b").report
    assert "do not answer this question" in section(report, "Answer") and "mentions ~~>" in report, report


def test_a_compared_thing_the_documents_lack_says_why_in_its_row(docs: Path, tmp_path: Path) -> None:
    # the documents never use "keyboard": the keyboard shortcut's subagent finds nothing and its row says why
    _notes(docs, 1000)
    result = run("How does a gadget differ from a keyboard shortcut?", docs, tmp_path)
    row = next(ln for ln in section(result.report, "Answer").splitlines() if ln.startswith("| keyboard shortcut |"))
    agent = next(a for a in read_run(result.run_dir).trace.agents.values()
                 if a.delegation and a.delegation.objective.startswith("keyboard shortcut"))
    assert agent.findings and not agent.findings.claims
    assert row == f"| keyboard shortcut | ({agent.findings.open_questions[0].rstrip('.')}) |", result.report
    assert "| gadget | Gadgets are stateless" in section(result.report, "Answer"), result.report


def test_a_comparison_with_a_name_the_documents_mention_only_in_passing_is_not_found(docs: Path, tmp_path: Path) -> None:
    # one note mentions Zorblax in passing, no title or heading names it ("MySQL" in PostgreSQL's manual, asked "Is
    # PostgreSQL better than MySQL for …?"): the documents cannot set it apart from a gadget, as with a name no passage
    # contains; before, the gadget's row quoted the documents and the report was an answer
    _mentioned_once(docs, "Some teams draw widgets with Zorblax on their laptops.")
    result = run("What is the difference between a gadget and a Zorblax?", docs, tmp_path)
    answer = section(result.report, "Answer")
    assert "do not answer this question" in answer and "mention Zorblax only in passing" in answer, result.report
    assert all(a.findings and not a.findings.claims for a in read_run(result.run_dir).trace.agents.values()
               if a.delegation), result.report


def test_a_name_of_several_words_no_retrieved_text_joins_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "Gadget" and "Server" are each in the documents, "Gadget Server" nowhere: a product they do not cover
    (docs / "backup.txt").write_text("Backing up\n\nTo back up a widget database, copy the widget store while "
                                     "the server is stopped.\n")
    result = run("How do I back up a Gadget Server database?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "No retrieved passage mentions Gadget Server." in result.report
    report = run("How do I back up a widget database?", docs, tmp_path / "plain").report
    assert "copy the widget store while the server is stopped" in section(report, "Answer"), report
    # once a passage joins the words, the name is documented
    (docs / "backup.txt").write_text("Backing up\n\nTo back up a Gadget Server database, copy its widget store while "
                                     "the server is stopped.\n")
    report = run("How do I back up a Gadget Server database?", docs, tmp_path / "joined").report
    assert "copy its widget store while the server is stopped" in section(report, "Answer"), report


def test_which_companies_use_something_is_not_found_until_a_sentence_names_one(docs: Path, tmp_path: Path) -> None:
    # documentation says what widgets do, not who uses them; once a passage names a company using them, it does
    question = "Which companies use widgets in production?"
    result = run(question, docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "No retrieved passage says which companies use widgets in production." in result.report
    (docs / "users.txt").write_text("Users\n\nWidgets are used in production by companies such as Acme and Globex.\n")
    report = run(question, docs, tmp_path / "named").report
    assert "companies such as Acme and Globex" in section(report, "Answer"), report


def test_a_ranking_the_documents_never_state_is_not_found(docs: Path, tmp_path: Path) -> None:
    # documentation says what a theme does, not which one is best; once a passage recommends one, it does
    result = run("Which theme is the best for widgets?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "No retrieved passage says which is the best theme for widgets." in result.report
    (docs / "themes.txt").write_text("Themes\n\nThe plain theme is recommended for widgets that draw often.\n")
    report = run("Which theme is the best for widgets?", docs, tmp_path / "again").report
    assert "plain theme is recommended" in section(report, "Answer"), report
    # a ranking for something else ("for widgets") does not say which is best for printing
    result = run("Which theme is best for printing?", docs, tmp_path / "printing")
    assert "No retrieved passage says which is the best theme for printing." in result.report, result.report
    (docs / "print.txt").write_text("Printing\n\nThe ink theme is recommended for printing widgets on paper.\n")
    report = run("Which theme is best for printing?", docs, tmp_path / "printed").report
    assert "ink theme is recommended" in section(report, "Answer"), report
    # a word of the measure in a sentence about something else is no ranking, whatever heading it is under
    (docs / "tour.txt").write_text("Toolkit tour\n\nThe race example of the tour prints which gadget ran fastest.\n")
    result = run("Which widget toolkit is the fastest?", docs, tmp_path / "tour")
    assert "No retrieved passage says which is the fastest widget toolkit." in result.report, result.report
    result = run("Which widget theme had the most downloads last year?", docs, tmp_path / "market")
    assert "No retrieved passage says which widget theme has the most downloads." in result.report, result.report
    # the best way to do something asks how, not which product ranks first
    report = run("What is the best way to copy a widget with its children?", docs, tmp_path / "way").report
    assert "clone() with deep=True" in section(report, "Answer"), report


@pytest.mark.parametrize("question, measure, category", [
    ("Which Python web framework is the most popular in 2025?", "most popular", "Python web framework"),
    ("What is the cheapest managed PostgreSQL hosting?", "cheapest", "managed PostgreSQL hosting"),
    ("What's the best IDE for Python development?", "best", "IDE"),
    ("Which JSON library is fastest?", "fastest", "JSON library"),
    ("What is Guido van Rossum's favourite food?", "favourite", "food"),
    # counts of a market, which no manual keeps
    ("Which CRAN packages had the most downloads last month?", "most downloads", "CRAN packages"),
    ("Which Python web framework has the most GitHub stars?", "most github stars", "Python web framework"),
    ("Which database has the largest market share?", "largest market share", "database"),
    ("What are the top five database systems in the DB-Engines ranking?", "top five", "database systems"),
    ("Which companies employ the largest number of core developers?", "largest number of core developers", "companies"),
    ("What are the three best managed PostgreSQL hosting providers, ranked?", "best",
     "managed PostgreSQL hosting providers"),
    # asked in the past, the measure hyphenated: it had been no ranking ("Which were the five most-downloaded packages
    # on PyPI last month?" was answered from what PyPI is)
    ("Which were the five most-downloaded packages on PyPI last month?", "most downloaded", "packages"),
    ("What was the most-used editor in 2020?", "most used", "editor"),
])
def test_a_question_asking_which_thing_ranks_first(question: str, measure: str, category: str) -> None:
    assert [(r.measure, r.category) for r in rankings(question)] == [(measure, category)]


@pytest.mark.parametrize("question, measure, subject", [
    ("How many stars does the CPython repository have on GitHub?", "stars", "the CPython repository"),
    ("What is the market share of Python among programming languages?", "market share", "Python"),
    ("What is the number of downloads of numpy?", "number of downloads", "numpy"),
    ("How many active R users are there worldwide?", "users", "R"),  # the people of a named thing counted
])
def test_a_question_asking_for_a_figure_of_a_market(question: str, measure: str, subject: str) -> None:
    from subagents.extractive.unstated import figures

    assert [(f.measure, f.subject) for f in figures(question)] == [(measure, subject)]


def test_a_market_figure_is_given_by_a_sentence_with_its_measure_its_subject_and_a_number() -> None:
    from subagents.extractive.unstated import Figure

    stars = Figure("stars", "the CPython repository")
    assert stars.stated_by("The CPython repository has 60000 stars.")
    assert not stars.stated_by("Write 2 stars before a name to collect keyword arguments.")  # not its subject
    assert not stars.stated_by("The CPython repository is starred by many.")  # no figure
    assert not stars.stated_by("The CPython repository keeps the Py3 stars.")  # a digit inside a name is none
    assert not stars.stated_by("The CPython repository of Python 3 collects stars.")  # a version is no count
    # a number of something else in the sentence ("… the Cheese Shop [1], … available for download") counts no downloads
    downloads = Figure("downloads", "the Cheese Shop")
    assert not downloads.stated_by("The Cheese Shop [1] is an index of modules that are available for download.")
    assert downloads.stated_by("The Cheese Shop served 2 billion downloads last year.")
    assert Figure("market share", "Python").stated_by("Python holds a large market share.")


@pytest.mark.parametrize("question", ["How many arguments does print take?", "How many rows can a table hold?",
                                      "How many users are there in the pg_authid catalog?"])
def test_a_question_asking_how_many_of_something_documented_asks_no_market_figure(question: str) -> None:
    from subagents.extractive.unstated import figures

    assert figures(question) == []


@pytest.mark.parametrize("question, unstated, page", [
    # a figure of a market
    ("How many stars does the widgets module have?", "the stars of the widgets module",
     "Widget fame\n\nThe widgets module has 1200 stars.\n"),
    # how many things a collection holds
    ("How many widgets are on the widget exchange?", "how many widgets are on the widget exchange",
     "Widget exchange\n\nThe widget exchange lists 340 widgets.\n"),
    # a price of a thing bought, a share of a population, a person's life
    ("How much does a yearly widget support contract cost?", "what a yearly widget support contract costs",
     "Widget support\n\nA yearly widget support contract costs $1200.\n"),
    ("What percentage of widget developers use deep copies?", "what share of widget developers",
     "Widget survey\n\nAbout 45% of widget developers use deep copies of widgets.\n"),
    # a ratio measured ("how many times longer"): documents say "longer" in words, if at all
    ("Roughly how many times longer does a deep copy of a widget take than a shallow copy?",
     "how many times longer a deep copy of a widget is",
     "Widget timings\n\nA deep copy of a widget takes about three times longer than a shallow copy.\n"),
    ("How much slower does a deep copy of a widget run when tracing is on?", "how much slower a deep copy of a widget is",
     "Widget tracing\n\nWith tracing on, a deep copy of a widget runs about 15% slower.\n"),
    # an amount measured of the world: a duration estimated, a speed-up, how many people, how many downloads
    ("Roughly how many minutes does a deep copy of a widget take?", "how long a deep copy of a widget takes",
     "Widget timings\n\nA deep copy of a widget takes about 40 minutes on a large screen.\n"),
    ("What speedup factor does widget caching give for redraws?", "what speedup factor does widget caching give for "
     "redraws", "Widget caching\n\nWidget caching makes redraws about four times faster.\n"),
    ("How many people use widgets today?", "how many people use widgets today",
     "Widget users\n\nAbout two million people use widgets today.\n"),
    ("How many times was the widgets module downloaded in 2022?", "how many times the widgets module was downloaded",
     "Widget downloads\n\nThe widgets module was downloaded 3,000,000 times in 2022.\n"),
    # a duration asked in a unit of time, of a verb of waiting
    ("How many seconds does a widget wait for its gadget before it draws itself?", "how long a widget waits",
     "Widget timeouts\n\nA widget waits 5 seconds for its gadget before it draws itself.\n"),
    # a bound or an exact figure asked by name
    ("What is the maximum number of children a widget may have?", "the maximum number of children",
     "Widget limits\n\nA widget may have at most 64 children.\n"),
    ("What exact value in pixels does widgets.clone() give the border of a copy?",
     "what exact value in pixels does widgets.clone() give the border of a copy",
     "Widget borders\n\nwidgets.clone() gives the border of a copy a width of 2 pixels.\n"),
])
def test_a_figure_the_documents_never_give_is_not_found(question: str, unstated: str, page: str, docs: Path,
                                                        tmp_path: Path) -> None:
    result = run(question, docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert f"No retrieved passage says {unstated}." in result.report, result.report
    (docs / "figure.txt").write_text(page)
    report = run(question, docs, tmp_path / "again").report
    assert page.split("\n\n")[1].strip() in section(report, "Answer"), report


@pytest.mark.parametrize("question, asked", [
    ("Roughly how many minutes will the upgrade itself take?", ("duration", "how long the upgrade itself will take")),
    ("How long does a full collection typically take on a 4 GB heap?", ("duration", "how long a full collection typically "
                                                                        "takes")),
    ("We move 2 TB. By what factor is link mode faster than copy mode?", ("factor", "by what factor is link mode faster "
                                                                          "than copy mode")),
    # hedged inside ("By roughly what percentage does byte-compiling usually speed up package code?")
    ("By roughly what percentage does compiling speed up widget code?",
     ("factor", "by what percentage does compiling speed up widget code")),
    ("Roughly how many people use R worldwide today?", ("people", "how many people use R worldwide today")),
    ("How many times was R downloaded in 2022?", ("downloads", "how many times R was downloaded")),
    # waiting is a duration too, and a dotted name no sentence's end
    ("How many seconds does mailbox.mbox.lock() wait for the lock?", ("duration", "how long mailbox.mbox.lock() waits")),
    ("How long does it take for a change to pg_hba.conf to take effect?", None),  # no estimate: a manual says when
    ("How long does a prepared statement last?", None),
    ("How do I see roughly how long each query takes?", None),  # how to see it: the clause opens with "how do I"
    ("Which setting limits how many standbys can connect?", None),
    ("How many users can connect at once?", None),  # a capacity a setting gives, not who uses a thing
    ("How many arguments does range() take?", None),
    # a throughput or a growth: a benchmark's figure
    ("We upgrade 2 TB. How many gigabytes per hour does the upgrade get through in copy mode?",
     ("rate", "how many gigabytes per hour does the upgrade get through in copy mode")),
    ("What load rate, in rows per second, should I expect from a bulk load?",
     ("rate", "what load rate, in rows per second should I expect from a bulk load")),
    ("How many times per second does the profiler sample?", None),  # a frequency a manual sets
    # the time to set aside for something is a duration asked as a measurement
    ("We move 2 TB. How long should we budget for rebuilding the statistics afterwards?",
     ("duration", "how long rebuilding the statistics afterwards takes")),
])
def test_a_question_asking_an_amount_measured_of_the_world(question: str, asked: tuple | None) -> None:
    from subagents.extractive.unstated import amounts

    assert [(a.kind, a.text) for a in amounts(question)] == ([asked] if asked else [])


def test_an_amount_is_given_by_a_number_in_its_unit_beside_a_word_of_what_it_measures() -> None:
    from subagents.extractive.unstated import amounts

    took, = amounts("Roughly how many minutes will the upgrade take?")
    assert took.stated_by("The upgrade takes about 45 minutes for a 2 TB cluster.")
    assert took.stated_by("An upgrade in link mode usually finishes in two hours.")
    assert not took.stated_by("The upgrade can take minutes.")  # no number
    assert not took.stated_by("Vacuum runs every 60 seconds.")  # not the upgrade
    # a number word followed by an "s" is no duration ("… than for seldom-updated ones" had said how long a thing takes)
    assert not took.stated_by("The upgrade is more useful for busy tables than for seldom-updated ones.")
    grows, = amounts("The disk is small. How many megabytes per hour does the output file grow?")
    assert grows.stated_by("The output file grows by 5 MB/s while profiling.")
    assert grows.stated_by("Expect the output file to gain two megabytes an hour.")
    assert not grows.stated_by("The output file can be very large if long runs are profiled.")  # no number
    assert not grows.stated_by("Profiling records every 20 msecs which line runs, in the output file.")  # an interval
    ratio, = amounts("What compression ratio does level 9 achieve on text?")
    assert ratio.stated_by("Level 9 is about 5 times slower than level 1.")
    assert ratio.stated_by("On text, level 9 achieves a compression ratio of 4.")
    assert not ratio.stated_by("The three methods that return the ratio of matching characters differ in level.")
    downloads, = amounts("How many times was R downloaded in 2022?")
    assert downloads.stated_by("R was downloaded 3,000,000 times.")
    assert not downloads.stated_by('From R 4.2.0, the "libcurl" download method is always available.')  # a version


@pytest.mark.parametrize("question, count", [
    ("How many packages are on Bioconductor?", ("packages", "Bioconductor", "on")),
    ("How many projects are currently published on PyPI?", ("projects", "PyPI", "on")),
    ("Roughly how many projects are hosted on PyPI today?", ("projects", "PyPI today", "on")),  # hedged
    ("How many bytes are there in a UUID?", ("bytes", "a UUID", "in")),
    ("How many retries does the client make?", None),  # what a documented call does, no collection's size
    ("How do I find out how many columns wide the console is?", None),  # how to find it out
])
def test_a_question_asking_how_many_things_a_collection_holds(question: str, count: tuple | None) -> None:
    from subagents.extractive.unstated import counts

    assert [(c.noun, c.place, c.prep) for c in counts(question)] == ([count] if count else [])


def test_a_count_is_given_by_a_sentence_with_a_number_of_its_own_beside_both_words() -> None:
    from subagents.extractive.unstated import Count

    packages = Count("packages", "the gizmo registry", "on")
    assert packages.stated_by("The gizmo registry holds 1,200 packages.")
    assert packages.stated_by("The gizmo registry lists over two thousand packages.")
    assert not packages.stated_by("The gizmo registry ships the Tools4 packages.")  # a digit inside a name
    assert not packages.stated_by("The gizmo registry holds many packages.")  # no number
    assert not packages.stated_by("Gizmo 2 publishes its packages on the gizmo registry.")  # a version, no count
    assert not packages.stated_by("The widget shelf holds 1,200 packages.")  # not that collection
    # numbers of something else: a date, an age ("CRAN packages for old versions … (released more than 5 years ago)")
    assert not packages.stated_by("Since March 2016, gizmo registry packages for releases older than 5 years move.")
    assert not packages.stated_by("In 2016, packages on the gizmo registry moved.")  # a clause of its own
    assert Count("bytes", "a UUID").stated_by("A UUID is a 16-byte string.")


def test_a_compared_name_opening_its_subagents_objective_is_still_a_name(docs: Path, tmp_path: Path) -> None:
    # "Zorblax (compared with: widgets; part of: …)": its capital is the name's, as the question writes it, not a
    # sentence's first word; a name the documents mention only in passing leaves the comparison unanswered
    _mentioned_once(docs, "Some teams draw widgets with Zorblax on their laptops.")
    for i, question in enumerate(("How does Zorblax differ from widgets?", "How do gadgets and Zorblax differ?")):
        answer = answer_to(question, docs, tmp_path / str(i))
        assert "- The documents mention Zorblax only in passing: no title or heading names it." in answer, answer


def test_a_population_share_asked_of_compared_things_is_asked_of_each_and_not_found(docs: Path, tmp_path: Path) -> None:
    # "what share of R users run it on Windows compared with macOS": the whole question asks a survey's figure of each
    # compared thing; before, each entity's subagent quoted what the documents say of it
    question = "What share of widget developers use deep copies compared with shallow copies?"
    result = run(question, docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "No retrieved passage says what share of widget developers." in result.report, result.report


def test_a_market_figure_of_compared_things_is_asked_of_each_and_not_found(docs: Path, tmp_path: Path) -> None:
    from subagents.extractive.analysis import comparison_entities

    # "Gizmo's market share compared to widgets": the owner is compared, not "share", and the figure is asked of each
    question = "What is Gizmo's market share compared to widgets?"
    assert comparison_entities(question) == ["Gizmo", "widgets"]
    result = run(question, docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "No retrieved passage says the market share of widgets." in result.report, result.report
    (docs / "share.txt").write_text("Gizmo\n\nGizmo has a market share of 40 percent among toolkits, and widgets "
                                    "have a market share of 10 percent.\n")
    report = run(question, docs, tmp_path / "again").report
    assert "do not answer this question" not in report and "market share of 40 percent" in report, report


@pytest.mark.parametrize("question", ["What is the fastest way to concatenate strings?",
                                      "What is the worst-case cost of a dict lookup?",
                                      "Which isolation level is the strictest?", "What is the best practice for logging?",
                                      "Which of json or pickle is the fastest?", "Which option affects most of the users?",
                                      "Which queries use the largest number of buffers?"])
def test_a_question_asking_how_or_about_a_property_ranks_nothing(question: str) -> None:
    assert rankings(question) == []


@pytest.mark.parametrize("question, said", [
    ("Who leads the PostgreSQL core team in 2026?", "led"), ("Who is the current CEO of Microsoft?", "ceo"),
    ("Who created Python?", "created"), ("Who is the author of PEP 8?", "written"),
    ("Who can drop a table?", None), ("Who owns a new table?", None), ("Who is allowed to create a database?", None),
    ("Who is the owner of a new table?", None), ("What does the lead() window function return?", None),
    ("Who currently chairs the Python Software Foundation's board?", "chair"),  # an adverb before the verb
    ("Who are the current members of the PostgreSQL core team?", "member"),  # the members of an organisation
    ("Who are the members of a role?", None), ("Who is a member of the pg_monitor role?", None),  # roles, not people
    # asked in any sentence ("… I want to address a letter to them."), an adverb after the verb too
    ("Who is currently the president of the Widget Foundation? I want to write to them.", "president"),
    ("I want to write them a letter. Who chairs the Widget Foundation?", "chair"),
    ("We moved to a new server. Who can drop a table now?", None),
    # who sits on a board or belongs to a team: its members
    ("Who currently sits on the PostgreSQL core team?", "member"), ("Who serves on the Widget Foundation's board?", "member"),
    ("Who belongs to the pg_monitor role?", None), ("Who belongs to the Widget Foundation's core team?", "member")])
def test_who_holds_a_role_is_asked_of_a_sentence_naming_them_not_who_may_do_something(question: str, said) -> None:
    # documentation answers "who can …" with roles and privileges; who leads or made something it rarely says
    found = persons(question)
    assert (said in found[0].said_with()) if said else found == [], found


def test_a_sentence_states_who_holds_the_role_by_a_name_the_role_and_what_it_is_of() -> None:
    core = persons("Who leads the PostgreSQL core team?")[0]
    assert core.stated_by("The core team is led by Tom Lane and Bruce Momjian.")
    assert not core.stated_by("The POSTGRES project, led by Professor Michael Stonebraker, began in 1986.")  # not the team
    assert not core.stated_by("The SQL standard defines a RESPECT NULLS option for lead and lag.")  # no one's name
    assert not core.stated_by("The core team is led by the release managers.")
    assert persons("Who wrote the sqlite3 module?")[0].stated_by("The sqlite3 module was written by Gerhard Häring.")
    assert persons("Who created Python?")[0].stated_by("Python was created in the early 1990s by Guido van Rossum.")
    # a role of a name alone: the name's own word, not any President's
    president = persons("Who is the current president of the Widget Foundation?")[0]
    assert president.stated_by("The current president of the Widget Foundation is Jane Doe.")
    assert not president.stated_by("The data set gives the approval rating for the President of the United States.")


def test_a_ranking_is_stated_of_the_kind_its_measure_qualifies() -> None:
    best = rankings("What is the best IDE for Python development?")[0]
    assert best.stated_by("For Python development, IDLE is the best IDE to start with.")
    assert best.stated_by("The recommended IDE for Python development is IDLE.")
    assert not best.stated_by("Your best way to get started with Python development on macOS is through IDLE, "
                              "see the section The IDE.")  # the best way, not the best IDE
    assert rankings("Which were the five most-downloaded packages?")[0].text == "which are the most downloaded packages"


def _not_found_until_a_page_says_it(question: str, why: str, page: str, text: str, quoted: str, docs: Path,
                                    tmp_path: Path) -> None:
    """Not found, saying why; once a page says it, answered with that page's sentence."""
    result = run(question, docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert why in result.report
    (docs / page).write_text(text)
    report = run(question, docs, tmp_path / "again").report
    assert quoted in section(report, "Answer"), report


def test_who_holds_a_role_the_documents_never_name_is_not_found(docs: Path, tmp_path: Path) -> None:
    _not_found_until_a_page_says_it(
        "Who leads the widgets team?", "No retrieved passage says who leads the widgets team.", "team.txt",
        "The widgets team\n\nThe widgets team is led by Ada Lovelace since the first release.\n",
        "led by Ada Lovelace", docs, tmp_path)


@pytest.mark.parametrize("question, found", [
    ("What is the latest NumPy release, and which Python versions does it support?", ("latest", "NumPy")),
    ("What's the newest version of pip?", ("latest", "pip")), ("When is the next PostgreSQL release?", ("next", "PostgreSQL")),
    ("Which is the latest stable release of Django?", ("latest", "Django")),
    ("How do I upgrade pip to the latest version?", None),  # how, not which release
    ("What is the next value of a sequence?", None), ("What is the latest version of the SQL standard PostgreSQL supports?", None),
])
def test_a_question_asking_which_release_is_the_latest_or_next(question: str, found) -> None:
    assert [(r.when, r.subject) for r in releases(question)] == ([found] if found else [])


def test_a_sentence_states_the_latest_release_by_the_word_release_or_version_and_the_subject() -> None:
    latest = Release("latest", "NumPy")
    assert latest.stated_by("The latest NumPy release is 2.1, from August.")
    assert not latest.stated_by("NumPy: The NumPy package defines another array type.")
    assert not latest.stated_by("These packages may not include the latest versions of Python or other libraries.")


def test_the_latest_release_of_something_the_documents_never_say_is_not_found(docs: Path, tmp_path: Path) -> None:
    (docs / "gadgetlib.txt").write_text("Gadgetlib\n\nGadgetlib is a library of gadgets; its releases add gadgets "
                                        "that widgets delegate drawing to.\n")
    _not_found_until_a_page_says_it(
        "What is the latest Gadgetlib release?", "No retrieved passage says which is the latest release of Gadgetlib.",
        "news.txt", "News\n\nThe latest Gadgetlib release is 4.2, which adds round gadgets.\n",
        "The latest Gadgetlib release is 4.2", docs, tmp_path)


def test_a_year_no_passage_mentions_is_not_found(docs: Path, tmp_path: Path) -> None:
    # the documents were written before 2031: what widgets did then they cannot say, however well the rest matches
    result = run("Why do widgets share one theme object in 2031?", docs, tmp_path)
    assert "do not answer this question" in section(result.report, "Answer"), result.report
    assert "No retrieved passage mentions 2031." in result.report
    (docs / "changes.txt").write_text("Changes\n\nSince 2031 widgets share one theme object to save memory.\n")
    report = run("Why do widgets share one theme object in 2031?", docs, tmp_path / "again").report
    assert "do not answer this question" not in report, report


def test_a_year_inside_a_date_written_out_is_an_example_value_not_a_year_asked_about(docs: Path, tmp_path: Path) -> None:
    # "like 2031-01-31" shows the string to parse: the documents need not mention 2031 to answer it
    (docs / "dates.txt").write_text("Dates\n\nUse parse_date() to parse a date string in ISO format into a date "
                                    "object.\n")
    for question in ("How do I parse a date string like 2031-01-31 into a date object?",
                     "How do I parse a date string such as 31/01/2031 into a date object?"):
        answer = answer_to(question, docs, tmp_path / str(len(question)))
        assert "parse_date()" in answer, answer


def _searched(question: str, text: str, counts: dict[str, int], titles: dict[str, int], passages: int = 5000,
              more: tuple[str, ...] = ()):
    """The evidence a search for the question brings back: one passage (and `more` of its section), and the
    corpus's counts."""
    from subagents.extractive.evidence import gather
    from subagents.model import ToolResultBlock, ToolUseBlock

    payload = {"query": question, "results": [{"source_id": f"S{i}", "passage_id": f"p#{i}", "title": "Backups",
                                                "heading": "Backups", "snippet": t}
                                               for i, t in enumerate((text, *more), start=1)],
               "corpus": {"passages": passages, "term_passages": counts, "term_titles": titles}}
    return gather([(ToolUseBlock("t1", "search_corpus", {"query": question}), ToolResultBlock("t1", json.dumps(payload)))])


def test_a_name_inside_a_bytes_literal_is_the_askers_data() -> None:
    # "files that begin with b'THRM'": a magic number of the asker's files had been a name no passage mentions
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names

    question = "Our scanners write files that begin with b'WDGX'. How do I teach the widget sniffer a new file type?"
    ev = _searched(question, "To recognise a new file type, append a test function to the widget sniffer's tests list.",
                   {"widget": 40, "sniffer": 5}, {"sniffer": 2})
    assert missing_names(focus_of(question), ev) == []
    named = "How do I read WDGX files? Mine begin with b'WDGX'."  # named outside the literal too: asked about
    assert [t.text for t in missing_names(focus_of(named), ev)] == ["WDGX"]


def test_a_name_only_the_scene_tells_is_no_name_the_documents_lack() -> None:
    # "I'm talking to a flaky REST endpoint with http.client.HTTPConnection … Is there a switch to print that traffic?"
    # had been "No retrieved passage mentions REST": where the need arose, not what is asked
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names

    text = "Set the widget's debug level to 1 to print each widget request as it is sent."
    counts = {"widget": 40, "debug": 30, "zorbnet": 0}
    told = "A Zorbnet gateway drops widget requests. Is there a switch to print each widget request before sending?"
    assert missing_names(focus_of(told), _searched(told, text, counts, {"widget": 2})) == []
    for asked in ("A Zorbnet gateway drops widget requests. How do I make it print each request?",  # points back
                  "Is there a switch to print each widget request the Zorbnet gateway sends?",  # asked
                  "I read that Zorbnet gateways now print requests. Is there a switch to print each widget request?",
                  # an identifier told is an API the story uses, which the documents would name
                  "A Zorbnet.Gateway object drops widget requests. Is there a switch to print each widget request?"):
        ev = _searched(asked, text, counts, {"widget": 2})
        assert [t.text for t in missing_names(focus_of(asked), ev)] in (["Zorbnet"], ["Zorbnet.Gateway"]), asked


def test_an_acronym_the_scene_uses_as_a_common_noun_is_no_name_the_documents_lack() -> None:
    # "I'm writing an ETL job that builds a temporary staging table … What can I add to the statement …?", "The DBA
    # just said …", "an old publisher VM": the ask points back into the scene, and "No retrieved passage mentions
    # ETL" (or "mentions OLTP only in passing") had answered "not found"
    from subagents.extractive.analysis import common_acronym
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names, undocumented_names

    text = "Add ON COMMIT EMPTY ROWS to the widget statement to empty the widget table at each commit."
    for count in (0, 1):  # never written, or written once in no title
        counts = {"widget": 40, "commit": 30, "zqtl": count}
        for told in ("Our ZQTL job builds a widget table in one session. What can I add to its statement to empty it?",
                     "The ZQTL said a widget table outlives a commit. What can I add to its statement to empty it?",
                     "I run an old nightly ZQTL that builds a widget table. What can I add to its statement to empty "
                     "it?"):
            ev = _searched(told, text, counts, {"widget": 2})
            focus = focus_of(told)
            assert common_acronym(next(t for t in focus.question.terms if t.text == "ZQTL"), told), told
            assert missing_names(focus, ev) == [] and undocumented_names(focus, ev) == [], (told, count)
        for asked in ("We left ZQTL and our widget table outlives a commit. What can I add to its statement to empty "
                      "it?",
                      "My Python ZQTL job builds a widget table. What can I add to its statement to empty it?",
                      "How do I make a ZQTL job empty the widget table at each commit?"):  # asked
            ev = _searched(asked, text, counts, {"widget": 2})
            focus = focus_of(asked)
            found = missing_names(focus, ev) + undocumented_names(focus, ev)
            assert "ZQTL" in [t.text.upper() for t in found], (asked, count)
    # one a title or heading names is the documents' own ("a publication with a WHERE (region = 'EU') filter"): setting
    # it aside had left EU alone among the names asked, "mentioned only in passing"
    from subagents.extractive.undocumented import set_aside
    told = "The ZQTL said a widget table outlives a commit. What can I add to its statement to empty it?"
    focus = focus_of(told)
    zqtl = next(t for t in focus.question.terms if t.text == "ZQTL")
    for titles, aside in (({"widget": 2}, True), ({"widget": 2, "zqtl": 3}, False)):
        ev = _searched(told, text, {"widget": 40, "commit": 30, "zqtl": 5}, titles)
        assert set_aside(zqtl, focus, ev.weights) is aside, titles


def test_a_symbol_string_in_the_askers_code_is_their_data() -> None:
    # "… CHECK (VALUE LIKE '%@%') worked fine …": the asker's pattern had been a name no passage mentions
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names

    question = "On a test box, ALTER WIDGET w ADD CHECK (VALUE LIKE '%@%') worked. Why is it refused on production?"
    ev = _searched(question, "ALTER WIDGET ADD CHECK (VALUE …) is refused when an array column uses the widget.",
                   {"widget": 40, "check": 50}, {"widget": 2})
    assert missing_names(focus_of(question), ev) == []
    asked = "What does the '%@%' operator do? Our code uses it."  # a quoted name a sentence asks about
    assert [t.text for t in missing_names(focus_of(asked), ev)] == ["%@%"]


def test_names_given_as_open_ended_instances_or_by_a_wildcard_are_no_names_the_documents_lack() -> None:
    # "R's C-level distribution functions (pnorm, qgamma and so on)", "the r* random generators": instances of a kind
    # and a family of names had each been a name no retrieved passage mentions
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names, undocumented_names

    text = "Define STANDALONE before including the header to call the widget functions zorbnorm and zorbgam."
    counts = {"widget": 40, "macro": 30, "zorbify": 0, "qzorbix": 0}  # (names the corpus never writes)
    for question in ("I call the widget functions (zorbify, qzorbix and so on) from my program. What macro must be defined?",
                     "I call the zorb* widget functions from my program. What macro must be defined?"):
        ev = _searched(question, text, counts, {"widget": 2})
        focus = focus_of(question)
        assert missing_names(focus, ev) == [] and undocumented_names(focus, ev) == [], question
    # a list of instances in the asker's scene ("a small C tool that needs R's distribution functions such as pnorm and
    # qgamma"); asked in a sentence that asks, the names are what it asks about
    told = "My tool calls widget functions such as zorbify and qzorbix. What macro must be defined?"
    ev = _searched(told, text, counts, {"widget": 2})
    assert missing_names(focus_of(told), ev) == [] and undocumented_names(focus_of(told), ev) == []
    asked = "What macro must be defined to call widget functions such as zorbify and qzorbix?"
    ev = _searched(asked, text, counts, {"widget": 2})
    assert {t.text for t in undocumented_names(focus_of(asked), ev)} == {"zorbify", "qzorbix"}
    closed = "I call the widget functions (zorbify, qzorbix) from my program. What macro must be defined?"  # a closed list
    ev = _searched(closed, text, counts, {"widget": 2})
    assert {t.text for t in undocumented_names(focus_of(closed), ev)} == {"zorbify", "qzorbix"}
    unmatched = "I call the qux* widget functions from my program. What macro must be defined?"  # no name of the text matches
    ev = _searched(unmatched, text, counts, {"widget": 2})
    assert [t.text for t in missing_names(focus_of(unmatched), ev)] == ["qux*"]


def test_an_able_adjective_of_an_english_verb_is_no_product_name() -> None:
    # "a growable sequence type" had been a word the documents lack, as if it named a product
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import able_of_a_verb, undocumented_names

    question = "I'm writing the subscript handler for a growable widget type in C. Which functions should I call instead?"
    ev = _searched(question, "Use zorb_unpack() and zorb_adjust() for widget types that can change size.",
                   {"widget": 40, "subscript": 20, "handler": 30, "growable": 0}, {"widget": 2})
    assert undocumented_names(focus_of(question), ev) == []
    assert able_of_a_verb("growable") and able_of_a_verb("hashable") and able_of_a_verb("queryable")
    assert not able_of_a_verb("ansible") and not able_of_a_verb("table") and not able_of_a_verb("zorbable")


def test_an_acronym_asked_about_is_mentioned_by_its_plural() -> None:
    # "GTEs" is the plural of "GTE" (no stemmer strips the "s" of capitals): the sentence defining it mentions it
    from subagents.extractive.selection import focus_of, select

    question = "What is a GTE?"
    ev = _searched(question, "These statements, often called Gadget Table Expressions or GTEs, define temporary "
                             "tables that exist for one query.", {"gte": 40}, {"gte": 3})
    sel = select(focus_of(question), ev)
    assert [u.text for u in sel.claims] == ["These statements, often called Gadget Table Expressions or GTEs, define "
                                            "temporary tables that exist for one query."], (sel.claims, sel.missing)


@pytest.mark.parametrize("code", [
    'retry <- 12 try(if(retry > 10) stop("too many retries")) tst1 <- function(...) stop("dummy backup error")',
    'backup <- function(path) copy(path, "/backups") and backup("/data") copies the data directory.',
    'x = backup(path); print(x) runs the backup once.',  # (Python's, as before)
])
def test_code_a_snippet_ran_together_into_one_line_is_no_sentence_to_quote(code: str) -> None:
    # a search's snippet joins a code block's lines: R's `x <- f(...)` and `function(...)` read as one long sentence,
    # quoted as a claim; read in full, the same lines are the code block they are
    from subagents.extractive.selection import focus_of, select

    question = "How do I retry a failing backup?"
    ev = _searched(question, code, {"backup": 40, "retry": 30, "failing": 50}, {"backup": 3},
                   more=("Each backup is retried until it succeeds when retry is set.",))
    claims = [u.text for u in select(focus_of(question), ev).claims]
    assert claims == ["Each backup is retried until it succeeds when retry is set."], claims


@pytest.mark.parametrize("counts, titles, why", [
    ({"gadget server": 0}, {"gadget server": 0}, "missing"),  # no passage of the corpus joins the words
    ({"gadget server": 2}, {"gadget server": 0}, "passing"),  # two passages, no title: in passing ("SQL server")
    ({"gadget server": 4}, {"gadget server": 1}, None),  # a heading names it: documented, this search missed it
    ({"gadget server": 80}, {"gadget server": 0}, None),  # used often: documented
])
def test_a_name_of_several_words_is_judged_by_the_corpus_counts_of_its_phrase(counts, titles, why) -> None:
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import unanswered

    question = "How do I back up a Gadget Server database?"
    ev = _searched(question, "To back up a gadget database, stop the server and copy its files.", counts, titles)
    focus = focus_of(question)
    gaps = unanswered(focus, ev, focus.key_names(ev.weights))
    named = {"missing": [t.text for t in gaps.missing], "passing": [t.text for t in gaps.passing]}
    assert all(named[k] == (["Gadget Server"] if k == why else []) for k in named), named


@pytest.mark.parametrize("counts, titles, missing", [
    ({"zorblin": 60}, {"zorblin": 3}, []),  # the corpus covers it (headings name it): the answer is not particular to it
    ({"zorblin": 60}, {"zorblin": 0}, ["Zorblin"]),  # used, but no heading names it: no documented thing
    ({"zorblin": 0}, {"zorblin": 0}, ["Zorblin"]),  # never used
])
def test_a_documented_name_the_retrieved_text_leaves_out_is_not_missing(counts, titles, missing) -> None:
    # "works fine on Linux but fails on Windows": Linux has pages of its own in Python's documentation, and the
    # answering passage (zoneinfo's tzdata) names Windows only; before, "No retrieved passage mentions Linux" was
    # the whole report
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names

    # (asked in the sentence that asks: a name only a story's scene tells is no key name at all, as tested below)
    question = "Why does copying a gadget deeply work fine on Zorblin but lose the children elsewhere?"
    ev = _searched(question, "To copy a gadget deeply, copy its children first.", counts, titles)
    assert [t.text for t in missing_names(focus_of(question), ev)] == missing


def test_a_number_passed_to_a_call_the_question_writes_out_is_no_version_to_find() -> None:
    # "locale.format_string('%.2f', 1234.5, grouping=True) still prints a plain dot": 1234.5 is the asker's value;
    # before, "No retrieved passage mentions 1234.5" was the whole report
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names

    text = "To copy a gadget deeply, copy its children first."
    for question, missing in (("Why does copy(gadget, 1234.5, deep) lose the children of a gadget?", []),
                              ("Why does gadget 1234.5 lose the children of a gadget?", ["1234.5"])):
        ev = _searched(question, text, {"gadget": 40}, {"gadget": 2})
        assert [t.text for t in missing_names(focus_of(question), ev)] == missing, question


def test_a_name_a_manuals_index_lists_is_an_entry_of_the_documentation_not_a_passing_mention() -> None:
    # "how do the ISNA and ISNAN macros differ?": R's manuals name ISNA in two sentences and no heading, but their
    # index lists it, dot leaders to its page; before, "mention ISNA only in passing" was the whole report
    from subagents.extractive.undocumented import api_entry

    isna = make_term("ISNA", TermKind.NAME)
    assert api_entry(isna, "165 ISNA . . . . . . . . . . . . . . . . 192 ISNAN . . . . . . 192")
    assert not api_entry(isna, "Note that the ISNA macro only applies to doubles. See ISNAN.")
    assert not api_entry(isna, "ISNAN . . . . . . . . 192")  # another entry, whose name holds it
    # a package's name is listed too where a manual names it in passing ("Package readxl (https://…) can read …")
    assert not api_entry(make_term("readxl", TermKind.WORD), "readxl . . . . . . . . . 12")


def test_a_name_in_camel_case_written_as_a_call_is_the_documentations_function() -> None:
    # "Someone suggested saveRDS because …": R's manuals write saveRDS() in a sentence, title no page with it;
    # before, "The documents mention saveRDS only in passing" was the whole report
    from subagents.extractive.undocumented import api_entry

    save = make_term("saveRDS", TermKind.NAME)
    assert api_entry(save, "For saving single R objects, saveRDS() is mostly preferable to save().")
    assert api_entry(make_term("dbWriteTable", TermKind.NAME), "dbWriteTable(con, name, value) writes a table.")
    assert not api_entry(save, "saveRDS and readRDS save a single object.")  # named, not called
    assert not api_entry(make_term("MySQL", TermKind.NAME), "MySQL (a database server) and MySQL(R)")  # no call, a mark
    assert not api_entry(make_term("iPhone", TermKind.NAME), "on iPhone(s) and iPad(s)")  # a plural's parenthesis


def test_capitalised_runs_of_a_question_are_phrases_to_count() -> None:
    from subagents.corpus.query import name_runs

    assert name_runs("How do I back up a SQL Server database?") == ["sql server"]
    assert name_runs("Does Oracle Database support it?") == ["does oracle database", "oracle database"]
    assert name_runs("What is Row-Level Security?") == ["row level security"]
    assert name_runs("how do I copy a file?") == []


GADGET_FUNCTIONS = """<html><head><title>Gadget Functions</title></head><body><div role="main">
<h1>Gadget Functions</h1><p>The functions below operate on gadget values.</p><table><caption>Gadget Functions</caption>
<tr><th>Function</th></tr>
<tr><td class="func_table_entry"><p class="func_signature">gadget_weight ( g gadget ) → numeric</p>
<p>Weighs the gadget in grams, with its sprockets.</p><p>gadget_weight('small') → 12.5</p></td></tr>
<tr><td class="func_table_entry"><p class="func_signature">gadget_count ( g gadget ) → integer</p>
<p>Counts the sprockets of the gadget, spare sprockets included.</p><p>gadget_count('small') → 4</p></td></tr>
<tr><td class="func_table_entry"><p class="func_signature">gadget_name ( g gadget ) → text</p>
<p>Returns the name the gadget was given.</p><p>gadget_name('small') → small</p></td></tr>
</table></div></body></html>"""


def test_a_how_to_answered_by_a_function_table_row_shows_the_function(tmp_path: Path) -> None:
    """The row's description says what the function does without naming it: the answer shows the
    signature with it, never the row run together ("… → integer Counts …"); no Python label on it."""
    docs = write_tree(tmp_path / "docs", {"functions-gadget.html": GADGET_FUNCTIONS})
    answer = answer_to("How do I count the sprockets of a gadget?", docs, tmp_path)
    first = answer.strip().splitlines()
    assert first[0].startswith("Counts the sprockets of the gadget, spare sprockets included."), answer
    assert first[1:4] == ["```", "gadget_count ( g gadget ) → integer", "```"], answer


def test_an_sql_type_in_an_example_is_not_labelled_python(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {"numeric.txt": "Numeric types\n\nNUMERIC(3, 1)\n\n"
                                          "Declares a column of numbers with three digits, one of them a decimal digit.\n"})
    answer = answer_to("How do I declare a column of numbers with one decimal digit?", docs, tmp_path)
    assert "NUMERIC(3, 1)" in answer and "```python" not in answer, answer


def test_an_r_example_is_not_labelled_python_and_a_python_one_is(tmp_path: Path) -> None:
    """The label says what the code is: R's `x[!is.na(x)]` does not parse as Python (it looked like a call)."""
    docs = write_tree(tmp_path / "docs", {"vectors.md": "# Vectors\n\n## Missing values\n\n"
                                          "To drop the missing values of a vector, index it with the negated is.na():\n\n"
                                          "```\ny <- x[!is.na(x)]\n```\n\n"
                                          "## Sorting\n\nTo sort a list of gadgets in place, call sort() on it:\n\n"
                                          "```\ngadgets.sort(key=len, reverse=True)\n```\n\n"
                                          "## Colours\n\nTo draw the gadget plot in blue, set the colour first:\n\n"
                                          "```\npar(col=4, lty=2)\n```\n"})
    answer = answer_to("How do I drop the missing values of a vector?", docs, tmp_path)
    assert "```\ny <- x[!is.na(x)]\n```" in answer, answer
    answer = answer_to("How do I sort a list of gadgets in place?", docs, tmp_path / "py")
    assert "```python\ngadgets.sort(key=len, reverse=True)\n```" in answer, answer
    # a call alone is R as much as Python: no label
    answer = answer_to("How do I draw the gadget plot in blue?", docs, tmp_path / "r")
    assert "```\npar(col=4, lty=2)\n```" in answer, answer


def test_a_function_named_for_what_is_asked_answers_though_its_description_does_not_repeat_the_name(
        tmp_path: Path) -> None:
    """The description below a signature is about the call the signature names: "length" in `gadget_length`
    counts as the sentence's own word, and its meaning is read with the name, so the row of the function asked
    about comes before a row that only says the word (`gadget_pad`'s "to the given length")."""
    table = GADGET_FUNCTIONS.replace("</table>", """
<tr><td class="func_table_entry"><p class="func_signature">gadget_pad ( g gadget, n integer ) → gadget</p>
<p>Extends the gadget to the given length with spare sprockets.</p><p>gadget_pad('small', 9) → big</p></td></tr>
<tr><td class="func_table_entry"><p class="func_signature">gadget_length ( g gadget ) → integer</p>
<p>Returns the number of sprockets from end to end of the gadget.</p><p>gadget_length('small') → 3</p></td></tr>
</table>""")
    docs = write_tree(tmp_path / "docs", {"functions-gadget.html": table})
    answer = answer_to("How do I get the length of a gadget?", docs, tmp_path)
    assert answer.strip().startswith("Returns the number of sprockets from end to end of the gadget."), answer


def test_a_comparison_row_states_a_property_not_a_list_item_or_an_example(tmp_path: Path) -> None:
    """A bulleted fragment ("Using the bundle() built-in: bundle() or bundle(items)"), no sentence, says less of
    what the thing is than the sentence that states it; a row quotes the statement."""
    docs = write_tree(tmp_path / "docs", {"library/collections.html": """<html><head><title>Collections</title></head>
<body><div role="main"><h1>Collections</h1><h2>Bundles</h2><p>Bundles may be constructed in a number of ways:</p>
<ul><li>Using a pair of braces to denote the empty bundle: {}</li><li>Using the bundle() built-in: bundle() or bundle(items)</li></ul>
<p>Bundles are frozen collections, typically used to keep records of mixed fields.</p>
<h2>Stacks</h2><p>For example, stack('abc') returns a stack of three letters, and stack.pop() takes the last.</p>
<p>Stacks are mutable collections, typically used to keep items of one kind.</p></div></body></html>"""})
    answer = answer_to("What distinguishes a bundle from a stack?", docs, tmp_path)
    rows = {ln.split("|")[1].strip(): ln for ln in answer.splitlines() if ln.startswith("| ") and "---" not in ln}
    assert "Bundles are frozen collections" in rows["bundle"], answer
    assert "Stacks are mutable collections" in rows["stack"], answer


# ---------------------------------------------------------------- what a subagent reads, through the model seam

def _hit(page: str, title: str, heading: str, text: str, semantic: float) -> dict:
    return {"source_id": f"{page}#0", "passage_id": f"{page}#0", "title": title, "heading": heading,
            "snippet": text, "semantic": semantic}


async def _reads(question: str, searches: list[tuple[str, list[dict]]]) -> list[str]:
    """The passages a subagent asks to read after the given searches (query, results), in order; the first
    query is the delegation's, the next ones its own (feedback)."""
    from subagents.tools import untrusted

    d = Delegation(objective=question, tools=["search_corpus", "read_passage"], queries=[searches[0][0]])
    ctx = RequestContext(role=AgentRole.SUBAGENT, agent_id="r1-sub1", delegation=d,
                         allowed_tools=("search_corpus", "read_passage", "submit_findings"))
    msgs = [Message("user", [TextBlock("task")])]
    for i, (query, hits) in enumerate(searches):
        use = ToolUseBlock(f"t{i}", "search_corpus", {"query": query, "k": 10})
        msgs += [Message("assistant", [use]),
                 Message("user", [ToolResultBlock(use.id, untrusted("search_corpus", {"query": query, "results": hits}))])]
    resp = await ExtractiveModel().complete(ModelRequest(system="", messages=msgs, context=ctx))
    return [u.input["passage_id"] for u in resp.tool_uses() if u.name == "read_passage"]


async def test_a_page_whose_title_opens_with_the_subject_is_read_before_pages_that_use_it() -> None:
    """Eight guides use zap under headings that name it and come first in the search; the page titled "zap" is
    the subject's own and is read though it comes ninth (a subagent reads six)."""
    guides = [_hit(f"guide{i}.html", f"Batch loading, part {i}", "Running zap", "Run zap after the batch.", 0.5)
              for i in range(8)]
    own = _hit("zap.html", "zap — empty the ledgers", "", "Run zap to empty every ledger.", 0.5)
    reads = await _reads("What does zap do?", [("zap", guides + [own]), ("zap ledgers", [])])
    assert len(reads) == MAX_READS and "zap.html#0" in reads, reads


async def test_closeness_in_meaning_is_to_what_was_asked_not_to_the_feedback_query() -> None:
    """The feedback query is made of the words the best results share, so those results are close to it in meaning;
    the page closest to the question's own query is read all the same."""
    guides = [_hit(f"guide{i}.html", f"Batch loading, part {i}", "Running zap", "Run zap after the batch.", 0.3)
              for i in range(8)]
    own = _hit("ref.html", "Reference", "Running zap", "Run zap to empty every ledger.", 0.7)
    fed = [dict(g, semantic=0.8) for g in guides]
    reads = await _reads("What does zap do?", [("zap", guides[:1] + [own] + guides[1:]), ("zap batch run", fed)])
    assert len(reads) == MAX_READS and "ref.html#0" in reads, reads


GADGET_LOG_DOCS = {
    "howto/gadget-logging.html": """<html><head><title>Gadget logging HOWTO</title></head><body><div role="main">
<h1>Gadget logging HOWTO</h1><h2>Logging to a file</h2>
<p>A common case is keeping the gadget's log in a file, which takes one call to basic_setup() with its name:</p>
<pre>gadgetlog.basic_setup(filename='example.log')</pre>
<p>The file is opened in append mode unless a mode is given.</p></div></body></html>""",
    "library/gadgetlog.html": """<html><head><title>gadgetlog</title></head><body><div role="main">
<h1>gadgetlog</h1><h2>Handlers</h2>
<p>Gadget log messages are passed to handlers, and a handler may send the messages to a file, a socket or a
stream.</p>
<p>Each handler has a level, and messages below the level are dropped.</p></div></body></html>""",
}


def test_how_to_answers_with_the_opening_of_the_section_titled_with_what_is_asked(tmp_path: Path) -> None:
    # the HOWTO's section "Logging to a file" answers how to log to a file, though its opening sentence shares
    # fewer of the question's words than the reference page's sentence about handlers
    docs = write_tree(tmp_path / "docs", GADGET_LOG_DOCS)
    report = run("How do I log gadget messages to a file?", docs, tmp_path).report
    answer = section(report, "Answer").strip()
    assert answer.startswith("A common case is keeping the gadget's log in a file"), answer
    assert_whole_sentences(report)


def _widget_admin_docs() -> dict[str, str]:
    """A reference page whose table row answers deep down, and eight pages about the question's rarest word
    ("zorp"), each of which outranks the table in the searches."""
    parts = ("bolt", "pin", "spring", "cog", "nut", "axle", "lever", "cam", "shaft", "wheel", "rivet", "hinge")
    rows = "\n".join(f"<tr><td>widget_{n}_count ( w ) → integer</td><td>Counts the {n} parts of the specified widget."
                     f"</td></tr>" for n in parts)
    docs = {"functions-admin.html": f"""<html><head><title>9.3. Widget Administration Functions</title></head><body>
<div role="main"><h1>9.3. Widget Administration Functions</h1><h2>9.3.1. Widget Object Functions</h2>
<p>The functions shown in Table 9.1 report on widgets.</p><table>{rows}
<tr><td>widget_total_size ( w ) → bigint</td><td>Computes the total disk space used by the specified widget, including
all gears and zorp data.</td></tr></table></div></body></html>"""}
    for i, topic in enumerate(("pointers", "strategies", "chunks", "compression", "headers", "limits", "layout", "values")):
        docs[f"storage-zorp-{i}.html"] = f"""<html><head><title>7{i}.2. Zorp {topic}</title></head><body><div role="main">
<h1>7{i}.2. Zorp {topic}</h1><p>Zorp data of a widget is kept in a zorp table beside the widget's gears, and the zorp
{topic} decide how the data is laid out on disk.</p><p>Each zorp table has an index on its chunk numbers, and zorp data
that fits is kept inline.</p></div></body></html>"""
    return docs


def test_a_row_deep_in_a_long_page_whose_sentence_states_the_question_is_read(tmp_path: Path) -> None:
    # the searches rank the eight zorp pages first (the rarest word, in their titles); the table row's snippet
    # says in one sentence nearly all that is asked, so it gets a read of its own and answers
    docs = write_tree(tmp_path / "docs", _widget_admin_docs())
    report = run("How can I check how much disk space a widget uses including its gears and zorp data?", docs,
                 tmp_path).report
    answer = section(report, "Answer").strip()
    assert answer.startswith("widget_total_size ( w ) → bigint"), answer
    assert "Computes the total disk space used by the specified widget" in answer


@pytest.mark.parametrize("note, page, question, answer", [
    # "Zed" is in every note (the corpus's own subject, as R is in R's manuals): an answer need not repeat it
    ("Zed note {i}\n\nZed keeps register {i} with a value and its flag.\n",
     "Startup\n\nThe gadgets attached automatically at startup are the bolt gadget and the pin gadget.\n",
     "Which gadgets are attached automatically when Zed starts?",
     "The gadgets attached automatically at startup are the bolt gadget"),
    # "-9 // 4 gives -3" shows what is asked with example values: an answer need not repeat them
    ("Note {i}\n\nA gadget keeps register {i} with a value and its flag.\n",
     "Gadget division\n\nGadget division of a negative count rounds down towards minus infinity, so the remainder "
     "keeps the sign of the divisor.\n",
     "Why does gadget division of a negative count round down, so -9 // 4 gives -3?",
     "Gadget division of a negative count rounds down"),
])
def test_what_a_claim_need_not_repeat_is_no_open_question(note: str, page: str, question: str, answer: str,
                                                          tmp_path: Path) -> None:
    # neither the corpus's own subject nor an example's numbers make an open question "No claim mentions …"
    pages = {f"notes/n{i:03d}.txt": note.format(i=i) for i in range(60)}
    pages["answer.txt"] = page
    report = run(question, write_tree(tmp_path / "docs", pages), tmp_path).report
    assert answer in section(report, "Answer"), report
    assert "No claim mentions" not in report, report


def test_a_yes_no_part_is_answered_by_the_sentence_saying_whether(tmp_path: Path) -> None:
    # "does that check redraw the widget?" asks whether, not how: of two sentences in its words, the one saying
    # yes or no ("does not redraw") answers it, though the question it is part of asks how
    docs = write_tree(tmp_path / "docs", {"widgets.md": (
        "# Widgets\n\n## Checking visibility\n\nCall visible(w) to check whether a widget is shown on screen.\n\n"
        "Each check of a widget's redraw state is logged, and the widget is redrawn later.\n\n"
        "The visibility check does not redraw the widget.\n")})
    part = "does that check redraw the widget?"
    answer = answer_to(f"How can I check whether a widget is shown on screen, and {part}", docs, tmp_path)
    line = next(x for x in answer.splitlines() if f"**{part}**" in x)
    assert "does not redraw" in line, answer


@pytest.mark.parametrize("part, kind", [
    ("does that check redraw the widget?", AnswerType.FACT),  # asks whether a statement holds
    ("is there a helper that redraws it?", AnswerType.HOW_TO),  # asks which one: how, as the whole question asks
])
def test_a_part_asking_whether_keeps_its_own_type(part: str, kind: AnswerType) -> None:
    whole = f"How can I check whether a widget is shown on screen, and {part}"
    assert focus_of(f"{part} (part of: {whole})").question.answer_type is kind


@pytest.mark.parametrize("passages, uncovered", [(5000, []), (500, ["WHERE"])])
def test_a_keyword_the_corpus_is_written_in_is_no_gap_of_its_own(passages: int, uncovered: list[str]) -> None:
    # "WHERE" in a tenth of the passages or more is the language the manual is written in: a claim leaving it out
    # still answers; a few hundred passages (a small corpus, or the retrieved ones) do not tell so much
    from subagents.extractive.selection import focus_of, select

    from subagents.extractive.evidence import gather
    from subagents.model import ToolResultBlock, ToolUseBlock

    question = "How do I keep only the heavy gadgets with WHERE?"
    results = [{"source_id": f"S{i}", "passage_id": f"p#{i}", "title": "Gadgets", "heading": "Gadgets", "snippet": text}
               for i, text in enumerate(["Heavy gadgets are kept by a gadget weight filter.", "Old WHERE forms stay."])]
    payload = {"query": question, "results": results,
               "corpus": {"passages": passages, "term_passages": {"where": passages // 4}, "term_titles": {"where": 3}}}
    ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": question}), ToolResultBlock("t1", json.dumps(payload)))])
    sel = select(focus_of(question), ev)
    assert [u.text for u in sel.claims] == ["Heavy gadgets are kept by a gadget weight filter."], sel.claims
    assert [t.text for t in sel.uncovered] == uncovered, sel.uncovered


@pytest.mark.parametrize("status, gap", [(FindingsStatus.PARTIAL, True), (FindingsStatus.OK, False)])
async def test_a_name_no_claim_mentions_is_a_gap_unless_the_subagents_said_they_answered(
        status: FindingsStatus, gap: bool) -> None:
    q = "How do I keep only the heavy gadgets with WHERE?"
    report = sub(q, ["Heavy gadgets are kept by a gadget weight filter."], ["heavy gadgets"])
    report = replace(report, findings=report.findings.model_copy(update={"status": status}))
    resp = await ExtractiveModel().complete(lead_request(q, (RoundReport(1, (report,)),), rounds_left=1))
    delegated = [t["objective"] for u in resp.tool_uses() for t in u.input.get("tasks", [])]
    assert bool(delegated) is gap and all(x.startswith("WHERE") for x in delegated), delegated


@pytest.mark.parametrize("question, terms", [
    # the scene set from another product goes; what is left says in words what it wants
    ("Coming from Gizmo DB, where I used AUTO_BUMP, what should I use for a column that counts up by itself?",
     ["column", "counts"]),
    ("In Gizmo I would use a GizmoMap; how do I look up a widget by its serial number?", ["look", "widget", "serial", "number"]),
    # what is left only asks for a counterpart: the other product's names are what it asks about
    ("In Gizmo I would use a GizmoMap; what is the equivalent here?", ["Gizmo", "GizmoMap", "equivalent"]),
    ("How do I migrate from Gizmo DB with gizmo2pg?", ["migrate", "Gizmo", "DB", "gizmo2pg"]),
])
def test_what_the_asker_knows_from_another_product_is_the_scene_not_the_question(question: str, terms: list[str]) -> None:
    assert [t.text for t in analyse(question).terms] == terms


def test_a_question_set_in_another_product_is_answered_from_these_documents(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {"columns.md": "# Columns\n\n## Identity columns\n\n"
        "An identity column is a column that counts up by itself: each new row gets the next number of its sequence.\n\n"
        "## Defaults\n\nA default value is used when an insert gives no value for the column.\n"})
    answer = answer_to("Coming from Gizmo DB, where I used AUTO_BUMP, what should I use for a column that counts up "
                       "by itself?", docs, tmp_path)
    assert "An identity column is a column that counts up by itself" in answer, answer


def test_a_name_the_asker_wants_as_a_value_is_a_detail_not_where_the_question_is_asked(tmp_path: Path) -> None:
    # "record NaN for the steps that fail": the sentence answering how to go on after an error need not name NaN;
    # "in Gadgetscript" (test_sentences_that_name_none_of_the_names_asked_about_…), "a Kotlin data class",
    # "Kotlin's" set where the question is asked
    from subagents.extractive.selection import sets_the_scene

    assert not sets_the_scene("NaN", "How can it go on and record NaN for the steps that fail?")
    assert not sets_the_scene("Excel", "How do I export a table for Excel?")
    assert all(sets_the_scene("Kotlin", q) for q in ("How do I write a Kotlin data class?", "Is there Kotlin's when?",
                                                     "How do I sort a list in Kotlin?"))
    docs = write_tree(tmp_path / "docs", {"errors.md": "# Errors\n\n## Going on after an error\n\n"
        "Wrap each step in try() so that the loop goes on after an error: try() returns an object of class try-error "
        "instead of stopping.\n\n## NaN\n\nNaN is printed by the console in grey; the console colours are set in the console settings dialog.\n",
        **{f"topic{i}.md": f"# Topic {i}\n\nThe topic {i} page describes gadget number {i} and its knobs.\n"
           for i in range(30)}})
    answer = answer_to("My loop stops at the first error. How can the loop go on after an error and record NaN for "
                       "the steps that fail?", docs, tmp_path)
    assert "Wrap each step in try()" in answer, answer


@pytest.mark.parametrize("question, terms", [
    # a date or a time written out is a value: its parts ("T12") are no names
    ("An API hands me 2023-04-01T12:30:00+02:00; how do I parse it?", [("API", TermKind.NAME)]),
])
def test_values_and_examples_in_a_question_are_no_names(question: str, terms: list[tuple[str, TermKind]]) -> None:
    got = [(t.text, t.kind) for t in extract_terms(question)]
    assert all(t in got for t in terms), got
    assert not any(k in (TermKind.NAME, TermKind.IDENT) and (t[0].isdigit() or t.startswith("T1")) for t, k in got), got


def test_a_file_extension_mentioned_in_passing_is_named_by_its_format_page() -> None:
    # ".gz" is in few passages and no title: a product in passing would be undocumented, but a kind of file is
    # documented under its format's name ("gzip")
    from subagents.extractive.evidence import gather
    from subagents.extractive.selection import select
    from subagents.model import ToolResultBlock, ToolUseBlock

    question = "How do I read the .gz logs my server writes line by line as text?"
    results = [{"source_id": "S1", "passage_id": "gzip#1", "title": "gzip — Support for gzip files", "heading": "gzip",
                "snippet": "Open a gzip-compressed file in text mode with gzip.open() to read its lines as text; "
                           "such files end in .gz."}]
    payload = {"query": question, "results": results,
               "corpus": {"passages": 5000, "term_passages": {"gz": 3}, "term_titles": {"gz": 0}}}
    ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": question}), ToolResultBlock("t1", json.dumps(payload)))])
    sel = select(focus_of(question), ev)
    assert not sel.passing and sel.claims and sel.claims[0].text.startswith("Open a gzip-compressed file"), sel
    assert mentions(make_term(".gz", TermKind.IDENT), text_forms("Open the gz file, or log.gz, with gzip.open()."))


def test_a_quoted_example_the_corpus_never_uses_is_not_an_undocumented_product() -> None:
    # "pgbouncer" alone is a tool the documents do not cover; the same made-up word given as an example is not
    from subagents.extractive.evidence import gather
    from subagents.model import ToolResultBlock, ToolUseBlock
    from subagents.extractive.selection import select

    def sel(question: str):
        results = [{"source_id": "S1", "passage_id": "p#1", "title": "Commands", "heading": "Commands > Close matches",
                    "snippet": "Suggest the closest valid command for a mistyped command with the close matches helper."}]
        payload = {"query": question, "results": results,
                   "corpus": {"passages": 5000, "term_passages": {"blorptz": 0}, "term_titles": {"blorptz": 0}}}
        ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": question}),
                      ToolResultBlock("t1", json.dumps(payload)))])
        return select(focus_of(question), ev)

    assert not sel("How do I suggest the closest valid command for a mistyped command in blorptz?").claims
    chosen = sel("How do I suggest the closest valid command for a mistyped command, such as 'blorptz'?").claims
    assert chosen and chosen[0].text.startswith("Suggest the closest valid command"), chosen


@pytest.mark.parametrize("question, missing", [
    ("How do I use gizmo.spin() to turn a gizmo?", ["gizmo.spin()"]),  # "spin" only of another thing: not gizmo's
    ("How do I use gizmo.turn() to turn a gizmo?", []),  # written whole
    ("How do I use Gizmo.tilt() on a gizmo?", []),  # its last part under a heading that names its class
])
def test_a_qualified_name_is_mentioned_as_written_or_under_its_package(question: str, missing: list[str]) -> None:
    from subagents.extractive.evidence import gather
    from subagents.extractive.selection import select
    from subagents.model import ToolResultBlock, ToolUseBlock

    results = [
        {"source_id": "S1", "passage_id": "gizmo#1", "title": "gizmo — Gizmo tools", "heading": "gizmo — Gizmo tools",
         "snippet": "Call gizmo.turn(angle) to turn a gizmo by the given angle."},
        {"source_id": "S2", "passage_id": "gizmo#2", "title": "gizmo — Gizmo tools", "heading": "The Gizmo class",
         "snippet": "tilt(angle) tilts the gizmo on its base."},
        {"source_id": "S3", "passage_id": "desk#1", "title": "Desktop", "heading": "Desktop",
         "snippet": "The spin button of the desktop spins the wheel."}]
    payload = {"query": question, "results": results}
    ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": question}), ToolResultBlock("t1", json.dumps(payload)))])
    assert [t.text for t in select(focus_of(question), ev).missing] == missing


def test_a_how_to_task_worded_as_the_examples_comments_are_is_answered_by_the_sentence_leading_to_it(
        docs: Path, tmp_path: Path) -> None:
    """A task told in the asker's words ("which gizmos show up most often") meets an example's comments ("# Find
    the ten most frequent gizmos in a crate") more than any sentence: the sentence leading to the example answers,
    and of the examples shown one after another it comes with the one whose comments say what is asked."""
    (docs / "tallies.md").write_text(
        "# Tallies\n\nA tally tool is provided to support convenient and rapid tallies. For example:\n\n"
        "    >>> # Tally colours in a list\n    >>> t = Tally()\n    >>> for c in ['red', 'blue']:\n"
        "    ...     t[c] += 1\n\n"
        "    >>> # Find the ten most frequent gizmos in a crate\n    >>> Tally(crate.gizmos()).top(10)\n"
        "    [('bolt', 12), ('nut', 9)]\n")
    answer = answer_to("I need to see which gizmos show up most often in a crate, the ten most frequent ones. "
                       "What's the least-code way to do that?", docs, tmp_path)
    assert "A tally tool is provided to support convenient and rapid tallies." in answer, answer
    assert "Tally(crate.gizmos()).top(10)" in answer and "t = Tally()" not in answer, answer


@pytest.mark.parametrize("code, said", [
    (">>> # Find the ten most common words\n>>> Counter(words).most_common(10)", ["Find the ten most common words"]),
    ("-- count the rows of each table\nSELECT count(*) FROM t;", ["count the rows of each table"]),
    ("#include <R.h>\n#define USE_RINTERNALS\n# x <- 1\nx <- 2", []),  # C preprocessor lines and code commented out
    ("#!/bin/sh\n## make the package's index pages\nR CMD build pkg", ["make the package's index pages"]),
])
def test_an_examples_comments_are_its_lines_that_say_what_it_does(code: str, said: list[str]) -> None:
    from subagents.extractive.evidence import comments

    assert comments(code) == said


def test_operators_compared_in_a_product_are_searched_as_written_not_by_the_products_letter() -> None:
    """"How do & and && differ in R?": each operator's queries are the operator as written and the question without
    the other; a lone capital opening a query ("R", what is left once the operator goes) names nothing asked. (The
    lone-letter rule for "what is q?" had made each subagent search for "R" alone.)"""
    tasks = asks("How do & and && differ in R?")
    assert [t.queries[0] for t in tasks] == ["&", "&&"], [t.queries for t in tasks]
    assert extract_terms("R") == [] and [t.text for t in extract_terms("what is q?")] == ["q"]


def test_an_examples_comments_sharing_words_but_not_the_task_do_not_answer(docs: Path, tmp_path: Path) -> None:
    """"# Delete everything reachable from the folder named in top" shares "deleted", "everything" and "folder"
    with a question about a scratch folder deleted when done, but not its task: too far in meaning, the comments
    lend their sentence nothing, and the sentence about scratch folders answers first."""
    (docs / "trees.md").write_text(
        "# Walking trees\n\nIn the next example, walking the tree bottom-up is essential: rmtree() refuses a "
        "folder that is not empty:\n\n    # Delete everything reachable from the folder named in top,\n"
        "    # assuming there are no links.\n    for root, dirs, files in walk(top):\n        rmtree(root)\n\n"
        "# Scratch space\n\nTemporaryFolder() creates a folder for scratch files that is removed, with all its "
        "contents, when the context ends.\n")
    answer = answer_to("I need a scratch folder for some intermediate files that gets deleted automatically "
                       "together with everything in it when I'm done. What should I use?", docs, tmp_path)
    first = answer.strip().splitlines()[0]
    assert first.startswith("TemporaryFolder() creates a folder for scratch files"), answer


def test_a_quoted_sentence_that_opens_with_a_comment_mark_stays_a_line_of_the_answer(tmp_path: Path) -> None:
    """An R manual's example comments ("## You can print numbers …") are sentences of its text; quoted at the start
    of a line, "## " made the claim a heading that split the Answer section. The mark is escaped instead."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fmt.txt").write_text(
        "Formatting numbers\n\nThe examples below print numbers.\n\n## You can print numbers using fixed or "
        "scientific notation. format(1e5, scientific = FALSE)\n\n## Widen the penalty so fixed notation is "
        "preferred. options(scipen = 3)\n")
    report = run("How can I print numbers in fixed notation instead of scientific notation?", docs, tmp_path).report
    assert not re.search(r"^#{1,6} (?!Answer$|References$|Details$|Open questions$|How can I|I )", report, re.M), report
    assert "\\## You can print numbers using fixed or scientific notation." in section(report, "Answer"), report


def test_a_question_told_as_a_story_is_answered_by_a_sentence_naming_fewer_of_its_many_words() -> None:
    """A story names its scene, what happened and its goal in many words of its own; a sentence answering it names a
    few of them (weighted coverage 0.23 here, under the 0.3 a short question's answer reaches). With 8 words of its
    own or more a question's floor is `STORY_COVERAGE`, half a short question's, the least a quoted sentence may cover
    (with `STORY_HITS` of its words at least). It had been 0.24: the probes' stories whose best sentence covered 0.15
    to 0.24 were "not found", answerable ones (14) far more often than unanswerable ones (2)."""
    from subagents.extractive.evidence import gather
    from subagents.extractive.selection import focus_of, select
    from subagents.model import ToolResultBlock, ToolUseBlock

    question = ("Every night our backup script dumps the whole production cluster onto a slow tape drive in the "
                "basement; the dump runs for several hours, blocks the reporting jobs and slows every user down until "
                "morning. Which setting makes the nightly dump quicker?")
    focus = focus_of(question)
    counts = {f: 40 for t in focus.terms for f in t.forms}
    for text, answers in (("The jobs setting makes each dump quicker.", True),
                          ("Several jobs can dump one cluster in parallel.", True),  # (coverage 0.23)
                          ("The setting helps.", False)):  # (too few of its words even for a story)
        payload = {"query": question, "results": [{"source_id": "S1", "passage_id": "p#1", "title": "Nightly work",
                                                   "heading": "Nightly work", "snippet": text}],
                   "corpus": {"passages": 5000, "term_passages": counts, "term_titles": {f: 2 for f in counts}}}
        ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": question}),
                      ToolResultBlock("t1", json.dumps(payload)))])
        assert bool(select(focus, ev).claims) is answers, text


@pytest.mark.parametrize("question, terms", [
    # a name of "my" and an everyday word is the asker's placeholder, alone or in a qualified name or code
    ("Why does mylist$val return the element named value?", ["mylist", "val", "return", "element", "named", "value"]),
    ("I patch myapp.db.Client but `from myapp.db import Client` still runs",
     ["patch", "myapp.db.Client", "from myapp.db import Client", "runs"]),
    ("Is MySQL like mypy?", ["MySQL", "mypy"]),  # "my" and no everyday word: products
    ("Is the myth of myself a myth?", ["myth"]),  # English words of their own ("myself" is a stop word)
    # a file or a path passed to a call is the asker's value
    ("Why does tomllib.load() fail on open('config.toml')?", ["tomllib.load()", "fail", "open"]),
    ("Why does @patch('pkg.db.Client') do nothing?", ["@patch", "nothing"]),
    # an identifier of a thing the asker has, and a quoted value given as their data, are theirs; not one asked of
    ("I have an orders table with a manager_id column. How?", ["orders", "table", "column"]),
    ("How do I use the pg_stat_io view?", ["pg_stat_io", "view"]),
    ("My app creates tiny Point objects. Why?", ["app", "creates", "tiny", "objects"]),
    ("Our app keeps Redis instances. Why?", ["app", "Redis", "instances"]),
    ("We want a new 'on_hold' status; how?", ["new", "status"]),
    ("Does the 'auto_explain' module log plans?", ["auto_explain", "module", "log", "plans"]),
    ("How do I change a key, e.g. the email key, i.e. one value?", ["change", "key", "email", "value"]),
    # a capitalised unit after a number is the asker's quantity's; after a name's version, a name
    ("How do I index a 200 GB table or a 180MB file?", ["index", "200", "table", "180", "file"]),
    ("Which PostgreSQL 15 JSON functions exist?", ["PostgreSQL", "15", "JSON", "functions", "exist"])])
def test_the_askers_own_names_files_and_units_are_no_terms(question: str, terms: list[str]) -> None:
    # (a placeholder is searched for, as examples use such names, but is a word, never a name the text must hold)
    assert [t.text for t in extract_terms(question)] == terms
    assert not any(t.named and placeholder(t.text) for t in extract_terms(question))


@pytest.mark.parametrize("question, terms", [
    # a path's "~/" is no operator (before: "No retrieved passage mentions ~/" was a report's whole answer)
    ("I put my password into ~/.pgpass but psql asks", ["password", ".pgpass", "psql", "asks"]),
    ("What does ~ do in a formula?", ["formula", "~"]),  # an operator standing alone still is one
    ("How do I match *.txt files?", ["match", ".txt", "files", "*"]),  # a wildcard before a dot still is one
    ("What does := do?", [":="]),
    # an escape glued to a value's text is that value's characters, not part of a word ("ufeffname")
    ("Why does the header come out as '\\ufeffname'?", ["header", "come", "name"]),
    ("What is the '\\x00' byte?", ["x00", "byte"])])  # an escape standing alone is left as it is
def test_paths_and_escapes_in_a_question_make_no_terms_of_their_own(question: str, terms: list[str]) -> None:
    assert [t.text for t in extract_terms(question)] == terms


def test_a_folder_the_asker_names_is_searched_but_never_required() -> None:
    # ".git folders" is the asker's file layout: searched for, a word (before: "No retrieved passage mentions .git")
    kinds = {t.text: t.kind for t in extract_terms("How do I skip .git folders and node_modules directories?")}
    assert kinds[".git"] is TermKind.WORD and kinds["node_modules"] is TermKind.WORD
    assert extract_terms("What is in a .gitignore file?")[0].kind is TermKind.IDENT  # a file asked about: a name


@pytest.mark.parametrize("question, setting", [
    ("We upgrade a 2 TB cluster that lives on Zorbix. Is there a faster mode?", True),
    ("The cluster lives on Zorbix. Is there a faster mode?", False),  # nobody's scene: no first person
    ("Our tree is too big for our Zorbix image. Is there a smaller install?", True),
    ("We run our app behind Zorbix. How do I read the client's address?", True),
    ("It works on my box, but on my colleague's Zorbix the binding is ignored. Why is that?", True),
    ("We build our app with Zorbix. How do I read the client's address?", False),  # the tool they do it with
    ("My script makes names on the fly with Zorbix. How do I store a value under a name?", False),  # an idiom's "on"
    ("We are moving to Zorbix. How do I define a data class?", False),  # where they go is what they ask of
    ("We run on Zorbix. How do I tune Zorbix?", False),  # the question asks about it
    ("We run on Zorbix and need a faster mode.", False)])  # no sentence asks: nothing is only the scene
def test_a_name_only_the_askers_scene_holds_is_not_asked_about(question: str, setting: bool) -> None:
    from subagents.extractive.undocumented import in_the_setting

    assert in_the_setting(make_term("Zorbix", TermKind.NAME), question) is setting


@pytest.mark.parametrize("question, setting", [
    ("Our Zorbix readiness probe calls the checker. What exit code does it return?", True),
    ("On my Zorbix PC both versions are installed. How do I pick one?", True),
    # describing words between ("My small TCP client loops calling recv() … Why is it doing that?")
    ("My small Zorbix client loops calling recv(). Why does it spin?", True),
    ("Our work with Zorbix servers is slow. How do I speed it up?", False),  # "with": the tool, no describing word
    ("My Python Zorbix function hits the limit. How do I raise its timeout?", False),  # a name between, no describing
    ("Our Zorbix needs a restart. How do I restart it?", False),  # the thing itself, named by nothing after it
    ("We deploy with our Zorbix. How do I read the client's address?", False),  # the tool they do it with
    ("How do I use our Zorbix probe?", False),  # the sentence that asks names it
    # the thing the asker is making ("I'm writing a quick RIFF parser and …") had been a name the documents lack
    ("I'm writing a quick Zorbix parser and using the widget module. What do I change in the widget calls?", True),
    ("I'm writing a Zorbix. What do I change in the widget calls?", False)])  # the thing itself, named by nothing after
def test_a_name_qualifying_the_askers_own_thing_is_their_scene(question: str, setting: bool) -> None:
    from subagents.extractive.undocumented import in_the_setting

    assert in_the_setting(make_term("Zorbix", TermKind.NAME), question) is setting


@pytest.mark.parametrize("question, name, own", [
    ("My settings live in a plain file, e.g. ~/zorbconf/settings.py. How do I run it and get its variables?",
     "settings.py", True),
    ("My settings live in ~/zorbconf/settings.py. How do I run it and get its variables?", "zorbconf", True),
    ("The code under test in zorbapp/service.py still calls the real client. What should I patch?", "service.py", True),
    ("What function strips the extension from a file name like report.csv.gz?", "report.csv.gz", True),
    # the name of a thing of the asker's, set beside it
    ("My C code calls a helper module, zorbhelpers.py, which sits on sys.path. Why is it empty?", "zorbhelpers.py", True),
    ("Our service reads zorb.toml at start. What does zorb.toml configure?", "zorb.toml", False),
    ("I use a Mac, zorb.toml fails to load. What does zorb.toml configure?", "zorb.toml", False),  # no thing of theirs
    ("What does zorb.cfg configure?", "zorb.cfg", False),  # a file asked about: a name the documents must hold
    ("Our client speaks Zorb/IP to the server. How do I read its replies?", "Zorb", False),  # names joined, no path
    ("We ship a Zorb/Native build. How do I read its replies?", "Native", False),
    ("See https://zorb.example/project/zorbtool for it. How do I install it?", "zorbtool", False),  # an address
    ("How do I write a zorb.toml like the one zorbtool reads?", "zorb.toml", False)])  # like a thing, not an instance
def test_a_file_of_the_askers_own_is_not_asked_about(question: str, name: str, own: bool) -> None:
    from subagents.extractive.undocumented import own_file

    assert own_file(make_term(name, TermKind.IDENT), question) is own


def test_the_askers_own_files_and_things_are_no_names_the_documents_lack(docs: Path, tmp_path: Path) -> None:
    # a file in the asker's path, a file name given as an instance, a product qualifying their own thing, a compound
    # in their scene: none is what they ask about (before, each made "No retrieved passage mentions …" the report)
    _notes(docs, 1000)
    for i, scene in enumerate(("The code in zorbapp/service.py copies widgets shallowly.",
                               "Our Zorbix window copies its widgets shallowly.",
                               "On my Windows PC the widgets copy shallowly.")):
        report = run(f"{scene} How do I copy a widget together with its children?", docs, tmp_path / str(i)).report
        assert "clone() with deep=True" in section(report, "Answer"), report
    report = run("How do I copy a widget together with its children, named like zorbwidget.cfg?", docs,
                 tmp_path / "instance").report
    assert "clone() with deep=True" in section(report, "Answer"), report
    report = run("How does `clone(...) |> _$children` copy a widget together with its children?", docs,
                 tmp_path / "expression").report  # an expression, not a command: its names are asked about
    assert "do not answer this question" in section(report, "Answer"), report


def test_a_command_line_is_told_from_an_expression() -> None:
    from subagents.extractive.undocumented import command_line

    assert command_line("py script.py") and command_line("`pip install -e .`") and command_line("zorb --level=3 x.txt")
    assert not command_line("lm(...) |> _$coefficients") and not command_line("a + b") and not command_line("zorb")


@pytest.mark.parametrize("question, own", [
    ("On my Zorbian Station the widgets copy shallowly. How do I copy a widget deeply?", True),
    ("On Zorbian Station I can't copy deeply. How do I copy a widget deeply there?", False),  # not said to be theirs
    ("My Zorbian Station function hits a limit. How do I raise it?", False),  # a thing of theirs it may ask about
    # the asker's platform ("I'm on macOS Big Sur with …"): it had been a compound no passage joins
    ("I'm on Zorbian Station with the new tools, building widgets. How do I copy a widget deeply?", True),
    ("We're on Zorbian Station. How do I copy a widget deeply on Zorbian Station?", False)])  # asked there too
def test_a_name_of_several_words_is_the_scene_where_the_asker_keeps_their_things(question: str, own: bool) -> None:
    from subagents.extractive.undocumented import placed_as_own

    assert placed_as_own(make_term("Zorbian Station", TermKind.NAME), question) is own


def test_values_quoted_in_variants_are_data_not_what_is_asked_about(docs: Path, tmp_path: Path) -> None:
    # "so 'hôtel' and 'hotel' match", "'Alice' and 'alice' must collide": the asker's data, differing by accents or
    # case; before, "No retrieved passage mentions Zorbel" (a name) and the values outweighed what is asked
    assert variant_values("so that 'hôtel' and 'hotel' match, and 'Alice' and 'alice' collide, unlike 'Bob'") == {
        "hôtel", "hotel", "Alice", "alice"}
    assert variant_values("What does the 'nonlocal' keyword do, unlike 'global'? Python's 'with'") == set()
    report = run("How do I copy a widget together with its children so that 'Zorbel' and 'zorbel' are both copied?",
                 docs, tmp_path).report
    assert "clone() with deep=True" in section(report, "Answer"), report
    # a sentence holding the values, not what is asked, does not outrank the answer (they weigh as context)
    (docs / "notes.txt").write_text("Notes\n\nTo copy the Zörbel and zorbel labels of a widget, call copy_labels().\n")
    report = run("How do I copy a widget together with its children so that 'Zörbel' and 'zorbel' are both copied?",
                 docs, tmp_path / "values").report
    answer = section(report, "Answer")
    assert "clone() with deep=True" in answer and "copy_labels" not in answer, report


def test_a_keyword_run_the_synopsis_writes_with_its_alternatives_between_is_documented_syntax() -> None:
    # "SET CONSTRAINTS ALL DEFERRED" is the command's synopsis filled in: before, "No retrieved passage mentions
    # CONSTRAINTS ALL DEFERRED"; prose between the keywords is not a synopsis
    from subagents.extractive.undocumented import _elided_syntax

    words = ["CONSTRAINTS", "ALL", "DEFERRED"]
    assert _elided_syntax(words, "SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | IMMEDIATE }")
    assert not _elided_syntax(words, "SET CONSTRAINTS ALL changes the mode of every constraint that is DEFERRED")


def test_a_command_line_written_as_code_is_no_qualified_name(docs: Path, tmp_path: Path) -> None:
    # "`zorbrun copy.widget`" is a command with its argument, not the name "copy.widget" of a package "zorbrun copy"
    # (before: "No retrieved passage mentions zorbrun copy.widget", whatever the passages held)
    report = run("Typing `zorbrun copy.widget` copies it shallowly. How do I copy a widget together with its "
                 "children?", docs, tmp_path).report
    assert "clone() with deep=True" in section(report, "Answer"), report


def test_a_place_named_in_the_askers_scene_is_no_tool_the_documents_lack(docs: Path, tmp_path: Path) -> None:
    # "our widget is on Zorbian": where the asker's things are, which the question after it does not
    # ask about; named as the tool they work with, it is still a thing the documents lack
    _mentioned_once(docs, "The Zorbian register holds a value and its flag.")
    for i, place in enumerate(("Zorbian", "Qwertzian")):  # mentioned once; in no document
        report = run(f"Our widget is on {place}. How do I copy a widget together with its children?", docs,
                     tmp_path / str(i)).report
        assert "clone() with deep=True" in section(report, "Answer"), report
    _not_found_for_a_name_in_passing("We copy our widgets with Zorbian. How do I copy a widget together with its "
                                     "children?", "Zorbian", docs, tmp_path / "other")


def test_a_placeholder_is_my_and_an_everyday_word_and_no_word_of_its_own() -> None:
    assert placeholder("mylist") and placeholder("MyClass") and placeholder("my_table") and placeholder("myapp.db.Client")
    assert not placeholder("mysql") and not placeholder("MyISAM") and not placeholder("mypy")  # no everyday word after
    assert not placeholder("myself") and not placeholder("myth")  # English words of their own


def test_a_value_with_three_decimals_is_no_version_to_find() -> None:
    # "my invoice totals come out like 7.325": no release is numbered with three decimals; before, "No retrieved
    # passage mentions 7.325" was the whole report; after a name it is still a version
    from subagents.extractive.selection import focus_of
    from subagents.extractive.undocumented import missing_names

    text = "To copy a gadget deeply, copy its children first."
    for question, missing in (("My gadget totals come out like 7.325; how do I copy a gadget deeply?", []),
                              ("How do I copy a gadget deeply in Gadget 7.325?", ["7.325"]),
                              ("How do I copy a gadget deeply in 3.14?", ["3.14"])):
        ev = _searched(question, text, {"gadget": 40}, {"gadget": 2})
        assert [t.text for t in missing_names(focus_of(question), ev)] == missing, question


def test_a_qualified_r_name_is_mentioned_in_the_section_that_names_its_package() -> None:
    # "foreign::read.dta refuses to open it": after "::" R's name is whole, and the section whose first passage
    # names package foreign documents read.dta in its next; before, "No retrieved passage mentions foreign::read"
    from subagents.extractive.selection import focus_of
    from subagents.extractive.terms import qualified_parts
    from subagents.extractive.undocumented import missing_names

    assert qualified_parts("foreign::read.dta") == ["foreign", "read.dta"]
    assert qualified_parts("os.path.join") == ["os", "path", "join"]
    question = "Why does gadgets::read.gdt refuse to open my file?"
    opening = "The recommended package gadgets provides import facilities for gadget files."
    documented = "Files from versions 5 up to 12 can be read by functions read.gdt and write.gdt."
    for more, missing in (((documented,), []), ((), ["gadgets::read.gdt"])):
        ev = _searched(question, opening, {"gadgets": 40}, {"gadgets": 2}, more=more)
        assert [t.text for t in missing_names(focus_of(question), ev)] == missing, more
    # a word of any sentence is not its package named ("copy.replace()" is no `replace` beside "to copy a gadget")
    question = "How do I use copy.shuffle() on a gadget?"
    ev = _searched(question, "To copy a gadget deeply, copy its children first.", {"gadget": 40}, {"gadget": 2},
                   more=("The shuffle() function reorders the children of a gadget.",))
    assert [t.text for t in missing_names(focus_of(question), ev)] == ["copy.shuffle()"]


@pytest.mark.parametrize("question, asked", [
    ("How much does a Posit Workbench license cost per year?", "what a Posit Workbench license costs"),
    ("How much does a sequential scan cost compared to an index scan?", None),  # a planner's cost: no thing bought
    ("What does a commercial license cost per user per year?", "what a commercial license costs"),
    ("What does a sequential scan cost the planner?", None),
    ("Roughly what percentage of Python developers had moved to 3.11?", "what share of Python developers"),
    ("What percentage of the table is scanned before autovacuum runs?", None),  # a setting's share, no population's
    ("What share of PostgreSQL installations still store md5 hashes?", "what share of PostgreSQL installations"),
    # a price with words before it ("the annual price"); a plan's cost is the planner's
    ("What is the annual price of a support subscription for Widgets Pro?",
     "what a support subscription for Widgets Pro costs"),
    ("What is the total cost of a plan?", None),
    ("Where did John Chambers earn his doctorate, and in which year?", "when or where John Chambers doctorate"),
    ("What degree of isolation does Serializable Snapshot Isolation give?", None),  # a degree of no one's life
    # the population's word ends the share, whatever follows it
    ("What share of professional developers report using Gadgets daily?", "what share of professional developers"),
    ("Roughly what percentage of professional developers worldwide use Gadgets?", "what share of professional developers"),
    ("Which university did Guido van Rossum graduate from?", "when or where Guido van Rossum graduate"),
    ("In what year did Guido van Rossum retire from Dropbox?", "when or where Guido van Rossum retire"),
    # a population of downloads, whatever verb follows it; a place ends what the share is of
    ("According to the docs, what share of package downloads currently comes from 3.7 or older?",
     "what share of package downloads"),
    ("What percentage of rows from customers are deleted each day?", None),
    ("Who is Guido van Rossum?", None),  # what he made, which manuals say
    ("Which company does Guido van Rossum work for these days?", "whom Guido van Rossum works for"),
    ("Who employs Tom Lane?", "whom Tom Lane works for"),
    ("Does asyncio work at all on Windows Server?", None),  # a name, but no employer asked
    ("How many times faster is a deep copy than a shallow copy?", "how many times faster a deep copy is"),
    ("How many times is the trigger fired per row?", None),  # how often, no ratio
    ("How much slower does a deep copy run when tracing is on?", "how much slower a deep copy is"),  # a ratio too
    ("How much faster does the thin variant build?", "how much faster the thin variant is"),  # (its verb ends it)
    ("How much more memory does a deep copy use?", None),  # an amount of a thing, in its own unit
    ("How much faster than a list is a deque?", None),  # (its subject is not said where a ratio's is)
])
def test_a_price_a_population_share_and_a_life_are_asked_only_in_their_own_words(question: str, asked: str | None) -> None:
    from subagents.extractive.unstated import lives, prices, ratios, shares

    assert [x.text for f in (prices, shares, lives, ratios) for x in f(question)] == ([asked] if asked else [])


@pytest.mark.parametrize("question, asked", [
    ("Exactly how many megabytes of stack does each new thread get by default on Linux?",
     "how many megabytes of stack does each new thread get by default on Linux"),
    ("I leave sessions open for days. After how many minutes of inactivity does the help server shut itself down?",
     "how many minutes of inactivity does the help server shut itself down"),
    ("How many bytes does a UUID take?", "how many bytes does a UUID take"),
    ("In psql I'd like to see how many milliseconds each query takes after it runs.", None),  # how to see it
    ("How do I find out how many bytes an object takes in memory?", None),  # how to find it out
    # memory asked, a size in bytes answers it
    ("I want to know the limits: how many can I listen on, and how much memory does each registered channel take?",
     "how much memory does each registered channel take"),
    ("How much space does the map spend on each heap page?", None),  # "one byte to represent each page" says it
    ("How do I find how much memory a table uses?", None),
])
def test_a_quantity_in_its_unit_is_asked_at_a_clauses_opening(question: str, asked: str | None) -> None:
    from subagents.extractive.unstated import quantities

    assert [q.text for q in quantities(question)] == ([asked] if asked else [])


def test_a_quantity_is_stated_by_a_number_in_a_unit_of_its_kind_that_is_no_bound() -> None:
    from subagents.extractive.unstated import quantities

    stack, = quantities("Exactly how many megabytes of stack does each new thread get by default on Linux?")
    assert stack.stated_by("A thread gets an 8 MB stack by default.")
    assert stack.stated_by("The default stack is 8192 kB.")  # another unit of a size
    for bound in ("The stack size must be 0 (use platform or configured default) or a positive integer value of at least "
                  "32,768 (32 KiB).", "32 KiB is currently the minimum supported stack size value.",
                  "Some platforms require a minimum stack size > 32 KiB."):
        assert not stack.stated_by(bound), bound
    assert not stack.stated_by("A thread runs for 8 seconds by default.")  # a time, not a size
    assert not stack.stated_by("Each worker may allocate 8 MB of memory.")  # not of the stack
    uuid, = quantities("Exactly how many bytes does a UUID take on a 64-bit machine?")
    assert not uuid.stated_by("On a 64-bit machine a UUID is stored inline.")  # a word size, no amount
    assert uuid.stated_by("A UUID takes 16 bytes.")
    # the thing asked of, by its words (not the setting after it): an empty list is no list item
    empty, = quantities("How many bytes does an empty widget list take in Gadgets 3.11 on a 64-bit machine?")
    assert not empty.stated_by("Each widget requires space for a pointer, which is 4 bytes.")
    assert not empty.stated_by("The pointers for a list that size would only require 16 GiB of space.")
    assert empty.stated_by("An empty widget list takes 56 bytes.")
    channel, = quantities("How much memory does each registered channel take?")
    assert channel.stated_by("Each registered channel takes 64 bytes of shared memory.")
    assert not channel.stated_by("Each registered channel is kept in shared memory.")  # no size
    limit, = quantities("How many bytes can a UUID take at most?")  # a bound asked is stated by one
    assert limit.stated_by("A UUID takes at most 16 bytes.")


@pytest.mark.parametrize("unstated, question, reason, stated, said", [
    # "Exactly how many megabytes of stack does each new thread get by default?" had been answered from "… at least
    # 32,768 (32 KiB)", the least a stack may be
    ("Theme caches\n\nEach widget keeps a theme cache of at least 64 KiB, so that themes are drawn quickly.\n",
     "Exactly how many kilobytes of theme cache does each widget keep by default?",
     "No retrieved passage says how many kilobytes of theme cache",
     "Theme caches\n\nEach widget keeps a theme cache of 128 KiB by default, so that themes are drawn quickly.\n",
     "128 KiB"),
    # "Which is better for publication-quality figures, lattice or base graphics?" had been answered from "There is a
    # recommended package lattice …" and "A single plot in R is known as a figure …"
    ("Drawing widgets\n\nThe sketch engine draws widgets as figures on a canvas. The plot engine draws widgets as figures "
     "in panels. There is a recommended sketch engine theme for figures.\n",
     "Which is better for drawing widget figures, the sketch engine or the plot engine?",
     "No retrieved passage says which of sketch engine or plot engine is the better choice",
     "Drawing widgets\n\nThe sketch engine draws widgets as figures on a canvas. For figures in print the plot engine is "
     "better than the sketch engine.\n",
     "better than the sketch engine"),
    # "In your opinion, is tkinter still worth teaching, or would I be better off switching?" had been answered from what
    # tkinter is
    ("Drawing widgets\n\nThe sketch engine draws widgets as figures on a canvas, for teaching and for print.\n",
     "My students find it dated. In your opinion, is the sketch engine still worth teaching for drawing widgets?",
     "No retrieved passage says what a reader thinks (In your opinion, is the sketch engine still worth teaching",
     "Drawing widgets\n\nThe sketch engine draws widgets as figures on a canvas. For teaching, the sketch engine is "
     "recommended: it is simpler than the plot engine.\n",
     "For teaching, the sketch engine is recommended"),
    # "…, and why?" had been a part of its own, "why?", answered from the first part's subject alone
    ("Drawing widgets\n\nThe sketch engine draws widgets as figures on a canvas, for teaching and for print.\n",
     "Some say it is dated. In your opinion, was the sketch engine redesign handled well, and why?",
     "No retrieved passage says what a reader thinks (In your opinion, was the sketch engine redesign handled well",
     "Drawing widgets\n\nThe sketch engine redesign was handled well: it is better than the old engine.\n",
     "The sketch engine redesign was handled well"),
    # a growth per hour had been answered from what the log holds
    ("Widget logs\n\nThe widget log grows quickly when tracing is on, so rotate the widget log often.\n",
     "Our disk is small. How many megabytes per hour does the widget log grow when tracing is on?",
     "No retrieved passage says how many megabytes per hour does the widget log grow when tracing is on",
     "Widget logs\n\nWhen tracing is on, the widget log grows by about 20 MB per hour.\n",
     "about 20 MB per hour"),
    # a size named before its measure had been answered from the sentence naming it
    ("Widget reader\n\nThe widget reader checks each field against the maximum field size it allows.\n",
     "Our import chokes on a huge column. What's the default maximum field size the widget reader allows?",
     "No retrieved passage says the maximum field size",
     "Widget reader\n\nBy default the widget reader allows a maximum field size of 128 KiB.\n",
     "128 KiB"),
    # "the new `type Pair[T] = tuple[T, T]` statement syntax" had been answered from sentences about type aliases
    ("Widget aliases\n\nA widget alias gives a widget type a second name, so that code can refer to it briefly.\n",
     "How do I declare a generic widget alias with the new `alias Pair[T] = widget[T, T]` statement?",
     "No retrieved passage says how to write `alias Pair[T] = widget[T, T]`",
     "Widget aliases\n\nA widget alias gives a widget type a second name. Declare a generic widget alias with a "
     "statement such as alias Point[K] = widget[K, K] in your module.\n",
     "alias Point[K] = widget[K, K]"),
], ids=["quantity", "opinion", "view", "view-and-why", "rate", "size", "syntax"])
def test_what_no_sentence_states_is_not_found_until_one_does(unstated: str, question: str, reason: str, stated: str,
                                                             said: str, docs: Path, tmp_path: Path) -> None:
    (docs / "widgets.txt").write_text(unstated)
    report = run(question, docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert reason in report, report
    (docs / "widgets.txt").write_text(stated)
    assert said in answer_to(question, docs, tmp_path / "said")


@pytest.mark.parametrize("question, choices", [
    ("Which is better for publication-quality figures, lattice or base graphics?", ("lattice", "base graphics")),
    ("Our team is choosing a platform for reporting. Is R or SAS the better choice?", ("R", "SAS")),
    ("For grouping rows, is dplyr or data.table the better choice?", ("dplyr", "data.table")),
    ("I'm new to this. Between Flask and FastAPI, which one is better for a beginner?", ("Flask", "FastAPI")),
    ("To empty a big table, is TRUNCATE better than a DELETE with no WHERE clause?", None),  # what each does says it
    ("Why is Decimal a better choice than float for amounts of money?", None),  # a reason asked
    ("Is it better to use a list or a tuple here?", None),
    ("Which is better, storing the rows in one table or splitting them across many partitions by date?", None),  # clauses
    # "is A a better … than B" asks an opinion when the asker wants the reader's view
    ("I teach teenagers. In your view, is Python a better first language for them than JavaScript?",
     ("Python", "JavaScript")),
    ("Honestly, in your opinion, is tkinter a better choice than PyQt these days, or is it a dead end?",
     ("tkinter", "PyQt")),
    ("Is Python a better first language than JavaScript for teenagers?", None),  # no view asked: what each does
])
def test_which_of_named_things_is_the_better_choice_is_asked_as_an_opinion(question: str, choices) -> None:
    from subagents.extractive.unstated import preferences

    assert [p.choices for p in preferences(question)] == ([choices] if choices else [])


@pytest.mark.parametrize("question, clause", [
    # the asker wants the reader's view of one thing: no choice between named things to judge
    ("Students call it dated. In your opinion, is tkinter still worth teaching, or should I switch? I teach adults.",
     "In your opinion, is tkinter still worth teaching, or should I switch"),
    ("Do you think the widget module is worth learning today?", "Do you think the widget module is worth learning today"),
    ("In your opinion, is tkinter a better choice than PyQt?", None),  # a choice between two: a preference
    ("Is tkinter worth learning?", None),  # no view asked: what it does answers it
])
def test_the_readers_view_asked_of_one_thing_is_an_opinion(question: str, clause: str | None) -> None:
    from subagents.extractive.unstated import views

    assert [v.clause for v in views(question)] == ([clause] if clause else [])


def test_a_view_is_stated_by_a_sentence_judging_what_it_is_of() -> None:
    from subagents.extractive.unstated import views

    view, = views("In your opinion, is tkinter still worth teaching to beginners?")
    assert view.about() == ["tkinter", "teaching", "beginners"]
    assert view.stated_by("For teaching beginners, tkinter is recommended over the other toolkits.")
    assert not view.stated_by("The tkinter package is the standard Python interface to the Tcl/Tk GUI toolkit.")
    assert not view.stated_by("Tk is better than it was.")  # a judgement of something else
    assert not view.stated_by("A course teaching beginners tkinter takes a week.")  # no judgement


@pytest.mark.parametrize("question, code", [
    ("How do I use the new `type` statement to declare an alias like `type Pair[T] = tuple[T, T]`, and when?",
     "type Pair[T] = tuple[T, T]"),
    ("I want the new soft-keyword syntax, something like type Pair[T] = tuple[T, T]. How do I read its value?",
     "type Pair[T] = tuple[T, T]"),  # written bare, its comma inside the brackets
    ("Why does WHERE customer_id = customer_id now fail with an ambiguity error?", None),  # no code shown
    ("Why does `x = [[]] * 3` share its lists?", None),  # not called new: the asker's code
    ("Is there a new `zorbify()` function?", None),  # a name alone, no form
])
def test_code_the_asker_calls_new_is_a_syntax_asked(question: str, code: str | None) -> None:
    from subagents.extractive.unstated import syntaxes

    assert [c.code for c in syntaxes(question)] == ([code] if code else [])


def test_a_syntax_is_written_in_a_text_by_its_form_whatever_its_names() -> None:
    from subagents.extractive.unstated import Syntax

    form = Syntax("type Pair[T] = tuple[T, T]").form
    assert form.search("type Point[K]=list[K, K]") and form.search(">>> type  Vec[N] = tuple[N,N]")
    assert not form.search("Pair = tuple[T, T]") and not form.search("the type Pair[T] is generic")
    assert not form.search("subtype Pair[T] = tuple[T, T]")  # another word


@pytest.mark.parametrize("question, claim", [
    # "A colleague says recent Python can run with the GIL switched off …", "Newer R versions are said to ship a
    # penguins data set …", "I've read there is now an experimental free-threaded CPython build" had been answered
    ("A colleague says recent widgets can run with the lock switched off. How do I switch it off?",
     "recent widgets can run with the lock switched off"),
    ("Newer Zorb versions are said to ship a penguins data set. How do I load it?",
     "Newer Zorb versions ship a penguins data set"),
    ("I've read there is now an experimental lock-free widget build. Which flag builds it?",
     "there is now an experimental lock-free widget build"),
    ("I read that the widget library is great. How do I use it?", None),  # nothing told new
    ("Zorb widgets are said to ship a penguins data set. How do I load it?", None),
    ("I read that swapping it takes pointing a file at the new library. Is that so?", None),  # any new thing
    ("Now I read the file with open(). Why is it slow?", None),  # reading, no hearsay of anything new
])
def test_something_new_the_asker_heard_of_is_a_claim_asked(question: str, claim: str | None) -> None:
    from subagents.extractive.unstated import heard

    assert [h.claim for h in heard(question)] == ([claim] if claim else [])


def test_a_claim_heard_is_documented_by_a_sentence_holding_half_its_words_and_its_rarest() -> None:
    from subagents.extractive.unstated import heard

    claim, = heard("A colleague says recent widgets can run with the zorblock switched off. How do I do it?")
    counts = {"widgets": 40, "run": 300, "zorblock": 2, "switched": 60}
    stated = "Widgets run with the zorblock switched off when started with -Z."
    assert claim.documented_in(_searched("zorblock", stated, counts, {"widget": 2}))
    for said in ("Widgets run with the global lock switched off when started with -Z.",  # not its rarest word
                 "The zorblock guards each door."):  # its rarest word alone
        assert not claim.documented_in(_searched("zorblock", said, counts, {"widget": 2})), said
    version, = heard("I read that widgets 3.13 now run faster. How?")  # a version and "now" say it is new: no words
    assert [t.text for t in version.words(_searched("x", "x", counts, {}).weights)] == ["widgets", "run", "faster"]


def test_something_new_heard_of_that_no_retrieved_sentence_states_is_not_found(docs: Path, tmp_path: Path) -> None:
    (docs / "widgets.txt").write_text(
        "Widgets\n\nWidgets run with the zorblock switched off when they are started with the -Z flag. A widget "
        "started this way shares its frames with other widgets. Widgets ship a gallery of frames in the frames "
        "folder.\n")
    stated = "A colleague says recent widgets can run with the zorblock switched off. How do I start widgets that way?"
    assert "-Z flag" in answer_to(stated, docs, tmp_path / "stated")
    unstated = "A colleague says recent widgets can share a zorblock pool across hosts. How do I start widgets so?"
    answer = answer_to(unstated, docs, tmp_path / "unstated")
    assert "do not answer" in answer and "recent widgets can share a zorblock pool across hosts" in answer, answer


def test_a_preference_is_stated_by_a_sentence_ranking_the_named_things() -> None:
    from subagents.extractive.unstated import preferences

    choice, = preferences("Which is better for figures, lattice or base graphics?")
    assert choice.stated_by("For multi-panel figures lattice is often better than base graphics.")
    assert choice.stated_by("Prefer lattice rather than base graphics when panels share axes.")
    assert not choice.stated_by("There is a recommended package lattice which builds on grid.")  # one thing alone
    assert not choice.stated_by("Base graphics and lattice both draw figures on a device.")  # no ranking


@pytest.mark.parametrize("question, asked", [
    ("Which command-line flags of http.server take the certificate and key?", ("http.server", "take the certificate and key")),
    ("Which initdb flag turns on page checksums?", ("initdb", "turns on page checksums")),
    ("Which keyword argument of extractall makes it skip files?", ("extractall", "makes it skip files")),
    ("Which server setting should we raise?", None),  # an everyday word names no thing
    ("Which option do I pass it?", None),
    # asked whether there is one, the owner before the option's word or after "on", "of", "to"
    ("Is there a pg_basebackup option that caps the I/O operations per second?",
     ("pg_basebackup", "caps the I/O operations per second")),
    ("Is there a parameter on gzip.open or GzipFile that switches on threaded compression?",
     ("gzip.open", "switches on threaded compression")),
    ("Is there a server setting that ends idle sessions?", None),
    ("Is there a switch for that?", None),
    # a thing named as a module, command …, however common its name ("Which keyword argument of the json module makes the
    # parser accept comments?" had found no option)
    ("Which keyword argument of the widget module makes the parser accept comments?",
     ("widget", "makes the parser accept comments")),
    ("Which keyword argument of the widget makes the parser accept comments?", None),  # an everyday word
    # a thing the asking sentence refers back to: the last call or dotted name told before
    ("I found Sys.setFileTime, but it takes a path and a time. Which argument makes it change the access time only?",
     ("Sys.setFileTime", "change the access time only")),
    ("I call the setter, but it takes a path. Which argument makes it change the access time only?", None),
    ("I run Sys.setFileTime on my_backup_dir. Which argument makes it change the access time only?",  # (their data)
     ("Sys.setFileTime", "change the access time only")),
    # what it should do said of what was told before: nothing to judge by ("… Which option of the build command lets
    # me move it?" had been "not found" for want of "move" in the command's passages)
    ("I want the build output under /tmp. Which option of the build command lets me move it?", None),
    ("I found Sys.setFileTime. Which argument makes it do that?", None),
])
def test_an_option_of_a_named_thing_is_asked_with_what_it_does(question: str, asked) -> None:
    from subagents.extractive.unstated import options

    assert [(o.owner, o.does) for o in options(question)] == ([asked] if asked else [])


def test_an_options_text_says_its_purpose_only() -> None:
    from subagents.extractive.unstated import options

    # the report's reason had been "which option of gzip.open turns on threads, and how many does it use"
    option, = options("Is there a parameter on gzip.open that turns on threads, and how many does it use?")
    assert option.text == "which option of gzip.open turns on threads"


def test_an_option_its_owners_passages_do_not_speak_of_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "Which command-line flags of http.server take the certificate and key?" had been answered from the ssl module's
    # sentences about certificates; http.server's own options are --bind, --directory and --cgi
    (docs / "gizmod.txt").write_text("gizmod — serve widgets over the network\n\nThe gizmod server shares widgets with "
                                     "clients on the network.\n\n--directory DIR\nServe widgets from the directory DIR "
                                     "instead of the current one; a widget file there is served as it is.\n\n"
                                     "--bind ADDRESS\nListen for widget clients on the address ADDRESS only.\n")
    (docs / "crypto.txt").write_text("Widget certificates\n\nA certificate and its private key prove who a widget "
                                     "server is. Load a certificate and key file before serving widgets securely.\n")
    report = run("Which command-line flag of gizmod takes the certificate and key file?", docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "No retrieved passage says which option of gizmod takes the certificate and key file" in report, report
    # one its passages speak of is answered
    answer = answer_to("Which command-line flag of gizmod sets the directory to serve widgets from?", docs,
                       tmp_path / "said")
    assert "Serve widgets from the directory DIR" in answer, answer


def test_an_option_its_owners_passages_speak_of_only_in_part_is_not_found(docs: Path, tmp_path: Path) -> None:
    # "which tarfile.open argument turns on multithreaded gzip compression" had been answered by tarfile's gzip modes:
    # two of the purpose's three words, but not the one that sets it apart (the rarest in the corpus)
    (docs / "gizmod.txt").write_text("gizmod — serve widgets over the network\n\nThe gizmod server shares widgets with "
                                     "clients on the network.\n\n--gzip\nSend each widget with gzip compression, at "
                                     "one level for all widgets.\n\n--bind ADDRESS\nListen for widget clients on the "
                                     "address ADDRESS only.\n")
    report = run("Which command-line flag of gizmod turns on multithreaded gzip compression?", docs, tmp_path).report
    assert "No retrieved passage says which option of gizmod turns on multithreaded gzip compression" in report, report
    answer = answer_to("Which command-line flag of gizmod turns on gzip compression?", docs, tmp_path / "said")
    assert "Send each widget with gzip compression" in answer, answer
    # such a thing as the asker told it: what sets it apart is in their telling
    report = run("I read that gizmod can now apply a gzip compression made by several threads at once. Which "
                 "command-line flag of gizmod turns on such a compression?", docs, tmp_path / "such").report
    assert "do not answer this question" in section(report, "Answer"), report


def test_an_option_for_such_a_thing_is_asked_as_the_asker_told_the_thing() -> None:
    # "I read that you can now take a backup containing only the blocks changed since the previous one … What
    # pg_basebackup option produces such a backup?" had been judged by "produces such a backup" alone, which any
    # passage on base backups speaks of
    from subagents.extractive.unstated import options

    option, = options("I read you can now take a widget dump holding only the widgets changed since the last one. "
                      "Which gizmod option produces such a dump?")
    assert option.aim == "produces a dump holding only the widgets changed since the last one"
    option, = options("Which gizmod option produces such a dump?")  # told nowhere: as asked
    assert option.aim == "produces such a dump"


def test_an_options_purpose_leaves_out_its_setting_the_asking_verbs_and_the_corpus_name() -> None:
    from subagents.extractive.terms import Weights
    from subagents.extractive.unstated import options

    option, = options("Which argument of Sys.sleep() do I pass to make R wait for a clock hour when I run a batch script?")
    weights = Weights()
    weights.add(5000, {"r": 4900, "wait": 60, "clock": 16, "hour": 40})  # R in nearly every passage: the corpus's own
    assert [t.text for t in option.purpose(weights)] == ["wait", "clock", "hour"]


def test_an_option_is_judged_only_by_its_owners_passages() -> None:
    from subagents.extractive.unstated import options

    question = "Which flag of gizmod takes the certificate and key?"
    option, = options(question)
    ev = _searched(question, "A certificate and its key prove who a server is.", {"certificate": 40}, {"certificate": 3})
    assert option.documented_in(ev)  # no passage is gizmod's (their title is "Backups"): nothing to judge by


def test_a_ratio_is_stated_by_a_sentence_giving_a_multiple_of_its_subject() -> None:
    from subagents.extractive.unstated import ratios

    ratio, = ratios("How many times faster is a deep copy than a shallow copy?")
    for said in ("A deep copy is about three times slower.", "A deep copy takes 2.5x as long.",
                 "A deep copy is tenfold slower.", "A deep copy takes twice as long.", "A deep copy costs 40% more."):
        assert ratio.stated_by(said), said
    assert not ratio.stated_by("A deep copy takes longer than a shallow one.")  # in words only
    assert not ratio.stated_by("A deep copy walks the scaffold of nested objects.")  # "fold" of another word
    assert not ratio.stated_by("A list is three times faster than a tuple.")  # not of its subject
    ratio, = ratios("How much faster does the thin variant build?")  # of the variant, not of builds
    assert ratio.stated_by("The thin variant is about 30% faster.")
    assert not ratio.stated_by("Small objects use 50% less memory on 64-bit builds.")


@pytest.mark.parametrize("question, asked", [
    ("How many idle connections does the connection pool keep by default?",
     "how many idle connections the connection pool keeps"),
    ("Exactly how many compiled patterns does the re module keep in its cache?",
     "how many compiled patterns the re module keeps"),
    ("I run a scheduler. How many pending events can a scheduler hold?", "how many pending events a scheduler holds"),
    ("How many arguments does range() take?", None),  # a signature answers it, no sentence counting them
    ("How many threads does the executor use?", None),  # a formula ("os.cpu_count() + 4") may answer it
    ("How do I keep many idle connections open?", None),
    ("How many of them does the pool keep?", None),  # what is counted it does not say (was an IndexError)
    # a noun before the verb ("that cache hold"): it had read "how many patterns that caches"
    ("Exactly how many patterns does that cache hold before it drops old ones?", "how many patterns that cache holds"),
    # how many times something does a thing at most or by default
    ("How many redirects will the redirect handler follow before it gives up?",
     "how many redirects the redirect handler follows"),
    ("How many retry attempts does install.packages() make by default?", "how many retry attempts install.packages() makes"),
    # how many times it does a thing, asked after a colon as well ("I'd like to know: how many times does download.file
    # retry on its own …?" had found no capacity)
    ("Before wrapping it I'd like to know: how many times does the fetcher retry on its own?",
     "how many times the fetcher retries"),
    ("How many times is the hook called?", None),
])
def test_how_many_things_something_keeps_is_a_capacity(question: str, asked: str | None) -> None:
    from subagents.extractive.unstated import capacities

    assert [c.text for c in capacities(question)] == ([asked] if asked else [])


def test_a_capacity_is_stated_by_a_number_counting_the_thing_or_a_named_setting() -> None:
    from subagents.extractive.unstated import capacities

    capacity, = capacities("How many results does the lru_cache keep if I don't pass a maxsize?")
    for said in ("The cache keeps up to 128 most recent results.", "results (default 100)",
                 "The number of results kept is 5.", "@functools.lru_cache(maxsize=128, typed=False)"):
        assert capacity.stated_by(said), said
    for said in ("The cache keeps the most recent results.",  # in words only
                 "Pattern.sub(repl, string, count=0)",  # another name's default
                 "It is called with the argument 0 after each result is stored.",  # a number of something else
                 "In 2023 the cache kept results."):  # a year before another word
        assert not capacity.stated_by(said), said
    pooled, = capacities("How many idle connections does the pool keep by default?")
    assert not pooled.stated_by("get(key, default=0) returns the value for key.")  # "by default" names no setting
    retried, = capacities("How many times does the fetcher retry after a failure?")
    assert retried.stated_by("The fetcher retries up to 3 times, then raises.")
    assert not retried.stated_by("The fetcher is 3 times faster than it was.")  # a ratio


@pytest.mark.parametrize("question, asked", [
    ("With dblink, what is the maximum number of named connections a single session can keep open?",
     ("the maximum number of named connections", "session")),
    ("It has naming rules. What's the maximum number of characters allowed in a package name?",
     ("the maximum number of characters", "name")),
    ("What is the maximum size of a table?", ("the maximum size of a table", "")),
    ("What’s the largest size of a row?", ("the largest size of a row", "")),  # a typographic apostrophe
    ("What exact number does it pass to listen()?", ("what exact number does it pass to listen()", "")),
    ("What exact value in meters does earth() return?", ("what exact value in meters does earth() return", "")),
    # what has the bound named before its verb: it had been counted with the headers ("headers HTTPConnection")
    ("What is the maximum number of headers HTTPConnection will accept, and how can I raise it?",
     ("the maximum number of headers", "HTTPConnection")),
    # asked whether there is one
    ("Our ETL opens named dblink connections. Is there a maximum number of named connections a session can hold open?",
     ("the maximum number of named connections", "session")),
    ("What value does the loop variable have afterwards?", None),  # a value a manual says in words
    ("Which setting sets the maximum number of connections?", None),  # which setting, not the figure
    # its unit said between commas, what is counted in four words
    ("What is the maximum length, in characters or bytes, of a regular expression pattern that R will accept?",
     ("the maximum length of a regular expression pattern", "R")),
    # what is bounded named before its measure ("What's the default maximum field size the csv reader allows …?" had
    # been answered from the sentence saying field_size_limit() returns it)
    ("What's the default maximum field size the widget reader allows?", ("the maximum field size", "")),
    ("What is the smallest stack size I'm allowed to request?", ("the smallest stack size", "")),
    # its owner said before it ("the csv module's default maximum field size" had been answered from the sentence
    # saying a function returns it)
    ("What is the widget module's default maximum field size before I raise it?", ("the maximum field size", "")),
    ("What is Zorb's maximum number of columns in a table?", ("the maximum number of columns", "table")),
    # a bound named a limit on what is counted (a handler thread's name, "Thread-2", had counted threads)
    ("What is the default upper limit on concurrent handler threads, and which parameter lowers it?",
     ("the maximum number of concurrent handler threads", "")),
    ("What is the lower bound for the number of buckets?", ("the minimum number of buckets", "")),
    ("Is there an upper limit on recursion?", None),
])
def test_a_bound_or_an_exact_figure_asked_by_name_is_a_limit(question: str, asked: tuple | None) -> None:
    from subagents.extractive.unstated import limits

    assert [(x.text, x.of) for x in limits(question)] == ([asked] if asked else [])


def test_a_limit_is_stated_by_a_number_of_what_is_counted_of_what_has_the_bound() -> None:
    from subagents.extractive.unstated import limits

    named, = limits("What is the maximum number of characters a package name may have?")
    for said in ("A package name may have at most 64 characters.", "The name is limited to characters, 64 in all."):
        assert named.stated_by(said), said
    for said in ("Some package listings may truncate the title to 65 characters.",  # of a title, not of a name
                 "A package name may only contain ASCII characters.",  # in words only
                 "Returns 1 if the name has characters outside ASCII."):  # a number of something else
        assert not named.stated_by(said), said
    whether, = limits("Is there a maximum number of bytes it will return in a single call?")
    for said in ("It returns at most 4096 bytes per call.", "There is no limit on the number of bytes returned."):
        assert whether.stated_by(said), said
    assert not whether.stated_by("As of 2015, 32 bytes of randomness is believed sufficient.")  # no bound
    assert named.stated_by("There is no maximum: a package name may have any number of characters.")
    metres, = limits("What exact value in meters does earth() return?")
    assert metres.stated_by("earth() returns 6378168 meters.")
    assert not metres.stated_by("The radius is obtained from earth(); it is given in meters.")  # no number
    assert not metres.stated_by("The sea is 4000 meters deep.")  # not of what earth() returns
    field, = limits("What's the default maximum field size the widget reader allows?")
    for said in ("The widget reader allows fields of up to 128 KiB.", "The field size limit is 131072."):
        assert field.stated_by(said), said
    assert not field.stated_by("Returns the current maximum field size allowed by the widget reader.")  # no number
    stack, = limits("What is the smallest stack size I'm allowed to request?")
    assert stack.stated_by("32 KiB is currently the minimum supported stack size value.")  # the number before its noun
    threads, = limits("What is the default upper limit on concurrent handler threads?")
    for said in ("The server starts at most 40 handler threads at once.", "It keeps 2-4 handler threads."):  # a range
        assert threads.stated_by(said), said
    for said in ("Server loop running in thread: Thread-1 Received: Thread-2: Hello World 1",  # names, no count
                 "Each request is handled in a new thread."):
        assert not threads.stated_by(said), said


def test_a_capacity_no_passage_states_is_not_found(docs: Path, tmp_path: Path) -> None:
    (docs / "pool.txt").write_text("Widget pools\n\nThe widget pool keeps idle widgets for reuse, so that a new "
                                   "widget is taken from the pool instead of being built.\n")
    question = "How many idle widgets does the widget pool keep by default?"
    report = run(question, docs, tmp_path).report
    assert "do not answer this question" in section(report, "Answer"), report
    assert "says how many idle widgets the widget pool keeps" in report, report
    # a later part pointing back into it asks within what the documents do not say: the whole is not answered
    within = "How many idle widgets does the widget pool keep by default, and how do I raise that limit?"
    report = run(within, docs, tmp_path / "within").report
    assert "do not answer this question" in section(report, "Answer"), report
    # a later part of its own is answered
    report = run("How many idle widgets does the widget pool keep by default, and how do I copy a widget together "
                 "with the children of the widget?", docs, tmp_path / "own").report
    assert "clone() with deep=True" in section(report, "Answer"), report
    # an example's values are its writer's choice: "# 4 idle widgets" in a session states no default
    (docs / "pool.txt").write_text("Widget pools\n\nThe widget pool keeps idle widgets for reuse, so that a new "
                                   "widget is taken from the pool instead of being built.\n\n>>> pool.fill(4)  # 4 idle "
                                   "widgets\n>>> pool.size()\n4\n")
    report = run(question, docs, tmp_path / "example").report
    assert "says how many idle widgets the widget pool keeps" in report, report
    (docs / "pool.txt").write_text("Widget pools\n\nThe widget pool keeps up to 8 idle widgets for reuse, so that a "
                                   "new widget is taken from the pool instead of being built.\n")
    assert "up to 8 idle widgets" in answer_to(question, docs, tmp_path / "stated")


def test_a_life_is_stated_by_a_sentence_naming_the_person_with_a_word_of_a_biography() -> None:
    from subagents.extractive.unstated import lives

    life, = lives("Which university did Guido van Rossum graduate from?")
    assert life.stated_by("Guido van Rossum graduated from the University of Amsterdam in 1982.")
    assert not life.stated_by("Guido van Rossum created Python at CWI in the Netherlands.")
    employer, = lives("Which company does Guido van Rossum work for these days?")
    assert employer.stated_by("Guido van Rossum works for Microsoft.")
    assert not employer.stated_by("In 1995, Guido continued his work on Python at the Corporation for National "
                                  "Research Initiatives (CNRI) in Reston, Virginia.")  # a history, no employer


def test_a_way_the_asker_does_without_is_not_what_the_answer_covers(docs: Path, tmp_path: Path) -> None:
    # "instead of copying each child by hand in a loop": the way they decline, whose words weigh as context; before,
    # the sentence describing that way covered more of the question's words and stood in the Answer beside it
    assert [t.text for t in extract_terms(QUESTION_DECLINING) if only_declined(t, QUESTION_DECLINING)] == [
        "child", "hand", "loop"]  # "copying" is "copy", which the question asks
    assert not [t for t in extract_terms("I got plain numbers back instead of Date objects.") if only_declined(
        t, "I got plain numbers back instead of Date objects.")]  # what they expected, not a way they decline
    said = "Count the dead rows exactly, rather than the estimates in the statistics views"  # "rather" asks, names nothing
    assert [t.text for t in extract_terms(said) if not only_declined(t, said)] == ["Count", "dead", "rows"]
    lone = "How can my function keep its results instead of recomputing them?"  # a doing alone: what they avoid
    assert not [t for t in extract_terms(lone) if only_declined(t, lone)]
    seen = Weights(passages=10_000, df={w: 50 for w in ("copy", "widget", "together", "children", "child", "hand", "loop")})
    weighted = {t.text: w for t, w in weighted_terms(focus_of(QUESTION_DECLINING), seen, set(), QUESTION_DECLINING)}
    assert weighted["loop"] == pytest.approx(CONTEXT_WEIGHT * weighted["together"]), weighted
    queries = single_queries(analyse(QUESTION_DECLINING))  # the question as written is one, its terms without the way
    assert QUESTION_DECLINING.rstrip("?") in queries and not any(
        {"child", "hand", "loop"} & set(q.split()) for q in queries if q != QUESTION_DECLINING.rstrip("?")), queries
    (docs / "notes.txt").write_text("Notes\n\nTo copy the children of a widget by hand, loop over widget.children "
                                    "and call copy_child() on each child.\n")
    report = run(QUESTION_DECLINING, docs, tmp_path).report
    answer = section(report, "Answer")
    assert "clone() with deep=True" in answer and "copy_child" not in answer, report


QUESTION_DECLINING = "How do I copy a widget together with its children, instead of copying each child by hand in a loop?"


STORY = ("Our nightly export job copies the sales reports into a shared folder on the file server. The sync daemon "
         "watches that folder and sometimes uploads a report before the export has finished writing it. How do I "
         "write a ledger file atomically?")
SCENE_WORDS = ["nightly", "export", "job", "copies", "sales", "reports", "shared", "folder", "server", "sync", "daemon",
               "watches", "uploads", "finished", "writing"]


def _operations_notes(root: Path) -> Path:
    """24 notes made of a story's scene words, one page answering what it asks in words of the ask alone."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    for i in range(24):
        w = [SCENE_WORDS[(i + 2 * k) % len(SCENE_WORDS)] for k in range(9)]
        (docs / f"ops{i:02d}.txt").write_text(f"Operations note {i}\n\nThe {w[0]} {w[1]} of the {w[2]} {w[3]} the {w[4]} "
                                             f"{w[5]} while the {w[6]} {w[7]} {w[8]} them.\n")
    (docs / "ledger.txt").write_text("Ledger files\n\nTo write a ledger file atomically, write it under a temporary "
                                     "name and then call swap_ledger(), which renames it in one step.\n")
    return docs


def test_a_story_is_searched_and_answered_for_what_it_asks_not_for_its_scene(tmp_path: Path) -> None:
    # a question told as a story: its scene's words outnumber what it asks. Before, sentences of the scene's words
    # covered more of the question than the one answering the ask, and the encoder (which reads a long text's first
    # word pieces only) compared sentences with the scene alone: the Answer quoted the operations notes
    assert the_ask(STORY) == "How do I write a ledger file atomically"
    assert the_ask("How do I write a ledger file atomically?") == ""  # no scene: the question is the ask
    assert the_ask(STORY) in single_queries(analyse(STORY))[:MAX_QUERIES]  # searched for on its own
    seen = Weights(passages=10_000, df={w: 50 for w in SCENE_WORDS + ["ledger", "atomically", "write", "file"]})
    weighted = {t.text: w for t, w in weighted_terms(focus_of(STORY), seen, set(), STORY)}
    assert weighted["nightly"] < weighted["ledger"] and weighted["nightly"] == pytest.approx(
        SCENE_WEIGHT * weighted["ledger"]), weighted  # as often used, a scene word weighs less than an asked one
    assert weighted["writing"] == weighted["ledger"]  # "write" is asked: the scene's "writing" is no scene word
    back = "Our readiness probe calls the connection checker that ships with the server. What exit code does it return?"
    seen = Weights(passages=10_000, df={w: 50 for w in ("readiness", "probe", "connection", "checker", "exit", "code")})
    weighted = {t.text: w for t, w in weighted_terms(focus_of(back), seen, set(), back)}
    assert weighted["checker"] == weighted["exit"], weighted  # an ask pointing back ("it"): the scene names its subject
    report = run(STORY, _operations_notes(tmp_path), tmp_path).report
    answer = section(report, "Answer")
    assert "swap_ledger()" in answer and "Operations note" not in report.split("## References")[0], report
