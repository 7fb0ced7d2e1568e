"""The typed context a model receives with every request, besides the messages.

It says who is asking and under which limits: the role, the tools this agent may call, and
  - for the lead: the question, the limits in force (tasks per query type, rounds left, the tools
    subagents can be given) and every finished round's findings as objects;
  - for a subagent: its `Delegation`.
Offline and test models decide from these fields; language models read the prompts, which say
the same in prose. A prompt variant can therefore never break a model that reads the context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Mapping

from .delegation import Delegation, Findings, QueryType


class AgentRole(StrEnum):
    LEAD = "lead"
    SUBAGENT = "subagent"
    JUDGE = "judge"
    SINGLE = "single"  # one agent with every tool, no delegation (a baseline)


class AgentStatus(StrEnum):
    RUNNING = "running"
    OK = "ok"
    PARTIAL = "partial"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    ESTIMATED = "estimated"  # a lead that planned for an estimate and stopped
    SKIPPED = "skipped"  # a task that never started (a dependency failed, or the run's budget was spent)
    AWAITING_APPROVAL = "awaiting_approval"  # a lead whose plan waits for a person
    STOPPED = "stopped"  # a lead stopped by a person who refused its plan


class Strategy(StrEnum):
    """What happens to a task that failed or missed its success criteria."""

    RETRY = "retry"  # a transient cause (model error, timeout): run it again, in code
    ALTERNATIVE_TOOL = "alternative_tool"  # a tool failed and another tool of the run can serve
    SKIP = "skip"  # not critical (or cannot run): the report says what is missing
    REPLAN = "replan"  # the lead writes a new plan version from what succeeded
    STOP = "stop"  # the replan cap is reached: the lead writes the report from what it has


class FailureCause(StrEnum):
    MODEL_ERROR = "model_error"
    TIMEOUT = "timeout"
    TOOL_FAILED = "tool_failed"
    COULD_NOT = "could_not_accomplish"
    NOTHING_FOUND = "nothing_found"
    CRITERIA_MISSED = "criteria_missed"
    DEPENDENCY_FAILED = "dependency_failed"
    RUN_BUDGET = "run_budget"
    OTHER = "other"


@dataclass(frozen=True)
class LeadLimits:
    tasks_per_query_type: Mapping[QueryType, int]
    max_rounds: int
    rounds_left: int  # delegation rounds the lead may still start now (replans count against replans_left)
    subagent_tools: tuple[str, ...]  # tool names a delegation may give
    replans_left: int = 0  # new plans the lead may still write after failures (--max-replans)
    replan_for: tuple[str, ...] = ()  # agent ids whose failure asks for a new plan now


@dataclass(frozen=True)
class SubagentReport:
    """What the lead learns of one subagent after a round."""

    agent_id: str
    delegation: Delegation
    status: AgentStatus
    findings: Findings
    error: str | None = None
    decision: Strategy | None = None  # what was done about a failure (None: it did not fail)
    decision_reason: str = ""
    searched: bool = True  # at least one of its tool calls (other than submitting) ran and succeeded


@dataclass(frozen=True)
class RoundReport:
    round: int
    subagents: tuple[SubagentReport, ...]
    source_titles: Mapping[str, str] = field(default_factory=dict)  # cited source id -> title


class JudgeKind(StrEnum):
    RUBRIC = "rubric"  # score one report on the rubric's criteria
    PAIRWISE = "pairwise"  # prefer one of two reports (labelled A and B)


@dataclass(frozen=True)
class Judging:
    """What a judge is asked to judge: the question and the report(s), in the order shown."""

    kind: JudgeKind
    reports: tuple[str, ...]  # one (rubric) or two, shown as A then B (pairwise)
    answers: tuple[str, ...] = ()  # gold answers of the question, when the question set has them


@dataclass(frozen=True)
class RequestContext:
    role: AgentRole
    agent_id: str
    allowed_tools: tuple[str, ...]
    question: str = ""  # the lead's (and a single agent's) research question
    delegation: Delegation | None = None  # a subagent's task
    limits: LeadLimits | None = None  # the lead's limits in force
    rounds: tuple[RoundReport, ...] = ()  # the lead: findings of every finished round
    plans_rejected: int = 0  # the lead: delegate calls refused so far
    wrap_up: bool = False  # a budget ran out: submit what you have (the lead: write the report now)
    judging: Judging | None = None  # a judge: the report(s) to judge
    dependencies: tuple[SubagentReport, ...] = ()  # a subagent: the finished tasks it depends on
