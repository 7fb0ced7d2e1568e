"""report.html in a real browser: Debian's headless Chromium (driven by chromedriver through selenium)
opens the page from disk with the network off, the page renders every part with no console error,
the side-by-side view follows the question picked, and a screenshot is kept in test-artifacts/.
Skipped with the reason when no browser is installed (.ci/run installs chromium and chromium-driver)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from lead_agent.compare.harness import run_comparison
from subagents.context import AgentRole, JudgeKind
from subagents.model import ModelRequest, ModelResponse, Usage
from subagents.models.scripted import tool_call

from .conftest import ROOT
from .test_compare import PromptFollower, experiment, fewer_subagents_variant

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1300,2000"]


class CitationJudge:
    """A judge for tests: reads the reports from the typed context, scores by citations."""

    name = "claude-sonnet-4-5"
    is_language_model = True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        ctx = request.context
        assert ctx is not None and ctx.role is AgentRole.JUDGE and ctx.judging is not None
        cites = [len(re.findall(r"\[\d+\]", r)) for r in ctx.judging.reports]
        if ctx.judging.kind is JudgeKind.RUBRIC:
            s = {"score": min(1.0, cites[0] / 4), "reason": f"{cites[0]} citations"}
            return tool_call("submit_rubric", {c: s for c in ("factual_accuracy", "citation_accuracy", "completeness",
                                                             "source_quality", "tool_efficiency")}, usage=Usage(900, 80))
        winner = "tie" if cites[0] == cites[1] else ("A" if cites[0] > cites[1] else "B")
        return tool_call("submit_preference", {"winner": winner, "reason": "more citations"}, usage=Usage(1500, 40))


def driver(profile: Path):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for f in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(f)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                    reason="no headless browser: install Debian's chromium and chromium-driver (.ci/run does)")
async def test_report_html_renders_in_headless_chromium_without_console_errors(tmp_path: Path) -> None:
    variant = fewer_subagents_variant(tmp_path, 1)
    exp, where = experiment(tmp_path, ["default", str(variant)], n=6, judge_model="judge")
    result = await run_comparison(exp, where, environ={}, use_config_file=False, progress=None,
                                  models={"follower": PromptFollower(), "judge": CitationJudge()})
    page = result.path / "report.html"
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html  # no network
    web = driver(tmp_path / "profile")
    try:
        web.get(page.as_uri())
        body = web.find_element("tag name", "body")
        assert body.get_attribute("data-rendered") == "ok"
        errors = [e for e in web.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        assert not web.find_element("id", "errors").is_displayed()
        assert len(web.find_elements("css selector", "#scatter circle")) == len(result.rows)
        assert "judged mean score" in web.find_element("id", "scatter").text
        assert len(web.find_elements("css selector", "#bars svg")) >= 10
        links = [a.get_attribute("href") for a in web.find_elements("css selector", "#questions a")]
        assert len(links) == len(result.rows) and all(Path(re.sub("^file://", "", h)).is_file() for h in links)
        first = web.find_element("id", "rb").text
        from selenium.webdriver.support.ui import Select

        Select(web.find_element("id", "q")).select_by_index(3)
        assert web.find_element("id", "rb").text != first and exp.questions[3].question in web.find_element("id", "rb").text
        assert "judge:" in web.find_element("id", "rb").text
        ARTIFACTS.mkdir(exist_ok=True)
        Select(web.find_element("id", "q")).select_by_index(0)
        web.set_window_size(1200, 1150)
        web.execute_script("window.scrollTo(0, 0)")
        assert web.save_screenshot(str(ARTIFACTS / "compare-report.png"))
    finally:
        web.quit()
