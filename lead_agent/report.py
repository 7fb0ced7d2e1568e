"""The final report: the lead's draft, citation-checked, with the parts code (not the model) owns —
the offline notice and the "What is missing" section."""

from __future__ import annotations

from typing import Mapping

from subagents.context import AgentStatus
from subagents.events import RunBudgetReached
from subagents.model import Model
from subagents.prompting import PromptSet
from subagents.sources import SourceRegistry
from subagents.worker import SubagentResult

from .citations import CitationCheck, check_citations
from .replan import Decision


def finish_report(draft: str, *, question: str, results: list[tuple[int, SubagentResult]], sources: SourceRegistry,
                  lead_model: Model, subagent_model: Model, prompts: PromptSet,
                  budget: RunBudgetReached | None = None,
                  decisions: Mapping[str, Decision] | None = None,
                  semantic: bool = False) -> tuple[str, CitationCheck]:
    """Citation-check the draft and add the header (offline notice — saying how passages were ranked:
    `semantic`, by meaning too —, the budget that stopped the run) and the gaps section (with what was
    done about each failed task)."""
    body, check = check_citations(draft, sources)
    header = []
    if not (lead_model.is_language_model or subagent_model.is_language_model):
        header.append(prompts.render("report_offline_header", ranking=OFFLINE_RANKING[semantic]).rstrip() + "\n")
    if budget is not None:
        header.append(prompts.render("report_budget_note", budget=budget.budget, used=_amount(budget),
                                     limit=_amount(budget, limit=True)).rstrip() + "\n")
    if not body.lstrip().startswith("#"):
        header.insert(0, f"# {question}\n")
    text = "\n".join(header) + ("\n" if header else "") + body.rstrip() + "\n"
    return text + missing_section(results, decisions or {}), check


OFFLINE_RANKING = {True: "by words and by meaning (BM25 and a sentence-embedding model, all-MiniLM-L6-v2)",
                   False: "by words (BM25)"}


def _amount(line: RunBudgetReached, limit: bool = False) -> str:
    return budget_amount(line.budget, line.limit if limit else line.used)


def budget_amount(budget: str, v: float) -> str:
    """An amount of one budget kind as the user gave it: dollars, seconds or tokens."""
    if budget == "max_cost":
        return f"${v:.4f}"
    if budget == "deadline":
        return f"{v:g}s"
    return f"{int(v):,} tokens"


def missing_section(results: list[tuple[int, SubagentResult]], decisions: Mapping[str, Decision] | None = None) -> str:
    gaps = [(rnd, r) for rnd, r in results if r.status is not AgentStatus.OK]
    if not gaps:
        return ""
    lines = ["", "## What is missing", ""]
    for rnd, r in gaps:
        why = r.error or "; ".join(r.findings.open_questions) or r.stop
        d = (decisions or {}).get(r.agent_id)
        done = f" [{d.strategy.value}: {d.reason}]" if d is not None else ""
        lines.append(f"- {r.agent_id} (round {rnd}, {r.status.value}): “{r.delegation.objective}” — {why}{done}")
    return "\n".join(lines) + "\n"
