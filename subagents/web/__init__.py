"""Web research tools: `web_search` (ddgs) and `fetch_page` (httpx + trafilatura/pypdf), behind a
network guard, with a record/replay cache. See tools.py for what an agent sees.

Heavy parts (httpx, trafilatura, pypdf) load only when a web tool is built."""

from typing import Any

from .config import CACHE_MODES, CacheMode, WebConfig, default_cache_dir

__all__ = ["CACHE_MODES", "CacheMode", "GuardError", "WebConfig", "WebTools", "check_url", "default_cache_dir",
           "make_web_tools"]


def __getattr__(name: str) -> Any:
    if name in ("GuardError", "check_url"):
        from . import guard

        return getattr(guard, name)
    if name in ("WebTools", "make_web_tools"):
        from . import tools

        return getattr(tools, name)
    raise AttributeError(f"module 'subagents.web' has no attribute {name!r}")
