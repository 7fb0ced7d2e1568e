"""The lead agent: planning, delegation, gap rounds, synthesis, citation check, run directory, CLI.

The public API is imported lazily so that `research --help` does not load the run machinery.
"""

from typing import Any

__all__ = ["ResearchResult", "RunFailed", "UsageError", "approve", "reject", "research", "research_sync", "resume"]


def __getattr__(name: str) -> Any:
    if name in ("ResearchResult", "RunFailed", "research", "research_sync"):
        from . import api

        return getattr(api, name)
    if name in ("resume", "approve", "reject"):
        from . import checkpoint

        return getattr(checkpoint, name)
    if name == "UsageError":
        from .settings import UsageError

        return UsageError
    raise AttributeError(f"module 'lead_agent' has no attribute {name!r}")
