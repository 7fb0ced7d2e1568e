"""The comparison harness's parts on their own: statistics against known values, gold-answer
matching, question-set loaders (FanOutQA from its packaged data, no network), variant checks."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from lead_agent.compare import gold, stats
from lead_agent.compare.metrics import BY_KEY
from lead_agent.compare.questions import QuestionError, load_file, load_set, select
from lead_agent.compare.variants import Variant, offline_note, parse_spec
from lead_agent.settings import RunMode, UsageError
from subagents.prompting import PromptError, PromptSet, prompt_names, prompts_root, variant_problems, variants

# ---------------------------------------------------------------- statistics


def test_wilcoxon_matches_the_published_example() -> None:
    # scipy.stats.wilcoxon docs (Darwin's Zea mays height differences): two-sided exact p = 0.04125976…
    d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    assert stats.wilcoxon_p([0] * len(d), d) == pytest.approx(0.041259765625)


def test_sign_test_is_the_exact_binomial() -> None:
    # 9 of 10 pairs up: two-sided p = 2 * (C(10,9) + C(10,10)) / 2^10 = 22/1024
    assert stats.sign_test_p([0] * 10, [1] * 9 + [-1]) == pytest.approx(22 / 1024)
    assert stats.sign_test_p([1, 2, 3], [1, 2, 3]) == 1.0


def test_paired_bootstrap_interval_agrees_with_the_normal_interval_on_a_large_sample() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(10, 2, 400)
    b = a + rng.normal(0.5, 1.0, 400)  # paired: b - a ~ N(0.5, 1)
    d = b - a
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    ci = stats.bootstrap_ci(a, b)
    assert ci is not None
    assert ci.low == pytest.approx(d.mean() - half, abs=0.02) and ci.high == pytest.approx(d.mean() + half, abs=0.02)
    rel = stats.bootstrap_ci([10.0] * 50, [7.0] * 50, relative=True)
    assert rel is not None and rel.low == pytest.approx(-0.3) and rel.high == pytest.approx(-0.3)


def rows(metric: str, a: list[float], b: list[float]) -> list[dict]:
    return [{"variant": v, "question_id": f"q{i}", "metrics": {metric: x}}
            for i, (xa, xb) in enumerate(zip(a, b)) for v, x in (("A", xa), ("B", xb))]


def test_verdicts_in_words() -> None:
    a = [1.0 + 0.1 * i for i in range(10)]
    c = stats.compare_metric(rows("cost_usd", a, [0.7 * x for x in a]), BY_KEY["cost_usd"], "A", "B")
    assert c.significant and c.verdict.startswith("B is cheaper by 30% [30%, 30%], p=0.002") and "(better)" in c.verdict
    same = stats.compare_metric(rows("answer_f1", a, a), BY_KEY["answer_f1"], "A", "B")
    assert not same.significant and same.verdict == "no significant difference in gold answer token F1 (p=1.000, n=10)"
    more = stats.compare_metric(rows("subagents", [1.0] * 8, [3.0] * 8), BY_KEY["subagents"], "A", "B")
    assert more.verdict.startswith("B starts more subagents by 200%") and "better" not in more.verdict


def test_repeats_are_averaged_per_question_and_missing_values_left_out() -> None:
    data = [{"variant": "A", "question_id": "q1", "metrics": {"claims": 2}},
            {"variant": "A", "question_id": "q1", "metrics": {"claims": 4}},
            {"variant": "A", "question_id": "q2", "metrics": {"claims": None}}]
    assert stats.per_question(data, "A", "claims") == {"q1": 3.0}


# ---------------------------------------------------------------- gold answers


def test_every_part_of_a_multi_part_answer_must_be_there() -> None:
    answers = ["memoizing callable that saves up to the maxsize most recent calls; cache_clear()"]
    both = "It is a memoizing callable that saves up to the maxsize most recent calls [1]. Call cache_clear() [2]."
    half = "It is a memoizing callable that saves up to the maxsize most recent calls [1]."
    m = gold.match_answers(both, answers)
    assert m is not None and m.contains == 1.0 and m.parts == 1.0 and m.f1 > 0.8
    h = gold.match_answers(half, answers)
    assert h is not None and h.contains == 0.0 and h.parts == 0.5 and 0 < h.f1 < m.f1 - 0.3


def test_alternatives_punctuation_and_what_is_not_matched() -> None:
    assert gold.match_answers("Use shutil.copy2 for that.", ["copy2() keeps metadata", "shutil.copy2()"]).contains == 1
    # the title repeats the question; references and open questions are generated: none of them counts
    report = ("# How does timeit work?\n\nSome sentence.\n\n## Open questions\n\n- timeit\n\n## References\n\n"
              "1. timeit — Measure execution time")
    assert gold.match_answers(report, ["timeit"]).contains == 0.0
    assert gold.match_answers("anything", []) is None
    assert gold.normalise("The “quick” — Brown_fox!") == "quick brown fox"


def test_gold_source_hits_on_corpus_paths_and_urls() -> None:
    locs = ["html-9314/library/shutil.html#3", "https://en.wikipedia.org/wiki/Pat_Burrell"]
    assert gold.gold_hit(["library/shutil.html"], locs) == 1.0
    assert gold.gold_hit(["library/shutil.html", "library/os.html"], locs) == 0.5
    assert gold.gold_hit(["https://en.wikipedia.org/wiki/Pat_Burrell#Career"], locs) == 1.0
    assert gold.gold_hit(["brary/shutil.html"], locs) == 0.0
    assert gold.gold_hit([], locs) is None
    # a gold page of a PDF: a passage on that page (a locator per page it is on), not elsewhere in the file
    pdf = ["R-intro.pdf#page=16", "R-intro.pdf#page=17"]
    assert gold.gold_hit(["R-intro.pdf#page=17"], pdf) == 1.0
    assert gold.gold_hit(["R-intro.pdf#page=40"], pdf) == 0.0
    assert gold.gold_hit(["R-intro.pdf#page=40"], ["R-intro.pdf"]) == 1.0  # a locator naming no page: the file


def test_a_pdf_passage_is_located_on_each_page_it_is_on() -> None:
    from lead_agent.compare.metrics import _locators
    from subagents.sources import Source, SourceKind

    src = Source("S1", "corpus:m/R-intro.pdf#7", SourceKind.CORPUS, "R", "m/R-intro.pdf#7", "text", [],
                 {"path": "R-intro.pdf", "page": 16, "pages": [16, 17]})
    assert _locators(src) == ["R-intro.pdf#page=16", "R-intro.pdf#page=17"]
    html = Source("S2", "corpus:m/a.html#1", SourceKind.CORPUS, "A", "m/a.html#1", "text", [], {"path": "a.html"})
    assert _locators(html) == ["a.html"]


# ---------------------------------------------------------------- question sets


def test_malformed_question_files_name_the_line(tmp_path: Path) -> None:
    f = tmp_path / "q.jsonl"
    cases = {
        '{"question": "ok?"}\n\n{"question": "fine"\n': "line 3: not valid JSON",
        '{"question": "ok?"}\n{"answers": ["x"]}\n': 'line 2: "question" is missing or empty',
        '{"id": "a", "question": "x?"}\n{"id": "a", "question": "y?"}\n': "line 2: id 'a' already used on line 1",
        '{"question": "x?", "answers": "not a list"}\n': "line 1: answers must be a list",
        "\n\n": "no questions in the file",
        "[1, 2]\n": "line 1: expected a JSON object",
    }
    for body, message in cases.items():
        f.write_text(body)
        with pytest.raises(QuestionError, match=message.replace("(", r"\(")):
            load_file(f)


def test_the_shipped_sets() -> None:
    py = load_set("python-docs")
    assert len(py.questions) == 128 and sum("unanswerable" in q.tags for q in py.questions) == 25
    assert {"comparison", "multi-part"} <= {q.tags[0] for q in py.questions}
    assert len(select(py.questions, split="dev")) + len(select(py.questions, split="test")) == 82
    assert len(select(py.questions, split="holdout")) == 16
    assert len(select(py.questions, split="holdout2")) == 30
    assert select(py.questions, tags=["unanswerable"], limit=3)[0].answers == ()
    r = load_set("r-docs")
    assert len(r.questions) == 60 and r.corpus == (Path("/usr/share/R/doc/manual"),)
    assert {q.split for q in r.questions} == {"dev", "holdout"} and all("r" in q.tags for q in r.questions)
    drb = load_set("deep-research-bench")
    assert len(drb.questions) == 100 and drb.needs_web and drb.questions[0].id == "drb-1"
    assert set(drb.questions[0].tags) == {"Finance & Business", "zh"}
    with pytest.raises(QuestionError, match="no question left"):
        select(py.questions, tags=["no-such-tag"])


def test_fanoutqa_dev_set_from_the_packaged_data_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fanoutqa")

    def no_network(*a, **k):
        raise AssertionError("the FanOutQA loader must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    fo = load_set("fanoutqa")
    assert fo.needs_web and len(fo.questions) == 310
    q = next(q for q in fo.questions if q.question.startswith("What is the batting hand of each of the first five"))
    parts = gold.answer_parts(q.answers[0])
    assert len(parts) == 5 and set(parts) == {"Right", "Left"} | set(parts)  # one part per pick, all required
    assert "https://en.wikipedia.org/wiki/Pat_Burrell" in q.gold_sources


# ---------------------------------------------------------------- variants


def folder(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    d = tmp_path / name
    d.mkdir()
    for f, body in files.items():
        (d / f).write_text(body)
    return d


def test_judge_prompts_are_no_research_variant() -> None:
    assert "judge" not in variants() and "default" in variants()
    with pytest.raises(PromptError, match="not a research variant"):
        PromptSet("judge")
    with pytest.raises(UsageError, match="unknown variant 'judge'"):
        parse_spec("judge")


def test_variant_folders_are_checked(tmp_path: Path) -> None:
    good = folder(tmp_path, "terse", {"lead_system.txt": "Plan. ${tools} ${max_rounds}", "README.md": "notes"})
    assert variant_problems(good) == []
    v = parse_spec(f"{good}:max_subagents=2,mode=single")
    assert v.prompts == str(good.resolve()) and v.max_subagents == 2 and v.mode is RunMode.SINGLE
    stray = folder(tmp_path, "stray", {"lead_sytem.txt": "typo in the name"})
    with pytest.raises(UsageError, match="lead_sytem.txt is not a known prompt"):
        parse_spec(str(stray))
    unfilled = folder(tmp_path, "unfilled", {"lead_task.txt": "Question: ${question} by ${deadline}"})
    with pytest.raises(UsageError, match=r"lead_task.txt uses placeholder\(s\) the code never fills: \$\{deadline\}"):
        parse_spec(str(unfilled))
    with pytest.raises(UsageError, match="unknown variant setting 'max_subagent'"):
        parse_spec("default:max_subagent=3")
    with pytest.raises(UsageError, match="max_rounds must be at least 1"):
        parse_spec("default:max_rounds=0")
    single = parse_spec("single")
    assert single.mode is RunMode.SINGLE and single.prompts == "default"


def test_every_default_prompt_is_a_known_prompt_with_the_placeholders_the_code_fills() -> None:
    assert variant_problems(prompts_root() / "default") == []
    assert {"single_system", "single_task", "lead_system"} <= set(prompt_names())


def test_offline_note_only_when_prompts_differ_and_no_language_model(tmp_path: Path) -> None:
    terse = folder(tmp_path, "terse", {"lead_task.txt": "Q: ${question}"})
    a, b = Variant("default"), Variant("terse", str(terse))
    names = {"default": ("extractive", "extractive"), "terse": ("extractive", "extractive")}
    note = offline_note([a, b], names, {"default": False, "terse": False})
    assert note is not None and "cannot differ offline" in note and "differ only in their prompts" in note
    assert offline_note([a, b], names, {"default": True, "terse": True}) is None
    single = Variant("single", mode=RunMode.SINGLE)
    assert offline_note([a, single], {**names, "single": names["default"]}, {"default": False, "single": False}) is None
    mixed = offline_note([b, single], {**names, "single": names["default"]}, {"terse": False, "single": False})
    assert mixed is not None and "what differs here offline is the mode" in mixed
    assert json.loads(json.dumps(b.to_json()))["prompts"] == str(terse)
