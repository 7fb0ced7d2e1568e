"""What a run does, as one stream of typed events.

Every event is a frozen dataclass with a `kind`. An `EventBus` stamps each one with its identity
(run, agent, parent, per-agent sequence number, model turn, wall-clock and run-relative time) into
an `EventRecord` and hands it to every observer: the JSONL transcript writer, the manifest keeper,
live progress, a caller's own. One serializer (`EventRecord.to_json` / `from_json`) turns records
into the transcript lines and back into typed objects; `runs/README.md` documents these types
(a test keeps it in step with `event_reference()`).
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import StrEnum
from functools import lru_cache
from typing import Any, Callable, ClassVar, Mapping, Protocol

from pydantic import TypeAdapter

from .context import AgentRole, AgentStatus, FailureCause, Strategy  # noqa: F401  (re-exported)
from .delegation import Delegation, Findings, QueryType
from .model import Block, RetryNotice, Usage
from .storage import StorageError

SCHEMA_VERSION = 2


class RunStatus(StrEnum):

    RUNNING = "running"
    COMPLETED = "completed"  # a report written from at least one subagent's claims
    COMPLETED_EMPTY = "completed_empty"  # a report written, but no subagent returned a claim
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    ESTIMATED = "estimated"
    AWAITING_APPROVAL = "awaiting_approval"  # --plan-only: the plan waits for `research approve` / `reject`
    REJECTED = "rejected"  # a person refused the plan; nothing more runs


class ReviewDecision(StrEnum):
    APPROVED = "approved"
    EDITED = "edited"
    REJECTED = "rejected"
    DEFERRED = "deferred"  # left for later: the run stops awaiting approval


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = ""


# ---------------------------------------------------------------- the run


@dataclass(frozen=True)
class RunStarted(Event):
    """The run directory exists: the question, the settings in force, the models."""

    kind: ClassVar[str] = "run_start"
    question: str
    run_dir: str
    lead_model: str
    subagent_model: str
    language_model_used: bool
    options: dict[str, Any] = field(default_factory=dict)
    prompt_variant: str = "default"
    config_file: str | None = None
    corpus: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CorpusIndexed(Event):
    """A corpus root is indexed (emitted before the run directory exists: progress only)."""

    kind: ClassVar[str] = "corpus_indexed"
    root: str
    passages: int
    indexed: int
    unchanged: int
    seconds: float
    skipped: dict[str, int] = field(default_factory=dict)
    embedded: int = 0  # passages given a vector by this indexing
    semantic: str = ""  # the embedding model searches rank by meaning with, or "off (why)"; "" in older runs


@dataclass(frozen=True)
class CorpusIndexing(Event):
    """A corpus root is being indexed: files examined of those to examine (and the pages of a PDF read, `item`
    naming it), then passages embedded of those to embed (`stage`; progress only; sent when indexing takes more
    than a second, then every couple of seconds, so a warm index says nothing)."""

    kind: ClassVar[str] = "corpus_indexing"
    root: str
    done: int
    total: int
    seconds: float
    stage: str = "files"  # files | pages | embedding (subagents.corpus.IndexStage)
    item: str = ""  # the file whose pages are being read (stage pages)


@dataclass(frozen=True)
class CitationChecked(Event):
    """The report's citations were checked against the retrieved text."""

    kind: ClassVar[str] = "citation_check"
    markers: int
    supported: int
    unsupported: int
    unknown: int
    pass_rate: float | None
    issues: list[dict[str, Any]] = field(default_factory=list)
    cited_sources: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReportWritten(Event):
    kind: ClassVar[str] = "report"
    path: str
    chars: int


@dataclass(frozen=True)
class EstimateMade(Event):
    """--estimate: what the plan would cost; no subagent ran."""

    kind: ClassVar[str] = "estimate"
    estimate: dict[str, Any]


@dataclass(frozen=True)
class RunBudgetReached(Event):
    """A run budget was reached (max_cost, max_tokens, deadline): no new subagents start, running ones
    submit what they have, the lead writes its report."""

    kind: ClassVar[str] = "run_budget"
    budget: str
    used: float
    limit: float


@dataclass(frozen=True)
class RunResumed(Event):
    """The run continues in a new attempt (`research resume` / `approve`): the status it had, and torn
    last lines the kill left (file -> bytes cut)."""

    kind: ClassVar[str] = "run_resumed"
    attempt: int
    previous_status: str
    repaired: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RunEnded(Event):
    kind: ClassVar[str] = "run_end"
    status: RunStatus
    error: str | None = None
    prompts: dict[str, dict[str, str]] = field(default_factory=dict)  # every prompt used: name -> {variant, sha256}


# ---------------------------------------------------------------- agents


@dataclass(frozen=True)
class AgentStarted(Event):
    """An agent starts: its role and model; a subagent's delegation; the lead's question."""

    kind: ClassVar[str] = "agent_start"
    role: AgentRole
    model: str
    allowed_tools: list[str] = field(default_factory=list)
    round: int | None = None
    question: str | None = None
    delegation: Delegation | None = None
    prompts: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> {variant, sha256}


@dataclass(frozen=True)
class AttemptStarted(Event):
    """The first line an agent writes in a resumed attempt; the lines before it are the earlier attempts'."""

    kind: ClassVar[str] = "attempt"
    attempt: int


@dataclass(frozen=True)
class SourceRegistered(Event):
    """A retrieved passage got its source id (or more text): a resumed run rebuilds its sources from these."""

    kind: ClassVar[str] = "source"
    id: str
    key: str
    source_kind: str
    title: str
    locator: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MessageAdded(Event):
    """A message as appended to the agent's conversation."""

    kind: ClassVar[str] = "message"
    role: str
    content: list[Block]


@dataclass(frozen=True)
class ModelRequested(Event):
    kind: ClassVar[str] = "model_request"
    model: str
    system_sha256: str
    tools: list[str]
    tool_choice: str
    max_tokens: int
    n_messages: int


@dataclass(frozen=True)
class ModelResponded(Event):
    kind: ClassVar[str] = "model_response"
    content: list[Block]
    stop_reason: str
    usage: Usage
    model: str
    seconds: float


@dataclass(frozen=True)
class ModelRetried(Event):
    """An adapter retries a call (status or error, attempt, wait in seconds)."""

    kind: ClassVar[str] = "model_retry"
    model: str
    status: int | str
    attempt: int
    wait: float
    error: str

    @classmethod
    def of(cls, notice: RetryNotice) -> "ModelRetried":
        return cls(notice.model, notice.status, notice.attempt, notice.wait, notice.error)


@dataclass(frozen=True)
class ToolCalled(Event):
    """A tool call the model made; `over_budget`: refused without running, the agent's tool-call budget
    being spent (not counted as one of its tool calls)."""

    kind: ClassVar[str] = "tool_call"
    id: str
    name: str
    input: dict[str, Any]
    over_budget: bool = False


@dataclass(frozen=True)
class ToolReturned(Event):
    """A tool's result, exactly as the model saw it; `ran`: false when the tool itself never ran (refused
    over budget or by the allow-list, unknown, or given invalid input): not one of the tool's failures."""

    kind: ClassVar[str] = "tool_result"
    id: str
    name: str
    is_error: bool
    content: str
    seconds: float
    ran: bool = True


@dataclass(frozen=True)
class ContextCondensed(Event):
    """Older tool results were condensed or dropped to fit the context window."""

    kind: ClassVar[str] = "context_condensed"
    notes: list[str]


@dataclass(frozen=True)
class BudgetExhausted(Event):
    """An agent's budget ran out (tool_budget, token_budget, time_budget, max_turns)."""

    kind: ClassVar[str] = "budget"
    budget: str
    used: float | None = None
    limit: float | None = None


@dataclass(frozen=True)
class PlannedTask:
    agent_id: str
    delegation: Delegation


@dataclass(frozen=True)
class PlanAccepted(Event):
    """A plan version passed the schema and policy checks (author: lead, human or replan)."""

    kind: ClassVar[str] = "plan"
    version: int
    round: int
    author: str
    query_type: QueryType
    rationale: str
    tasks: list[PlannedTask]
    diff: str = ""  # unified diff from the previous version's plan file


@dataclass(frozen=True)
class PlanReviewed(Event):
    """A person's decision on a plan before it ran: approved, edited (into `edited_version`), rejected
    or deferred (the run stops awaiting approval)."""

    kind: ClassVar[str] = "plan_review"
    version: int
    round: int
    decision: ReviewDecision
    reason: str = ""
    edited_version: int | None = None


@dataclass(frozen=True)
class ReplanDecided(Event):
    """A task failed or missed its success criteria: the strategy chosen, the cause and the reason;
    a retry or an alternative tool names the agent that runs next (and its tools)."""

    kind: ClassVar[str] = "replan_decision"
    agent_id: str
    strategy: Strategy
    cause: FailureCause
    reason: str
    next_agent_id: str | None = None
    tools: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PlanRejected(Event):
    """A plan was refused; the problems went back to its author."""

    kind: ClassVar[str] = "plan_rejected"
    round: int
    problems: list[str]


class RoundPurpose(StrEnum):
    RESEARCH = "research"  # the first round or a gap round: counts against --max-rounds
    REPLAN = "replan"  # a new plan after failed tasks: counts against --max-replans, not --max-rounds


@dataclass(frozen=True)
class RoundStarted(Event):
    """A round's subagents start; `purpose`: research (the first round or a gap round, bounded by --max-rounds)
    or replan (a new plan after failed tasks, bounded by --max-replans)."""

    kind: ClassVar[str] = "round_start"
    round: int
    agent_ids: list[str]
    purpose: RoundPurpose = RoundPurpose.RESEARCH


@dataclass(frozen=True)
class RoundEnded(Event):
    kind: ClassVar[str] = "round_end"
    round: int
    statuses: dict[str, AgentStatus]


@dataclass(frozen=True)
class FindingsSubmitted(Event):
    """A subagent's findings: status, summary, claims with source ids, open questions."""

    kind: ClassVar[str] = "findings"
    findings: Findings


@dataclass(frozen=True)
class AgentFailed(Event):
    """An error and a short traceback (the agent fails; its siblings go on)."""

    kind: ClassVar[str] = "error"
    error: str
    traceback: str | None = None


@dataclass(frozen=True)
class AgentEnded(Event):
    kind: ClassVar[str] = "agent_end"
    status: AgentStatus
    stop: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    turns: int = 0


@dataclass(frozen=True)
class UnknownEvent(Event):
    """A line of a kind this version does not know (read back as it is)."""

    kind: ClassVar[str] = "unknown"
    raw_kind: str
    data: dict[str, Any]


EVENT_TYPES: tuple[type[Event], ...] = (
    RunStarted, CorpusIndexing, CorpusIndexed, PlanAccepted, PlanRejected, RoundStarted, RoundEnded, AgentStarted, MessageAdded,
    ModelRequested, ModelResponded, ModelRetried, ToolCalled, ToolReturned, ContextCondensed, BudgetExhausted,
    FindingsSubmitted, AgentFailed, AgentEnded, CitationChecked, ReportWritten, EstimateMade, RunEnded,
    PlanReviewed, ReplanDecided, RunBudgetReached, RunResumed, AttemptStarted, SourceRegistered,
)
BY_KIND: Mapping[str, type[Event]] = {t.kind: t for t in EVENT_TYPES}


@lru_cache(maxsize=None)
def _adapter(cls: type[Event]) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class EventRecord:
    """An event with its identity: the unit observers receive and transcripts store."""

    run_id: str
    agent_id: str
    parent_id: str | None
    seq: int
    turn: int
    ts: str  # wall clock, ISO-8601 UTC with milliseconds
    t: float  # seconds since the run started (monotonic, shared by all agents)
    event: Event
    v: int = SCHEMA_VERSION

    @property
    def kind(self) -> str:
        return self.event.raw_kind if isinstance(self.event, UnknownEvent) else self.event.kind

    def data(self) -> dict[str, Any]:
        if isinstance(self.event, UnknownEvent):
            return dict(self.event.data)
        return _scrub(_adapter(type(self.event)).dump_python(self.event, mode="json"))

    def to_json(self) -> dict[str, Any]:
        return {"v": self.v, "run_id": self.run_id, "agent_id": self.agent_id, "parent_id": self.parent_id,
                "seq": self.seq, "turn": self.turn, "kind": self.kind, "ts": self.ts, "t": self.t,
                "data": self.data()}

    @classmethod
    def from_json(cls, line: Mapping[str, Any]) -> "EventRecord":
        kind = str(line.get("kind", ""))
        data = line.get("data") or {}
        etype = BY_KIND.get(kind)
        event: Event
        try:
            event = _adapter(etype).validate_python(data) if etype is not None else UnknownEvent(kind, dict(data))
        except ValueError:  # an older or foreign shape: keep it readable
            event = UnknownEvent(kind, dict(data))
        return cls(run_id=str(line.get("run_id", "")), agent_id=str(line.get("agent_id", "")),
                   parent_id=line.get("parent_id"), seq=int(line.get("seq", 0)), turn=int(line.get("turn", 0)),
                   ts=str(line.get("ts", "")), t=float(line.get("t", 0.0)), event=event, v=int(line.get("v", 1)))


_SECRET_KEY = re.compile(r"(api[_-]?key|authorization|x-api-key|secret|password|token)$", re.I)


def _is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def _scrub(obj: Any) -> Any:
    """Never log secrets: drop string values whose key names a credential."""
    if isinstance(obj, dict):
        return {k: ("[redacted]" if isinstance(k, str) and _is_secret_key(k) and isinstance(v, str) else _scrub(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v) for v in obj]
    return obj


# ---------------------------------------------------------------- the bus


class Observer(Protocol):
    """Anything that wants to see a run as it happens."""

    def on_event(self, record: EventRecord) -> None: ...


class Clock:
    """Shared by all agents of a run so `t` values are comparable across agents. A resumed run's
    clock starts where the earlier attempts' events stopped (`offset`), so `t` keeps growing."""

    def __init__(self, offset: float = 0.0) -> None:
        self.t0 = time.monotonic()
        self.offset = offset

    def restart(self) -> None:
        self.t0 = time.monotonic()

    def now(self) -> float:
        return round(time.monotonic() - self.t0 + self.offset, 6)


RUN_AGENT = "run"  # the agent id of run-level events (run start/end, citation check, report)


class EventBus:
    """One per run: stamps identity on events and delivers them to every observer, in order."""

    def __init__(self, run_id: str, clock: Clock | None = None, *, attempt: int = 1,
                 next_seq: Mapping[str, int] | None = None) -> None:
        self.run_id = run_id
        self.clock = clock or Clock()
        self.attempt = attempt  # > 1 in a resumed run
        self.next_seq = dict(next_seq or {})  # a resumed run: per agent, the seq its next line gets
        self.observers: list[Observer] = []
        self._lock = threading.Lock()
        self._agents: dict[str, AgentEvents] = {}
        self.storage_error: StorageError | None = None  # the first failure to write the run's files
        self.on_storage_error: Callable[[StorageError], None] | None = None  # e.g. stop the run

    def subscribe(self, observer: Observer, *, first: bool = False) -> None:
        """Add an observer; `first` puts it before those already there (writers before viewers)."""
        if first:
            self.observers.insert(0, observer)
        else:
            self.observers.append(observer)

    def agent(self, agent_id: str, parent_id: str | None = None) -> "AgentEvents":
        """The event stream of one agent (the same object for the same id)."""
        with self._lock:
            if agent_id not in self._agents:
                self._agents[agent_id] = AgentEvents(self, agent_id, parent_id, seq=self.next_seq.get(agent_id, 0))
            return self._agents[agent_id]

    def run(self) -> "AgentEvents":
        return self.agent(RUN_AGENT)

    def publish(self, record: EventRecord) -> None:
        """Deliver to every observer, in order; an observer's error is raised after all got the event.

        A `StorageError` (the run's files cannot be written, e.g. a full disk) is kept in
        `storage_error`. With an `on_storage_error` hook (the run sets one that stops the run) the
        hook is called once and nothing is raised here: the agents' own failure handling, which
        emits more events, cannot chain one storage error onto another."""
        error: BaseException | None = None
        for obs in list(self.observers):
            try:
                obs.on_event(record)
            except StorageError as e:
                if self.storage_error is None:
                    self.storage_error = e
                    if self.on_storage_error is not None:
                        self.on_storage_error(e)
                if self.on_storage_error is None:
                    error = error or e
            except Exception as e:
                error = error or e
        if error is not None:
            raise error


class AgentEvents:
    """Emits one agent's events with its identity; `turn` is set by the agent loop."""

    def __init__(self, bus: EventBus, agent_id: str, parent_id: str | None, seq: int = 0) -> None:
        self.bus = bus
        self.agent_id = agent_id
        self.parent_id = parent_id
        self.turn = 0
        self._seq = seq
        # an agent that wrote lines in an earlier attempt marks where this attempt's lines begin
        self._mark_attempt = seq > 0 and bus.attempt > 1 and agent_id != RUN_AGENT
        self._lock = threading.Lock()

    @property
    def clock(self) -> Clock:
        return self.bus.clock

    def emit(self, event: Event) -> EventRecord:
        if self._mark_attempt:
            self._mark_attempt = False
            self.emit(AttemptStarted(self.bus.attempt))
        with self._lock:
            record = EventRecord(
                run_id=self.bus.run_id, agent_id=self.agent_id, parent_id=self.parent_id, seq=self._seq,
                turn=self.turn, ts=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                t=self.bus.clock.now(), event=event)
            self._seq += 1
        self.bus.publish(record)
        return record

    def retry_reporter(self) -> Any:
        """A `ModelRequest.on_retry` that records each retry in this stream."""
        return lambda notice: self.emit(ModelRetried.of(notice))


# ---------------------------------------------------------------- documentation


def event_reference() -> str:
    """The Markdown table of event kinds and their fields (runs/README.md holds a copy)."""
    rows = ["| `kind` | event | fields |", "|---|---|---|"]
    for t in EVENT_TYPES:
        fields = ", ".join(f.name for f in dataclasses.fields(t))
        doc = " ".join((t.__doc__ or "").split())
        rows.append(f"| `{t.kind}` | {t.__name__}{': ' + doc if doc else ''} | {fields} |")
    return "\n".join(rows)
