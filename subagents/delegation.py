"""The lead's plan and the delegation schema, in one place.

A `Plan` is what the lead passes to its `delegate` tool: a query type, a rationale and one typed
`Delegation` per subagent. A subagent answers with `Findings`. All are pydantic models: their
JSON schema is what a language model sees as a tool's input, and validation errors come back to
the model as readable tool errors. `plan_problems` holds the policy checks code applies beyond
the schema (effort per query type, tools that exist in this run).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .plan_graph import graph_problems


class QueryType(StrEnum):
    STRAIGHTFORWARD = "straightforward"  # one fact or definition
    BREADTH_FIRST = "breadth_first"  # independent parts: compared entities, listed items
    DEPTH_FIRST = "depth_first"  # one topic seen from several angles


# Effort scaling: the most subagents a query type deserves in one round (before --max-subagents).
EFFORT: Mapping[QueryType, int] = {
    QueryType.STRAIGHTFORWARD: 1,
    QueryType.DEPTH_FIRST: 4,
    QueryType.BREADTH_FIRST: 10,
}


def tasks_per_query_type(max_subagents: int) -> dict[QueryType, int]:
    """The limits in force in a run: the effort per type, capped by --max-subagents."""
    return {qt: min(most, max_subagents) for qt, most in EFFORT.items()}


class FindingsStatus(StrEnum):
    OK = "ok"  # objective answered
    PARTIAL = "partial"  # some of it
    FAILED = "failed"  # none of it


class Boundaries(BaseModel):
    model_config = ConfigDict(extra="forbid")
    out_of_scope: list[str] = Field(default_factory=list, description="Topics the subagent must not pursue.")
    trusted_sources: list[str] = Field(default_factory=list, description="Sources or domains to prefer.")
    avoid_sources: list[str] = Field(default_factory=list, description="Sources or domains not to use or cite.")


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_tool_calls: int = Field(8, ge=1, le=100, description="Tool calls the subagent may make in total.")
    max_tokens: int = Field(60_000, ge=1, le=2_000_000, description="Model tokens it may spend, every kind counted: input, output, cache writes and cache reads.")
    max_seconds: float = Field(90.0, gt=0, le=3600, description="Wall-clock time limit.")


TASK_ID = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"


class SuccessCriteria(BaseModel):
    """What counts as done, checked in code on the findings (a miss triggers a replanning strategy)."""

    model_config = ConfigDict(extra="forbid")
    description: str = Field("", description="What counts as done, in words (shown to the subagent).")
    min_claims: int = Field(1, ge=0, le=50, description="The fewest sourced claims the findings must have.")
    must_mention: list[str] = Field(default_factory=list,
                                    description="Words or names the claims must mention (case-insensitive).")


class Delegation(BaseModel):
    """One task for one subagent."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(None, pattern=TASK_ID,
                           description="A short id for this task, so other tasks of the plan can depend on it.")
    depends_on: list[str] = Field(default_factory=list,
                                  description="Ids of tasks in this plan that must finish first; their findings "
                                              "are handed to this task to read.")
    objective: str = Field(min_length=3, description="What to find out, as a precise question or goal.")
    output_format: str = Field(
        "Up to 8 claims, each one or two sentences quoted or closely paraphrased from a source, with its source ids.",
        description="What the findings should look like.",
    )
    tools: list[str] = Field(min_length=1, description="Names of the tools this subagent may use.")
    boundaries: Boundaries = Field(default_factory=Boundaries)
    budget: Budget = Field(default_factory=Budget)
    queries: list[str] = Field(default_factory=list, description="Optional starting search queries.")
    success_criteria: SuccessCriteria | None = Field(
        None, description="What counts as done; findings that miss it are retried, skipped or replanned.")
    critical: bool = Field(True, description="false: the report can do without this task; if it fails it is "
                                             "skipped (and said so) instead of replanned.")

    @field_validator("objective")
    @classmethod
    def _objective_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("objective is blank")
        return v.strip()

    @field_validator("success_criteria", mode="before")
    @classmethod
    def _criteria_in_words(cls, v: object) -> object:
        return {"description": v} if isinstance(v, str) else v


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, description="One self-contained statement.")
    source_ids: list[str] = Field(min_length=1, description="Ids (S1, S2, …) of the retrieved sources that support it.")
    about: str = Field("", description=(
        "Optional: which of the objective's compared things or sub-questions this claim answers, when it has several."))


class CouldNotAccomplish(BaseModel):
    """A subagent that cannot do its task says so, and what the lead could do instead."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field(min_length=1, description="Why the task cannot be done with these tools and boundaries.")
    suggestion: str = Field("", description="What the lead could do instead: another tool, source, or objective.")


class Findings(BaseModel):
    """What a subagent returns: condensed claims with their sources."""

    model_config = ConfigDict(extra="forbid")
    status: FindingsStatus = Field(description="ok: objective answered; partial: some of it; failed: none.")
    summary: str = Field("", description="Two or three sentences answering the objective.")
    claims: list[Claim] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list, description="What remains unanswered.")
    related: list[Claim] = Field(default_factory=list, description=(
        "Optional: passages close to the objective that do not answer it (possibly related). "
        "They never count as claims."))
    could_not_accomplish: CouldNotAccomplish | None = Field(
        None, description="Set when the task cannot be done as delegated (instead of drifting off-plan).")


def unmet_criteria(findings: Findings, criteria: SuccessCriteria | None) -> list[str]:
    """What the findings miss of the task's success criteria (empty: met, or none were set)."""
    if criteria is None:
        return []
    missed = []
    if len(findings.claims) < criteria.min_claims:
        missed.append(f"{len(findings.claims)} claim(s), at least {criteria.min_claims} wanted")
    said = " ".join(c.text for c in findings.claims).casefold()
    absent = [t for t in criteria.must_mention if t.casefold() not in said]
    if absent:
        missed.append("the claims do not mention " + ", ".join(map(repr, absent)))
    return missed


class Plan(BaseModel):
    """Input of the lead's `delegate` tool."""

    model_config = ConfigDict(extra="forbid")
    query_type: QueryType = Field(description="straightforward: one fact; breadth_first: independent parts "
                                              "(compared entities, listed items); depth_first: one topic seen from several angles.")
    rationale: str = Field(min_length=1, description="Why this split; in later rounds, which gaps these tasks fill.")
    tasks: list[Delegation] = Field(min_length=1, description="One delegation per subagent.")


def plan_schema(tool_names: list[str]) -> dict:
    """The `delegate` tool's input schema for one run: `tools` may only name the tools this run has."""
    schema = Plan.model_json_schema()
    schema.pop("title", None)
    tools = schema["$defs"]["Delegation"]["properties"]["tools"]
    tools["items"] = {"type": "string", "enum": list(tool_names)}
    return schema


def plan_problems(plan: Plan, *, tool_names: list[str], max_subagents: int) -> list[str]:
    """Policy checks beyond the schema. Empty list: the plan may run."""
    problems = []
    most = tasks_per_query_type(max_subagents)[plan.query_type]
    if len(plan.tasks) > most:
        problems.append(f"a {plan.query_type.value} plan may have at most {most} task(s) in this run, not "
                        f"{len(plan.tasks)}; merge tasks or classify the question differently")
    known = set(tool_names)
    for i, task in enumerate(plan.tasks, 1):
        unknown = [t for t in task.tools if t not in known]
        if unknown:
            problems.append(f"task {i} names unknown tool(s) {', '.join(map(repr, unknown))}; "
                            f"available: {', '.join(tool_names)}")
    return problems + graph_problems([(t.id, list(t.depends_on)) for t in plan.tasks])
