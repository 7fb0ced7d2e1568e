"""The lead's plan: what it passes to the `delegate` tool, and the checks code applies to it.

Schema errors (pydantic) and policy errors (unknown tool, too many tasks, no rounds left) both
come back to the lead as a tool error whose text says what to fix.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from subagents.schemas import Delegation

QueryType = Literal["straightforward", "breadth_first", "depth_first"]

# Effort scaling: the most subagents a query type deserves (before the --max-subagents cap).
EFFORT = {"straightforward": 1, "depth_first": 4, "breadth_first": 8}


class Plan(BaseModel):
    """Input of the lead's `delegate` tool."""

    model_config = ConfigDict(extra="forbid")
    query_type: QueryType = Field(description="straightforward: one fact; breadth_first: independent parts "
                                              "(compared entities, listed items); depth_first: one topic seen from several angles.")
    rationale: str = Field(min_length=1, description="Why this split; in later rounds, which gaps these tasks fill.")
    tasks: list[Delegation] = Field(min_length=1, description="One delegation per subagent.")


def plan_problems(plan: Plan, *, tool_names: list[str], max_subagents: int) -> list[str]:
    """Policy checks beyond the schema. Empty list: the plan may run."""
    problems = []
    most = EFFORT[plan.query_type]
    if len(plan.tasks) > most and len(plan.tasks) <= max_subagents:
        problems.append(f"a {plan.query_type} question gets at most {most} subagent(s), not {len(plan.tasks)}; "
                        "merge tasks or classify the question differently")
    if len(plan.tasks) > max_subagents:
        problems.append(f"{len(plan.tasks)} tasks exceed the limit of {max_subagents} subagents; merge or drop some")
    known = set(tool_names)
    for i, task in enumerate(plan.tasks, 1):
        unknown = [t for t in task.tools if t not in known]
        if unknown:
            problems.append(f"task {i} names unknown tool(s) {', '.join(map(repr, unknown))}; "
                            f"available: {', '.join(tool_names)}")
    return problems
