"""The judge: a language model scoring reports through typed tool calls, validated like every other.

- Rubric: one call per report, `submit_rubric` with five criteria (factual accuracy, citation
  accuracy, completeness, source quality, tool efficiency), each a score in [0, 1] and a one-line reason.
- Pairwise: for one question, the two variants' reports are shown as A and B, then again with the
  positions swapped; the preference counts only when both calls agree (else it is a tie).

Prompts live in `prompts/judge/`. Every judge call is an agent loop on the experiment's judge event
bus, so each judgment is a transcript (`judge/agents/<judge id>.jsonl`) and its cost is counted on
its own. Finished judgments are appended to `judge/judgments.jsonl`; `--resume` does not redo them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field

from subagents.context import AgentRole, AgentStatus, JudgeKind, Judging, RequestContext
from subagents.events import AgentEnded, AgentFailed, AgentStarted, EventBus, MessageAdded
from subagents.loop import AgentSpec, Limits, LoopState, agent_loop
from subagents.model import Message, Model, TextBlock, ToolChoice
from subagents.models.pricing import add_costs, cost
from subagents.prompting import JUDGE_PROMPTS, PromptSet
from subagents.sources import SourceRegistry
from subagents.tool_names import SUBMIT_PREFERENCE, SUBMIT_RUBRIC
from subagents.tools import Tool, ToolContext, Toolbox

CRITERIA = ("factual_accuracy", "citation_accuracy", "completeness", "source_quality", "tool_efficiency")
JUDGMENTS = "judgments.jsonl"
MAX_TURNS = 3  # a judgment whose tool input fails validation is asked again, twice at most
REPORT_CHARS = 30_000  # longer reports are cut (the judge is told)


class Score(BaseModel):
    model_config = ConfigDict(extra="forbid")
    score: float = Field(ge=0, le=1, description="0 worst, 1 best.")
    reason: str = Field(min_length=1, max_length=400, description="One line.")


class Rubric(BaseModel):
    """Input of `submit_rubric`."""

    model_config = ConfigDict(extra="forbid")
    factual_accuracy: Score
    citation_accuracy: Score
    completeness: Score
    source_quality: Score
    tool_efficiency: Score

    def scores(self) -> dict[str, float]:
        return {c: getattr(self, c).score for c in CRITERIA}


class Preference(BaseModel):
    """Input of `submit_preference`."""

    model_config = ConfigDict(extra="forbid")
    winner: Literal["A", "B", "tie"] = Field(description="The better report, or tie.")
    reason: str = Field(min_length=1, max_length=400, description="One line.")


@dataclass
class Judgment:
    key: str
    judge_id: str
    result: dict[str, Any] | None  # the validated tool input
    error: str | None
    cost_usd: float | None
    usage: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def _clip(report: str) -> str:
    return report if len(report) <= REPORT_CHARS else report[:REPORT_CHARS] + "\n[… report cut for the judge]"


class Judge:
    """Runs judgments on one event bus (the experiment's judge directory) with one model."""

    def __init__(self, model: Model, bus: EventBus, store: Path) -> None:
        self.model = model
        self.bus = bus
        self.store = store  # judgments.jsonl
        self.prompts = PromptSet(JUDGE_PROMPTS, allow_reserved=True)
        self.done: dict[str, Judgment] = {}
        for line in store.read_text(encoding="utf-8").splitlines() if store.is_file() else []:
            try:
                j = Judgment(**json.loads(line))
            except (ValueError, TypeError):
                continue
            if j.result is not None:
                self.done[j.key] = j

    def _reference(self, answers: tuple[str, ...]) -> str:
        return self.prompts.render("reference", answers=" | ".join(answers)) if answers else ""

    async def rubric(self, key: str, question: str, report: str, answers: tuple[str, ...],
                     effort: str) -> Judgment:
        task = self.prompts.render("rubric_task", question=question, reference=self._reference(answers),
                                   effort=effort, report=_clip(report))
        judging = Judging(JudgeKind.RUBRIC, (report,), answers)
        return await self._judge(key, f"rubric-{key}", SUBMIT_RUBRIC, Rubric, "rubric", task, question, judging)

    async def prefer(self, key: str, question: str, report_a: str, report_b: str,
                     answers: tuple[str, ...]) -> Judgment:
        task = self.prompts.render("pairwise_task", question=question, reference=self._reference(answers),
                                   report_a=_clip(report_a), report_b=_clip(report_b))
        judging = Judging(JudgeKind.PAIRWISE, (report_a, report_b), answers)
        return await self._judge(key, f"pair-{key}", SUBMIT_PREFERENCE, Preference, "pairwise", task, question,
                                 judging)

    async def _judge(self, key: str, judge_id: str, tool_name: str, args: type[BaseModel], prompt: str, task: str,
                     question: str, judging: Judging) -> Judgment:
        if key in self.done:
            return self.done[key]
        judge_id = self._fresh_id(judge_id)
        events = self.bus.agent(judge_id)

        async def record(_: BaseModel, ctx: ToolContext) -> str:
            return "Recorded."

        tool = Tool(tool_name, self.prompts.render(f"{prompt}_tool"), args, record, terminal=True)
        context = RequestContext(role=AgentRole.JUDGE, agent_id=judge_id, allowed_tools=(tool_name,),
                                 question=question, judging=judging)
        spec = AgentSpec(model=self.model, system=self.prompts.render(f"{prompt}_system"), toolbox=Toolbox([tool]),
                         allowed=[tool_name], tool_ctx=ToolContext(judge_id, SourceRegistry()), events=events,
                         context=lambda: context, limits=Limits(max_turns=MAX_TURNS), max_tokens=2048,
                         tool_choice=ToolChoice.tool(tool_name))
        state = LoopState(messages=[Message("user", [TextBlock(task)])])
        events.emit(AgentStarted(role=AgentRole.JUDGE, model=self.model.name, allowed_tools=[tool_name],
                                 question=question, prompts=self.prompts.manifest()))
        events.emit(MessageAdded("user", [TextBlock(task)]))
        error = None
        try:
            await agent_loop(spec, state)
            if state.terminal is None:
                error = f"the judge gave no valid {tool_name} call (stop: {state.stop})"
        except Exception as e:  # a failing judgment is recorded; the experiment goes on
            error = f"{type(e).__name__}: {e}"
            events.emit(AgentFailed(error))
        status = AgentStatus.OK if error is None else AgentStatus.FAILED
        events.emit(AgentEnded(status, str(state.stop or ""), error, state.usage, state.tool_calls, state.turns))
        result = state.terminal.model_dump() if error is None and state.terminal is not None else None
        j = Judgment(key, judge_id, result, error, add_costs(*(cost(c.usage, c.model) for c in state.calls)),
                     state.usage.to_dict())
        with open(self.store, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(j.to_json(), ensure_ascii=False) + "\n")
        if result is not None:
            self.done[key] = j
        return j

    def _fresh_id(self, judge_id: str) -> str:
        """A judgment redone on resume gets its own transcript."""
        agents = self.store.parent / "agents"
        n, candidate = 1, judge_id
        while (agents / f"{candidate}.jsonl").exists():
            n += 1
            candidate = f"{judge_id}-{n}"
        return candidate


def pair_outcome(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> str | None:
    """Two pairwise judgments of (a, b) shown as A/B, then as B/A: "a", "b" or "tie" (disagreement is a
    tie); None when either judgment failed."""
    if first is None or second is None:
        return None
    one = {"A": "a", "B": "b"}.get(first["winner"], "tie")
    two = {"A": "b", "B": "a"}.get(second["winner"], "tie")
    return one if one == two else "tie"
