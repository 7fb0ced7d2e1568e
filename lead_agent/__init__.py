"""The lead agent: planning, delegation, gap rounds, synthesis, citation check, run directory, CLI."""

from .api import ResearchResult, RunFailed, UsageError, research, research_sync

__all__ = ["ResearchResult", "RunFailed", "UsageError", "research", "research_sync"]
