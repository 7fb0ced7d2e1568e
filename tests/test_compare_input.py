"""What a questions file or experiment file may hold, through the `research compare` entry point: a
UTF-8 byte order mark is read past; a control character is refused naming the file and line; the
judge's missing-key error says how to fix it for the judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_compare import write_corpus

BOM = "\ufeff"


@pytest.fixture
def compare(research_in_process):
    """`research compare ARGS` in this process: (exit code, stdout, stderr)."""
    return lambda *args: research_in_process("compare", *args)


def _refused(result: tuple[int, str, str], tmp_path: Path) -> str:
    code, out, err = result
    lines = err.strip().splitlines()
    assert code == 2 and not out and len(lines) == 1 and lines[0].startswith("research: error: "), err
    assert not (tmp_path / "runs").exists()
    return lines[0]


def test_a_byte_order_mark_is_read_past_in_the_questions_and_the_experiment_file(tmp_path: Path, compare) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    (tmp_path / "q.jsonl").write_text(BOM + json.dumps({"id": "t1", "question": "What did the lighthouse keeper "
                                                        "record?", "answers": ["lighthouse keeper"]}) + "\n",
                                      encoding="utf-8")
    (tmp_path / "exp.toml").write_text(BOM + f'questions = "q.jsonl"\ncorpus = ["{corpus}"]\nmax_rounds = 1\n\n'
                                       '[[variant]]\nname = "default"\n\n[[variant]]\nname = "single"\n',
                                       encoding="utf-8")
    code, out, err = compare("exp.toml", "-q")
    assert code == 0, err
    rows = [json.loads(x) for x in next((tmp_path / "runs").glob("compare-*/results.jsonl")).read_text().splitlines()]
    assert [(r["question_id"], r["status"]) for r in rows] == [("t1", "completed"), ("t1", "completed")]


@pytest.mark.parametrize("line, said", [
    ('{"question": "What did the \\u0001 keeper record?"}', "control character (U+0001 at character 14)"),
    ('{"question": "What did the \x01 keeper record?"}', "not valid JSON (Invalid control character at column 28)"),
])
def test_a_control_character_in_a_question_is_refused_naming_the_file_and_line(
        tmp_path: Path, compare, line: str, said: str) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    (tmp_path / "q.jsonl").write_text('{"question": "What did the lighthouse keeper record?"}\n' + line + "\n")
    msg = _refused(compare("--variant", "default", "--variant", "single", "--questions", "q.jsonl",
                           "--corpus", str(corpus)), tmp_path)
    assert "q.jsonl line 2: " in msg and said in msg, msg


def test_the_judge_missing_key_error_fits_the_judge(tmp_path: Path, compare) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    (tmp_path / "q.jsonl").write_text('{"question": "What did the lighthouse keeper record?"}\n')
    msg = _refused(compare("--variant", "default", "--variant", "single", "--questions", "q.jsonl",
                           "--corpus", str(corpus), "--judge-model", "claude-sonnet-4-5"), tmp_path)
    assert "ANTHROPIC_API_KEY is not set" in msg and "'claude-sonnet-4-5' as the judge" in msg, msg
    assert "--lead-model extractive" not in msg and "--judge-model" in msg
