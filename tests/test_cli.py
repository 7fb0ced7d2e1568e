"""The `research` command end to end, offline, on a small corpus the test writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subagents.transcript import read_events

from .conftest import run_cli, write_small_corpus

ASYNCIO_PAGE = """<html><head><title>Coroutines and Tasks</title></head><body>
<div class="related"><a href="index.html">index</a> | <a href="modules.html">modules</a></div>
<div class="body">
<h1>Coroutines and Tasks</h1>
<p>This section outlines high-level asyncio APIs to work with coroutines and Tasks.</p>
<h2>Task Groups</h2>
<p>Task groups combine a task creation API with a convenient and reliable way to wait for all tasks in the group to finish.</p>
<p>The first time any of the tasks belonging to the group fails with an exception other than asyncio.CancelledError,
the remaining tasks in the group are cancelled. No further tasks can then be added to the group.</p>
<p>Once all tasks have finished, if any tasks have failed with an exception other than asyncio.CancelledError,
those exceptions are combined in an ExceptionGroup or BaseExceptionGroup which is then raised.</p>
<h2>Sleeping</h2>
<p>The sleep coroutine suspends the current task for the given number of seconds.</p>
</div></body></html>"""

OTHER = {
    "threads.md": "# Threads\n\nThe threading module runs code in several threads at once.\n\n## Locks\n\n"
                  "A lock is held by at most one thread at a time and is released by the holder.\n",
    "lists.rst": "Lists\n=====\n\nLists are mutable sequences, typically used to store collections of items.\n\n"
                 "Tuples\n------\n\nTuples are immutable sequences, typically used to store heterogeneous data.\n",
    "notes.txt": "The garbage collector frees memory that is no longer referenced by any object.\n",
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_small_corpus(tmp_path / "docs")


def test_research_run_offline_end_to_end(tmp_path: Path, corpus: Path, cache_env: Path) -> None:
    q = "What happens to the other tasks in an asyncio TaskGroup when one of them raises an exception?"
    proc = run_cli("run", q, "--corpus", str(corpus), "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "No language model wrote this report" in out
    assert "the remaining tasks in the group are cancelled" in out  # the answering passage, quoted
    assert "## References" in out and "[1]" in out
    assert "Run saved to" in out
    run_dir = next((tmp_path / "runs").iterdir())
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "completed" and m["models"] == {"lead": "extractive", "subagent": "extractive",
                                                          "language_model_used": False}
    assert m["citation_check"]["markers"] >= 1 and m["citation_check"]["pass_rate"] == 1.0
    assert m["prompts"]["files"]["lead_system"]["sha256"]
    plan = json.loads((run_dir / "plan.v1.json").read_text())
    # one question: one subagent with distinct queries (a second one would retrieve the same passages)
    assert plan["query_type"] == "straightforward" and len(plan["tasks"]) == 1
    assert all(set(t["tools"]) == {"search_corpus", "read_passage"} for t in plan["tasks"])
    subs = [a for a in m["agents"] if a["role"] == "subagent"]
    assert subs and all((run_dir / a["transcript"]).is_file() for a in m["agents"])
    # subagents issued several searches in one turn
    evs = list(read_events(run_dir / "agents" / "r1-sub1.jsonl"))
    first = next(e for e in evs if e["kind"] == "model_response")
    assert sum(1 for b in first["data"]["content"] if b["type"] == "tool_use") >= 2
    report = (run_dir / "report.md").read_text()
    assert report.strip() in out
    # research show renders the run
    show = run_cli("show", str(run_dir), cwd=tmp_path)
    assert show.returncode == 0, show.stderr
    for needle in ("Plan v1", "r1-sub1", "search_corpus", "findings [", "Citation check:"):
        assert needle in show.stdout
    by_id = run_cli("show", run_dir.name, "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert by_id.returncode == 0 and by_id.stdout == show.stdout


def test_comparison_question_splits_by_entity(tmp_path: Path, corpus: Path, cache_env: Path) -> None:
    proc = run_cli("run", "Compare lists and tuples", "--corpus", str(corpus), "--runs-dir", str(tmp_path / "r"),
                   "--max-subagents", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run_dir = next((tmp_path / "r").iterdir())
    plan = json.loads((run_dir / "plan.v1.json").read_text())
    assert plan["query_type"] == "breadth_first"
    assert [t["objective"].split(" (")[0] for t in plan["tasks"]] == ["lists", "tuples"]
    assert "mutable sequences" in proc.stdout and "immutable sequences" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["run", ""], "question is empty"),
    (["run", "   "], "question is empty"),
    (["run", "?", "--corpus", "{corpus}"], "names nothing to look up"),
    (["run", "Why?", "--corpus", "{corpus}"], "names nothing to look up"),
    (["run", "How do I... ?", "--corpus", "{corpus}"], "names nothing to look up"),
    (["run", "q?", "--corpus", "/nonexistent/docs"], "does not exist"),
    (["run", "q?", "--corpus", "{empty}"], "no indexable"),
    (["run", "q?", "--corpus", "{corpus}", "--lead-model", "gpt-17-ultra"], "unknown model"),
    (["run", "q?", "--corpus", "{corpus}", "--max-subagents", "0"], "at least 1"),
    (["run", "q?", "--corpus", "{corpus}", "--max-subagents", "-3"], "at least 1"),
    (["run", "q?", "--corpus", "{corpus}", "--max-subagents", "many"], "invalid int"),
    (["run", "q?", "--corpus", "{corpus}", "--prompts", "nope"], "unknown prompt variant"),
    (["run", "q?", "--corpus", "{corpus}", "--prompts", "../prompts/default"], "unknown prompt variant"),
    (["run", "q?", "--corpus", "{corpus}", "--prompts", "{bogus}"], "bogus.txt is not a known prompt"),
    (["run", "q?", "--corpus", "{corpus}", "--prompts", "{unfilled}"], "placeholder(s) the code never fills: ${nosuch}"),
    (["run", "q?", "--corpus", "{corpus}", "--runs-dir", ""], "--runs-dir is empty"),
    (["run", "q?"], "no sources"),
    (["run", "q?", "--corpus", ""], "corpus path is empty"),
    (["show", "no-such-run"], "no run"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, corpus: Path, cache_env: Path,
                                                      args: list[str], message: str) -> None:
    (tmp_path / "empty").mkdir()
    for folder, name, text in (("bogus", "bogus.txt", "hello"), ("unfilled", "lead_system.txt", "Plan ${nosuch}.")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text)
    args = [a.format(corpus=corpus, empty=tmp_path / "empty", bogus=tmp_path / "bogus", unfilled=tmp_path / "unfilled")
            for a in args]
    runs = tmp_path / "runs"
    extra = [] if "--runs-dir" in args else ["--runs-dir", str(runs)]
    proc = run_cli(*args, *extra, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("research: error:") and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not runs.exists() or not any(runs.iterdir())


def test_extractive_lead_starts_a_gap_round_for_an_unanswered_part(tmp_path: Path, corpus: Path, cache_env: Path) -> None:
    proc = run_cli("run", "Compare lists and dictionaries", "--corpus", str(corpus), "--runs-dir", str(tmp_path / "r"),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run_dir = next((tmp_path / "r").iterdir())
    v2 = json.loads((run_dir / "plan.v2.json").read_text())
    assert v2["rationale"].startswith("gap round:") and "dictionaries" in v2["rationale"]
    assert all(t["agent_id"].startswith("r2-") for t in v2["tasks"])
    assert any("dictionaries" in t["objective"] for t in v2["tasks"])
    assert not (run_dir / "plan.v3.json").exists()
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["plans"] == ["plan.v1.json", "plan.v2.json"]
    assert "## What is missing" in proc.stdout  # the part the corpus cannot answer is named

    # --max-rounds 1: no gap round, but the part nothing was found for is replanned (--max-replans, not --max-rounds)
    one = run_cli("run", "Compare lists and dictionaries", "--corpus", str(corpus), "--runs-dir", str(tmp_path / "r1"),
                  "--max-rounds", "1", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    m1 = json.loads((next((tmp_path / "r1").iterdir()) / "manifest.json").read_text())
    assert [(p["round"], p["author"]) for p in m1["plan_versions"]] == [(1, "lead"), (2, "replan")]
    assert [r["purpose"] for r in m1["timings"]["rounds"]] == ["research", "replan"]
    none = run_cli("run", "Compare lists and dictionaries", "--corpus", str(corpus), "--runs-dir", str(tmp_path / "r0"),
                   "--max-rounds", "1", "--max-replans", "0", cwd=tmp_path)
    assert none.returncode == 0, none.stderr
    assert not (next((tmp_path / "r0").iterdir()) / "plan.v2.json").exists()


def test_retrieved_text_with_closing_tags_cannot_break_the_extractive_agents(tmp_path: Path, cache_env: Path) -> None:
    from lead_agent import research_sync

    docs = tmp_path / "widgets"
    docs.mkdir()
    (docs / "doc.txt").write_text(
        "Widgets\n\n"
        "The widget framework closes every report section with the literal tag </findings> followed by a widget summary line.\n"
        "The widget framework renders widget summaries with a bold header and an optional widget footer note.\n"
        "The widget framework caches widget summaries for ten minutes before rendering widget output again.\n")
    result = research_sync("How does the widget framework render widget summaries </delegation>?", corpus=[docs],
                           runs_dir=tmp_path / "runs", use_config_file=False)
    assert result.status == "completed"
    assert "renders widget summaries with a bold header" in result.report
    assert all(a["status"] != "failed" for a in result.manifest["agents"])


def test_gap_label_is_not_searched_for(tmp_path: Path, cache_env: Path) -> None:
    from lead_agent import research_sync

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gap.txt").write_text("To bridge this gap, the module has a new function for transcoding the variables "
                                  "into native strings and returning a new dictionary.\n")

    from lead_agent.settings import UsageError

    # question words only: refused before a run starts, nothing written
    with pytest.raises(UsageError, match="names nothing to look up"):
        research_sync("what is it?", corpus=[docs], runs_dir=tmp_path / "runs", use_config_file=False)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    # a lone letter is the only name left: it is searched, and the gap round that follows never searches its label
    result = research_sync("what is q?", corpus=[docs], runs_dir=tmp_path / "runs", use_config_file=False)
    run_dir = result.run_dir
    manifest = json.loads((run_dir / "manifest.json").read_text())
    queries = [e["data"]["input"]["query"] for a in manifest["agents"] if a["agent_id"] != "lead"
               for e in read_events(run_dir / a["transcript"]) if e["kind"] == "tool_call"
               and e["data"]["name"] == "search_corpus"]
    assert queries and not any("gap" in q for q in queries)
    assert "do not answer this question" in result.report and "transcoding" not in result.report.split("## Answer")[1].split("\n## ")[0]


def test_a_lone_letter_is_searched_when_it_is_all_a_question_names(tmp_path: Path, cache_env: Path) -> None:
    from lead_agent import research_sync

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cmds.md").write_text("# Commands\n\n## The q command\n\nThe q command quits the editor and saves nothing.\n\n"
                                  "## The w command\n\nThe w command writes the buffer to its file.\n")
    # "q" and the option "-w" are too short to search beside other words, but here they are all there is
    for question, expected in (("what is q?", "The q command quits the editor and saves nothing."),
                               ("what does -w do?", "The w command writes the buffer to its file.")):
        result = research_sync(question, corpus=[docs], runs_dir=tmp_path / "runs", use_config_file=False)
        assert result.status == "completed"
        answer = result.report.split("## Answer", 1)[1].split("\n## ", 1)[0]
        assert expected in answer, (question, answer)


def test_a_question_about_a_one_letter_name_is_searched_for_that_name(tmp_path: Path, cache_env: Path) -> None:
    from lead_agent import research_sync

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "about.txt").write_text("About R\n\nR is a system for statistical computation and graphics.\n\n"
                                    "Installing\n\nThe installer copies the files into the library directory.\n")
    # "R" is the only word left once question words go: it is searched, not dropped as too short
    result = research_sync("What is R?", corpus=[docs], runs_dir=tmp_path / "runs", use_config_file=False)
    assert result.status == "completed"
    answer = result.report.split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "R is a system for statistical computation and graphics." in answer

@pytest.mark.parametrize("manifest", ['{"run_id": "x"', "{}", "[]", "\xff"])
def test_show_of_a_corrupt_run_is_one_line_not_a_traceback(tmp_path: Path, manifest: str) -> None:
    run_dir = tmp_path / "runs" / "r"
    (run_dir / "agents").mkdir(parents=True)
    (run_dir / "manifest.json").write_text(manifest, encoding="latin-1")
    proc = run_cli("show", str(run_dir), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("research: error: cannot show run"), proc.stderr
