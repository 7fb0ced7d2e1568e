"""`research show`: the timeline, one agent's transcript, and runs that are still going or crashed
(read back from their transcripts as they are), followed as they grow."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lead_agent import api
from subagents.runs import read_run

from .browser import browser, console_errors  # noqa: F401  (fixture)
from .conftest import run_cli
from .test_cli import ASYNCIO_PAGE, OTHER


@pytest.fixture
def finished(tmp_path: Path) -> Path:
    import trio

    root = tmp_path / "docs"
    (root / "library").mkdir(parents=True)
    (root / "library" / "asyncio-task.html").write_text(ASYNCIO_PAGE)
    for name, body in OTHER.items():
        (root / name).write_text(body)
    result = trio.run(lambda: api.research("Compare lists and tuples", corpus=[root], runs_dir=tmp_path / "runs",
                                           cache_dir=tmp_path / "cache", use_config_file=False, environ={}))
    return result.run_dir


def crash(run_dir: Path, agent: str = "r1-sub2") -> None:
    """What a killed run leaves: no run end, the manifest saying running, one subagent cut off right
    after it called a tool (the call in flight, its result never written)."""
    (run_dir / "run.jsonl").write_text("".join(
        line + "\n" for line in (run_dir / "run.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] in ("run_start",)))
    for f in ("report.md", "report.html"):
        (run_dir / f).unlink()
    lines = (run_dir / "agents" / f"{agent}.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "tool_call") + 1
    (run_dir / "agents" / f"{agent}.jsonl").write_text("\n".join(lines[:cut]) + "\n" + lines[cut][:30])
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["status"] = "running"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_show_has_a_timeline_of_every_agent(finished: Path, tmp_path: Path) -> None:
    proc = run_cli("show", str(finished), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.split("Timeline", 1)[1].split("Agents:", 1)[0]
    rows = {line.split()[0]: line for line in text.splitlines() if "|" in line}
    run = read_run(finished)
    assert list(rows) == [a.agent_id for a in run.trace.ordered_agents()]
    for a in run.trace.ordered_agents():
        bar = rows[a.agent_id].split("|")[1]
        assert "█" in bar or "▓" in bar, rows[a.agent_id]  # model calls marked
        tools = sum(1 for r in a.records if r.kind == "tool_call" and r.event.name != "submit_findings")
        assert f"{len(a.calls)} model, {tools} tool call(s)" in rows[a.agent_id]
    assert not any("▶" in row.split("|")[1] for row in rows.values())  # nothing still running
    # subagents live inside the lead's life (its delegate call)
    lead = rows["lead"].split("|")[1]
    for sub in (rows["r1-sub1"].split("|")[1], rows["r1-sub2"].split("|")[1]):
        assert len(lead) == len(sub)
        assert len(lead) - len(lead.lstrip()) <= len(sub) - len(sub.lstrip()) and len(sub.rstrip()) <= len(lead.rstrip())


def test_show_agent_is_one_readable_transcript(finished: Path, tmp_path: Path) -> None:
    proc = run_cli("show", str(finished), "--agent", "r1-sub1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    a = read_run(finished).trace.agents["r1-sub1"]
    assert out.startswith("Agent r1-sub1 (subagent, extractive)")
    assert f"delegation: {a.delegation.objective}" in out
    assert f"budget {a.delegation.budget.max_tool_calls} tool calls" in out
    assert re.search(r'→ search_corpus\(\{"query": "[^"]+"', out)  # calls with their inputs
    assert re.search(r"← search_corpus \(\d\.\d\ds, \d+ chars\): ", out)  # results, shortened
    assert max(len(line) for line in out.splitlines() if "← " in line) < 400
    assert f"findings [{a.findings.status.value}]" in out and a.findings.claims[0].text in out
    assert re.search(r"ended (ok|partial) \(stop", out)
    bad = run_cli("show", str(finished), "--agent", "r9-sub9", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "r1-sub1" in bad.stderr


def test_show_reads_a_crashed_run_as_its_transcripts_say(finished: Path, tmp_path: Path, browser: Any) -> None:
    crash(finished)
    proc = run_cli("show", str(finished), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"Run {finished.name}  [running")
    row = next(line for line in proc.stdout.splitlines() if line.startswith("r1-sub2") and "|" in line)
    assert row.split("|")[1].rstrip().endswith("▶") and "running" in row
    agent = run_cli("show", str(finished), "--agent", "r1-sub2", cwd=tmp_path)
    assert agent.returncode == 0 and "still running" in agent.stdout
    data = json.loads(run_cli("show", str(finished), "--json", cwd=tmp_path).stdout)
    assert data["status"] == "running" and data["report"] is None
    # the viewer of a crashed run: the call in flight is drawn open, nothing breaks
    page = tmp_path / "crashed.html"
    assert run_cli("show", str(finished), "--html", str(page), cwd=tmp_path).returncode == 0
    browser.get(page.as_uri())
    assert browser.find_elements("css selector", ".tl-row[data-agent='r1-sub2'] .bar.t.open")
    assert "No report was written" in browser.find_element("css selector", "#report").text
    assert console_errors(browser) == []


def test_follow_prints_a_run_as_it_grows_and_stops_at_its_end(finished: Path, tmp_path: Path) -> None:
    full = {p: p.read_text() for p in [finished / "run.jsonl", *(finished / "agents").glob("*.jsonl")]}
    for p, text in full.items():  # the run as it was early on: the start and the plan only
        keep = [line for line in text.splitlines() if json.loads(line)["kind"] in ("run_start", "agent_start", "plan")
                and json.loads(line)["agent_id"] in ("run", "lead")]
        p.write_text("".join(line + "\n" for line in keep))
    from lead_agent.rundir import RunDir

    live = RunDir.at(finished)
    live.lock()  # held as by the process running it (a run no process holds is not followed: it was killed)
    proc = subprocess.Popen([sys.executable, "-m", "lead_agent.cli", "show", str(finished), "--follow"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)  # it has read the early state and waits
        assert proc.poll() is None
        # the rest of the run arrives, the run's own log last as a run writes it (its end comes after every agent's
        # events: written first, a follower polling in between would end before reading them)
        for p, text in sorted(full.items(), key=lambda item: item[0].name == "run.jsonl"):
            p.write_text(text)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        live.unlock()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert all(re.match(r"\d\d:\d\d:\d\d ", line) for line in lines)
    text = "\n".join(lines)
    assert text.index("round 1: 2 task(s)") < text.index("r1-sub1 started") < text.index("run completed")
    assert text.count("round 1: 2 task(s)") == 1  # nothing printed twice
