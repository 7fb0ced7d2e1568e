"""Resume: continue a run that was interrupted, failed, killed (kill -9) or awaits approval.

State is rebuilt from the run's events (`read_run`), never from the manifest:
  - torn last lines the kill left are cut (a complete line missing only its newline is kept), stray
    `.tmp` files removed, missing plan files rewritten from their events;
  - the sources come back with their ids from the `source` events;
  - subagents that finished are reused as they are; unfinished ones run again under the same agent
    id, their transcript continued after an `attempt` marker (nothing rewritten, no seq reused);
  - the lead continues from its last completed step: its conversation is rebuilt from its
    `message` events, finished rounds are replayed from their events (nothing runs again), a plan
    accepted but not yet (fully) run is run, and a final text already written only needs its report;
  - the budget ledger starts with what the earlier attempts spent (tokens, cost and run time).

`research approve RUN [--plan FILE]` is a resume that carries a person's decision for the plan that
waits; `research reject RUN` ends such a run without running anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from subagents.context import AgentRole, AgentStatus
from subagents.delegation import Findings, FindingsStatus, Plan
from subagents.events import (AgentEnded, Clock, EventBus, MessageAdded, Observer, PlanAccepted,
                              PlanReviewed, ReviewDecision, RunEnded, RunResumed, RunStatus, ToolCalled)
from subagents.model import Message, ToolResultBlock, ToolUseBlock
from subagents.runs import AgentTrace, RunTrace, plan_file, read_run
from subagents.sources import SourceRegistry
from subagents.tool_names import DELEGATE
from subagents.transcript import AGENTS_DIR, RUN_LOG, TranscriptWriter
from subagents.worker import SubagentResult

from .approval import PlanEditError, PlanReview, ReviewReason, Verdict, plan_from_document, read_plan_file
from .manifest import ManifestKeeper
from .orchestrator import LEAD_ID, Lead, PendingRound, ResumePoint
from .rundir import RunDir, RunLocked, plan_record, write_json
from .settings import Settings, UsageError, resolve_settings

RESUMABLE = (RunStatus.RUNNING, RunStatus.INTERRUPTED, RunStatus.FAILED, RunStatus.AWAITING_APPROVAL)
REUSABLE = (AgentStatus.OK, AgentStatus.PARTIAL, AgentStatus.FAILED)


# ---------------------------------------------------------------- the files


def repair_transcripts(path: Path) -> dict[str, int]:
    """Cut a torn last line from every transcript (file -> bytes cut); a last line that is whole JSON
    and only lacks its newline gets the newline. Stray .tmp files of atomic writes are removed."""
    repaired: dict[str, int] = {}
    files = [path / RUN_LOG] + sorted((path / AGENTS_DIR).glob("*.jsonl"))
    for f in files:
        if not f.is_file():
            continue
        data = f.read_bytes()
        if not data or data.endswith(b"\n"):
            continue
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        try:
            json.loads(tail.decode("utf-8"))
            with open(f, "ab") as fh:
                fh.write(b"\n")
        except (ValueError, UnicodeDecodeError):
            with open(f, "r+b") as fh:
                fh.truncate(cut)
            repaired[str(f.relative_to(path))] = len(tail)
    for tmp in path.glob("*.tmp"):
        tmp.unlink()
    return repaired


def rewrite_plan_files(path: Path, trace: RunTrace) -> None:
    """Plan files are derived from the plan events: write any the crash left unwritten."""
    for p in trace.plans:
        target = path / plan_file(p.version)
        if not target.is_file():
            write_json(target, plan_record(p, ""))


def restore_plan_file(path: Path, p: PlanAccepted) -> None:
    """A plan file edited in place (and approved: the edit is the next version) gets its version back."""
    target = path / plan_file(p.version)
    try:
        created = str(json.loads(target.read_text(encoding="utf-8")).get("created_at", ""))
    except (OSError, ValueError, AttributeError):
        created = ""
    write_json(target, plan_record(p, created))


# ---------------------------------------------------------------- the state


def result_of(a: AgentTrace) -> SubagentResult:
    """A finished subagent's result, as its events recorded it (its tool failures counted as the live run
    counted them: only calls its tools ran, see `tally_tool_result`)."""
    assert a.delegation is not None
    findings = a.findings or Findings(status=FindingsStatus.FAILED)
    return SubagentResult(a.agent_id, a.delegation, findings, a.status, stop=a.stop, error=a.error, usage=a.usage,
                          calls=list(a.calls), tool_calls=a.tool_calls, turns=a.turns, started=a.started or 0.0,
                          ended=a.ended or 0.0, model=a.model, tool_errors=dict(a.tool_errors),
                          tool_successes=dict(a.tool_successes))


def plan_of(p: PlanAccepted) -> Plan:
    return Plan(query_type=p.query_type, rationale=p.rationale, tasks=[t.delegation for t in p.tasks])


def lead_conversation(lead: AgentTrace) -> list[Message]:
    """The lead's messages as its events recorded them (consecutive user additions merged)."""
    messages: list[Message] = []
    for rec in sorted(lead.records, key=lambda r: r.seq):
        e = rec.event
        if not isinstance(e, MessageAdded):
            continue
        if messages and e.role == "user" and messages[-1].role == "user":
            messages[-1].content.extend(e.content)
        else:
            messages.append(Message(e.role, list(e.content)))  # type: ignore[arg-type]
    return messages


def delegate_results_seen(messages: Sequence[Message]) -> int:
    """How many rounds' findings the lead has read (successful delegate results in its conversation)."""
    delegate_ids = {b.id for m in messages for b in m.content if isinstance(b, ToolUseBlock) and b.name == DELEGATE}
    return sum(1 for m in messages for b in m.content
               if isinstance(b, ToolResultBlock) and b.tool_use_id in delegate_ids and not b.is_error)


def unanswered(messages: Sequence[Message]) -> list[ToolUseBlock]:
    last = messages[-1] if messages else None
    if last is None or last.role != "assistant":
        return []
    return [b for b in last.content if isinstance(b, ToolUseBlock)]


@dataclass
class Checkpoint:
    """A run read back from its events, ready to continue."""

    run_dir: RunDir  # locked by this process
    trace: RunTrace
    sources: SourceRegistry
    repaired: dict[str, int] = field(default_factory=dict)
    verdict: Verdict | None = None  # a person's decision for the plan that waits (research approve)

    @property
    def previous_status(self) -> RunStatus:
        return self.trace.status

    @property
    def attempt(self) -> int:
        return self.trace.attempt + 1

    def bus(self) -> EventBus:
        """The event bus of the new attempt: the run's id, its clock going on, each agent's seq going on."""
        return EventBus(self.trace.run_id, Clock(offset=self.trace.last_t), attempt=self.attempt,
                        next_seq={a: s + 1 for a, s in self.trace.last_seqs.items()})

    def resumed(self) -> RunResumed:
        return RunResumed(self.attempt, self.previous_status.value, dict(self.repaired))

    def check_verdict(self, tool_names: Sequence[str], max_subagents: int) -> None:
        """An edited plan given to `approve` passes the schema and policy checks before anything runs."""
        if self.verdict is None or not self.trace.plans:
            return
        p = self.trace.plans[-1]
        review = PlanReview(plan_of(p), p.version, p.round, p.author, ReviewReason.FIRST,
                            tool_names=tuple(tool_names), max_subagents=max_subagents)
        try:
            self.verdict = review.check(self.verdict)  # type: ignore[arg-type]
        except PlanEditError as e:
            raise UsageError("the edited plan is refused: " + "; ".join(e.problems)) from None

    async def restore(self, lead: Lead) -> None:
        """Put the lead where its events say it was."""
        t = self.trace
        st = lead.state
        if self.verdict is not None and t.plans:
            restore_plan_file(self.run_dir.path, t.plans[-1])
        st.versions = max((p.version for p in t.plans), default=0)
        st.last_plan = plan_of(t.plans[-1]) if t.plans else None
        st.rejected = len(t.rejections)
        st.verdict = self.verdict
        st.recorded = {d.agent_id: d for d in t.decisions}
        st.reuse = {a.agent_id: result_of(a) for a in t.agents.values()
                    if a.role is AgentRole.SUBAGENT and a.delegation is not None and a.status in REUSABLE}
        st.rounds_started = set(t.rounds)
        st.rounds_ended = {r for r, rt in t.rounds.items() if rt.ended is not None}
        lead_trace = t.agents.get(LEAD_ID)
        if lead_trace is None:
            return  # the lead never started: it starts afresh
        messages = lead_conversation(lead_trace)
        pending_round = self._pending_round(messages)
        for rnd in sorted(self._rounds()):
            if rnd != pending_round:
                await lead.run_plan(self._pending(rnd, approved=True))  # replayed: all reused, nothing emitted
        if pending_round is not None:
            st.pending = self._pending(pending_round, approved=self._approved(pending_round))
        answered = {r.event.id for r in lead_trace.records if isinstance(r.event, ToolCalled)}
        last = messages[-1] if messages else None
        draft = last.text() if last is not None and last.role == "assistant" and not unanswered(messages) else None
        lead.resume_point = ResumePoint(messages, lead_trace.turns, answered, draft)

    def _rounds(self) -> set[int]:
        """Rounds whose plan was accepted and approved (they ran, or ran in part)."""
        return {p.round for p in self.trace.plans if p.round in self.trace.rounds}

    def _pending_round(self, messages: Sequence[Message]) -> int | None:
        """The round whose findings the lead has not read although it asked for them."""
        if not self.trace.plans or not any(u.name == DELEGATE for u in unanswered(messages)):
            return None
        latest = max(p.round for p in self.trace.plans)
        return latest if delegate_results_seen(messages) < latest else None

    def _pending(self, rnd: int, *, approved: bool) -> PendingRound:
        versions = [p for p in self.trace.plans if p.round == rnd]
        first, last = versions[0], versions[-1]
        reason = ReviewReason.REPLAN if first.author == "replan" else \
            ReviewReason.FIRST if rnd == 1 else ReviewReason.GAP
        return PendingRound(rnd, last.version, plan_of(last), first.author, reason, approved=approved)

    def _approved(self, rnd: int) -> bool:
        last = [p for p in self.trace.plans if p.round == rnd][-1]
        if rnd in self.trace.rounds or last.author == "human":
            return True
        return any(r.version == last.version and r.decision in (ReviewDecision.APPROVED, ReviewDecision.EDITED)
                   for r in self.trace.reviews)


# ---------------------------------------------------------------- the entry points


def open_checkpoint(path: Path, *, verdict: Verdict | None = None, allow_awaiting: bool = False) -> Checkpoint:
    """Lock the run, repair its files and read it back. UsageError when it cannot be resumed."""
    if not (path / RUN_LOG).is_file():
        raise UsageError(f"{path} is not a run directory (no {RUN_LOG})")
    run_dir = RunDir.at(path)
    try:
        run_dir.lock()
    except RunLocked as e:
        raise UsageError(f"{e}: wait for it, or stop it, before resuming") from None
    try:
        repaired = repair_transcripts(path)
        run = read_run(path)  # a truncated manifest.json or sources.json is read from the events
        trace = run.trace
        _check_status(trace, allow_awaiting)
        rewrite_plan_files(path, trace)
        sources = trace.source_registry()
        if not trace.sources and run.sources:  # a run from before sources were events (sources.json readable)
            sources = SourceRegistry()
            for s in run.sources:
                sources.restore(source_id=s.id, key=s.key, kind=s.kind, title=s.title, locator=s.locator,
                                text=s.text, meta=s.meta)
        return Checkpoint(run_dir, trace, sources, repaired, verdict)
    except BaseException:
        run_dir.unlock()
        raise


def _check_status(trace: RunTrace, allow_awaiting: bool) -> None:
    status = trace.status
    if trace.started is None:
        raise UsageError(f"run {trace.run_id or '?'} never started: nothing to resume")
    if status is RunStatus.AWAITING_APPROVAL and not allow_awaiting:
        raise UsageError(f"run {trace.run_id} awaits approval of its plan: use `research approve` or "
                         "`research reject`")
    if status is not RunStatus.AWAITING_APPROVAL and allow_awaiting:
        raise UsageError(f"run {trace.run_id} is not awaiting approval (status: {status.value})")
    if status not in RESUMABLE:
        raise UsageError(f"run {trace.run_id} has already ended ({status.value}): nothing to resume")


def settings_for(trace: RunTrace, runs_dir: Path, overrides: Mapping[str, Any],
                 environ: Mapping[str, str] | None) -> Settings:
    """The settings the run was started with (from its run_start event), with `overrides` on top."""
    assert trace.started is not None
    o = dict(trace.started.options)
    budget = o.get("budget") or {}
    approval = o.get("approval", "none")
    options: dict[str, Any] = {
        "question": trace.started.question, "runs_dir": runs_dir, "corpus": o.get("corpus", []),
        "web": o.get("web", False), "max_subagents": o.get("max_subagents"), "max_rounds": o.get("max_rounds"),
        "concurrency": o.get("concurrency"), "prompts": o.get("prompts"), "max_replans": o.get("max_replans"),
        "max_cost": budget.get("max_cost"), "max_tokens": budget.get("max_tokens"),
        "deadline": budget.get("deadline"), "web_cache": o.get("web_cache"),
        "allow_private_network": o.get("allow_private_network"), "cache_dir": o.get("cache_dir"),
        "embedding_model": o.get("embedding_model"),
        "context_window": o.get("context_window"), "provider": o.get("provider"), "base_url": o.get("base_url"),
        "requests_per_minute": o.get("requests_per_minute"), "tokens_per_minute": o.get("tokens_per_minute"),
        "lead_model": trace.started.lead_model, "subagent_model": trace.started.subagent_model,
        "plan_only": approval == "stop" or None, "approve": True if approval == "ask" else None,
    }
    options.update({k: v for k, v in overrides.items() if v is not None})
    if options.get("approve") and options.get("plan_only"):
        options.pop("plan_only" if approval == "ask" else "approve")
    return resolve_settings(options, environ=environ, use_config_file=False)


async def resume(run: Path | str, *, observers: Sequence[Observer] = (), environ: Mapping[str, str] | None = None,
                 verdict: Verdict | None = None, allow_awaiting: bool = False, reviewer: Any = None,
                 **overrides: Any) -> Any:
    """Continue a run (see the module docstring). `overrides` replace recorded settings (models as
    objects in tests); `reviewer` decides later plans when the run was started with an approver.
    Returns a ResearchResult; raises UsageError when the run cannot be resumed (nothing written),
    RunFailed when the resumed run fails."""
    from .api import run_research

    path = Path(run)
    checkpoint = open_checkpoint(path, verdict=verdict, allow_awaiting=allow_awaiting)
    try:
        started = checkpoint.trace.started
        if reviewer is not None and started is not None and started.options.get("approval") == "ask":
            overrides = {**overrides, "approve": overrides.get("approve") or reviewer}
        settings = settings_for(checkpoint.trace, path.parent, overrides, environ)
    except BaseException:
        checkpoint.run_dir.unlock()
        raise
    return await run_research(settings, observers=observers, checkpoint=checkpoint)


def approval_verdict(path: Path, plan: Path | Mapping[str, Any] | None) -> Verdict:
    """The plan `research approve` runs: the given file or document, else the latest plan file as it
    is now on disk (a person may have edited it in place)."""
    if isinstance(plan, Mapping):
        doc: Mapping[str, Any] = plan
    else:
        if plan is None:
            files = sorted(path.glob("plan.v*.json"), key=lambda p: int(p.stem.split(".v")[-1]))
            if not files:
                raise UsageError(f"run {path.name} has no plan to approve")
            plan = files[-1]
        try:
            doc = read_plan_file(Path(plan))
        except PlanEditError as e:
            raise UsageError("; ".join(e.problems)) from None
    try:
        return plan_from_document(doc)
    except PlanEditError as e:
        raise UsageError("the edited plan is refused: " + "; ".join(e.problems)) from None


async def approve(run: Path | str, *, plan: Path | Mapping[str, Any] | None = None,
                  observers: Sequence[Observer] = (), environ: Mapping[str, str] | None = None,
                  **overrides: Any) -> Any:
    """Approve the plan a --plan-only run waits on (edited: `plan` as a file or document, or the latest
    plan file edited in place) and run it."""
    path = Path(run)
    if not (path / RUN_LOG).is_file():
        raise UsageError(f"{path} is not a run directory (no {RUN_LOG})")
    verdict = approval_verdict(path, plan)
    return await resume(path, observers=observers, environ=environ, verdict=verdict, allow_awaiting=True,
                        **overrides)


def reject(run: Path | str, *, reason: str = "", observers: Sequence[Observer] = ()) -> dict[str, Any]:
    """End a run that awaits approval: its plan is rejected, nothing runs. Returns the manifest."""
    path = Path(run)
    checkpoint = open_checkpoint(path, allow_awaiting=True)
    try:
        trace = checkpoint.trace
        bus = checkpoint.bus()
        transcripts = TranscriptWriter(path)
        keeper = ManifestKeeper(checkpoint.run_dir, checkpoint.sources, trace=trace)
        for obs in (keeper, transcripts, *observers):
            bus.subscribe(obs)
        try:
            bus.run().emit(checkpoint.resumed())
            p = trace.plans[-1]
            lead = bus.agent(LEAD_ID)
            lead.emit(PlanReviewed(p.version, p.round, ReviewDecision.REJECTED, reason))
            lead.emit(AgentEnded(AgentStatus.STOPPED, "halted"))
            bus.run().emit(RunEnded(RunStatus.REJECTED, None, dict(trace.prompts)))
        finally:
            transcripts.close()
        return keeper.last
    finally:
        checkpoint.run_dir.unlock()


__all__ = ["Checkpoint", "approve", "approval_verdict", "open_checkpoint", "reject", "repair_transcripts", "resume",
           "settings_for"]
