"""The lead agent's run: plan by calling `delegate`, run each round's subagents in a trio nursery
under a CapacityLimiter, hand the findings back, allow gap rounds up to the cap, then take the
lead's final text as the draft report, check its citations and write everything to the run dir.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field

from typing import Any, Callable

import trio

from subagents.loop import ContextHook, Limits, LoopState, add_message, agent_loop
from subagents.model import Message, Model, TextBlock, Usage
from subagents.prompting import PromptSet
from subagents.schemas import Delegation
from subagents.sources import SourceRegistry
from subagents.tools import Tool, ToolContext, ToolError, Toolbox
from subagents.worker import SubagentResult, run_subagent

from .citations import CitationCheck, check_citations
from .delegation import Plan, plan_problems
from .rundir import RunDir, now_iso

LEAD_ID = "lead"
DELEGATE_TOOL = "delegate"
Progress = Callable[[str], None]


@dataclass
class RunSettings:
    question: str
    max_subagents: int = 5
    max_rounds: int = 2
    concurrency: int = 4
    lead_max_tokens: int = 8192
    subagent_max_tokens: int = 4096
    lead_max_turns: int = 12


@dataclass
class RunState:
    """Everything the manifest reports, updated as the run goes."""

    plans: list[dict[str, Any]] = field(default_factory=list)
    results: list[tuple[int, SubagentResult]] = field(default_factory=list)  # (round, result)
    lead_usage: Usage = field(default_factory=Usage)
    lead_calls: list[dict[str, Any]] = field(default_factory=list)
    citation: CitationCheck | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)


def findings_for_lead(results: list[SubagentResult], sources: SourceRegistry) -> dict[str, Any]:
    out = []
    cited: dict[str, str] = {}
    for r in results:
        f = r.findings
        for c in f.claims:
            for sid in c.source_ids:
                src = sources.get(sid)
                if src is not None:
                    cited[sid] = src.title
        out.append({"agent_id": r.agent_id, "objective": r.delegation.objective, "status": r.status,
                    "summary": f.summary, "claims": [c.model_dump() for c in f.claims],
                    "open_questions": f.open_questions, "error": r.error})
    return {"subagents": out, "sources": cited}


class Lead:
    def __init__(self, *, settings: RunSettings, run: RunDir, lead_model: Model, subagent_model: Model,
                 toolbox: Toolbox, sources: SourceRegistry, prompts: PromptSet, state: RunState,
                 progress: Progress, context_hook: ContextHook | None = None,
                 on_round: Callable[[], None] = lambda: None, estimate: bool = False) -> None:
        self.s = settings
        self.run = run
        self.lead_model = lead_model
        self.subagent_model = subagent_model
        self.toolbox = toolbox
        self.sources = sources
        self.prompts = prompts
        self.state = state
        self.progress = progress
        self.context_hook = context_hook
        self.on_round = on_round
        self.estimate = estimate
        self.estimated: dict[str, Any] | None = None

    def tool_catalogue(self) -> str:
        return "\n".join(f"- {spec.name}: {spec.description}" for spec in self.toolbox.specs())

    async def delegate(self, plan: Plan, ctx: ToolContext) -> str:
        round_no = len(self.state.plans) + 1
        if round_no > self.s.max_rounds:
            raise ToolError(f"no delegation rounds left (the limit is {self.s.max_rounds}); write the final report now")
        problems = plan_problems(plan, tool_names=self.toolbox.names(), max_subagents=self.s.max_subagents)
        if problems:
            raise ToolError("plan rejected: " + "; ".join(problems))
        agent_ids = [f"r{round_no}-sub{i}" for i in range(1, len(plan.tasks) + 1)]
        record = {"version": round_no, "round": round_no, "created_at": now_iso(), "query_type": plan.query_type,
                  "rationale": plan.rationale,
                  "tasks": [{"agent_id": a, **t.model_dump()} for a, t in zip(agent_ids, plan.tasks)]}
        self.state.plans.append(record)
        self.run.write_plan(round_no, record)
        if self.estimate:
            self.estimated = self.make_estimate(plan, agent_ids)
            return "Estimate recorded: no subagents were run. Stop now; no report is needed."
        self.progress(f"round {round_no}: {len(plan.tasks)} subagent(s) [{plan.query_type}] — {plan.rationale}")
        results = await self.run_round(round_no, list(zip(agent_ids, plan.tasks)))
        self.on_round()
        rounds_left = self.s.max_rounds - round_no
        return self.prompts.render(
            "lead_findings", round=round_no, rounds_left=rounds_left,
            # "</" escaped (valid JSON): retrieved text quoted in a claim cannot close the <findings> tag
            findings_json=json.dumps(findings_for_lead(results, self.sources), indent=1,
                                     ensure_ascii=False).replace("</", "<\\/"),
        )

    def make_estimate(self, plan: Plan, agent_ids: list[str]) -> dict[str, Any]:
        from subagents.tokens import estimate_tokens

        from .estimate import estimate_plan

        specs = [vars(spec) for spec in self.toolbox.specs()]
        lead_prefix = estimate_tokens(self.prompts.render("lead_system", max_subagents=self.s.max_subagents,
                                                          max_rounds=self.s.max_rounds, tools=self.tool_catalogue()))
        return estimate_plan(
            plan, agent_ids=agent_ids, subagent_system=self.prompts.render("subagent_system", tools="…"),
            tool_schema_json=json.dumps(specs), lead_prefix_tokens=lead_prefix,
            lead_model=self.lead_model.name, subagent_model=self.subagent_model.name,
        )

    async def run_round(self, round_no: int, tasks: list[tuple[str, Delegation]]) -> list[SubagentResult]:
        limiter = trio.CapacityLimiter(self.s.concurrency)
        results: dict[str, SubagentResult] = {}
        interrupted: list[SubagentResult] = []
        started = self.run.clock.now()

        async def one(agent_id: str, delegation: Delegation) -> None:
            async with limiter:
                transcript = self.run.transcript(agent_id, LEAD_ID)
                self.progress(f"  {agent_id} started: {delegation.objective[:90]}")
                res = await run_subagent(
                    delegation, agent_id=agent_id, model=self.subagent_model, toolbox=self.toolbox,
                    sources=self.sources, prompts=self.prompts, transcript=transcript,
                    max_tokens=self.s.subagent_max_tokens, context_hook=self.context_hook,
                    on_interrupt=interrupted.append,
                )
                transcript.close()
                results[agent_id] = res
                extra = f" — {res.error}" if res.error else ""
                self.progress(f"  {agent_id} {res.status}: {len(res.findings.claims)} claim(s), "
                              f"{res.tool_calls} tool call(s){extra}")

        try:
            async with trio.open_nursery() as nursery:
                for agent_id, delegation in tasks:
                    nursery.start_soon(one, agent_id, delegation)
        except BaseException:  # interrupted: the manifest still lists (and costs) this round's agents
            done = {**results, **{r.agent_id: r for r in interrupted}}
            self.state.results.extend((round_no, done[a]) for a, _ in tasks if a in done)
            raise
        ordered = [results[a] for a, _ in tasks]
        self.state.results.extend((round_no, r) for r in ordered)
        self.state.rounds.append({"round": round_no, "started": started, "ended": self.run.clock.now(),
                                  "subagents": len(tasks)})
        return ordered

    async def run_lead(self) -> str:
        """The lead's own loop; returns its draft report (final text)."""
        transcript = self.run.transcript(LEAD_ID, None)
        tool = Tool(DELEGATE_TOOL, self.prompts.render("delegate_tool"), Plan, self.delegate)
        lead_tools = Toolbox([tool])
        system = self.prompts.render("lead_system", max_subagents=self.s.max_subagents, max_rounds=self.s.max_rounds,
                                     tools=self.tool_catalogue())
        state = LoopState(messages=[])
        transcript.event("agent_start", {"role": "lead", "model": self.lead_model.name, "question": self.s.question})
        try:
            add_message(state, transcript, Message("user", [TextBlock(self.prompts.render("lead_task", question=self.s.question))]))
            await agent_loop(
                model=self.lead_model, system=system, state=state, toolbox=lead_tools, allowed=[DELEGATE_TOOL],
                ctx=ToolContext(agent_id=LEAD_ID, sources=self.sources), transcript=transcript,
                limits=Limits(max_turns=self.s.lead_max_turns), max_tokens=self.s.lead_max_tokens,
                metadata={"agent_id": LEAD_ID, "role": "lead", "stream": True},
                is_done=lambda: self.estimated is not None,
            )
        except Exception as e:  # the run fails: the lead's transcript says why, like a subagent's
            _end_failed(transcript, state, f"{type(e).__name__}: {e}", traceback.format_exc(limit=8))
            raise
        except BaseException as e:  # cancelled or interrupted: record, then let it propagate
            transcript.event("agent_end", {"status": "interrupted", "reason": type(e).__name__,
                                           "usage": state.usage.to_dict()})
            raise
        finally:
            self.state.lead_usage, self.state.lead_calls = state.usage, state.calls
        if self.estimate:
            if self.estimated is None:
                _end_failed(transcript, state, "the lead made no plan to estimate")
                raise LeadError("the lead made no plan to estimate")
            transcript.event("agent_end", {"status": "estimated", "stop": state.stop, "usage": state.usage.to_dict()})
            return ""
        draft = state.final_text.strip()
        if state.stop not in ("end_turn", "stop_sequence") or not draft:
            error = f"the lead stopped without a report (stop: {state.stop or 'none'})"
            _end_failed(transcript, state, error)
            raise LeadError(error)
        transcript.event("agent_end", {"status": "ok", "stop": state.stop, "usage": state.usage.to_dict()})
        return draft


def _end_failed(transcript: Any, state: LoopState, error: str, tb: str | None = None) -> None:
    transcript.event("error", {"error": error, **({"traceback": tb} if tb else {})})
    transcript.event("agent_end", {"status": "failed", "stop": state.stop, "error": error,
                                   "usage": state.usage.to_dict()})


class LeadError(RuntimeError):
    """The lead could not produce a report."""


def finish_report(draft: str, *, question: str, state: RunState, sources: SourceRegistry,
                  lead_model: Model, subagent_model: Model) -> tuple[str, CitationCheck]:
    """Citation-check the draft and add the header and the gaps section that code, not the model, owns."""
    body, check = check_citations(draft, sources)
    header = []
    if not (lead_model.is_language_model or subagent_model.is_language_model):
        header.append("> **No language model was used.** This report was assembled offline by the extractive "
                      "model: retrieved sentences, ranked and quoted with their sources.\n")
    gaps = [(rnd, r) for rnd, r in state.results if r.status != "ok"]
    tail = []
    if gaps:
        tail += ["", "## What is missing", ""]
        for rnd, r in gaps:
            why = r.error or "; ".join(r.findings.open_questions) or r.stop
            tail.append(f"- {r.agent_id} (round {rnd}, {r.status}): “{r.delegation.objective}” — {why}")
    if not body.lstrip().startswith("#"):
        header.insert(0, f"# {question}\n")
    text = "\n".join(header) + ("\n" if header else "") + body.rstrip() + "\n" + ("\n".join(tail) + "\n" if tail else "")
    return text, check


def usage_summary(state: RunState) -> dict[str, Any]:
    total = state.lead_usage
    for _, r in state.results:
        total = total + r.usage
    return total.to_dict()


def write_sources(run: RunDir, sources: SourceRegistry) -> None:
    sources.save(run.path / "sources.json")


