"""One subagent: a fresh context holding only its delegation, only its allowed tools, a budget.

It returns findings through the terminal `submit_findings` tool, validated like any tool input.
When a budget runs out it is asked once to submit what it has (status at most "partial"); when
its model keeps failing it ends as failed with the error in its event stream. It never raises for
its own failures, so its siblings are never cancelled by them.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field
from typing import Sequence

import trio
from pydantic import BaseModel, Field

from .context import AgentRole, AgentStatus, RequestContext, SubagentReport
from .delegation import Delegation, Findings, FindingsStatus
from .events import (AgentEnded, AgentEvents, AgentFailed, AgentStarted, BudgetExhausted, FindingsSubmitted,
                     MessageAdded)
from .ledger import Ledger
from .loop import AgentSpec, CallRecord, ContextHook, Limits, LoopState, LoopStop, add_message, agent_loop
from .model import Message, Model, ModelAuthError, ModelError, TextBlock, ToolChoice, ToolResultBlock, ToolUseBlock, Usage
from .prompting import PromptSet
from .sources import SourceRegistry
from .tool_names import READ_FINDINGS, SUBMIT_FINDINGS
from .tools import Tool, ToolContext, ToolError, Toolbox, untrusted

WRAPUP_SECONDS = 30.0


@dataclass
class SubagentResult:
    agent_id: str
    delegation: Delegation
    findings: Findings
    status: AgentStatus
    stop: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    calls: list[CallRecord] = field(default_factory=list)
    tool_calls: int = 0
    turns: int = 0
    started: float = 0.0
    ended: float = 0.0
    model: str = ""
    retryable: bool = False  # it failed for a transient cause (a model error after the adapter's retries)
    tool_errors: dict[str, int] = field(default_factory=dict)  # per tool: calls that ran and failed
    tool_successes: dict[str, int] = field(default_factory=dict)


@dataclass
class SubagentRun:
    """What a subagent runs with, besides its delegation."""

    model: Model
    toolbox: Toolbox  # every tool of the run; the delegation picks
    sources: SourceRegistry
    prompts: PromptSet
    max_tokens: int = 4096
    context_hook: ContextHook | None = None
    ledger: Ledger | None = None  # the run-wide budget ledger


def submit_findings_tool(sources: SourceRegistry, prompts: PromptSet) -> Tool:
    async def run(args: Findings, ctx: ToolContext) -> str:
        unknown = sorted({sid for c in args.claims + args.related for sid in c.source_ids if sid not in sources})
        if unknown:
            raise ToolError(
                f"unknown source ids {', '.join(unknown)}: cite only ids returned by your tools in this task"
            )
        return "Findings recorded. You are done."

    return Tool(SUBMIT_FINDINGS, prompts.render("submit_findings_tool"), Findings, run, terminal=True)


class ReadFindingsArgs(BaseModel):
    task_id: str = Field(min_length=1, description="The id of a task yours depends on.")


def findings_view(report: SubagentReport) -> dict[str, object]:
    """A finished task's findings as another agent reads them (claims keep their source ids)."""
    f = report.findings
    return {"task_id": report.delegation.id, "agent_id": report.agent_id, "objective": report.delegation.objective,
            "status": report.status.value, "summary": f.summary, "claims": [c.model_dump() for c in f.claims],
            "open_questions": f.open_questions,
            "related": [c.model_dump() for c in f.related] or None,
            "could_not_accomplish": f.could_not_accomplish.model_dump() if f.could_not_accomplish else None}


def read_findings_tool(dependencies: Sequence[SubagentReport], prompts: PromptSet) -> Tool:
    """`read_findings`: the findings of a task this one depends on, by task id (and only those)."""
    by_id = {d.delegation.id or d.agent_id: d for d in dependencies}

    async def run(args: ReadFindingsArgs, ctx: ToolContext) -> str:
        report = by_id.get(args.task_id)
        if report is None:
            raise ToolError(f"no finished task {args.task_id!r} to read; yours depends on {', '.join(by_id)}")
        return untrusted(f"findings of task {args.task_id}", findings_view(report))

    return Tool(READ_FINDINGS, prompts.render("read_findings_tool"), ReadFindingsArgs, run)


def _task_message(delegation: Delegation, prompts: PromptSet, dependencies: Sequence[SubagentReport] = ()) -> str:
    text = prompts.render(
        "subagent_task",
        objective=delegation.objective,
        # "</" escaped (valid JSON): text in the delegation cannot close the <delegation> tag
        delegation_json=json.dumps(delegation.model_dump(mode="json", exclude_none=True), indent=1,
                                   ensure_ascii=False).replace("</", "<\\/"),
    )
    if dependencies:
        listed = "\n".join(f"- {d.delegation.id or d.agent_id} ({d.status.value}, {len(d.findings.claims)} claim(s)): "
                           f"{d.delegation.objective}" for d in dependencies)
        text += "\n\n" + prompts.render("subagent_dependencies", tasks=listed.replace("</", "<\\/"))
    return text


def _agent_spec(delegation: Delegation, agent_id: str, run: SubagentRun, events: AgentEvents,
                dependencies: Sequence[SubagentReport] = ()) -> AgentSpec:
    given = [n for n in delegation.tools if n in run.toolbox]
    extra = [read_findings_tool(dependencies, run.prompts)] if dependencies else []
    tools = Toolbox([run.toolbox.get(n) for n in given] + extra + [submit_findings_tool(run.sources, run.prompts)])
    allowed = given + [t.name for t in extra] + [SUBMIT_FINDINGS]
    context = RequestContext(role=AgentRole.SUBAGENT, agent_id=agent_id, allowed_tools=tuple(allowed),
                             delegation=delegation, dependencies=tuple(dependencies))
    return AgentSpec(
        model=run.model, system=run.prompts.render("subagent_system", tools=", ".join(allowed)), toolbox=tools,
        allowed=allowed, tool_ctx=ToolContext(agent_id=agent_id, sources=run.sources), events=events,
        context=lambda: context,
        limits=Limits(max_tool_calls=delegation.budget.max_tool_calls, max_tokens=delegation.budget.max_tokens,
                      exempt=frozenset({SUBMIT_FINDINGS})),
        max_tokens=run.max_tokens, context_hook=run.context_hook, continue_prompt=run.prompts.render("continue"),
        ledger=run.ledger)


def _findings_of(state: LoopState) -> Findings:
    """The submitted findings (at most partial when a budget cut the work short), or what is left."""
    if not isinstance(state.terminal, Findings):
        status = FindingsStatus.PARTIAL if state.tool_calls else FindingsStatus.FAILED
        return Findings(status=status, summary=state.final_text.strip()[:2000],
                        open_questions=[f"The subagent returned no structured findings ({state.stop})."])
    findings = state.terminal
    if not (state.stop and state.stop.finished) and findings.status is FindingsStatus.OK:
        findings = findings.model_copy(update={"status": FindingsStatus.PARTIAL})
    return findings


async def run_subagent(delegation: Delegation, *, agent_id: str, run: SubagentRun, events: AgentEvents,
                       round_no: int | None = None, dependencies: Sequence[SubagentReport] = ()) -> SubagentResult:
    spec = _agent_spec(delegation, agent_id, run, events, dependencies)
    state = LoopState(messages=[])
    result = SubagentResult(agent_id, delegation, Findings(status=FindingsStatus.FAILED), AgentStatus.FAILED,
                            started=events.clock.now(), model=run.model.name)
    events.emit(AgentStarted(role=AgentRole.SUBAGENT, model=run.model.name, allowed_tools=list(spec.allowed),
                             round=round_no, delegation=delegation, prompts=run.prompts.manifest()))
    try:
        await _work(spec, state, delegation, run.prompts, dependencies)
        result.stop = str(state.stop)
        result.findings = _findings_of(state)
        result.status = AgentStatus(result.findings.status.value)
    except Exception as e:  # a failing subagent reports; it never takes its siblings down
        result.status, result.error = AgentStatus.FAILED, f"{type(e).__name__}: {e}"
        result.retryable = isinstance(e, ModelError) and not isinstance(e, ModelAuthError)
        result.findings = Findings(status=FindingsStatus.FAILED, open_questions=[f"Subagent failed: {result.error}"])
        events.emit(AgentFailed(result.error, traceback.format_exc(limit=8)))
    except BaseException as e:  # cancelled or interrupted: record, then let it propagate
        result.status, result.stop = AgentStatus.INTERRUPTED, type(e).__name__
        _fill(result, state, events)
        events.emit(AgentEnded(AgentStatus.INTERRUPTED, result.stop, None, state.usage, state.tool_calls,
                               state.turns))
        raise
    _fill(result, state, events)
    events.emit(FindingsSubmitted(result.findings))
    events.emit(AgentEnded(result.status, result.stop, result.error, result.usage, result.tool_calls, result.turns))
    return result


def _fill(result: SubagentResult, state: LoopState, events: AgentEvents) -> None:
    result.usage, result.calls = state.usage, state.calls
    result.tool_calls, result.turns = state.tool_calls, state.turns
    result.tool_errors, result.tool_successes = dict(state.tool_errors), dict(state.tool_successes)
    result.ended = events.clock.now()


async def _work(spec: AgentSpec, state: LoopState, delegation: Delegation, prompts: PromptSet,
                dependencies: Sequence[SubagentReport] = ()) -> None:
    add_message(state, spec.events, Message("user", [TextBlock(_task_message(delegation, prompts, dependencies))]))
    own = trio.current_time() + delegation.budget.max_seconds
    run_deadline = spec.ledger.deadline_at() if spec.ledger is not None else float("inf")
    with trio.move_on_at(min(own, run_deadline)) as scope:
        await agent_loop(spec, state)
    if scope.cancelled_caught:
        state.stop = LoopStop.RUN_BUDGET if run_deadline <= own else LoopStop.TIME_BUDGET
        if spec.ledger is not None:
            spec.ledger.check()
        spec.events.emit(BudgetExhausted("run_budget:deadline" if state.stop is LoopStop.RUN_BUDGET else
                                         LoopStop.TIME_BUDGET.value, None, delegation.budget.max_seconds
                                         if state.stop is LoopStop.TIME_BUDGET else None))
    if state.terminal is None:
        await _wrap_up(spec, state, prompts)


async def _wrap_up(spec: AgentSpec, state: LoopState, prompts: PromptSet) -> None:
    """Budget gone (or the model stopped without submitting): ask once for findings, tools off but submit."""
    reason = str(state.stop or "stopped")
    _answer_pending_calls(spec, state, reason)
    note = TextBlock(prompts.render("subagent_wrapup", reason=reason))
    if state.messages and state.messages[-1].role == "user":
        # A dangling user message (tool results) must be answered by the assistant first; merge the note in.
        state.messages[-1].content.append(note)
        spec.events.emit(MessageAdded("user", [note]))
    else:
        add_message(state, spec.events, Message("user", [note]))
    stop = state.stop
    base = spec.context()
    past_the_line = spec.ledger is not None and spec.ledger.stopped  # one call only: the run's budget is spent
    wrap = AgentSpec(
        model=spec.model, system=spec.system, toolbox=spec.toolbox, allowed=[SUBMIT_FINDINGS], tool_ctx=spec.tool_ctx,
        events=spec.events,
        context=lambda: RequestContext(role=base.role, agent_id=base.agent_id, allowed_tools=(SUBMIT_FINDINGS,),
                                       delegation=base.delegation, wrap_up=True, dependencies=base.dependencies),
        limits=Limits(max_turns=state.turns + (1 if past_the_line else 2), exempt=frozenset({SUBMIT_FINDINGS})),
        max_tokens=spec.max_tokens, tool_choice=ToolChoice.tool(SUBMIT_FINDINGS), continue_prompt=spec.continue_prompt,
        ledger=spec.ledger, wrap_up=True)
    with trio.move_on_after(WRAPUP_SECONDS):
        await agent_loop(wrap, state)
    state.stop = stop


def _answer_pending_calls(spec: AgentSpec, state: LoopState, reason: str) -> None:
    """Cut off mid-turn: every tool_use needs its tool_result."""
    last = state.messages[-1] if state.messages else None
    if last is None or last.role != "assistant":
        return
    pending = [b for b in last.content if isinstance(b, ToolUseBlock)]
    if pending:
        add_message(state, spec.events, Message("user", [
            ToolResultBlock(b.id, f"Not run: {reason}.", is_error=True) for b in pending]))
