"""Progress while a run works: the live tree on a terminal (run under tmux, read with capture-pane),
timestamped plain lines when stderr is not a terminal, nothing but the report with -q, and JSON
lines with --json-progress. All are observers of the same typed events."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from itertools import takewhile
from pathlib import Path
from typing import Any

import pytest

from subagents.events import EventRecord
from tests.fakes.anthropic_server import FakeAnthropicServer

from .browser import artifacts, browser  # noqa: F401  (fixture, used through request)
from .test_claude_run import DOCS, QUESTION, TASKS, Scenario, make_plan

LEAD, SUB = "claude-opus-4-6", "claude-haiku-4-5"
LONG_OBJECTIVE = ("What happens to the other tasks when a TaskGroup task raises, and how does the group report "
                  "the exception to the code that awaits it afterwards?")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, body in DOCS.items():
        (root / name).write_text(body)
    return root


def cli_env(tmp_path: Path, srv: FakeAnthropicServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_")) and k not in ("COLUMNS", "LINES")}
    env.update(ANTHROPIC_API_KEY="sk-test-live", ANTHROPIC_BASE_URL=srv.base_url,
               RESEARCH_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    return env


def cli_args(docs: Path, tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "lead_agent.cli", "run", QUESTION, "--corpus", str(docs), "--runs-dir",
            str(tmp_path / "runs"), "--lead-model", LEAD, "--subagent-model", SUB, "--max-rounds", "1", *extra]


def scenario() -> Scenario:
    tasks = [dict(TASKS[0], objective=LONG_OBJECTIVE), *TASKS[1:]]
    return Scenario(plan=make_plan(tasks=tasks))


# ---------------------------------------------------------------- the live tree under tmux


class Tmux:
    """A private tmux server (its own socket): nothing of the user's sessions is touched."""

    def __init__(self, tmp_path: Path, width: int = 150, height: int = 40) -> None:
        self.sock = str(tmp_path / "tmux.sock")
        self.width, self.height = width, height

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.sock, *args], capture_output=True, text=True, check=True).stdout

    def start(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        script = cwd / "live.sh"
        exports = "".join(f"export {k}={shlex_quote(v)}\n" for k, v in env.items())
        script.write_text(f"unset COLUMNS LINES\n{exports}cd {shlex_quote(str(cwd))}\n{' '.join(shlex_quote(c) for c in command)} "
                          f"> out.txt\necho \"exit=$?\" > rc.txt\nsleep 60\n")
        self.run("new-session", "-d", "-s", "live", "-x", str(self.width), "-y", str(self.height),
                 f"bash {shlex_quote(str(script))}")

    def capture(self, escapes: bool = False) -> str:
        return self.run("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "live")

    def kill(self) -> None:
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True)


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def ansi_to_png(ansi: str, target: Path, browser: Any, width: int) -> None:
    """A terminal capture (with colours) as a PNG: rich renders it to HTML, Chromium takes the picture."""
    from rich.console import Console
    from rich.terminal_theme import MONOKAI
    from rich.text import Text

    console = Console(record=True, width=width, file=open(os.devnull, "w"), force_terminal=True)
    console.print(Text.from_ansi(ansi.rstrip("\n")))
    page = target.with_suffix(".html")
    page.write_text(console.export_html(theme=MONOKAI, inline_styles=True, code_format=(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{{margin:0;background:#272822;color:#d9d9d9}}"
        "pre{{margin:0;padding:12px;font:13px/1.3 'DejaVu Sans Mono',monospace}}</style></head>"
        "<body><pre><code>{code}</code></pre></body></html>")))
    browser.get(page.as_uri())
    size = browser.execute_script("var p=document.querySelector('pre');return [p.scrollWidth, p.scrollHeight];")
    browser.set_window_size(size[0] + 20, size[1] + 140)
    browser.find_element("css selector", "pre").screenshot(str(target))


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")
def test_the_live_tree_shows_every_agent_its_step_and_the_calls_in_flight(tmp_path: Path, docs: Path,
                                                                           request: pytest.FixtureRequest) -> None:
    tmux = Tmux(tmp_path)
    frames: list[str] = []
    with FakeAnthropicServer(handler=scenario(), base_latency=0.7) as srv:
        tmux.start(cli_args(docs, tmp_path), cli_env(tmp_path, srv), tmp_path)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (tmp_path / "rc.txt").exists():
                frames.append(tmux.capture(escapes=True))
                time.sleep(0.15)
            time.sleep(0.3)
            final = tmux.capture(escapes=True)
        finally:
            tmux.kill()
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", f) for f in frames]
    last = re.sub(r"\x1b\[[0-9;]*m", "", final)
    (artifacts() / "live-tree-frames.txt").write_text("\n\f\n".join(plain + [last]))
    assert (tmp_path / "rc.txt").read_text().strip() == "exit=0", last
    # while the lead's planning call is in flight: a spinner, the step and an elapsed counter
    assert any(re.search(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] lead\s+planning \d+\.\ds", f) for f in plain), plain[-1]
    # subagents under their round, with what they are doing (search queries in quotes) and their budget
    mid = [f for f in plain if "round 1" in f and "r1-sub3" in f and re.search(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] r1-sub\d", f)]
    assert mid, "no frame showed running subagents"
    assert any('searching the corpus "' in f or "thinking" in f for f in mid)
    assert any(re.search(r"r1-sub\d\s.*\d+/4 tool calls .*tok · \$0\.\d{4}", f) for f in mid)
    # the synthesis call is visible too, and the objective is shown whole (not cut mid-word)
    assert any("reading findings, writing the report" in f for f in plain)
    assert " ".join(LONG_OBJECTIVE.split()[:8]) in " ".join(" ".join(plain).split())
    # the final tree: every agent done, totals with cost, citations and the report path
    for needle in ("● research completed", "✓ lead", "✓ r1-sub1", "✓ r1-sub2", "✓ r1-sub3", "cost so far $",
                   "citations supported", "report:"):
        assert needle in last, (needle, last)
    out = (tmp_path / "out.txt").read_text()
    assert out.startswith("# TaskGroup, gather and timeout") and "Run saved to" in out  # stdout: the report only
    busy = [i for i, f in enumerate(plain) if "r1-sub3" in f]  # the picture: the most agents at work at once
    keep = frames[max(busy, key=lambda i: (len(re.findall("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]", plain[i])), i))] if busy else final
    (artifacts() / "live-tree.txt").write_text(re.sub(r"\x1b\[[0-9;]*m", "", keep))
    (artifacts() / "live-tree.ansi").write_text(keep)
    if shutil.which("chromium") and shutil.which("chromedriver"):
        browser = request.getfixturevalue("browser")
        ansi_to_png(keep, artifacts() / "live-tree.png", browser, tmux.width)


# ---------------------------------------------------------------- not a terminal, -q, --json-progress


def run_piped(tmp_path: Path, docs: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    with FakeAnthropicServer(handler=scenario()) as srv:
        return subprocess.run(cli_args(docs, tmp_path, *extra), cwd=tmp_path, env=cli_env(tmp_path, srv),
                              capture_output=True, text=True, timeout=120)


def test_without_a_terminal_progress_is_timestamped_lines(tmp_path: Path, docs: Path) -> None:
    proc = run_piped(tmp_path, docs)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines and all(re.match(r"\d\d:\d\d:\d\d ", line) for line in lines), lines
    text = "\n".join(lines)
    assert f"r1-sub1 started ({SUB}): {LONG_OBJECTIVE}" in text  # whole, never cut mid-word
    assert re.search(r"lead: planning \(model call claude-opus-4-6\)…", text)
    assert re.search(r"lead: reading findings, writing the report \(model call", text)
    assert re.search(r'r1-sub2: searching the corpus "gather results order awaitables"', text)
    assert "citation check:" in text and re.search(r"run completed \(\d+\.\ds, .* \$\d", text)
    assert "\x1b[" not in proc.stderr  # no terminal control codes in a log
    assert proc.stdout.startswith("# TaskGroup, gather and timeout")


def test_quiet_prints_only_the_report_and_the_run_path(tmp_path: Path, docs: Path) -> None:
    proc = run_piped(tmp_path, docs, "-q")
    assert proc.returncode == 0 and proc.stderr == ""
    report = next((tmp_path / "runs").iterdir()) / "report.md"
    assert proc.stdout.startswith(report.read_text()) and proc.stdout.rstrip().splitlines()[-1].startswith("Run saved to")


def test_json_progress_is_one_event_per_line(tmp_path: Path, docs: Path) -> None:
    proc = run_piped(tmp_path, docs, "--json-progress")
    assert proc.returncode == 0, proc.stderr
    records = [EventRecord.from_json(json.loads(line)) for line in proc.stdout.splitlines()]
    kinds = [r.kind for r in records]
    # a loaded machine may take over a second to index even this corpus: progress lines may come first
    indexing = len(list(takewhile(lambda k: k == "corpus_indexing", kinds)))
    kinds = kinds[indexing:]
    assert kinds[0] == "corpus_indexed" and kinds[1] == "run_start" and kinds[-1] == "run_end"
    assert {"plan", "agent_start", "model_request", "model_response", "tool_call", "tool_result", "findings",
            "citation_check", "report"} <= set(kinds)
    run_dir = next((tmp_path / "runs").iterdir())
    written = sum(1 for f in [run_dir / "run.jsonl", *(run_dir / "agents").glob("*.jsonl")]
                  for _ in f.read_text().splitlines())
    assert len(records) == indexing + written + 1  # every event the transcripts hold, plus the corpus lines before the run
    assert proc.stderr == ""


def test_json_progress_into_head_ends_quietly_and_the_run_is_saved(tmp_path: Path, docs: Path) -> None:
    with FakeAnthropicServer(handler=scenario()) as srv:
        proc = subprocess.Popen(cli_args(docs, tmp_path, "--json-progress"), cwd=tmp_path, env=cli_env(tmp_path, srv),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stderr is not None
        first = json.loads(proc.stdout.readline())  # `| head -1`: one line, then the reader goes away
        proc.stdout.close()
        err = proc.stderr.read()
        code = proc.wait(timeout=120)
    assert first["kind"] in ("corpus_indexing", "corpus_indexed")  # indexing progress, on a loaded machine
    assert code == 0 and err == "", err
    run_dir = next((tmp_path / "runs").iterdir())
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "completed"
