"""The HTML trace viewer: `research show RUN --html [FILE]` writes one self-contained page (the
data as inline JSON, the script and styles inlined; no network needed to open it): the question
and status, plan versions with their diffs, a timeline of every model and tool call (hover or
click for inputs, outputs, tokens, cost, duration), each subagent's delegation, transcript and
findings, the report with every `[n]` opening the passage it cites, the citation check, and cost
and tokens per agent."""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path

from subagents.runs import Run

from .data import viewer_data


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _inline_json(data: object) -> str:
    """JSON safe inside <script>: no `</` or `<!--` can end or confuse the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def viewer_html(run: Run) -> str:
    data = viewer_data(run)
    title = f"{data['run']['question'][:80]} — research trace"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_asset('viewer.css')}</style></head>\n"
            "<body><div id=\"app\">Loading the trace…</div>\n"
            f"<script type=\"application/json\" id=\"trace-data\">{_inline_json(data)}</script>\n"
            f"<script>{_asset('viewer.js')}</script>\n</body></html>\n")


def write_viewer(run: Run, target: Path) -> Path:
    """Write the viewer to `target` atomically (its folder must exist); StorageError on failure,
    leaving neither a temporary file nor a partial page."""
    from subagents.storage import write_atomic

    target = Path(target)
    write_atomic(target, viewer_html(run))
    return target


__all__ = ["viewer_html", "write_viewer"]
