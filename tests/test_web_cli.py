"""`research tool search|fetch|corpus`: prints what the agent sees; exit 1 with one line on
stderr (no traceback) when the tool refuses. No network: loopback server, replayed search."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from lead_agent.commands.tool import add_parser as add_tool_parser
from lead_agent.commands.tool import main as run_tool_command
from subagents.web.cache import WebCache
from tests.fakes.web_server import FakeWebServer
from tests.test_web_fetch import ARTICLE_HTML

ROOT = Path(__file__).resolve().parent.parent


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="research")
    sub = parser.add_subparsers(dest="command")
    add_tool_parser(sub)
    return run_tool_command(parser.parse_args(argv))


def body(out: str) -> dict:
    m = re.search(r"<retrieved_material[^>]*>\n(.*)\n</retrieved_material>", out, re.S)
    assert m, out
    return json.loads(m.group(1))


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("RESEARCH_CACHE_DIR", str(root))
    return root


def test_fetch_prints_the_agent_view(cache_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeWebServer() as srv:
        url = srv.page("/a.html", ARTICLE_HTML)
        assert run(["tool", "fetch", url, "--allow-private-network", "--cache", "off"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith('<retrieved_material source="web page">')
    page = body(out)
    assert page["url"] == url and page["passages"][0]["source_id"] == "S1"
    assert err == ""


def test_fetch_refusal_is_one_line_exit_1(cache_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeWebServer() as srv:
        url = srv.page("/a.html", ARTICLE_HTML)
        assert run(["tool", "fetch", url]) == 1  # loopback without the flag
        assert srv.requests == []
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "not a public address (loopback)" in err and "Traceback" not in err


def test_search_replays_a_recorded_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    WebCache(tmp_path / "web").put_search("tidal locking", 2, [
        {"title": "Tidal locking", "url": "https://en.wikipedia.org/wiki/Tidal_locking", "snippet": "Same face."}])
    assert run(["tool", "search", "Tidal Locking", "-k", "2", "--cache", "replay", "--cache-dir", str(tmp_path)]) == 0
    res = body(capsys.readouterr().out)
    assert res["results"] == [{"source_id": "S1", "title": "Tidal locking",
                               "url": "https://en.wikipedia.org/wiki/Tidal_locking", "snippet": "Same face."}]
    assert run(["tool", "search", "never recorded", "--cache", "replay", "--cache-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "replay miss" in err and "never recorded" in err and err.count("\n") == 1


def test_search_argument_errors_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["tool", "search", "x", "-k", "50", "--cache", "replay", "--cache-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("research: error: Invalid input for web_search: k:") and err.count("\n") == 1


def test_corpus_search(tmp_path: Path, cache_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("subagents.corpus", reason="subagents.corpus is another engineer's module")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "moons.md").write_text("# Moons\n\nTitan has a thick nitrogen atmosphere.\n\n## Io\n\nIo is volcanic.\n")
    (docs / "tides.md").write_text("# Tides\n\nThe Moon raises tides on Earth.\n")
    assert run(["tool", "corpus", "nitrogen atmosphere", "--corpus", str(docs), "-k", "3"]) == 0
    res = body(capsys.readouterr().out)
    assert res["results"] and "nitrogen" in json.dumps(res["results"][0])
    assert run(["tool", "corpus", "tides atmosphere", "--corpus", str(docs), "--embedding-model", "off"]) == 0
    assert {r["title"] for r in body(capsys.readouterr().out)["results"]} == {"Moons", "Tides"}
    assert run(["tool", "corpus", "tides atmosphere", "--corpus", str(docs), "--embedding-model", "off",
                "--match", "all"]) == 0
    assert body(capsys.readouterr().out)["results"] == []  # no passage has both words
    assert run(["tool", "corpus", "x", "--corpus", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err and err.startswith("research: error:")
    for bad in (["", "--corpus", str(docs)], ["x", "--corpus", str(docs), "-k", "0"]):
        assert run(["tool", "corpus", *bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("research: error: Invalid input for search_corpus") and err.count("\n") == 1


def test_no_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["tool"]) == 2
    assert "choose a tool" in capsys.readouterr().err


def test_wired_into_research_cli(tmp_path: Path) -> None:
    """Through the real entry point, in a subprocess: a refusal exits 1 with one line, no traceback."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "RESEARCH_CACHE_DIR": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "lead_agent.cli", "tool", "fetch", "http://169.254.169.254/latest/"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    assert p.stdout == "" and p.stderr.count("\n") == 1 and "link-local" in p.stderr
