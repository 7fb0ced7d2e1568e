"""Web research tools: `web_search` (ddgs) and `fetch_page` (httpx + trafilatura/pypdf), behind a
network guard, with a record/replay cache. See tools.py for what an agent sees."""

from .config import CACHE_MODES, CacheMode, WebConfig, default_cache_dir
from .guard import GuardError, check_url
from .tools import WebTools, make_web_tools

__all__ = ["CACHE_MODES", "CacheMode", "GuardError", "WebConfig", "WebTools", "check_url", "default_cache_dir", "make_web_tools"]
