"""The README stays true: its layout table matches the tree, and its quick-start research runs as written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT

TOP_LEVEL = {"subagents", "lead_agent", "prompts", "runs", "bench", "tests"}


def layout_rows() -> list[list[str]]:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        if line.startswith("| `"):
            rows.append(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return rows


def listed_paths() -> set[Path]:
    paths = set()
    for cells in layout_rows():
        base = Path(cells[0]).parent
        for i, cell in enumerate(cells):
            rooted = i == 0 or cell.split("/")[0] in TOP_LEVEL
            paths.add(ROOT / (cell if rooted else base / cell))
    return paths


def test_every_path_in_the_layout_table_exists() -> None:
    missing = [str(p.relative_to(ROOT)) for p in listed_paths() if not p.exists()]
    assert not missing, f"README layout names paths that do not exist: {missing}"


def test_every_module_is_in_the_layout_table() -> None:
    listed = listed_paths()
    dirs = {p for p in listed if p.is_dir()}
    unlisted = []
    for pkg in ("subagents", "lead_agent"):
        for f in (ROOT / pkg).rglob("*.py"):
            if f.name == "__init__.py" or f in listed or any(d in f.parents for d in dirs):
                continue
            unlisted.append(str(f.relative_to(ROOT)))
    assert not unlisted, f"modules missing from the README layout table: {unlisted}"


def quick_start_research() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    command = block.strip().split("&&")[-1].strip()
    assert command.startswith(".venv/bin/research run ")
    return shlex.split(command)


def test_the_quick_start_research_runs_as_written(tmp_path: Path, python_docs_index: Path) -> None:
    argv = quick_start_research()
    argv[0] = str(ROOT / argv[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    env["HOME"] = str(tmp_path)  # a fresh machine: no config
    # but the index the fixture warmed (conftest): a first indexing of the Python docs embeds 9,000 passages,
    # minutes on two cores; CI's first test session does that indexing, from nothing
    env["RESEARCH_CACHE_DIR"] = str(python_docs_index)
    # warm it takes 4 s; a clean-clone CI once saw it (and the compare CLI test) wait past 300 s at once
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "No language model wrote this report" in proc.stdout and "## References" in proc.stdout
    assert "Run saved to" in proc.stdout and (tmp_path / "runs").is_dir()
    assert "semantic ranking on" in proc.stderr  # the quick start installs the embedding model


def r_manuals_research() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Corpora", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    install, command = [line.strip() for line in block.strip().splitlines()]
    assert install == "apt-get install -y r-doc-pdf" and command.startswith(".venv/bin/research run ")
    return shlex.split(command)


def test_the_r_manuals_research_runs_as_written(tmp_path: Path, r_manuals_index: Path) -> None:
    """The PDF corpus example, on the index the fixture brought up to date (conftest: a cold one reads the manuals
    and embeds them, minutes, once per machine), as for the quick start: one of refman.pdf and fullrefman.pdf
    indexed, the report citing pages. Reading PDFs from nothing: tests/test_corpus_pdf.py; a twin with other bytes:
    tests/test_corpus.py."""
    argv = r_manuals_research()
    argv[0] = str(ROOT / argv[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    env["HOME"] = str(tmp_path)  # a fresh machine: no config
    env["RESEARCH_CACHE_DIR"] = str(r_manuals_index)
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "skipped 1 duplicate" in proc.stderr and "semantic ranking on" in proc.stderr
    refs = proc.stdout.split("## References", 1)[1]
    assert re.search(r"\(<file:///usr/share/R/doc/manual/[\w-]+\.pdf#page=\d+>\) — `[\w-]+\.pdf#page=\d+`", refs)
