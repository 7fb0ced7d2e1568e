"""The final report: the lead's draft, citation-checked, with the parts code (not the model) owns —
the offline notice and the "What is missing" section."""

from __future__ import annotations

from subagents.context import AgentStatus
from subagents.model import Model
from subagents.prompting import PromptSet
from subagents.sources import SourceRegistry
from subagents.worker import SubagentResult

from .citations import CitationCheck, check_citations


def finish_report(draft: str, *, question: str, results: list[tuple[int, SubagentResult]], sources: SourceRegistry,
                  lead_model: Model, subagent_model: Model, prompts: PromptSet) -> tuple[str, CitationCheck]:
    """Citation-check the draft and add the header and the gaps section."""
    body, check = check_citations(draft, sources)
    header = []
    if not (lead_model.is_language_model or subagent_model.is_language_model):
        header.append(prompts.render("report_offline_header").rstrip() + "\n")
    if not body.lstrip().startswith("#"):
        header.insert(0, f"# {question}\n")
    text = "\n".join(header) + ("\n" if header else "") + body.rstrip() + "\n"
    return text + missing_section(results), check


def missing_section(results: list[tuple[int, SubagentResult]]) -> str:
    gaps = [(rnd, r) for rnd, r in results if r.status is not AgentStatus.OK]
    if not gaps:
        return ""
    lines = ["", "## What is missing", ""]
    for rnd, r in gaps:
        why = r.error or "; ".join(r.findings.open_questions) or r.stop
        lines.append(f"- {r.agent_id} (round {rnd}, {r.status.value}): “{r.delegation.objective}” — {why}")
    return "\n".join(lines) + "\n"
