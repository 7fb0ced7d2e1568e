"""HTML trace viewer at scale: a scripted run with 20 subagents (two rounds of 10) and thousands of
events; the size of `research show RUN --html` against the transcripts it is drawn from, the time
to build it, and its load time in headless Chromium (to the drawn page) against a blank page, plus
the time to open the largest agent's transcript.

    python bench/bench_viewer.py [--subagents 20] [--turns 10] [--calls 5]

Goals: the page at most half the size of the transcripts' size; loaded and drawn within 1.5 s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SIZE_GOAL = 0.50
LOAD_GOAL_MS = 1500
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def lookup_tool() -> Any:
    from pydantic import BaseModel

    from subagents.tools import Tool, ToolContext, untrusted

    class Args(BaseModel):
        query: str

    async def lookup(args: Args, ctx: ToolContext) -> str:
        body = (f"Passage about {args.query}. " + "It explains the topic in some detail with examples. " * 14)[:800]
        src = ctx.sources.register(key=f"note:{args.query}", kind="corpus", title=f"Notes on {args.query}",
                                   locator=f"notes/{args.query}#0", text=body, agent_id=ctx.agent_id,
                                   meta={"heading": f"Notes > {args.query}", "path": f"notes/{args.query}.html"})
        return untrusted("notes", {"source_id": src.id, "text": body})

    return Tool("lookup", "Look a topic up in the notes.", Args, lookup)


def scripted(subagents: int, turns: int, calls: int) -> tuple[Any, Any]:
    from subagents.models.scripted import ScriptedModel, text, tool_call

    half = max(1, subagents // 2)
    rounds = [half, subagents - half] if subagents > half else [half]

    def plan(n: int, r: int) -> Any:
        return tool_call("delegate", {"query_type": "breadth_first", "rationale": f"round {r}: {n} parts",
                                      "tasks": [{"objective": f"part {r}.{i} of the question", "tools": ["lookup"],
                                                 "budget": {"max_tool_calls": 100}} for i in range(1, n + 1)]})

    def report(request: Any) -> Any:
        lines = ["# Report", ""]
        for rnd in request.context.rounds:
            for sub in rnd.subagents:
                lines += [f"{c.text} [{', '.join(c.source_ids)}]" for c in sub.findings.claims]
        return text("\n".join(lines))

    lead = ScriptedModel(per_agent={"lead": [plan(n, r) for r, n in enumerate(rounds, 1)] + [report]})
    per_agent = {}
    for r, n in enumerate(rounds, 1):
        for i in range(1, n + 1):
            agent = f"r{r}-sub{i}"
            steps: list[Any] = [tool_call(*[("lookup", {"query": f"{agent}-t{t}-q{q}"}) for q in range(calls)][0],
                                          *[("lookup", {"query": f"{agent}-t{t}-q{q}"}) for q in range(1, calls)])
                                for t in range(turns)]

            def submit(request: Any, agent: str = agent) -> Any:
                claims = [{"text": f"Passage about {agent}-t0-q{q}.", "source_ids": [sid]}
                          for q, sid in enumerate(_ids(request)[:3])]
                return tool_call("submit_findings", {"status": "ok", "summary": f"{agent} done", "claims": claims})

            per_agent[agent] = steps + [submit]
    return lead, ScriptedModel(per_agent=per_agent)


def _ids(request: Any) -> list[str]:
    import re

    from subagents.model import ToolResultBlock

    out = []
    for m in request.messages:
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                out += re.findall(r'"source_id": "(S\d+)"', b.content)
    return out


def make_run(root: Path, subagents: int, turns: int, calls: int) -> Path:
    import trio

    from lead_agent import api

    lead, sub = scripted(subagents, turns, calls)
    result = trio.run(lambda: api.research("How do the parts of this large question fit together?", runs_dir=root,
                                           lead_model=lead, subagent_model=sub, extra_tools=[lookup_tool()],
                                           max_subagents=10, max_rounds=2, concurrency=10,
                                           use_config_file=False, environ={}))
    return result.run_dir


def load_ms(page: Path, browser: Any) -> float:
    browser.get("about:blank")
    t = time.perf_counter()
    browser.get(page.as_uri())
    browser.find_element("css selector", "#agents table")
    return (time.perf_counter() - t) * 1000


def browser_or_none(tmp: Path) -> Any:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        return None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for f in FLAGS + [f"--user-data-dir={tmp / 'profile'}", "--window-size=1400,1000"]:
        opts.add_argument(f)
    return webdriver.Chrome(options=opts, service=Service(executable_path=driver))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subagents", type=int, default=20)
    ap.add_argument("--turns", type=int, default=10, help="model turns per subagent before it submits")
    ap.add_argument("--calls", type=int, default=5, help="parallel tool calls per turn")
    args = ap.parse_args()
    from lead_agent.viewer import viewer_html
    from subagents.runs import iter_records, read_run

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        t = time.perf_counter()
        run_dir = make_run(tmp / "runs", args.subagents, args.turns, args.calls)
        made = time.perf_counter() - t
        events = sum(1 for _ in iter_records(run_dir))
        transcripts = sum(f.stat().st_size for f in [run_dir / "run.jsonl", *(run_dir / "agents").glob("*.jsonl")])
        t = time.perf_counter()
        run = read_run(run_dir)
        page_text = viewer_html(run)
        build = time.perf_counter() - t
        page = tmp / "trace.html"
        page.write_text(page_text, encoding="utf-8")
        size = page.stat().st_size
        subs = sum(1 for a in run.trace.agents.values() if a.agent_id != "lead")
        print(f"run: {subs} subagents, {events} events, transcripts {transcripts / 1e6:.2f} MB (made in {made:.1f}s)")
        print(f"trace.html: {size / 1e6:.2f} MB = {size / transcripts:.2f} of the transcripts "
              f"(goal <= {SIZE_GOAL}: {'PASS' if size / transcripts <= SIZE_GOAL else 'MISS'}); built in {build:.2f}s")
        browser = browser_or_none(tmp)
        if browser is None:
            print("load time: skipped (no chromium + chromedriver + selenium here)")
            return 0
        try:
            blank = tmp / "blank.html"
            blank.write_text("<!DOCTYPE html><html><body><div id='agents'><table></table></div></body></html>")
            load_ms(page, browser)  # warm the browser once
            base = min(load_ms(blank, browser) for _ in range(3))
            loads = sorted(load_ms(page, browser) for _ in range(3))
            biggest = max(run.trace.agents.values(), key=lambda a: len(a.records)).agent_id
            t = time.perf_counter()
            browser.implicitly_wait(10)
            browser.execute_script(f"document.querySelector(\"tr.agent[data-agent='{biggest}']\").click();")
            browser.execute_script("arguments[0].open = true;",
                                   browser.find_element("css selector", f"#agent-{biggest} details.transcript"))
            browser.find_element("css selector", f"#agent-{biggest} details.transcript .step")
            open_ms = (time.perf_counter() - t) * 1000
            errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        finally:
            browser.quit()
        med = loads[1]
        print(f"load in headless Chromium (median of 3, to the drawn page): {med:.0f} ms; blank page {base:.0f} ms; "
              f"ratio {med / max(base, 1):.1f} (goal <= {LOAD_GOAL_MS} ms: {'PASS' if med <= LOAD_GOAL_MS else 'MISS'})")
        print(f"open the largest transcript ({biggest}): {open_ms:.0f} ms; console errors: {len(errors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
