"""A run in which every subagent failed ends `failed` with the reason; a report never says the
documents do not answer when nothing was retrieved; a replan is announced only when it is made
(audit defect 6)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from subagents.context import AgentRole, AgentStatus, LeadLimits, RequestContext, RoundReport, SubagentReport
from subagents.delegation import Delegation, QueryType
from subagents.model import Message, ModelRequest, TextBlock, ToolResultBlock, ToolUseBlock
from subagents.models.extractive import ExtractiveModel

from .conftest import run_cli


def test_a_run_whose_every_search_failed_ends_failed_and_records_the_real_replan_decision(tmp_path: Path) -> None:
    # an empty web cache in replay mode: every web_search call fails (no network is touched)
    proc = run_cli("run", "What is HTTP/3?", "--web", "--web-cache", "replay", "--cache-dir", str(tmp_path / "c"),
                   "--runs-dir", str(tmp_path / "runs"), "-q", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "run failed: every subagent failed (1): r1-sub1: every tool call failed (web_search x" in proc.stderr
    assert "Traceback" not in proc.stderr
    (run_dir,) = list((tmp_path / "runs").iterdir())
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "failed" and "every subagent failed" in m["error"]
    assert not (run_dir / "report.md").exists()
    # each agent's final decision is what happened: a replan only when a replan plan version exists
    final = {d["agent_id"]: d for d in m["replans"]}
    replans_made = [p for p in m["plan_versions"] if p["author"] == "replan"]
    assert final["r1-sub1"]["strategy"] != "replan" or replans_made
    assert final["r1-sub1"]["strategy"] == "stop" and "wrote the report instead" in final["r1-sub1"]["reason"]
    assert all("plans again" not in d["reason"] for d in m["replans"])


def lead_request(question: str, rounds: tuple[RoundReport, ...]) -> ModelRequest:
    limits = LeadLimits(tasks_per_query_type={q: 3 for q in QueryType}, max_rounds=1, rounds_left=0,
                        subagent_tools=("search_corpus",))
    ctx = RequestContext(role=AgentRole.LEAD, agent_id="lead", allowed_tools=("delegate",), question=question,
                         limits=limits, rounds=rounds)
    return ModelRequest(system="", messages=[Message("user", [TextBlock(question)])], context=ctx)


async def test_the_offline_report_does_not_say_the_documents_lack_what_was_never_retrieved() -> None:
    from subagents.delegation import Findings, FindingsStatus

    d = Delegation(objective="What is HTTP/3?", tools=["web_search"])
    failed = SubagentReport("r1-sub1", d, AgentStatus.FAILED, Findings(status=FindingsStatus.FAILED, open_questions=[
        "Nothing was retrieved: every tool call failed (web_search)."]), searched=False)
    text = (await ExtractiveModel().complete(lead_request("What is HTTP/3?", (RoundReport(1, (failed,)),)))).text()
    assert "do not answer" not in text and "Nothing was retrieved" in text
    assert "every tool call failed (web_search)" in text
    # the same findings after searches that ran: the documents were searched, and do not answer
    ran = dataclasses.replace(failed, searched=True)
    text = (await ExtractiveModel().complete(lead_request("What is HTTP/3?", (RoundReport(1, (ran,)),)))).text()
    assert "do not answer" in text


async def test_a_subagent_whose_every_call_failed_says_nothing_was_retrieved() -> None:
    d = Delegation(objective="What is HTTP/3?", tools=["web_search"], queries=["HTTP/3"])
    ctx = RequestContext(role=AgentRole.SUBAGENT, agent_id="r1-sub1", allowed_tools=("web_search", "submit_findings"),
                         delegation=d)
    use = ToolUseBlock("t1", "web_search", {"query": "HTTP/3", "k": 10})
    msgs = [Message("user", [TextBlock("task")]), Message("assistant", [use]),
            Message("user", [ToolResultBlock("t1", "web_search failed: replay miss", is_error=True)])]
    resp = await ExtractiveModel().complete(ModelRequest(system="", messages=msgs, context=ctx))
    (submit,) = resp.tool_uses()
    assert submit.input["status"] == "failed" and submit.input["claims"] == []
    assert submit.input["open_questions"] == ["Nothing was retrieved: every tool call failed (web_search)."]
