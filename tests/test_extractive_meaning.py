"""The offline method with a sentence encoder: among the sentences that share the question's words, the one
closest in meaning is quoted first, a sentence close in meaning answers even when it shares few words,
and without an encoder the method ranks by words as before. Through the Python API, with the extractive
model given an encoder (a small deterministic one, so the test says which sentence is close; the real
model's vectors are tested in test_embedding.py and test_semantic_search.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from subagents.models.extractive import ExtractiveModel

from .conftest import EMBEDDING_MODEL, needs_model, write_tree

MODEL = EMBEDDING_MODEL

DOCS = {
    "tutorial/greeting.md": "# Greeting programs\n\nRun the greeting program and the program prints hello; run it "
                            "again and it prints hello again.\n",
    "library/subprocess.md": "# subprocess\n\nRun the program with run(capture_output=True): what it prints is "
                             "captured.\n",
    "workshop/shafts.md": "# Shafts\n\nThe shaft of a widget turns when its gears are aligned.\n",
}
QUESTION = "How do I run a program and grab what it prints?"


class PatternEncoder:
    """Texts matching a pattern point one way, everything else another: the test says which sentence is close."""

    dim = 4

    def __init__(self, pattern: str, identity: str) -> None:
        self.pattern = re.compile(pattern)
        self.identity = identity

    def encode(self, texts: Sequence[str], max_tokens: int | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            out[i] = [1.0, 0.1, 0.0, 0.0] if self.pattern.search(t) else [0.1, 1.0, 0.0, 0.0]
            out[i] /= np.linalg.norm(out[i])
        return out


def topic_encoder() -> PatternEncoder:
    """Texts about keeping a program's output ("grab", "captured") are close."""
    return PatternEncoder(r"\bgrab\b|\bcaptured?\b", "test-topic-1")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "docs", DOCS)


def answer(report: str) -> list[str]:
    m = re.search(r"^## Answer\s*$(.*?)(?=^## |\Z)", report, re.S | re.M)
    return [x for x in (m.group(1) if m else "").strip().splitlines() if x.strip()]


def run(question: str, docs: Path, tmp_path: Path, encoder: object = None, embedding: str = "off"):
    from lead_agent import research_sync

    return research_sync(question, corpus=[docs], runs_dir=tmp_path / "runs", cache_dir=tmp_path / "cache",
                         use_config_file=False, environ={}, embedding_model=embedding,
                         lead_model=ExtractiveModel(encoder), subagent_model=ExtractiveModel(encoder))


def test_the_sentence_closest_in_meaning_is_quoted_first(docs: Path, tmp_path: Path) -> None:
    by_words = answer(run(QUESTION, docs, tmp_path / "words").report)
    assert "greeting" in by_words[0]  # it shares more of the question's words
    by_meaning = answer(run(QUESTION, docs, tmp_path / "meaning", encoder=topic_encoder()).report)
    assert "captured" in by_meaning[0], by_meaning


def test_without_an_encoder_the_offline_method_still_answers_by_words(docs: Path, tmp_path: Path) -> None:
    result = run("How do the gears of a widget turn its shaft?", docs, tmp_path)
    assert "The shaft of a widget turns when its gears are aligned." in answer(result.report)[0]
    assert "ranked by words (BM25)" in result.report


@needs_model
def test_the_report_says_passages_were_ranked_by_meaning_too(docs: Path, tmp_path: Path) -> None:
    from lead_agent import research_sync

    result = research_sync("How do the gears of a widget turn its shaft?", corpus=[docs], runs_dir=tmp_path / "runs",
                           cache_dir=tmp_path / "cache", use_config_file=False, environ={})
    assert "ranked by words and by meaning" in result.report
    assert "The shaft of a widget turns when its gears are aligned." in answer(result.report)[0]


def test_a_sentence_close_in_meaning_answers_though_it_shares_few_words(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "subprocess.md").write_text("# subprocess\n\nThe text a child process prints is captured when you pass "
                                        "capture_output=True.\n")
    (root / "gears.md").write_text("# Gears\n\nThe console of the machine shows its state. A worker oils the gears. "
                                   "Spawned threads are listed in the log. Grab the handle to lift it.\n")
    question = "How can I grab the text that a spawned worker writes to its console?"  # each word is in the corpus
    by_words = run(question, root, tmp_path / "words")
    assert not answer(by_words.report) or "do not answer" in by_words.report  # too few of its words
    by_meaning = run(question, root, tmp_path / "meaning", encoder=topic_encoder())
    assert "captured" in answer(by_meaning.report)[0], by_meaning.report


def wrap_encoder() -> PatternEncoder:
    """Texts about a count starting over ("wrap", "go back to") are close."""
    return PatternEncoder(r"\bwraps?\b|\bgo(?:es)? back to\b", "test-wrap-1")


def test_the_opening_of_an_entry_headed_by_the_question_answers_it(tmp_path: Path) -> None:
    # a FAQ entry answers the question its heading asks, in words of its own: its opening sentence shares no word
    # with the question, but said under its heading it is what was asked
    root = write_tree(tmp_path / "docs", {
        "faq.md": "# Gizmo FAQ\n\n## Why does the gizmo counter wrap to zero?\n\nThe register holds eight bits, so "
                  "the step after 255 starts again from nothing.\n\n## How do I paint a gizmo?\n\nUse the brush kit.\n",
        "display.md": "# Display\n\nThe gizmo count is shown on the display after each click of the button.\n\n"
                      "A click of the button lights the display for a second.\n",
    })
    question = "Why does my gizmo count go back to 0 after 255 clicks?"
    report = run(question, root, tmp_path / "meaning", encoder=wrap_encoder()).report
    assert answer(report)[0].startswith("The register holds eight bits"), report


def test_a_long_entry_has_one_opening(tmp_path: Path) -> None:
    # an entry too long for one passage goes on in a second one under the same heading: that passage's first
    # sentence is no answer to the heading's question
    filler = " ".join(f"The gizmo manual lists part {i} of the casing in its parts table." for i in range(40))
    root = write_tree(tmp_path / "docs", {
        "faq.md": "# Gizmo FAQ\n\n## Why does the gizmo counter wrap to zero?\n\nThe register holds eight bits, so "
                  f"the step after 255 starts again from nothing.\n\n{filler}\n\nThe paint of a gizmo casing is blue "
                  "and its knob is red.\n\n## How do I paint a gizmo?\n\nUse the brush kit.\n",
        "display.md": "# Display\n\nThe gizmo count is shown on the display after each click of the button.\n",
    })
    report = run("Why does my gizmo count go back to 0 after 255 clicks?", root, tmp_path / "meaning",
                 encoder=wrap_encoder()).report
    assert answer(report)[0].startswith("The register holds eight bits"), report
    assert not any("paint of a gizmo" in line for line in answer(report)), report


def test_a_sentence_in_a_passage_using_the_operator_asked_about_is_judged_by_meaning(tmp_path: Path) -> None:
    # an operator is matched as written, never by meaning (the encoder's word pieces drop it); but a sentence whose
    # passage uses it (in its example) is about it, and may say why in words of its own
    root = write_tree(tmp_path / "docs", {
        "faq.md": "# Gizmo FAQ\n\n## Why is joining gizmo names slow?\n\nEach join makes a new object, so the total "
                  "cost grows with the square of the length.\n\n```\nname = ''\nfor g in gizmos:\n    name += g\n```\n",
        "ops.md": "# Operators\n\nThe += operator adds a value to a gizmo counter in place.\n",
    })
    close = lambda: PatternEncoder(r"\bslow\b|\bsquare\b", "test-slow-1")  # noqa: E731
    report = run("Why is building up a long gizmo name with += inside a loop slow?", root, tmp_path / "meaning",
                 encoder=close()).report
    assert answer(report)[0].startswith("Each join makes a new object"), report


def _reads(run_dir: Path) -> list[str]:
    """The passage ids the subagents read, from their transcripts."""
    import json

    ids = []
    for f in sorted((run_dir / "agents").glob("r*-sub*.jsonl")):
        for line in f.read_text().splitlines():
            e = json.loads(line)
            if e["kind"] == "message":
                ids += [b["input"]["passage_id"] for b in e["data"]["content"]
                        if b.get("type") == "tool_use" and b.get("name") == "read_passage"]
    return ids


def test_without_ranking_by_meaning_no_entry_takes_a_read_for_its_closeness(tmp_path: Path) -> None:
    # a FAQ entry gets a read of its own for being the closest in meaning; searches by words alone say nothing of
    # closeness, so an entry that ranks last by words is not read for it
    docs = {f"part{i}.md": f"# Gizmo part {i}\n\nThe gizmo counter part {i} counts the clicks of the gizmo button "
                           f"number {i}.\n" for i in range(9)}
    docs["faq.md"] = "# FAQ\n\n## What colour is a gizmo?\n\nA gizmo is grey.\n"
    result = run("How does the gizmo counter count the clicks of its button?", write_tree(tmp_path / "docs", docs),
                 tmp_path / "words")
    reads = _reads(result.run_dir)
    assert len(reads) >= 5 and not any("faq.md" in r for r in reads), reads



def test_an_entry_headed_by_a_question_asked_alike_answers_a_story_that_shares_few_of_its_words() -> None:
    # the asker tells a story in words of their own; the FAQ entry asks the same in its heading (here the one above
    # the entry's own: a PDF heading wrapped over two lines), and its sentences answer in the entry's words
    import json

    from subagents.extractive.evidence import gather
    from subagents.extractive.meaning import Meaning
    from subagents.extractive.selection import focus_of, select
    from subagents.model import ToolResultBlock, ToolUseBlock

    question = ("I refitted my gizmo model without a base and the fit score jumped from low to nearly perfect. Is the "
                "gizmo really that much better now, or is it computing something different?")
    heading = "Gizmo FAQ > Why does the gizmo report a strange fit score? > 7.4 Why does"
    results = [{"source_id": "S1", "passage_id": "faq#1", "title": "Gizmo FAQ", "heading": heading, "snippet":
                "The manual page on reports says more. Otherwise the number could be negative, as a constant may do "
                "better."}]
    words = "refitted gizmo model base fit score jumped low nearly perfect better computing different".split()
    payload = {"query": question, "results": results,
               "corpus": {"passages": 5000, "term_passages": dict.fromkeys(words, 40), "term_titles": {}}}
    ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": question}), ToolResultBlock("t1", json.dumps(payload)))])
    alike = PatternEncoder(r"strange fit score|jumped from low", "test-asked-alike-1")
    sel = select(focus_of(question), ev, meaning=Meaning(alike, question))
    assert any(u.text.startswith("Otherwise the number could be negative") for u in sel.claims), sel
    # under a heading that asks something else the same sentence shares too few of the story's words (the heading's
    # count with it): no answer (with the heading above, it covers 0.18 of the story's words, above the story floor)
    other = [dict(results[0], heading="Gizmo FAQ > Why does the report list colours? > 7.4 Why does")]
    ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": question}),
                  ToolResultBlock("t1", json.dumps(dict(payload, results=other))))])
    unlike = PatternEncoder(r"jumped from low", "test-asked-alike-2")
    assert not select(focus_of(question), ev, meaning=Meaning(unlike, question)).claims
    # a short question's floor is 0.3: the sentence covering 0.27 of it answers only under a heading asked alike
    short = "My gizmo fit score jumped from low to perfect: is the gizmo better now?"
    asked = [dict(results[0], heading="Gizmo FAQ > Why does the gizmo report a strange fit figure? > 7.4 Why does")]
    ev = gather([(ToolUseBlock("t1", "search_corpus", {"query": short}),
                  ToolResultBlock("t1", json.dumps(dict(payload, query=short, results=asked))))])
    alike = PatternEncoder(r"strange fit figure|jumped from low", "test-asked-alike-3")
    assert select(focus_of(short), ev, meaning=Meaning(alike, short)).claims
    unlike = PatternEncoder(r"jumped from low", "test-asked-alike-4")
    assert not select(focus_of(short), ev, meaning=Meaning(unlike, short)).claims
