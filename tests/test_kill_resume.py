"""The kill suite: `kill -9` at 20 random moments of `research run` processes talking to the fake
Messages API with latency; `research resume` then completes every one; every transcript is valid
JSONL (no torn line, each agent's seq 0, 1, 2, … with nothing lost or repeated); the resumed report
cites only retrieved sources. Kills run four at a time. KILL_SEED=n replays a sequence of moments.

A moment is drawn as a point in the run's progress, not in wall time: after a random number of the
transcript lines a whole run writes, plus up to 50 ms (so kills land inside model calls and writes
too). On a loaded machine wall-clock moments would nearly all land in the first, slowest call.

Each `research run` / `research resume` is its own OS process running the CLI's `main()`, forked from a
single-threaded "zygote" process that imported the run machinery once (and loaded tiktoken's encoding):
importing the anthropic SDK costs seconds per process on a loaded machine, which would dominate 41
process starts. Nothing else is shared: each child opens its own index, client and files."""

from __future__ import annotations

import json
import os
import random
import re
import itertools
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lead_agent.show import render_run

from .conftest import ROOT
from .fakes.anthropic_server import FakeAnthropicServer, Reply, text, tool_use

TOPICS = ["lighthouse", "glacier", "orchard"]
KILLS = 20
PARALLEL = 4
QUESTION = "Describe the lighthouse, the glacier and the orchard"


def write_corpus(root: Path) -> None:
    root.mkdir()
    for t in TOPICS:
        sentences = " ".join(f"The {t} record {i} notes that the {t} changed slowly over many decades of survey."
                             for i in range(4))
        (root / f"{t}.md").write_text(f"# The {t}\n\n{sentences}\n", encoding="utf-8")


def _material(s: str) -> Any:
    m = re.search(r"<retrieved_material[^>]*>\s*(.*)\s*</retrieved_material>", s, re.S)
    return json.loads(m.group(1)) if m else None


def _text(block: dict) -> str:
    c = block.get("content", block.get("text", ""))
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)


def _blocks(m: dict) -> list[dict]:
    return m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]


def handler(body: dict) -> Reply:
    """Plays the lead and the subagents from what each request holds (stateless: runs share it)."""
    names = {t["name"] for t in body.get("tools", [])}
    msgs = body["messages"]
    if "delegate" in names:
        results = [b for b in _blocks(msgs[-1]) if b.get("type") == "tool_result"]
        if not results:
            return tool_use(("delegate", {"query_type": "breadth_first", "rationale": "one per place", "tasks": [
                {"objective": f"Describe the {t}", "tools": ["search_corpus", "read_passage"]} for t in TOPICS]}))
        found = json.loads(re.search(r"<findings[^>]*>\s*(.*?)\s*</findings>", _text(results[0]), re.S).group(1))
        lines = ["# Places", ""] + [f"{c['text']} [{', '.join(c['source_ids'])}]"
                                    for s in found["subagents"] for c in s["claims"]]
        return text("\n".join(lines))
    turn = sum(1 for m in msgs if m["role"] == "assistant")
    place = re.search(r"Describe the (\w+)", _text(_blocks(msgs[0])[0])).group(1)
    if turn == 0:
        return tool_use(("search_corpus", {"query": f"{place} record", "k": 3}))
    search = _material(_text(_blocks(msgs[2])[0]))["results"]
    if turn == 1:
        return tool_use(("read_passage", {"passage_id": search[0]["passage_id"]}))
    passage = _material(_text(_blocks(msgs[4])[0]))
    first = passage["text"].split(". ")[0].split("\n")[-1].strip().rstrip(".") + "."
    return tool_use(("submit_findings", {"status": "ok", "summary": first,
                                         "claims": [{"text": first, "source_ids": [passage["source_id"]]}]}))


ZYGOTE = r"""
import json, os, signal, sys
import anthropic, httpx, trio  # noqa: F401  (the slow imports, done once)
import lead_agent.cli, lead_agent.api, lead_agent.checkpoint, lead_agent.commands.run, lead_agent.commands.resume
import subagents.corpus, subagents.models.claude, subagents.tokens  # noqa: F401
subagents.tokens.estimate_tokens("warm")  # tiktoken's encoding, loaded once (a module-level cache)
anthropic.AsyncAnthropic(api_key="x", base_url="http://127.0.0.1:9")  # the SDK's lazy imports
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel: a dead pid is gone
print("ready", flush=True)
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(null, 0); os.dup2(log, 1); os.dup2(log, 2)
        os.chdir(job["cwd"]); os.environ.clear(); os.environ.update(job["env"])
        try:
            code = lead_agent.cli.main(job["argv"])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            import traceback; traceback.print_exc(); code = 1
        sys.stdout.flush(); sys.stderr.flush()
        with open(job["status"], "w") as fh:
            fh.write(str(code or 0))
        os._exit(0)
    print(json.dumps({"id": job["id"], "pid": pid}), flush=True)
"""


class Zygote:
    """Forks `research …` processes from one warm, single-threaded process."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.tmp = tmp
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE], cwd=tmp, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"
        self.lock = threading.Lock()
        self.ids = itertools.count()

    def start(self, argv: list[str], env: dict[str, str]) -> "Child":
        with self.lock:
            n = next(self.ids)
            child = Child(self.tmp / f"child{n}.status", self.tmp / f"child{n}.log")
            job = {"id": n, "argv": argv, "env": env, "cwd": str(self.tmp), "log": str(child.log),
                   "status": str(child.status)}
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
            child.pid = json.loads(self.proc.stdout.readline())["pid"]
        return child

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Child:
    def __init__(self, status: Path, log: Path) -> None:
        self.status, self.log, self.pid = status, log, 0

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def wait(self, timeout: float = 120) -> int | None:
        """The exit code (None: killed)."""
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                raise AssertionError(f"process {self.pid} still running: {self.log.read_text()[-2000:]}")
            time.sleep(0.01)
        return int(self.status.read_text()) if self.status.is_file() else None


class Suite:
    def __init__(self, tmp: Path, base_url: str) -> None:
        self.tmp = tmp
        self.env = {**{k: v for k, v in os.environ.items() if k != "RESEARCH_CONFIG"}, "ANTHROPIC_API_KEY": "sk-test",
                    "ANTHROPIC_BASE_URL": base_url, "RESEARCH_CACHE_DIR": str(tmp / "cache"),
                    "PYTHONPATH": str(ROOT)}
        self.corpus = tmp / "docs"
        self.zygote = Zygote(tmp, self.env)

    def start(self, runs: Path) -> Child:
        return self.zygote.start(["run", QUESTION, "--corpus", str(self.corpus), "--runs-dir", str(runs),
                                  "--max-rounds", "1", "--lead-model", "claude-opus-4-6",
                                  "--subagent-model", "claude-haiku-4-5", "-q"], self.env)

    @staticmethod
    def wait_for_run(runs: Path, proc: Child) -> Path:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = [d for d in runs.glob("*") if (d / "manifest.json").is_file()] if runs.is_dir() else []
            if found:
                return found[0]
            if not proc.alive():
                raise AssertionError(f"the run exited before it started: {proc.log.read_text()[-2000:]}")
            time.sleep(0.002)
        raise AssertionError("the run never started")

    def reference(self) -> int:
        """One run to its end: how many transcript lines a whole run writes."""
        runs = self.tmp / "reference"
        proc = self.start(runs)
        run_dir = self.wait_for_run(runs, proc)
        assert proc.wait() == 0, proc.log.read_text()[-2000:]
        return lines_written(run_dir)

    def kill_at(self, n: int, moment: tuple[int, float]) -> dict[str, Any]:
        """Start run n; once it has written `lines` transcript lines, wait `jitter` seconds more (to land
        inside a call or a write too) and kill -9 it; then resume it."""
        lines, jitter = moment
        runs = self.tmp / f"runs{n}"
        proc = self.start(runs)
        run_dir = self.wait_for_run(runs, proc)
        while lines_written(run_dir) < lines and proc.alive() and not proc.status.exists():
            time.sleep(0.002)
        time.sleep(jitter)
        delay = lines + jitter
        if not proc.alive() or proc.status.exists():
            return {"n": n, "killed": False}
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) is None or phase_of(run_dir) == "ended"
        phase = phase_of(run_dir)
        if phase == "ended":
            return {"n": n, "killed": False}
        shown = render_run(run_dir)  # what `research show` prints for the killed run (read from its events)
        done = self.zygote.start(["resume", str(run_dir), "-q"], self.env)
        code = done.wait()
        return {"n": n, "killed": True, "delay": delay, "phase": phase, "run_dir": run_dir, "shown": shown,
                "resume": (code, done.log.read_text())}


def kill_line(rng: random.Random, total: int, i: int) -> int:
    """After how many transcript lines kill i lands: most anywhere, but every fourth within the first
    sixth of the run (planning) and every fourth within its last sixth (synthesis, the report). The
    subagents write most lines: uniform moments alone once all landed among them on a loaded machine."""
    edge = max(1, total // 6)
    if i % 4 == 1:
        return rng.randint(1, edge)
    if i % 4 == 3:
        return rng.randint(max(1, total - edge), total - 1)
    return rng.randint(1, total - 1)


def lines_written(run_dir: Path) -> int:
    total = 0
    for f in [run_dir / "run.jsonl", *(run_dir / "agents").glob("*.jsonl")]:
        try:
            total += f.read_bytes().count(b"\n")
        except FileNotFoundError:
            pass
    return total


def phase_of(run_dir: Path) -> str:
    """Where a killed run stopped, from its transcripts (read leniently: the last line may be torn)."""
    kinds: list[str] = []
    for f in [run_dir / "run.jsonl", *(run_dir / "agents").glob("*.jsonl")]:
        for raw in f.read_bytes().splitlines():
            try:
                kinds.append(json.loads(raw)["kind"])
            except ValueError:
                pass
    if "run_end" in kinds:
        return "ended"
    if "report" in kinds or "citation_check" in kinds:
        return "writing the report"
    if "round_end" in kinds:
        return "synthesis"
    if "plan" in kinds:
        return "subagents"
    return "planning"


def check(case: dict[str, Any]) -> None:
    where = f"kill {case['n']} after line {int(case['delay'])} (+{case['delay'] % 1:.3f}s, {case['phase']})"
    (code, log), run_dir = case["resume"], case["run_dir"]
    assert "[running — no live process (killed?)" in case["shown"], f"{where}: {case['shown'][:300]}"
    assert code == 0, f"{where}: resume failed ({code}): {log[-3000:]}"
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "completed", f"{where}: {m['status']} {m.get('error')}"
    assert len(m["attempts"]) >= 2
    for f in [run_dir / "run.jsonl", *sorted((run_dir / "agents").glob("*.jsonl"))]:
        raw = f.read_bytes()
        assert raw.endswith(b"\n"), f"{where}: {f.name} ends in a torn line"
        evs = [json.loads(line) for line in raw.splitlines()]  # every line is JSON
        seqs = [e["seq"] for e in evs]
        assert seqs == sorted(set(seqs)), f"{where}: {f.name} repeats a seq"
        if f.name != "run.jsonl":
            assert seqs == list(range(len(seqs))), f"{where}: {f.name} lost or duplicated a line"
    c = m["citation_check"]
    assert c["markers"] >= 1 and c["unsupported"] == 0 and c["unknown"] == 0, f"{where}: {c}"
    sources = {s["id"]: s for s in json.loads((run_dir / "sources.json").read_text())}
    report = (run_dir / "report.md").read_text()
    cited = set(re.findall(r"\((S\d+)\)", report))
    assert cited and cited <= set(sources), f"{where}: cites {cited - set(sources)} that were never retrieved"
    for sid in cited:
        assert sources[sid]["text"], where
    assert not list(run_dir.glob("*.tmp")), where


def test_kill_minus_9_at_random_moments_then_resume_completes_every_run(tmp_path: Path) -> None:
    seed = int(os.environ.get("KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    with FakeAnthropicServer(handler=handler, base_latency=0.15, tokens_per_second=4000) as srv:
        suite = Suite(tmp_path, srv.base_url)
        try:
            write_corpus(suite.corpus)
            total = suite.reference()  # also indexes the corpus once, before runs share the index
            cases: list[dict[str, Any]] = []
            n = 0
            with ThreadPoolExecutor(PARALLEL) as pool:
                while len(cases) < KILLS:
                    want = KILLS - len(cases)
                    moments = [(kill_line(rng, total, len(cases) + i), rng.uniform(0.0, 0.05)) for i in range(want)]
                    for result in pool.map(suite.kill_at, range(n, n + want), moments):
                        if result["killed"]:
                            cases.append(result)
                    n += want
                    assert n < 4 * KILLS, f"seed {seed}: too many kills landed after the runs ended"
        finally:
            suite.zygote.close()
        assert not srv.handler_errors, srv.handler_errors
    for case in cases:
        check(case)
    phases = {c["phase"] for c in cases}
    print(f"kill suite, seed {seed}: {n} runs started, {len(cases)} killed and resumed; phases: "
          f"{ {p: sum(1 for c in cases if c['phase'] == p) for p in sorted(phases)} }")
    assert len(phases) >= 2, f"seed {seed}: every kill landed in {phases}"
