"""The extractive model as a single agent (role `AgentRole.SINGLE`, the `single` mode's baseline).

A small addition beside the extractive policy, built on its public behaviour only: the single agent's
question becomes one delegation (objective: the question, every tool of the run), the extractive
model is asked what a subagent with that delegation would do next (search, read, or submit its
findings), and submitted findings become the agent's report, each claim cited with its source ids.
Like the rest of the extractive model it reads no prompt text.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..context import AgentRole, RequestContext
from ..delegation import Delegation
from ..model import Model, ModelRequest, ModelResponse, StopReason, TextBlock, Usage
from ..tool_names import SUBMIT_FINDINGS

NO_ANSWER = "The retrieved sources did not yield passages that answer this question."


def as_subagent(ctx: RequestContext) -> RequestContext:
    """The single agent's context seen as one subagent's: the question is the objective."""
    tools = [t for t in ctx.allowed_tools if t != SUBMIT_FINDINGS]
    delegation = Delegation(objective=ctx.question, tools=tools or [SUBMIT_FINDINGS])
    return dataclasses.replace(ctx, role=AgentRole.SUBAGENT, delegation=delegation,
                               allowed_tools=(*tools, SUBMIT_FINDINGS))


def report_of(question: str, findings: dict[str, Any]) -> str:
    """The submitted findings as a cited Markdown report."""
    lines = [f"# {question}", "", "## Answer", ""]
    claims = [c for c in findings.get("claims") or [] if c.get("text") and c.get("source_ids")]
    lines += [f"{c['text']} [{', '.join(c['source_ids'])}]" for c in claims] or [NO_ANSWER]
    open_questions = list(dict.fromkeys(findings.get("open_questions") or []))
    if open_questions:
        lines += ["", "## Open questions", ""] + [f"- {q}" for q in open_questions]
    return "\n".join(lines)


async def complete_single(model: Model, request: ModelRequest) -> ModelResponse:
    """The next step of a single agent: the subagent policy's tool calls, or its findings as the report."""
    ctx = request.context
    assert ctx is not None and ctx.role is AgentRole.SINGLE
    response = await model.complete(dataclasses.replace(request, context=as_subagent(ctx)))
    submitted = [u for u in response.tool_uses() if u.name == SUBMIT_FINDINGS]
    if submitted:
        return ModelResponse([TextBlock(report_of(ctx.question, submitted[0].input))], StopReason.END_TURN,
                             Usage(), model=response.model)
    return response
