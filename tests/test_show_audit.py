"""Defects an audit of `research show` / `runs` / `resume` found: damaged run files, a closed pipe,
--html targets, --status values, messages (each test fails without its fix)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from subagents.events import RunStatus
from subagents.runs import read_run

from .conftest import run_cli
from .test_approval import cli, docs, plan_only  # noqa: F401  (docs: fixture)
from .test_show import finished  # noqa: F401  (fixture)


def one_error_line(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code and len(lines) == 1 and lines[0].startswith("research: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def damage(path: Path, how: str) -> None:
    text = path.read_text()
    path.write_text(text[:len(text) // 3] if how == "truncated" else "")


# ---------------------------------------------------------------- 2: a truncated or empty manifest.json


@pytest.mark.parametrize("how", ["truncated", "empty"])
def test_a_damaged_manifest_is_read_from_the_transcripts(finished: Path, tmp_path: Path, how: str) -> None:
    whole = read_run(finished)
    damage(finished / "manifest.json", how)
    damage(finished / "sources.json", how)
    run = read_run(finished)
    assert run.status == whole.status == "completed" and run.trace.question == whole.trace.question
    assert [s.id for s in run.sources] == [s.id for s in whole.sources]
    assert run.manifest["models"] == whole.manifest["models"]
    assert {d.split(" ")[0] for d in run.damaged} == {"manifest.json", "sources.json"}
    proc = run_cli("show", str(finished), cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith(f"Run {finished.name}  [completed]")
    assert "Damaged: manifest.json is unreadable" in proc.stdout and "Models: lead=extractive" in proc.stdout
    data = json.loads(run_cli("show", str(finished), "--json", cwd=tmp_path).stdout)
    assert data["status"] == "completed" and data["models"]["lead"] == "extractive" and len(data["damaged"]) == 2
    assert run_cli("show", str(finished), "--html", cwd=tmp_path).returncode == 0
    # a finished run is not resumable: one line, not a traceback
    assert "has already ended (completed)" in one_error_line(run_cli("resume", str(finished), cwd=tmp_path))


def test_a_run_without_a_manifest_is_still_found(finished: Path, tmp_path: Path) -> None:
    (finished / "manifest.json").unlink()
    proc = run_cli("show", str(finished), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith(f"Run {finished.name}  [completed]"), proc.stderr


@pytest.mark.parametrize("command", ["approve", "reject"])
def test_approve_and_reject_work_with_a_damaged_manifest(tmp_path: Path, docs: Path, command: str) -> None:  # noqa: F811
    d = plan_only(tmp_path, docs)
    damage(d / "manifest.json", "truncated")
    proc = cli(tmp_path, command, str(d), "-q") if command == "approve" else cli(tmp_path, command, str(d))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    m = json.loads((d / "manifest.json").read_text())  # rewritten whole from the events
    assert m["status"] == ("rejected" if command == "reject" else "completed")
    assert m["question"] == "Compare lists and tuples"


# ---------------------------------------------------------------- 3: show into a closed pipe


@pytest.mark.parametrize("extra", [[], ["--json"], ["--agent", "r1-sub1"]])
def test_show_into_a_closed_pipe_ends_quietly(finished: Path, tmp_path: Path, extra: list[str]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "lead_agent.cli", "show", str(finished), *extra], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written (what `| head -1` ends up as)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


# ---------------------------------------------------------------- 4: --html targets


def test_show_html_refuses_a_folder_or_a_missing_folder(finished: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert "is a folder" in one_error_line(run_cli("show", str(finished), "--html", str(out), cwd=tmp_path))
    assert list(tmp_path.glob("*.tmp")) == [] and list(out.iterdir()) == []
    missing = tmp_path / "nonexist" / "dir" / "x.html"
    line = one_error_line(run_cli("show", str(finished), "--html", str(missing), cwd=tmp_path))
    assert "does not exist" in line and not (tmp_path / "nonexist").exists()
    proc = run_cli("show", str(finished), "--html", str(out / "x.html"), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == str(out / "x.html")
    assert [p.name for p in out.iterdir()] == ["x.html"]


def test_show_html_write_failure_is_one_line_and_leaves_nothing(finished: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / ("x" * 250 + ".html")  # a valid name, but its temporary file's name is too long
    line = one_error_line(run_cli("show", str(finished), "--html", str(target), cwd=tmp_path))
    assert str(target) in line and "too long" in line and "Error" not in line
    assert list(out.iterdir()) == []


# ---------------------------------------------------------------- 11 and 16: arguments and messages


def test_runs_status_must_be_a_known_status(finished: Path, tmp_path: Path) -> None:
    line = one_error_line(run_cli("runs", "--runs-dir", str(finished.parent), "--status", "bogus", cwd=tmp_path))
    assert "bogus" in line and "completed_empty" in line and "awaiting_approval" in line
    from lead_agent.commands.runs import STATUSES

    assert {s.value for s in RunStatus} <= set(STATUSES)  # every status a run can have is accepted
    for status in ("rejected", "completed"):
        assert run_cli("runs", "--runs-dir", str(finished.parent), "--status", status, cwd=tmp_path).returncode == 0


def test_show_of_an_absolute_non_run_names_the_path_once(tmp_path: Path) -> None:
    line = one_error_line(run_cli("show", str(tmp_path), cwd=tmp_path))
    assert line.count(str(tmp_path)) == 2, line  # once quoted as given, once as the manifest looked for
    assert line.endswith(f"(looked for {tmp_path}/manifest.json)")


# ---------------------------------------------------------------- 15: one tool-call count per agent


def test_timeline_agents_and_manifest_agree_on_tool_calls(finished: Path, tmp_path: Path) -> None:
    import re

    proc = run_cli("show", str(finished), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    timeline = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+) +\|.*?(\d+) tool call\(s\)", proc.stdout, re.M)}
    agents = {m.group(1): int(m.group(2)) for m in re.finditer(r"^  (\S+) .*? tool calls (\d+),", proc.stdout, re.M)}
    manifest = {a["agent_id"]: a["tool_calls"] for a in json.loads((finished / "manifest.json").read_text())["agents"]}
    assert timeline == agents == manifest and len(manifest) >= 3
    assert any(r.event.name == "submit_findings" for a in read_run(finished).trace.agents.values()
               for r in a.records if r.kind == "tool_call")  # the case the counts disagreed on


# ---------------------------------------------------------------- 9: a comparison directory among the runs


def fake_comparison(root: Path) -> Path:
    from .test_runs_index import fake_run

    d = root / "compare-20260102-100000-ab12"
    fake_run(d / "runs", "20260102-100001", "Compare lists and tuples", cost=0.01)
    fake_run(d / "runs", "20260102-100005", "What is a trio nursery", cost=0.02)
    (d / "experiment.json").write_text(json.dumps({"id": d.name, "variants": [{"name": "default"}, {"name": "single"}],
                                                   "questions": [{"id": "q1"}]}))
    (d / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in (
        {"cell": "a", "event": "end", "cost_usd": 0.01}, {"cell": "b", "event": "end", "cost_usd": 0.02})))
    return d


def test_runs_lists_a_comparison_as_one_row_pointing_at_its_runs(tmp_path: Path) -> None:
    from .test_runs_index import fake_run

    root = tmp_path / "runs"
    fake_run(root, "20260101-080000", "How do asyncio task groups work")
    comp = fake_comparison(root)
    data = json.loads(run_cli("runs", "--runs-dir", str(root), "--json", cwd=tmp_path).stdout)
    row = next(r for r in data if r["run_id"] == comp.name)
    assert row["status"] == "comparison" and row["cost_usd"] == pytest.approx(0.03)
    assert f"research runs --runs-dir {comp / 'runs'}" in row["question"] and "2 run(s)" in row["question"]
    assert [r["run_id"] for r in data].index(comp.name) == 0  # newest first, by the time in its name
    assert "unreadable" not in run_cli("runs", "--runs-dir", str(root), cwd=tmp_path).stdout
    only = json.loads(run_cli("runs", "--runs-dir", str(root), "--status", "comparison", "--json", cwd=tmp_path).stdout)
    assert [r["run_id"] for r in only] == [comp.name]
    # the comparison directory itself (or its runs/ folder) as --runs-dir: the runs it made
    for where in (comp, comp / "runs"):
        inner = json.loads(run_cli("runs", "--runs-dir", str(where), "--json", cwd=tmp_path).stdout)
        assert sorted(r["question"] for r in inner) == ["Compare lists and tuples", "What is a trio nursery"]
    line = one_error_line(run_cli("show", comp.name, "--runs-dir", str(root), cwd=tmp_path))
    assert "is a comparison, not a run" in line and f"research runs --runs-dir {comp}" in line


def test_a_runs_dir_that_is_a_file_is_the_first_and_only_thing_said(tmp_path: Path, docs: Path) -> None:  # noqa: F811
    afile = tmp_path / "hostname"
    afile.write_text("not a folder")
    for runs_dir in (afile, afile / "sub"):
        proc = cli(tmp_path, "run", "Compare lists and tuples", "--corpus", str(docs), "--runs-dir", str(runs_dir))
        assert f"{afile} is not a folder" in one_error_line(proc) and proc.stdout == ""
    assert not (tmp_path / "cache").exists()  # the corpus was not even indexed


def test_resume_of_a_killed_run_with_a_cut_manifest_finishes_it(finished: Path, tmp_path: Path) -> None:
    from .test_show import crash

    crash(finished)
    damage(finished / "manifest.json", "truncated")
    proc = run_cli("resume", str(finished), "-q", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    m = json.loads((finished / "manifest.json").read_text())
    assert m["status"] == "completed" and (finished / "report.md").is_file()
    assert read_run(finished).damaged == []
