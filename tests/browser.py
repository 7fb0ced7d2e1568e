"""Headless Debian Chromium for tests that open a page as a person would (selenium + chromedriver;
Playwright's own browser download does not work here). Tests skip with a reason when no browser
is installed (`.ci/run` installs `chromium` and `chromium-driver`). Screenshots and captures go to
`test-artifacts/` (or $TEST_ARTIFACTS)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from .conftest import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def artifacts() -> Path:
    d = Path(os.environ.get("TEST_ARTIFACTS") or ROOT / "test-artifacts")
    d.mkdir(parents=True, exist_ok=True)
    return d


def need_browser() -> None:
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("no Chromium here (apt-get install chromium chromium-driver; .ci/run installs them)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1280,800"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
