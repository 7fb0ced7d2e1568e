"""Text the user does not control: questions that are not plain text are refused (exit 2, nothing
written); control and escape sequences from documents never reach the terminal raw (the files keep
them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lead_agent.settings import UsageError, resolve_settings
from lead_agent.terminal import neutralise

from .conftest import run_cli

ESC, BEL, CSI8 = "\x1b", "\x07", "\x9b"  # CSI8: the one-character C1 control sequence introducer
HOSTILE = (f"The gears of a widget are aligned by turning the main shaft {ESC}[31mred warning{ESC}[0m and a bell "
           f"{BEL} here.\n\nA {CSI8}2J screen clear and a carriage return\roverwrite the shaft title "
           f"{ESC}]0;owned{BEL} and a {ESC}]8;;http://evil/{ESC}\\link for widget gears.\n")
RAW = (ESC, BEL, CSI8, "\r")


def hostile_corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gears.md").write_text("# Gears\n\n" + HOSTILE, encoding="utf-8")
    (docs / "pumps.md").write_text("# Pumps\n\nA pump moves water through the pipes of the plant.\n")
    return docs


def assert_clean(text: str) -> None:
    for ch in RAW:
        assert ch not in text, f"{ch!r} reached the terminal"


def cli_bytes(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    return subprocess.run([sys.executable, "-m", "lead_agent.cli", *args], cwd=cwd, capture_output=True,
                          env={**env, "HOME": str(cwd), "RESEARCH_CACHE_DIR": str(cwd / "cache")}, timeout=120)


def test_neutralise_makes_every_control_visible_and_keeps_text() -> None:
    assert neutralise("a\tb\nc") == "a\tb\nc"
    assert neutralise(f"x{ESC}[31my{BEL}\r\u202e\x00\x7f{CSI8}\udcff") == \
        "x\\x1b[31my\\x07\\x0d\\u202e\\x00\\x7f\\x9b\\udcff"
    assert neutralise("café — naïve, 日本") == "café — naïve, 日本"


def test_run_show_and_tool_print_documents_neutralised_and_files_keep_them(tmp_path: Path, cache_env: Path) -> None:
    docs = hostile_corpus(tmp_path)
    run = run_cli("run", "How are widget gears aligned?", "--corpus", str(docs), "--runs-dir", "runs",
                  cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "main shaft \\x1b[31mred warning\\x1b[0m" in run.stdout  # visible, not obeyed
    assert_clean(run.stdout + run.stderr)
    (run_dir,) = (tmp_path / "runs").iterdir()
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert f"{ESC}[31mred warning{ESC}[0m" in report  # the file keeps the text
    show = run_cli("show", str(run_dir), cwd=tmp_path)
    assert show.returncode == 0 and "\\x1b[31m" in show.stdout
    assert_clean(show.stdout + show.stderr)
    tool = run_cli("tool", "corpus", "gears shaft title", "--corpus", str(docs), cwd=tmp_path)
    assert tool.returncode == 0 and "\\x9b2J" in tool.stdout
    assert_clean(tool.stdout + tool.stderr)


@pytest.mark.parametrize("question, problem", [
    (b"Was ist ein Zahnrad\xff?", "not valid UTF-8"),
    (f"What does {ESC}[2J clear?".encode(), "control character (U+001B"),
])
def test_cli_question_that_is_not_plain_text_is_a_usage_error(tmp_path: Path, question: bytes, problem: str) -> None:
    docs = hostile_corpus(tmp_path)
    proc = cli_bytes("run", question, "--corpus", str(docs), "--runs-dir", "runs", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.decode("utf-8").splitlines()
    assert len(lines) == 1 and lines[0].startswith("research: error: ") and problem in lines[0]
    assert_clean(proc.stderr.decode("utf-8"))
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize("question, problem", [
    (f"What is {ESC}]0;x{BEL}?", "U+001B at character 9"), (f"Why does it ring{BEL}?", "U+0007"),
    ("What does \u009b do?", "U+009B"), ("Nul\x00l?", "U+0000"), ("Back\x7fspace?", "U+007F"),
    ("Caf\udce9?", "not valid UTF-8"),
])
def test_api_question_that_is_not_plain_text_is_a_usage_error(question: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem.replace("+", "\\+")):
        resolve_settings({"question": question}, environ={}, use_config_file=False)


def test_api_question_keeps_tabs_and_newlines() -> None:
    s = resolve_settings({"question": "First line\r\n\tsecond line?"}, environ={}, use_config_file=False)
    assert s.question == "First line\n\tsecond line?"
