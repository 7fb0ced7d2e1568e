"""The plan approval gate: a person approves, edits or rejects a plan before its subagents start.

The lead's plan (or a replan, or a gap round's plan) is handed to an *approver*: a callable
(sync or async) that receives a `PlanReview` and returns the plan (approved), another plan or a
plan document (edited), `Refuse(reason)` (rejected: the run ends) or `Defer()` (the run stops
with status awaiting_approval; `research approve` / `reject` continue it later). An edit passes
the same schema and policy checks as the lead's plan (`PlanReview.check`); a refused edit goes
back to the approver with its problems.

Plans are data: a plan document is the JSON (or TOML) of a `Plan`; the plan files
(plan.vN.json) are documents with metadata (version, round, author, diff, agent ids), which
`plan_from_document` ignores, so a plan file can be edited in place and approved.
"""

from __future__ import annotations

import difflib
import json
import re
import textwrap
import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping, Sequence, Union

from pydantic import ValidationError

from subagents.delegation import Delegation, Plan, plan_problems
from subagents.tools import format_validation_error

MAX_EDITS = 5  # invalid edits in a row before the gate gives up on editing
META_KEYS = ("version", "round", "author", "created_at", "diff", "problems", "_problems")


class ApprovalMode(StrEnum):
    NONE = "none"  # plans run as soon as they pass the checks
    ASK = "ask"  # an approver decides each plan (--approve, or `approve=` in the API)
    STOP = "stop"  # the run stops awaiting approval at each plan (--plan-only)


class ReviewReason(StrEnum):
    FIRST = "first_plan"
    GAP = "gap_round"
    REPLAN = "replan"
    REPLAN_CAP = "replan_cap"  # the lead wants to plan again past --max-replans: the person decides


@dataclass(frozen=True)
class Refuse:
    reason: str = ""


@dataclass(frozen=True)
class Defer:
    reason: str = ""


Verdict = Union[Plan, Mapping[str, Any], Refuse, Defer]
Approver = Callable[["PlanReview"], Union[Verdict, Awaitable[Verdict]]]


class PlanEditError(ValueError):
    """A plan document that cannot be read or does not pass the checks."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class PlanReview:
    """What an approver sees: the plan, its version and round, why it is asked, and the problems of
    a refused edit."""

    plan: Plan
    version: int
    round: int
    author: str
    reason: ReviewReason
    tool_names: tuple[str, ...] = ()
    max_subagents: int = 5
    agent_ids: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    note: str = ""  # e.g. which tasks failed (a replan)

    def check(self, edited: Plan | Mapping[str, Any]) -> Plan:
        """The edited plan, if it passes the schema and policy checks; else PlanEditError."""
        plan = edited if isinstance(edited, Plan) else plan_from_document(edited)
        problems = plan_problems(plan, tool_names=list(self.tool_names), max_subagents=self.max_subagents)
        if problems:
            raise PlanEditError(problems)
        return plan

    def table(self) -> str:
        return plan_table(self.plan, self.agent_ids, title=f"Plan v{self.version} (round {self.round}, "
                                                          f"by {self.author}, {self.plan.query_type.value})")


# ---------------------------------------------------------------- plan documents


def plan_document(plan: Plan) -> dict[str, Any]:
    """A plan as a document to edit: the schema's fields only, unset optional fields left out."""
    return plan.model_dump(mode="json", exclude_none=True)


def plan_from_document(data: Mapping[str, Any]) -> Plan:
    """A plan from an edited document or a plan file (metadata and agent ids ignored)."""
    if not isinstance(data, Mapping):
        raise PlanEditError(["a plan is an object with query_type, rationale and tasks"])
    body = {k: v for k, v in data.items() if k not in META_KEYS}
    if isinstance(body.get("tasks"), list):
        body["tasks"] = [{k: v for k, v in t.items() if k != "agent_id"} if isinstance(t, Mapping) else t
                         for t in body["tasks"]]
    try:
        return Plan.model_validate(body)
    except ValidationError as e:
        raise PlanEditError([f"schema: {p}" for p in format_validation_error(e).split("; ")]) from None


def read_plan_file(path: Path) -> dict[str, Any]:
    """A plan document from a .json or .toml file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PlanEditError([f"cannot read {path}: {e}"]) from None
    try:
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise PlanEditError([f"{path} is not valid {'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {e}"]) \
            from None
    if not isinstance(data, dict):
        raise PlanEditError([f"{path}: a plan is an object with query_type, rationale and tasks"])
    return data


def plan_diff(old: Plan | None, new: Plan, *, old_label: str, new_label: str) -> str:
    """A unified diff between two plan versions' documents ("" for the first version)."""
    if old is None:
        return ""
    a = json.dumps(plan_document(old), indent=1, ensure_ascii=False).splitlines()
    b = json.dumps(plan_document(new), indent=1, ensure_ascii=False).splitlines()
    return "\n".join(difflib.unified_diff(a, b, old_label, new_label, lineterm=""))


# ---------------------------------------------------------------- the table a person reads

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _clean(text: str) -> str:
    return _CONTROL.sub("?", " ".join(str(text).split()))


def _budget(d: Delegation) -> str:
    b = d.budget
    return f"{b.max_tool_calls} calls, {b.max_tokens:,} tokens, {b.max_seconds:g}s"


def _boundaries(d: Delegation) -> str:
    b = d.boundaries
    parts = [f"not: {'; '.join(b.out_of_scope)}" if b.out_of_scope else "",
             f"prefer: {'; '.join(b.trusted_sources)}" if b.trusted_sources else "",
             f"avoid: {'; '.join(b.avoid_sources)}" if b.avoid_sources else ""]
    return " / ".join(p for p in parts if p) or "—"


COLUMNS = (("task", 9), ("objective", 30), ("output format", 20), ("tools", 14), ("boundaries", 16),
           ("budget", 14), ("depends on", 10))


def plan_table(plan: Plan, agent_ids: Sequence[str] = (), *, title: str = "Plan") -> str:
    """Each task's objective, output format, tools, boundaries, budget and dependencies, as a table."""
    rows = []
    for i, d in enumerate(plan.tasks):
        name = d.id or (agent_ids[i] if i < len(agent_ids) else f"task {i + 1}")
        extra = (" (not critical)" if not d.critical else "") + \
            (f" — done when: {d.success_criteria.description or f'{d.success_criteria.min_claims}+ claims'}"
             if d.success_criteria else "")
        rows.append([name, d.objective + extra, d.output_format, ", ".join(d.tools), _boundaries(d), _budget(d),
                     ", ".join(d.depends_on) or "—"])
    lines = [_clean(title) + ": " + _clean(plan.rationale), _row([h for h, _ in COLUMNS]),
             "-+-".join("-" * w for _, w in COLUMNS)]
    for r in rows:
        lines.append(_row(r))
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    wrapped = [textwrap.wrap(_clean(c), w) or [""] for c, (_, w) in zip(cells, COLUMNS)]
    height = max(len(w) for w in wrapped)
    return "\n".join(" | ".join((w[i] if i < len(w) else "").ljust(width) for w, (_, width) in zip(wrapped, COLUMNS))
                     .rstrip() for i in range(height))


@dataclass
class GateResult:
    """What the gate decided: the plan to run (approved or edited), or a stop."""

    plan: Plan | None = None
    edited: bool = False
    refused: Refuse | None = None
    deferred: Defer | None = None
    problems: list[str] = field(default_factory=list)  # the last refused edit's problems
