"""Transcript writing at its seam: one JSONL file per agent, run-level lines in run.jsonl, every
line flushed as it is written and stamped with its identity, secrets never written, a torn last
line tolerated, unknown kinds kept readable; the bus delivers in order to every observer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from subagents.events import (RUN_AGENT, AgentFailed, BudgetExhausted, Clock, EventBus, EventRecord, ModelRetried,
                              RunEnded, RunStatus, ToolCalled, UnknownEvent, event_reference)
from subagents.model import RetryNotice
from subagents.transcript import TranscriptWriter, read_events, read_records, transcript_path


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_agent_has_its_file_and_run_events_go_to_run_jsonl(tmp_path: Path) -> None:
    bus = EventBus("run-1")
    writer = TranscriptWriter(tmp_path)
    bus.subscribe(writer)
    lead = bus.agent("lead")
    sub = bus.agent("r1-sub1", parent_id="lead")
    lead.emit(BudgetExhausted("tool_budget", 3, 3))
    sub.turn = 2
    sub.emit(ToolCalled("t1", "search", {"q": "trio"}))
    bus.run().emit(RunEnded(RunStatus.COMPLETED))
    # flushed as written: readable while the writer is still open
    [first] = lines(tmp_path / "agents" / "lead.jsonl")
    assert set(first) == {"v", "run_id", "agent_id", "parent_id", "seq", "turn", "kind", "ts", "t", "data"}
    assert (first["run_id"], first["agent_id"], first["parent_id"], first["seq"], first["turn"], first["kind"]) == \
        ("run-1", "lead", None, 0, 0, "budget")
    assert first["data"] == {"budget": "tool_budget", "used": 3, "limit": 3} and first["v"] == 2
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", first["ts"]) and first["t"] >= 0
    [call] = lines(tmp_path / "agents" / "r1-sub1.jsonl")
    assert (call["parent_id"], call["turn"], call["data"]["input"]) == ("lead", 2, {"q": "trio"})
    [end] = lines(tmp_path / "run.jsonl")
    assert end["agent_id"] == RUN_AGENT and end["kind"] == "run_end" and end["data"]["status"] == "completed"
    lead.emit(AgentFailed("boom"))
    lead.emit(AgentFailed("boom again"))
    assert [e["seq"] for e in lines(tmp_path / "agents" / "lead.jsonl")] == [0, 1, 2]  # appended, numbered
    writer.close()
    lead.emit(AgentFailed("after close"))  # a closed writer writes nothing more
    assert len(lines(tmp_path / "agents" / "lead.jsonl")) == 3
    assert transcript_path(tmp_path, "run") == tmp_path / "run.jsonl"
    assert transcript_path(tmp_path, "lead") == tmp_path / "agents" / "lead.jsonl"


def test_a_reopened_writer_appends(tmp_path: Path) -> None:
    for n in range(2):
        bus, writer = EventBus("r"), TranscriptWriter(tmp_path)
        bus.subscribe(writer)
        bus.agent("a").emit(AgentFailed(f"attempt {n}"))
        writer.close()
    assert [e["data"]["error"] for e in read_events(tmp_path / "agents" / "a.jsonl")] == ["attempt 0", "attempt 1"]


@pytest.mark.parametrize("key", ["api_key", "API-KEY", "x-api-key", "Authorization", "client_secret", "password",
                                 "access_token"])
def test_secrets_are_never_written(tmp_path: Path, key: str) -> None:
    bus, writer = EventBus("r"), TranscriptWriter(tmp_path)
    bus.subscribe(writer)
    bus.agent("a").emit(ToolCalled("t", "fetch", {"nested": [{key: "s3cr3t-value"}], "max_tokens": 5, key: 7}))
    writer.close()
    text = (tmp_path / "agents" / "a.jsonl").read_text()
    data = lines(tmp_path / "agents" / "a.jsonl")[0]["data"]["input"]
    assert "s3cr3t-value" not in text and data["nested"] == [{key: "[redacted]"}]
    assert data["max_tokens"] == 5 and data[key] == 7  # only string values are credentials


def test_reading_tolerates_blank_lines_and_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    good = {"v": 2, "run_id": "r", "agent_id": "a", "parent_id": None, "seq": 0, "turn": 1, "kind": "error",
            "ts": "t", "t": 0.5, "data": {"error": "boom"}}
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "seq": 1}) + "\n" + '{"v": 2, "ki')
    assert [e["seq"] for e in read_events(path)] == [0, 1]
    first, second = read_records(path)
    assert isinstance(first.event, AgentFailed) and first.event.error == "boom" and second.seq == 1
    assert (first.run_id, first.agent_id, first.turn, first.t, first.v) == ("r", "a", 1, 0.5, 2)


def test_unknown_and_foreign_lines_stay_readable() -> None:
    rec = EventRecord.from_json({"kind": "from_the_future", "data": {"x": 1}, "seq": 4})
    assert isinstance(rec.event, UnknownEvent) and rec.kind == "from_the_future" and rec.data() == {"x": 1}
    assert rec.to_json()["kind"] == "from_the_future" and rec.v == 1 and rec.seq == 4
    bad = EventRecord.from_json({"kind": "budget", "data": {"budget": ["not", "a", "string"]}})
    assert isinstance(bad.event, UnknownEvent) and bad.kind == "budget"
    assert bad.data() == {"budget": ["not", "a", "string"]}
    empty = EventRecord.from_json({})
    assert (empty.kind, empty.run_id, empty.agent_id, empty.parent_id, empty.seq, empty.turn, empty.ts, empty.t,
            empty.v) == ("", "", "", None, 0, 0, "", 0.0, 1)


def test_the_bus_delivers_in_order_writers_first_and_raises_after_everyone_saw_it() -> None:
    bus = EventBus("r")
    seen: list[str] = []

    class Named:
        def __init__(self, name: str, fail: bool = False) -> None:
            self.name, self.fail = name, fail

        def on_event(self, record: EventRecord) -> None:
            seen.append(f"{self.name}:{record.seq}")
            if self.fail:
                raise RuntimeError(f"{self.name} broke")

    bus.subscribe(Named("viewer", fail=True))
    bus.subscribe(Named("other", fail=True))
    bus.subscribe(Named("writer"), first=True)
    with pytest.raises(RuntimeError, match="viewer broke"):  # the first error, after all observers ran
        bus.agent("a").emit(AgentFailed("x"))
    assert seen == ["writer:0", "viewer:0", "other:0"]
    assert bus.agent("a") is bus.agent("a") and bus.run().agent_id == RUN_AGENT


def test_retries_are_recorded_in_the_agents_stream(tmp_path: Path) -> None:
    bus, writer = EventBus("r"), TranscriptWriter(tmp_path)
    bus.subscribe(writer)
    report = bus.agent("sub").retry_reporter()
    report(RetryNotice(model="m", status=429, attempt=1, wait=2.5, error="slow down"))
    writer.close()
    [rec] = read_records(tmp_path / "agents" / "sub.jsonl")
    assert rec.event == ModelRetried("m", 429, 1, 2.5, "slow down")


def test_the_run_clock_is_shared_and_restartable(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr("subagents.events.time.monotonic", lambda: now[0])
    clock = Clock()
    now[0] = 101.23456789
    assert clock.now() == 1.234568  # microseconds
    clock.restart()
    now[0] = 102.0
    assert clock.now() == 0.765432
    bus = EventBus("r", clock)
    assert bus.agent("a").clock is clock and bus.agent("a").emit(AgentFailed("x")).t == 0.765432


def test_the_event_reference_has_a_row_per_event_type() -> None:
    ref = event_reference().splitlines()
    assert ref[:2] == ["| `kind` | event | fields |", "|---|---|---|"]
    row = next(r for r in ref if r.startswith("| `budget` |"))
    assert row == ("| `budget` | BudgetExhausted: An agent's budget ran out (tool_budget, token_budget, "
                   "time_budget, max_turns). | budget, used, limit |")


def test_a_torn_line_followed_by_appended_lines_does_not_hide_them(tmp_path: Path) -> None:
    """A crashed run leaves a torn line; a resumed run's writer starts a fresh line after it and appends."""
    run_dir = tmp_path / "new" / "run"  # directories are made as needed
    for n, message in enumerate(["before the crash — café", "after the resume", "later"]):
        bus, writer = EventBus("r"), TranscriptWriter(run_dir)
        bus.subscribe(writer)
        bus.agent("a").emit(AgentFailed(message))
        writer.close()
        if n == 0:
            with open(run_dir / "agents" / "a.jsonl", "a", encoding="utf-8") as fh:
                fh.write('{"v": 2, "kind": "err')  # torn: cut mid-line, no newline
    path = run_dir / "agents" / "a.jsonl"
    assert [e["data"]["error"] for e in read_events(path)] == ["before the crash — café", "after the resume", "later"]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 4
    assert "café" in path.read_text(encoding="utf-8")  # written as UTF-8, not \\u-escaped
