"""Plan approval: a person approves, edits or rejects a plan before any subagent starts — through an
approver callback (Python API), `--approve` at a terminal (edit in $EDITOR), or `--plan-only` then
`research approve` / `research reject`. An edit passes the same schema and policy checks as the lead's
plan; every version is kept with its author and a diff."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lead_agent import api
from lead_agent.approval import Defer, PlanReview, Refuse, ReviewReason, plan_document
from lead_agent.checkpoint import approve
from subagents.models.scripted import ScriptedModel, tool_call
from subagents.transcript import read_events

from .conftest import ROOT, lead_report_from_findings, note_tools, submit_first_hit

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
        "gather": "asyncio.gather returns results in the order of the awaitables passed to it."}
PLAN = {"query_type": "breadth_first", "rationale": "one per part",
        "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]},
                  {"objective": "gather ordering", "tools": ["search_notes"]}]}


def models() -> tuple[ScriptedModel, ScriptedModel]:
    lead = ScriptedModel([tool_call("delegate", PLAN), lead_report_from_findings])
    sub = ScriptedModel(per_agent={"r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit],
                                   "r1-sub2": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    return lead, sub


async def research(tmp_path: Path, approver: Any, lead: ScriptedModel, sub: ScriptedModel, **kw: Any) -> Any:
    kw.setdefault("max_rounds", 1)
    return await api.research("How do TaskGroup and gather differ?", runs_dir=tmp_path / "runs", lead_model=lead,
                              subagent_model=sub, extra_tools=note_tools(DOCS), approve=approver, **kw)


def agents_run(run_dir: Path) -> list[str]:
    return sorted(p.stem for p in (run_dir / "agents").glob("r*.jsonl"))


# ---------------------------------------------------------------- the Python API


async def test_an_approved_plan_runs_as_the_lead_wrote_it(tmp_path: Path) -> None:
    seen: list[PlanReview] = []
    result = await research(tmp_path, lambda review: seen.append(review) or review.plan, *models())
    assert [(r.version, r.round, r.author, r.reason) for r in seen] == [(1, 1, "lead", ReviewReason.FIRST)]
    assert "TaskGroup failures" in seen[0].table() and "depends on" in seen[0].table()
    assert result.status == "completed" and agents_run(result.run_dir) == ["r1-sub1", "r1-sub2"]
    assert [r["decision"] for r in result.manifest["reviews"]] == ["approved"]


async def test_an_edited_plan_is_checked_and_runs_exactly_as_edited(tmp_path: Path) -> None:
    calls: list[PlanReview] = []

    async def approver(review: PlanReview) -> Any:  # an async approver works too
        calls.append(review)
        doc = plan_document(review.plan)
        if len(calls) == 1:
            doc["tasks"][0]["tools"] = ["rm_rf"]  # refused: not a tool of this run
            return doc
        if len(calls) == 2:
            return {"query_type": "breadth_first", "rationale": "x", "tasks": []}  # refused by the schema
        doc["tasks"] = doc["tasks"][1:]
        doc["tasks"][0]["objective"] = "asyncio.gather result order"
        return doc

    lead, sub = models()
    sub.per_agent["r1-sub1"] = sub.per_agent.pop("r1-sub2")
    result = await research(tmp_path, approver, lead, sub)
    assert "unknown tool(s) 'rm_rf'" in calls[1].problems[0]
    assert any(p.startswith("schema: tasks") for p in calls[2].problems)
    assert agents_run(result.run_dir) == ["r1-sub1"]
    start = next(e for e in read_events(result.run_dir / "agents" / "r1-sub1.jsonl") if e["kind"] == "agent_start")
    assert start["data"]["delegation"]["objective"] == "asyncio.gather result order"
    v2 = json.loads((result.run_dir / "plan.v2.json").read_text())
    assert v2["author"] == "human" and len(v2["tasks"]) == 1
    assert '-   "objective": "TaskGroup failures",' in v2["diff"] and '+   "objective": "asyncio.gather result order",' \
        in v2["diff"]
    assert [(p["version"], p["author"]) for p in result.manifest["plan_versions"]] == [(1, "lead"), (2, "human")]
    assert result.manifest["reviews"][-1] == {"version": 1, "round": 1, "decision": "edited", "reason": "",
                                              "edited_version": 2}


async def test_a_refused_plan_ends_the_run_cleanly(tmp_path: Path) -> None:
    lead, sub = models()
    result = await research(tmp_path, lambda review: Refuse("not worth it"), lead, sub)
    assert result.status == "rejected" and result.report == ""
    assert agents_run(result.run_dir) == [] and sub.calls == [] and len(lead.calls) == 1
    assert not (result.run_dir / "report.md").exists()
    lead_end = list(read_events(result.run_dir / "agents" / "lead.jsonl"))[-1]
    assert lead_end["kind"] == "agent_end" and lead_end["data"]["status"] == "stopped"
    assert result.manifest["reviews"][0]["decision"] == "rejected"


async def test_a_deferred_plan_waits_and_approve_continues_it(tmp_path: Path) -> None:
    lead, sub = models()
    result = await research(tmp_path, lambda review: Defer(), lead, sub)
    assert result.status == "awaiting_approval" and sub.calls == []
    lead2, sub2 = models()
    lead2.responses.pop(0)  # the plan is made: the lead's next call writes the report
    done = await approve(result.run_dir, lead_model=lead2, subagent_model=sub2, extra_tools=note_tools(DOCS))
    assert done.status == "completed" and len(lead2.calls) == 1
    assert agents_run(done.run_dir) == ["r1-sub1", "r1-sub2"]
    assert [r["decision"] for r in done.manifest["reviews"]] == ["deferred", "approved"]
    assert [a["attempt"] for a in done.manifest["attempts"]] == [1, 2]


async def test_gap_rounds_are_gated_too(tmp_path: Path) -> None:
    seen: list[PlanReview] = []
    lead = ScriptedModel([tool_call("delegate", PLAN), tool_call("delegate", {**PLAN, "tasks": PLAN["tasks"][:1]}),
                          lead_report_from_findings])
    sub = ScriptedModel(per_agent={a: [tool_call("search_notes", {"query": "gather"}), submit_first_hit]
                                   for a in ("r1-sub1", "r1-sub2", "r2-sub1")})
    await research(tmp_path, lambda r: seen.append(r) or r.plan, lead, sub, max_rounds=2)
    assert [(r.round, r.reason) for r in seen] == [(1, ReviewReason.FIRST), (2, ReviewReason.GAP)]


# ---------------------------------------------------------------- the CLI


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "lists.md").write_text("# Lists\n\nA list is a mutable sequence type that can be changed in place after "
                                   "it is created.\n\nLists support append and extend operations that modify the "
                                   "list object itself.\n")
    (root / "tuples.md").write_text("# Tuples\n\nA tuple is an immutable sequence type that cannot be changed after "
                                    "it is created.\n\nTuples can be used as dictionary keys when all their items "
                                    "are hashable.\n")
    return root


def cli(tmp_path: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Any:
    full = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "EDITOR", "VISUAL")}
    full |= {"RESEARCH_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "lead_agent.cli", *args], cwd=tmp_path, env=full, input=stdin,
                          capture_output=True, text=True, timeout=120)


def run_dir_of(tmp_path: Path) -> Path:
    return next((tmp_path / "runs").iterdir())


def plan_only(tmp_path: Path, docs: Path) -> Path:
    proc = cli(tmp_path, "run", "Compare lists and tuples", "--corpus", str(docs), "--runs-dir",
               str(tmp_path / "runs"), "--max-rounds", "1", "--plan-only")
    assert proc.returncode == 0, proc.stderr
    d = run_dir_of(tmp_path)
    assert f"research approve {d}" in proc.stdout
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "awaiting_approval" and not list((d / "agents").glob("r*.jsonl"))
    return d


def test_plan_only_then_an_edited_plan_file_then_approve_runs_exactly_the_edit(tmp_path: Path, docs: Path) -> None:
    d = plan_only(tmp_path, docs)
    original = json.loads((d / "plan.v1.json").read_text())
    assert len(original["tasks"]) == 2 and original["tasks"][0]["tools"] == ["search_corpus", "read_passage"]
    edited = json.loads(json.dumps(original))
    del edited["tasks"][1]  # drop a task
    edited["tasks"][0]["tools"] = ["search_corpus"]  # change a tool
    (d / "plan.v1.json").write_text(json.dumps(edited, indent=1))

    proc = cli(tmp_path, "approve", str(d))
    assert proc.returncode == 0, proc.stderr
    assert "# Compare lists and tuples" in proc.stdout
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "completed"
    assert [(p["version"], p["author"], p["tasks"]) for p in m["plan_versions"]] == [(1, "lead", 2), (2, "human", 1)]
    assert sorted(p.stem for p in (d / "agents").glob("r*.jsonl")) == ["r1-sub1"]
    start = next(e for e in read_events(d / "agents" / "r1-sub1.jsonl") if e["kind"] == "agent_start")
    assert start["data"]["allowed_tools"] == ["search_corpus", "submit_findings"]
    calls = [e["data"]["name"] for e in read_events(d / "agents" / "r1-sub1.jsonl") if e["kind"] == "tool_call"]
    assert set(calls) <= {"search_corpus", "submit_findings"}
    assert json.loads((d / "plan.v1.json").read_text())["tasks"] == original["tasks"]  # v1 is the lead's again
    assert json.loads((d / "plan.v2.json").read_text())["tasks"][0]["tools"] == ["search_corpus"]


def test_an_invalid_edit_is_refused_with_its_errors_and_changes_nothing(tmp_path: Path, docs: Path) -> None:
    d = plan_only(tmp_path, docs)
    before = {p.name: p.read_bytes() for p in d.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")}
    doc = json.loads((d / "plan.v1.json").read_text())
    doc["tasks"][0]["tools"] = ["shell_exec"]
    (tmp_path / "bad-tool.json").write_text(json.dumps(doc))
    doc2 = dict(doc, query_type="sideways")
    (tmp_path / "bad-schema.toml").write_text('query_type = "sideways"\nrationale = "x"\n[[tasks]]\nobjective = "lists"\n'
                                              'tools = ["search_corpus"]\n')
    (tmp_path / "bad-json.json").write_text(json.dumps(doc2)[:-5])
    for name, said in (("bad-tool.json", "the edited plan is refused: task 1 names unknown tool(s) 'shell_exec'"),
                       ("bad-schema.toml", "the edited plan is refused: schema: query_type"),
                       ("bad-json.json", "is not valid JSON")):
        proc = cli(tmp_path, "approve", str(d), "--plan", str(tmp_path / name))
        assert proc.returncode == 2 and said in proc.stderr, (name, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    after = {p.name: p.read_bytes() for p in d.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")}
    assert after == before  # nothing written
    good = dict(doc, tasks=[dict(doc["tasks"][0], tools=["search_corpus"])])
    (tmp_path / "good.toml").write_text(
        'query_type = "breadth_first"\nrationale = "one part"\n[[tasks]]\nobjective = "' + good["tasks"][0]["objective"]
        + '"\ntools = ["search_corpus"]\n')
    proc = cli(tmp_path, "approve", str(d), "--plan", str(tmp_path / "good.toml"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((d / "plan.v2.json").read_text())["author"] == "human"


def test_reject_ends_the_run_cleanly(tmp_path: Path, docs: Path) -> None:
    d = plan_only(tmp_path, docs)
    proc = cli(tmp_path, "reject", str(d), "--reason", "wrong split")
    assert proc.returncode == 0 and "rejected" in proc.stdout, proc.stderr
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "rejected" and m["reviews"][-1]["decision"] == "rejected"
    assert m["reviews"][-1]["reason"] == "wrong split" and not (d / "report.md").exists()
    for again in (("approve", str(d)), ("reject", str(d)), ("resume", str(d))):
        proc = cli(tmp_path, *again)
        assert proc.returncode == 2 and "research: error:" in proc.stderr and "Traceback" not in proc.stderr


EDITOR = r'''
import json, pathlib, sys
path = pathlib.Path(sys.argv[1])
count = pathlib.Path(sys.argv[0]).with_suffix(".count")
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
doc = json.loads(path.read_text())
if n == 0:                                  # first edit: a tool the run does not have
    doc["tasks"][0]["tools"] = ["nope"]
else:                                       # reopened with the problems in the file: fix it, drop a task
    assert any("unknown tool" in p for p in doc["_problems"]), doc
    doc["tasks"] = [dict(doc["tasks"][0], tools=["search_corpus"], objective="What is a list?")]
path.write_text(json.dumps(doc))
'''


def test_approve_at_the_terminal_edits_in_the_editor_until_the_plan_passes(tmp_path: Path, docs: Path) -> None:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    proc = cli(tmp_path, "run", "Compare lists and tuples", "--corpus", str(docs), "--runs-dir",
               str(tmp_path / "runs"), "--max-rounds", "1", "--approve", stdin="e\na\n",
               env={"EDITOR": f"{sys.executable} {script}"})
    assert proc.returncode == 0, proc.stderr
    assert "objective" in proc.stderr and "depends on" in proc.stderr
    assert "The edit is refused" in proc.stderr and "unknown tool(s) 'nope'" in proc.stderr
    assert "Edited plan" in proc.stderr and "What is a list?" in proc.stderr
    assert (tmp_path / "editor.count").read_text() == "2"
    d = run_dir_of(tmp_path)
    lead_plan = json.loads((d / "plan.v1.json").read_text())
    assert lead_plan["tasks"][0]["objective"][:12] in " ".join(proc.stderr.split())  # the table showed the plan
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "completed" and [p["author"] for p in m["plan_versions"]] == ["lead", "human"]
    assert sorted(p.stem for p in (d / "agents").glob("r*.jsonl")) == ["r1-sub1"]
    assert "# Compare lists and tuples" in proc.stdout


def test_approve_at_the_terminal_without_an_answer_leaves_the_plan_waiting(tmp_path: Path, docs: Path) -> None:
    proc = cli(tmp_path, "run", "Compare lists and tuples", "--corpus", str(docs), "--runs-dir",
               str(tmp_path / "runs"), "--approve", stdin="")
    assert proc.returncode == 0, proc.stderr
    m = json.loads((run_dir_of(tmp_path) / "manifest.json").read_text())
    assert m["status"] == "awaiting_approval"
    proc = cli(tmp_path, "run", "Compare lists and tuples", "--corpus", str(docs), "--runs-dir",
               str(tmp_path / "runs2"), "--approve", "--max-rounds", "1", stdin="r\n")
    assert proc.returncode == 0 and "rejected" in proc.stdout
