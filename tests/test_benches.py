"""Every benchmark the README shows runs, at a small size, so that no bench can silently rot.

The README's bench commands are read from the README itself; each needs an entry in SMALL (the
arguments that make it quick), so a bench added to the README without one fails here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, write_small_corpus

PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")


def small_corpus(tmp: Path) -> Path:
    return write_small_corpus(tmp / "docs")


SMALL = {
    "bench_corpus.py": lambda tmp: ["--root", str(small_corpus(tmp))],
    "bench_research.py": lambda tmp: ["--corpus", str(small_corpus(tmp)), "--questions", "2"],
    "bench_parallel.py": lambda tmp: ["--latency", "0.01", "--tps", "100000", "--dependent", "3"],  # 10 subagents, a DAG
    "bench_extract.py": lambda tmp: ["--root", str(PYTHON_DOCS), "--pages", "3"],
    "bench_startup.py": lambda tmp: ["--repeat", "1"],
    "bench_compare.py": lambda tmp: ["--questions", "2", "--parallel", "2", "--latency", "0.01", "--tps", "100000"],
    "bench_quality.py": lambda tmp: ["--questions", str(small_questions(tmp)), "--corpus", str(small_corpus(tmp)),
                                     "--cache-dir", str(tmp / "cache")],
    "bench_viewer.py": lambda tmp: ["--subagents", "4", "--turns", "2", "--calls", "2"],
    "bench_sweep.py": lambda tmp: ["--corpus", str(small_corpus(tmp)), "--n", "3", "--cache-dir", str(tmp / "cache")],
    "bench_runs_index.py": lambda tmp: ["--runs", "200", "--repeat", "1"],
    # one small function's mutants, and coverage of one test that starts the CLI in a subprocess; at the
    # suite's priority (reniced to 19 beside a worker indexing python3-doc it got no CPU for 15 minutes in CI)
    "bench_mutation.py": lambda tmp: ["--modules", "subagents/tools.py", "--functions", "neutralise_markers",
                                      "--coverage-tests", "tests/test_web_run.py::test_cli_run_help_lists_the_web_flags",
                                      "--nice", "0"],
}


def small_questions(tmp: Path) -> Path:
    """Three questions over the small corpus, in the question-set format (one the corpus cannot answer)."""
    rows = [
        {"id": "s-1", "question": "What happens to the other tasks in a task group when one fails?",
         "answers": ["the remaining tasks in the group are cancelled"], "gold_sources": ["library/asyncio-task.html"],
         "tags": ["why", "answerable", "python"], "split": "dev"},
        {"id": "s-2", "question": "Compare lists and tuples", "answers": ["mutable sequences; immutable sequences"],
         "gold_sources": ["lists.rst"], "tags": ["comparison", "answerable", "python"], "split": "test"},
        {"id": "s-3", "question": "Who is the current CEO of Microsoft?", "answers": [], "gold_sources": [],
         "tags": ["what-is", "unanswerable", "python"], "split": "dev"},
    ]
    path = tmp / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
NEEDS_PYTHON_DOCS = {"bench_extract.py"}
# mutmut runs every mutant and the coverage run a CLI subprocess: ~20 s alone, but 10x that beside the
# rest of the suite on two cores (measured under three busy processes: 213 s)
SLOW = {"bench_mutation.py": 900}


def readme_benches() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    return sorted(set(re.findall(r"\.venv/bin/python (bench/\w+\.py)", readme)))


def test_the_readme_shows_the_benches() -> None:
    shown = readme_benches()
    assert shown and all((ROOT / b).is_file() for b in shown)
    assert {Path(b).name for b in shown} == set(SMALL), "give every README bench a small size in SMALL"


@pytest.mark.parametrize("bench", readme_benches())
def test_bench_runs_as_the_readme_shows(bench: str, tmp_path: Path) -> None:
    name = Path(bench).name
    if name in NEEDS_PYTHON_DOCS and not PYTHON_DOCS.is_dir():
        pytest.skip("python3-doc is not installed (.ci/run installs it)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    env["HOME"] = str(tmp_path)  # no user config, no user cache
    proc = subprocess.run([sys.executable, str(ROOT / bench), *SMALL[name](tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=SLOW.get(name, 300))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and proc.stdout.strip()


def test_bench_quality_embeds_a_fresh_index_before_it_times_a_run(tmp_path: Path) -> None:
    """On a fresh cache the first timed run embedded the whole corpus (331 s for python3-doc in a 0.5 s median)."""
    from subagents.corpus.embedding import default_model_dir

    if default_model_dir() is None:
        pytest.skip("no embedding model installed (.ci/run installs it)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_quality.py"), *SMALL["bench_quality.py"](tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    ready = re.search(r"index ready in [\d.]+s \((\d+) passages, (\d+) embedded\)", proc.stdout)
    assert ready and int(ready.group(1)) > 0 and ready.group(1) == ready.group(2), proc.stdout[:2000]


def _bench_module(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_bench_quality_reads_references_as_the_pages_of_the_passages_they_cite() -> None:
    """A reference's source id leads to the passage id ('html-9314/library/shutil.html#4': root tag, page, chunk):
    its page is the gold page 'library/shutil.html'; a passage of a PDF is on the pages it spans
    ('R-intro.pdf#page=17', the form of a PDF's gold source)."""
    bq = _bench_module("bench_quality")

    class Index:  # the corpus seam bench_quality asks for a passage's PDF pages
        def pages_of(self, passage_id: str) -> tuple[int, ...]:
            return (17, 18) if passage_id.endswith(".pdf#3") else ()

    report = ("## Answer\n\nCopy it with copy2(). [1]\n\n## References\n\n"
              "1. [shutil › Copy](<file:///d/html/library/shutil.html#c>) — `library/shutil.html` (S1)\n"
              "2. [SQL COPY](<file:///d/pg/sql-copy.html>) — `sql-copy.html` (S2)\n"
              "3. [R › NA](<file:///d/R-intro.pdf#page=17>) — `R-intro.pdf#page=17` (S5)\n")
    ids = {"S1": "html-9314/library/shutil.html#4", "S2": "html-619e/sql-copy.html#19", "S5": "manual-1a2b/R-intro.pdf#3"}
    assert bq.references(report, ids, Index()) == {"1": {"library/shutil.html"}, "2": {"sql-copy.html"},
                                                   "3": {"R-intro.pdf#page=17", "R-intro.pdf#page=18"}}


def test_every_split_of_the_shipped_question_sets_can_be_selected_and_is_reported() -> None:
    """bench_quality reports one group per name in SPLITS (a split missing there runs under --split all but is
    never reported); research compare --split and verify_questions.py must accept each split too."""
    import importlib.util

    from lead_agent.cli import build_parser

    data = ROOT / "lead_agent" / "compare" / "data"
    splits = {json.loads(line)["split"] for name in ("python_docs.jsonl", "postgresql_docs.jsonl", "r_docs.jsonl")
              for line in (data / name).read_text(encoding="utf-8").splitlines() if line.strip()}
    assert "holdout2" in splits
    assert splits <= set(_bench_module("bench_quality").SPLITS)
    spec = importlib.util.spec_from_file_location("verify_questions", data / "verify_questions.py")
    vq = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vq)
    assert splits <= set(vq.SPLITS)
    for split in sorted(splits):
        assert build_parser().parse_args(["compare", "--split", split]).split == split


def test_bench_quality_verbose_never_shows_a_held_out_question(tmp_path: Path) -> None:
    """--verbose prints a line per question for dev and test, but a holdout (a holdout split, or a probe file
    named *_holdout) is only counted: reading its questions one by one would make it a dev set."""
    rows = [json.loads(line) for line in small_questions(tmp_path).read_text().splitlines()]
    rows[1]["split"] = "holdout"
    shipped = tmp_path / "set.jsonl"
    shipped.write_text("".join(json.dumps(r) + "\n" for r in rows))
    probe = tmp_path / "probe_holdout.jsonl"
    probe.write_text(json.dumps(dict(rows[0], split="probe")) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_"))}
    env["HOME"] = str(tmp_path)
    out, corpus = {}, small_corpus(tmp_path)
    for path in (shipped, probe):
        proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_quality.py"), "--questions", str(path),
                               "--corpus", str(corpus), "--cache-dir", str(tmp_path / "cache"),
                               "--verbose"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[path.stem] = proc.stdout
    assert "s-1 dev" in out["set"] and "s-3 dev" in out["set"]  # dev questions are shown
    assert "s-2" not in out["set"] and "holdout" in out["set"]  # the holdout is counted, not shown
    assert "s-1" not in out["probe_holdout"] and "probe" in out["probe_holdout"]


def test_the_probes_readme_names_every_probe_file_as_it_is_called() -> None:
    # a probe renamed (a holdout read per question once measured) must be renamed in the table and in its command too:
    # before, the commands still named python_fresh10_holdout.jsonl after the file lost its "_holdout"
    probes = ROOT / "bench" / "probes"
    text = (probes / "README.md").read_text()
    files = {p.name for p in probes.glob("*.jsonl")}
    listed = set(re.findall(r"^\| `([\w.-]+\.jsonl)` \|", text, re.M))
    commanded = set(re.findall(r"--questions bench/probes/([\w.-]+\.jsonl)", text))
    assert listed == files, (sorted(listed - files), sorted(files - listed))
    assert commanded <= files, sorted(commanded - files)
