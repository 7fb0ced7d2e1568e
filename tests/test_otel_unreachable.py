"""`--otel` with a collector that does not answer: one line of ours (no raw SDK logger lines, -q or not),
the wait bounded (the first failed batch stops the export; a default timeout shorter than the SDK's)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from .conftest import run_cli
from .test_approval import cli, docs  # noqa: F401  (docs: fixture)
from .test_show import finished  # noqa: F401  (fixture)

pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra is not installed (pip install -e '.[otel]')")

from opentelemetry.sdk.trace.export import SpanExportResult  # noqa: E402

from lead_agent.otel import EXPORT_TIMEOUT, Tally, otlp_exporter  # noqa: E402


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed on leaving: nothing listens there


def unreachable() -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "OTEL_EXPORTER_OTLP_TIMEOUT": "1"}


def test_show_otel_to_an_unreachable_collector_says_one_line(finished: Path, tmp_path: Path) -> None:  # noqa: F811
    proc = run_cli("show", str(finished), "--otel", cwd=tmp_path, env=unreachable())
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert "could not be sent to http://127.0.0.1:" in lines[0]
    assert lines[0].endswith(("(Connection refused)", "(no answer before the export timeout)")), lines[0]
    assert "Transient" not in proc.stderr and "Traceback" not in proc.stderr


def test_run_otel_quiet_to_an_unreachable_collector_says_one_line(tmp_path: Path, docs: Path) -> None:  # noqa: F811
    proc = cli(tmp_path, "run", "Compare lists and tuples", "--corpus", str(docs), "--runs-dir",
               str(tmp_path / "runs"), "-q", "--otel", env=unreachable())
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines() == [next(line for line in proc.stderr.splitlines()
                                                     if line.startswith("OpenTelemetry: sent 0 span(s)"))]


class Refusing:
    def __init__(self) -> None:
        self.calls = 0

    def export(self, spans: Any) -> SpanExportResult:
        self.calls += 1
        return SpanExportResult.FAILURE


def test_after_a_batch_found_no_collector_later_batches_do_not_wait_again() -> None:
    inner = Refusing()
    tally = Tally(inner)
    for _ in range(3):
        assert tally.export([object()] * 5) is SpanExportResult.FAILURE
    assert inner.calls == 1 and tally.failed == 15 and tally.sent == 0


def test_the_export_timeout_is_ours_unless_the_environment_sets_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    assert otlp_exporter({})._client._timeout == EXPORT_TIMEOUT < 10  # the SDK's default is 10 s
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "7")  # the exporter reads it itself
    import os

    assert otlp_exporter(os.environ)._client._timeout == 7
