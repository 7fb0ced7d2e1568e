"""Checkpoints and resume: a run that was interrupted, failed or killed continues from its events —
finished subagents reused, unfinished ones run again, the lead from its last completed step; transcripts
appended after an attempt marker (no line lost, none duplicated, no torn line); the resumed run's usage
includes what the earlier attempt spent. SIGTERM and SIGHUP end a run like Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from lead_agent import api
from lead_agent.checkpoint import open_checkpoint, resume
from lead_agent.settings import UsageError
from subagents.events import AgentEnded, EventRecord, RunStarted
from subagents.model import ModelError
from subagents.models.scripted import ScriptedModel, Step, tool_call
from subagents.runs import read_run

from .conftest import ROOT, lead_report_from_findings, note_tools, submit_first_hit
from .fakes.anthropic_server import FakeAnthropicServer, hang, text, tool_use

DOCS = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
        "gather": "asyncio.gather returns results in the order of the awaitables passed to it."}
PLAN = {"query_type": "breadth_first", "rationale": "one per part",
        "tasks": [{"objective": "TaskGroup failures", "tools": ["search_notes"]},
                  {"objective": "gather ordering", "tools": ["search_notes"]}]}


class Seen:
    """Where the run is, and when r1-sub1 has ended while r1-sub2 is in its model call (the moment to interrupt)."""

    def __init__(self) -> None:
        self.run_dir: Path | None = None
        self.sub1_done = trio.Event()

    def on_event(self, record: EventRecord) -> None:
        if isinstance(record.event, RunStarted):
            self.run_dir = Path(record.event.run_dir)
        if isinstance(record.event, AgentEnded) and record.agent_id == "r1-sub1":
            self.sub1_done.set()


def lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n"), f"{path}: torn last line"
    return [json.loads(line) for line in raw.decode().splitlines()]


def assert_transcripts_whole(run_dir: Path) -> None:
    """Every transcript is valid JSONL, and each agent's seq runs 0, 1, 2, … (nothing lost or repeated)."""
    for f in [run_dir / "run.jsonl", *sorted((run_dir / "agents").glob("*.jsonl"))]:
        evs = lines(f)
        seqs = [e["seq"] for e in evs]
        assert seqs == sorted(set(seqs)), f"{f.name}: seq repeated or out of order"
        if f.name != "run.jsonl":  # corpus events before the run directory exists take the run's first seqs
            assert seqs == list(range(len(seqs))), f"{f.name}: a line lost or duplicated"


async def interrupted_run(tmp_path: Path) -> tuple[Path, ScriptedModel]:
    """sub1 finishes; sub2 is stuck in a call when the run is interrupted (cancelled, like Ctrl-C)."""
    lead = ScriptedModel([tool_call("delegate", PLAN), lead_report_from_findings])
    sub = ScriptedModel(per_agent={"r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit],
                                   "r1-sub2": [tool_call("search_notes", {"query": "gather"}),
                                               Step(submit_first_hit, delay=3600)]})
    seen = Seen()

    async def run(cancel: trio.CancelScope) -> None:
        await api.research("How do TaskGroup and gather differ?", runs_dir=tmp_path / "runs", lead_model=lead,
                           subagent_model=sub, extra_tools=note_tools(DOCS), max_rounds=1, observers=[seen])
        cancel.cancel()

    async with trio.open_nursery() as nursery:  # interrupted on an event, not after a wall-clock second
        nursery.start_soon(run, nursery.cancel_scope)
        await seen.sub1_done.wait()
        while sum(c.context.agent_id == "r1-sub2" for c in sub.calls) < 2:
            await trio.sleep(0.01)  # until r1-sub2 is in its second call (the one that never returns)
        nursery.cancel_scope.cancel()
    assert seen.run_dir is not None
    return seen.run_dir, sub


async def test_an_interrupted_run_resumes_reusing_finished_subagents(tmp_path: Path) -> None:
    run_dir, _ = await interrupted_run(tmp_path)
    first = read_run(run_dir)
    assert first.status == "interrupted"
    spent = first.trace.usage().total()
    lead = ScriptedModel([lead_report_from_findings])  # the lead's next step: the report
    sub = ScriptedModel(per_agent={"r1-sub2": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    result = await resume(run_dir, lead_model=lead, subagent_model=sub, extra_tools=note_tools(DOCS))
    assert result.status == "completed"
    assert {c.context.agent_id for c in sub.calls} == {"r1-sub2"}  # r1-sub1's findings were reused
    assert len(lead.calls) == 1
    convo = lead.calls[0].messages  # the lead continued its conversation: task, plan, findings
    assert [m.role for m in convo] == ["user", "assistant", "user"]
    assert '"objective": "TaskGroup failures"' in convo[2].content[0].content  # reused findings reached it
    assert "remaining tasks in the group are cancelled" in result.report
    assert "asyncio.gather returns results" in result.report
    assert result.manifest["citation_check"]["unsupported"] == 0 and result.manifest["citation_check"]["unknown"] == 0
    assert_transcripts_whole(run_dir)
    sub2 = lines(run_dir / "agents" / "r1-sub2.jsonl")
    kinds = [e["kind"] for e in sub2]
    marker = kinds.index("attempt")
    assert kinds[marker - 1] == "agent_end" and sub2[marker - 1]["data"]["status"] == "interrupted"
    assert sub2[marker]["data"] == {"attempt": 2} and kinds[marker + 1] == "agent_start"
    lead_lines = lines(run_dir / "agents" / "lead.jsonl")
    assert sum(1 for e in lead_lines if e["kind"] == "tool_call") == 1  # the delegate call is not repeated
    assert "attempt" not in [e["kind"] for e in lines(run_dir / "agents" / "r1-sub1.jsonl")]
    run = read_run(run_dir)
    assert run.trace.usage().total() == spent + 3 * 20  # the killed attempt's calls + this one's (3 calls of 20)
    assert result.manifest["usage"] == run.trace.usage().to_dict()  # the manifest counts both attempts
    assert [a["attempt"] for a in result.manifest["attempts"]] == [1, 2]
    assert result.manifest["attempts"][1]["previous_status"] == "interrupted"
    assert next(a for a in result.manifest["agents"] if a["agent_id"] == "r1-sub2")["attempts"] == 2


async def test_torn_lines_are_cut_and_whole_ones_kept_before_appending(tmp_path: Path) -> None:
    run_dir, _ = await interrupted_run(tmp_path)
    torn = run_dir / "agents" / "r1-sub2.jsonl"
    fragment = b'{"v": 2, "run_id": "x", "agent_id": "r1-sub2", "seq": 99, "ki'  # a kill mid-write
    with open(torn, "ab") as fh:
        fh.write(fragment)
    whole = run_dir / "agents" / "r1-sub1.jsonl"
    data = whole.read_bytes()
    whole.write_bytes(data[:-1])  # a line written in full, all but its newline
    (run_dir / "manifest.json.tmp").write_text("{half")
    lead = ScriptedModel([lead_report_from_findings])
    sub = ScriptedModel(per_agent={"r1-sub2": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    result = await resume(run_dir, lead_model=lead, subagent_model=sub, extra_tools=note_tools(DOCS))
    assert result.manifest["attempts"][1]["repaired"] == {"agents/r1-sub2.jsonl": len(fragment)}
    assert_transcripts_whole(run_dir)
    assert whole.read_bytes() == data  # kept, with its newline
    assert not (run_dir / "manifest.json.tmp").exists()


async def test_a_lead_killed_before_its_first_message_starts_its_conversation(tmp_path: Path) -> None:
    # found by the kill suite: agent_start written, the task message not yet -> an empty conversation (HTTP 400)
    lead = ScriptedModel([Step(tool_call("delegate", PLAN), delay=3600)])
    seen = Seen()
    with trio.move_on_after(0.5):
        await api.research("How do TaskGroup and gather differ?", runs_dir=tmp_path / "runs", lead_model=lead,
                           subagent_model=ScriptedModel(), extra_tools=note_tools(DOCS), max_rounds=1,
                           observers=[seen])
    assert seen.run_dir is not None
    lead_log = seen.run_dir / "agents" / "lead.jsonl"
    lead_log.write_bytes(lead_log.read_bytes().splitlines(keepends=True)[0])  # only agent_start survived the kill
    lead2 = ScriptedModel([tool_call("delegate", PLAN), lead_report_from_findings])
    sub = ScriptedModel(per_agent={a: [tool_call("search_notes", {"query": q}), submit_first_hit]
                                   for a, q in (("r1-sub1", "TaskGroup"), ("r1-sub2", "gather"))})
    result = await resume(seen.run_dir, lead_model=lead2, subagent_model=sub, extra_tools=note_tools(DOCS))
    assert result.status == "completed"
    assert [m.role for m in lead2.calls[0].messages] == ["user"] and "<question>" in lead2.calls[0].messages[0].text()
    assert_transcripts_whole(seen.run_dir)


async def test_a_failed_run_resumes_from_the_lead_s_last_completed_step(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", PLAN), ModelError("the report call failed")])
    sub = ScriptedModel(per_agent={"r1-sub1": [tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit],
                                   "r1-sub2": [tool_call("search_notes", {"query": "gather"}), submit_first_hit]})
    with pytest.raises(api.RunFailed) as info:
        await api.research("How do TaskGroup and gather differ?", runs_dir=tmp_path / "runs", lead_model=lead,
                           subagent_model=sub, extra_tools=note_tools(DOCS), max_rounds=1)
    run_dir = info.value.run_dir
    assert read_run(run_dir).status == "failed"
    lead2, sub2 = ScriptedModel([lead_report_from_findings]), ScriptedModel()
    result = await resume(run_dir, lead_model=lead2, subagent_model=sub2, extra_tools=note_tools(DOCS))
    assert result.status == "completed" and sub2.calls == [] and len(lead2.calls) == 1
    assert result.manifest["error"] is None and (run_dir / "report.md").is_file()
    lead_lines = lines(run_dir / "agents" / "lead.jsonl")
    assert [e["data"]["status"] for e in lead_lines if e["kind"] == "agent_end"] == ["failed", "ok"]


async def test_what_cannot_be_resumed_is_refused_without_writing(tmp_path: Path) -> None:
    lead = ScriptedModel([tool_call("delegate", {**PLAN, "tasks": PLAN["tasks"][:1]}), lead_report_from_findings])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit])
    done = await api.research("q", runs_dir=tmp_path / "runs", lead_model=lead, subagent_model=sub,
                              extra_tools=note_tools(DOCS), max_rounds=1)
    before = (done.run_dir / "run.jsonl").read_bytes()
    with pytest.raises(UsageError, match="already ended \\(completed\\)"):
        await resume(done.run_dir, lead_model=lead, subagent_model=sub)
    assert (done.run_dir / "run.jsonl").read_bytes() == before
    run_dir, _ = await interrupted_run(tmp_path / "b")
    held = open_checkpoint(run_dir)  # as if another process were running it
    try:
        with pytest.raises(UsageError, match="still running"):
            await resume(run_dir, lead_model=lead, subagent_model=sub)
    finally:
        held.run_dir.unlock()
    with pytest.raises(UsageError, match="not a run directory"):
        await resume(tmp_path / "nowhere")


# ---------------------------------------------------------------- signals, through the CLI


def cli_env(tmp_path: Path, srv: FakeAnthropicServer) -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.base_url,
            "RESEARCH_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_a_run_like_ctrl_c_and_it_resumes(tmp_path: Path, signum: int) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Tasks\n\nA task group cancels the remaining tasks when one task fails.\n")
    plan = {"query_type": "straightforward", "rationale": "one fact",
            "tasks": [{"objective": "what a task group does on failure", "tools": ["search_corpus"]}]}
    hanging = {"on": True}

    def handler(body: dict) -> Any:
        names = {t["name"] for t in body.get("tools", [])}
        if "delegate" in names:
            results = [b for b in body["messages"][-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            return text("# Task groups\n\nA task group cancels the remaining tasks when one task fails [S1].") \
                if results else tool_use(("delegate", plan))
        if len(body["messages"]) == 1:
            return tool_use(("search_corpus", {"query": "task group"}))
        if hanging["on"]:
            return hang(60)
        return tool_use(("submit_findings", {"status": "ok", "claims": [
            {"text": "A task group cancels the remaining tasks when one task fails.", "source_ids": ["S1"]}]}))

    with FakeAnthropicServer(handler=handler) as srv:
        proc = subprocess.Popen([sys.executable, "-m", "lead_agent.cli", "run", "What do task groups do?", "--corpus",
                                 str(docs), "--runs-dir", str(tmp_path / "runs"), "--max-rounds", "1"],
                                cwd=tmp_path, env=cli_env(tmp_path, srv), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and sum(1 for r in srv.requests if "submit_findings" in
                                                  {t["name"] for t in r.body.get("tools", [])}) < 2:
            time.sleep(0.05)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signum, (out, err)
        assert "Traceback" not in err and "interrupted" in err and "research resume" in err
        run_dir = next((tmp_path / "runs").iterdir())
        m = json.loads((run_dir / "manifest.json").read_text())
        assert m["status"] == "interrupted" and sum(m["usage"].values()) > 0  # usage kept
        assert {a["agent_id"]: a["status"] for a in m["agents"]} == {"lead": "interrupted", "r1-sub1": "interrupted"}

        if signum != signal.SIGTERM:
            return  # one resume through the CLI is enough (SIGTERM's)
        hanging["on"] = False
        done = subprocess.run([sys.executable, "-m", "lead_agent.cli", "resume", str(run_dir)], cwd=tmp_path,
                              env=cli_env(tmp_path, srv), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "A task group cancels the remaining tasks" in done.stdout
    m2 = json.loads((run_dir / "manifest.json").read_text())
    assert m2["status"] == "completed" and sum(m2["usage"].values()) > sum(m["usage"].values())
    assert_transcripts_whole(run_dir)
