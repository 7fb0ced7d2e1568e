"""The HTML trace viewer and report.html, opened in headless Chromium as a person would: no console
errors, click an agent and a citation and see what appears; screenshots are saved as artifacts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lead_agent import api
from subagents.runs import read_run

from .browser import artifacts, browser, console_errors  # noqa: F401  (fixture)
from .conftest import lead_report_from_findings, note_tools, run_cli, submit_first_hit, write_small_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_small_corpus(tmp_path / "docs")


async def offline_run(tmp_path: Path, corpus: Path, question: str = "Compare lists and tuples") -> Path:
    result = await api.research(question, corpus=[corpus], runs_dir=tmp_path / "runs", cache_dir=tmp_path / "cache",
                                use_config_file=False, environ={})
    return result.run_dir


def by_css(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css)


def text_once_shown(driver: Any, css: str, needle: str, timeout: float = 5.0) -> str:
    """The element's text once it holds `needle` (or after `timeout`): content added by an event handler — a
    <details> fills its body on its "toggle" event, which the browser dispatches after the click returns."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, timeout).until(lambda d: needle in by_css(d, css).text)
    except TimeoutException:
        pass
    return by_css(driver, css).text


def click(driver: Any, css: str) -> None:
    """Scroll the element to the middle of the window (clear of the sticky bar), as a person would, and click."""
    el = by_css(driver, css)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
    el.click()


def test_the_trace_viewer_opens_and_shows_an_agent_and_a_citation(browser: Any, tmp_path: Path, corpus: Path) -> None:
    import trio

    run_dir = trio.run(offline_run, tmp_path, corpus)
    page = tmp_path / "trace.html"
    proc = run_cli("show", str(run_dir), "--html", str(page), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(page)
    text = page.read_text()
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text), "the page loads nothing from elsewhere"

    browser.get(page.as_uri())
    assert by_css(browser, "#question").text == "Compare lists and tuples"
    assert console_errors(browser) == []
    run = read_run(run_dir)

    # click an agent: its delegation appears in the detail panel and its card opens
    sub2 = next(a for a in run.trace.ordered_agents() if a.agent_id == "r1-sub2")
    click(browser, "tr.agent[data-agent='r1-sub2']")
    detail = by_css(browser, "#detail").text
    assert "Agent r1-sub2" in detail and sub2.delegation.objective in detail
    assert by_css(browser, "#agent-r1-sub2").get_attribute("open") is not None
    click(browser, "#agent-r1-sub2 details.transcript > summary")
    assert "search_corpus" in text_once_shown(browser, "#agent-r1-sub2 details.transcript", "search_corpus")

    # click citation [1]: the passage it cites, with its title and link
    sid = run.trace.citation.cited_sources[0]
    source = next(s for s in run.sources if s.id == sid)
    click(browser, "a.cite[data-ref='1']")
    detail = by_css(browser, "#detail").text
    assert detail.startswith("[1] ") and sid in detail
    assert " ".join(source.text.split())[:120] in " ".join(detail.split())
    link = by_css(browser, "#detail a").get_attribute("href")
    assert link.startswith((corpus.resolve() / source.meta["path"]).as_uri())
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(artifacts() / "viewer.png"))  # the question, the report, the cited passage

    # click a timeline bar: the call's input, duration and output
    click(browser, ".tl-row[data-agent='r1-sub1'] .bar.t")
    detail = by_css(browser, "#detail").text
    assert detail.startswith("Tool call ") and "duration" in detail and "input" in detail
    bar = by_css(browser, ".tl-row[data-agent='r1-sub1'] .bar.m")
    assert re.match(r"model extractive · \d+\.\d\ds", bar.get_attribute("title"))  # what hovering shows
    assert console_errors(browser) == []
    browser.save_screenshot(str(artifacts() / "viewer-call.png"))


def test_text_in_a_run_cannot_break_out_of_the_page(browser: Any, tmp_path: Path, corpus: Path) -> None:
    import trio

    question = "Compare lists and tuples </script><script>document.title='owned'</script> <b>bold</b>"
    run_dir = trio.run(offline_run, tmp_path, corpus, question)
    page = tmp_path / "trace.html"
    assert run_cli("show", str(run_dir), "--html", str(page), cwd=tmp_path).returncode == 0
    browser.get(page.as_uri())
    assert by_css(browser, "#question").text == question  # shown as text, not run or rendered
    assert browser.title != "owned" and console_errors(browser) == []
    report = run_dir / "report.html"
    browser.get(report.as_uri())
    assert browser.title != "owned" and "<b>bold</b>" in by_css(browser, "h1").text


def test_report_html_links_citations_to_references_with_section_and_file(browser: Any, tmp_path: Path,
                                                                         corpus: Path) -> None:
    import trio

    run_dir = trio.run(offline_run, tmp_path, corpus,
                       "What happens to the other tasks in an asyncio TaskGroup when one of them raises an exception?")
    md = (run_dir / "report.md").read_text()
    refs = md.split("## References", 1)[1]
    assert "html-" not in refs, "references name documents and sections, not internal passage ids"
    assert "Coroutines and Tasks › Task Groups" in refs
    browser.get((run_dir / "report.html").as_uri())
    assert console_errors(browser) == []
    cite = by_css(browser, "a.cite")
    n = cite.get_attribute("data-ref")
    cite.click()
    assert browser.current_url.endswith(f"#ref-{n}")
    target = by_css(browser, f"li#ref-{n} a")
    href = target.get_attribute("href")
    assert href.startswith((corpus.resolve() / "library" / "asyncio-task.html").as_uri() + "#") or \
        href.startswith(corpus.resolve().as_uri())
    browser.save_screenshot(str(artifacts() / "report.png"))


def test_show_json_is_the_typed_run(tmp_path: Path, corpus: Path) -> None:
    import trio

    run_dir = trio.run(offline_run, tmp_path, corpus)
    proc = run_cli("show", str(run_dir), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    run = read_run(run_dir)
    assert data["status"] == "completed" and data["question"] == "Compare lists and tuples"
    assert [a["agent_id"] for a in data["agents"]] == [a.agent_id for a in run.trace.ordered_agents()]
    assert sum(len(a["events"]) for a in data["agents"]) == sum(len(a.records) for a in run.trace.agents.values())
    assert data["citation_check"]["pass_rate"] == 1.0 and data["report"] == run.report


def test_the_viewer_shows_plan_versions_with_their_diff(browser: Any, tmp_path: Path) -> None:
    import trio

    from subagents.models.scripted import ScriptedModel, tool_call

    docs = {"taskgroup": "When a task in a TaskGroup raises, the remaining tasks in the group are cancelled.",
            "timeout": "asyncio.timeout cancels the enclosed code when the deadline passes."}
    plan = lambda objective, why: {"query_type": "straightforward", "rationale": why,  # noqa: E731
                                   "tasks": [{"objective": objective, "tools": ["search_notes"]}]}
    lead = ScriptedModel([tool_call("delegate", plan("TaskGroup failures", "first")),
                          tool_call("delegate", plan("timeouts in task groups", "gap: timeouts")),
                          lead_report_from_findings])
    sub = ScriptedModel([tool_call("search_notes", {"query": "TaskGroup"}), submit_first_hit,
                         tool_call("search_notes", {"query": "timeout"}), submit_first_hit])
    result = trio.run(lambda: api.research("How do task groups fail and time out?", runs_dir=tmp_path / "runs",
                                           lead_model=lead, subagent_model=sub, extra_tools=note_tools(docs),
                                           use_config_file=False, environ={}))
    page = tmp_path / "trace.html"
    assert run_cli("show", str(result.run_dir), "--html", str(page), cwd=tmp_path).returncode == 0
    browser.get(page.as_uri())
    plans = by_css(browser, "#plans").text
    assert "Plan v2" in plans and "changes from v1" in plans
    diff = by_css(browser, "#plans pre.diff").text
    assert "+- timeouts in task groups" in diff and "-- TaskGroup failures" in diff
    assert console_errors(browser) == []
