"""One subagent: a fresh context holding only its delegation, only its allowed tools, a budget.

It returns findings through the `submit_findings` tool, validated like any tool input. When a
budget runs out it is asked once to submit what it has (status at most "partial"); when its
model keeps failing it ends as failed with the error in its transcript. It never raises for
its own failures, so its siblings are never cancelled by them.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import trio

from .loop import ContextHook, Limits, LoopState, add_message, agent_loop
from .model import Message, Model, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from .prompting import PromptSet
from .schemas import Delegation, Findings
from .sources import SourceRegistry
from .tools import Tool, ToolContext, ToolError, Toolbox
from .transcript import Transcript

SUBMIT_TOOL = "submit_findings"
WRAPUP_SECONDS = 30.0


@dataclass
class SubagentResult:
    agent_id: str
    delegation: Delegation
    findings: Findings
    status: str  # ok | partial | failed
    stop: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    calls: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: int = 0
    turns: int = 0
    started: float = 0.0
    ended: float = 0.0
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "objective": self.delegation.objective,
            "status": self.status,
            "stop": self.stop,
            "error": self.error,
            "model": self.model,
            "usage": self.usage.to_dict(),
            "calls": self.calls,
            "tool_calls": self.tool_calls,
            "turns": self.turns,
            "started": self.started,
            "ended": self.ended,
            "claims": len(self.findings.claims),
        }


class _FindingsBox:
    def __init__(self) -> None:
        self.findings: Findings | None = None


def submit_findings_tool(box: _FindingsBox, sources: SourceRegistry) -> Tool:
    async def run(args: Findings, ctx: ToolContext) -> str:
        unknown = sorted({sid for c in args.claims for sid in c.source_ids if sid not in sources})
        if unknown:
            raise ToolError(
                f"unknown source ids {', '.join(unknown)}: cite only ids returned by your tools in this task"
            )
        box.findings = args
        return "Findings recorded. You are done."

    return Tool(
        SUBMIT_TOOL,
        "Return your findings to the lead agent. Call it once, at the end. Every claim must cite the ids "
        "(S1, S2, …) of sources your tools returned.",
        Findings,
        run,
    )


async def run_subagent(
    delegation: Delegation,
    *,
    agent_id: str,
    model: Model,
    toolbox: Toolbox,
    sources: SourceRegistry,
    prompts: PromptSet,
    transcript: Transcript,
    max_tokens: int = 4096,
    context_hook: ContextHook | None = None,
    tool_options: dict[str, Any] | None = None,
    on_interrupt: Callable[[SubagentResult], None] | None = None,
) -> SubagentResult:
    box = _FindingsBox()
    tools = Toolbox([toolbox.get(n) for n in delegation.tools if n in toolbox] + [submit_findings_tool(box, sources)])
    allowed = [n for n in delegation.tools if n in toolbox] + [SUBMIT_TOOL]
    ctx = ToolContext(agent_id=agent_id, sources=sources, options=dict(tool_options or {}))
    system = prompts.render("subagent_system", tools=", ".join(allowed))
    task = prompts.render(
        "subagent_task",
        objective=delegation.objective,
        # "</" escaped (valid JSON): text in the delegation cannot close the <delegation> tag
        delegation_json=json.dumps(delegation.model_dump(), indent=1, ensure_ascii=False).replace("</", "<\\/"),
    )
    state = LoopState(messages=[])
    started = transcript.clock.now()
    transcript.event("agent_start", {"role": "subagent", "model": model.name, "delegation": delegation.model_dump(),
                                    "allowed_tools": allowed, "prompts": prompts.manifest()})
    limits = Limits(max_tool_calls=delegation.budget.max_tool_calls, max_tokens=delegation.budget.max_tokens,
                    exempt=frozenset({SUBMIT_TOOL}))
    result = SubagentResult(agent_id, delegation, Findings(status="failed"), "failed", started=started, model=model.name)
    try:
        add_message(state, transcript, Message("user", [TextBlock(task)]))
        with trio.move_on_after(delegation.budget.max_seconds) as scope:
            await agent_loop(
                model=model, system=system, state=state, toolbox=tools, allowed=allowed, ctx=ctx,
                transcript=transcript, limits=limits, max_tokens=max_tokens,
                is_done=lambda: box.findings is not None, context_hook=context_hook,
                metadata={"agent_id": agent_id, "role": "subagent"},
            )
        if scope.cancelled_caught:
            state.stop = "time_budget"
        if box.findings is None:
            await _wrap_up(state, model, system, tools, ctx, transcript, prompts, box, max_tokens)
        result.stop = state.stop
        if box.findings is None:
            result.findings = Findings(status="partial" if state.tool_calls else "failed",
                                       summary=state.final_text.strip()[:2000],
                                       open_questions=[f"The subagent returned no structured findings ({state.stop})."])
        else:
            result.findings = box.findings
            exhausted = state.stop not in ("done", "end_turn")
            if exhausted and result.findings.status == "ok":
                result.findings = result.findings.model_copy(update={"status": "partial"})
        result.status = result.findings.status
    except Exception as e:  # a failing subagent reports; it never takes its siblings down
        result.status = "failed"
        result.error = f"{type(e).__name__}: {e}"
        result.findings = Findings(status="failed", summary="", open_questions=[f"Subagent failed: {result.error}"])
        transcript.event("error", {"error": result.error, "traceback": traceback.format_exc(limit=8)})
    except BaseException as e:  # cancelled or interrupted: record, then let it propagate
        transcript.event("agent_end", {"status": "interrupted", "reason": type(e).__name__})
        result.status, result.stop = "interrupted", type(e).__name__
        if on_interrupt is not None:  # the caller still accounts for its usage (filled in below)
            on_interrupt(result)
        raise
    finally:
        result.usage, result.calls = state.usage, state.calls
        result.tool_calls, result.turns = state.tool_calls, state.turns
        result.ended = transcript.clock.now()
    transcript.event("findings", result.findings.model_dump())
    transcript.event("agent_end", {"status": result.status, "stop": result.stop, "error": result.error,
                                   "usage": result.usage.to_dict(), "tool_calls": result.tool_calls})
    return result


async def _wrap_up(state: LoopState, model: Model, system: str, tools: Toolbox, ctx: ToolContext,
                   transcript: Transcript, prompts: PromptSet, box: _FindingsBox, max_tokens: int) -> None:
    """Budget gone (or the model stopped without submitting): ask once for findings, tools off but submit."""
    reason = state.stop or "stopped"
    last = state.messages[-1] if state.messages else None
    if last is not None and last.role == "assistant":
        pending = [b for b in last.content if isinstance(b, ToolUseBlock)]
        if pending:  # cut off mid-turn: every tool_use needs its tool_result
            add_message(state, transcript, Message("user", [
                ToolResultBlock(b.id, f"Not run: {reason}.", is_error=True) for b in pending]))
    if state.messages and state.messages[-1].role == "user":
        # A dangling user message (tool results) must be answered by the assistant first; merge a note in.
        state.messages[-1].content.append(TextBlock(prompts.render("subagent_wrapup", reason=reason)))
        transcript.event("message", {"role": "user", "content": [{"type": "text", "text": "(wrap-up note appended)"}]})
    else:
        add_message(state, transcript, Message("user", [TextBlock(prompts.render("subagent_wrapup", reason=reason))]))
    stop = state.stop
    with trio.move_on_after(WRAPUP_SECONDS):
        await agent_loop(
            model=model, system=system, state=state, toolbox=tools, allowed=[SUBMIT_TOOL], ctx=ctx,
            transcript=transcript, limits=Limits(max_turns=state.turns + 2, exempt=frozenset({SUBMIT_TOOL})), max_tokens=max_tokens,
            tool_choice=SUBMIT_TOOL, is_done=lambda: box.findings is not None,
            metadata={"agent_id": ctx.agent_id, "role": "subagent", "wrap_up": True},
        )
    state.stop = stop
