"""The agent loop's safety paths at its seam (`agent_loop`, `run_subagent`), with a scripted model:
budgets (tokens, tool calls, turns, time) stop an agent, cut-off replies are continued a bounded
number of times, one turn's tool calls run concurrently, and every step is an event in order."""

from __future__ import annotations

import hashlib
import types
from typing import Any

import pytest
import trio
from pydantic import BaseModel

from subagents.context import AgentRole, AgentStatus, RequestContext
from subagents.delegation import Budget, Delegation
from subagents.events import (BudgetExhausted, ContextCondensed, EventBus, EventRecord, FindingsSubmitted,
                              MessageAdded, ModelRequested, ModelResponded, ModelRetried, ToolCalled, ToolReturned)
from subagents.loop import MAX_CONTINUATIONS, AgentSpec, Limits, LoopState, LoopStop, agent_loop
from subagents.model import (Message, ModelResponse, RetryNotice, StopReason, TextBlock, ToolChoice, ToolResultBlock,
                             Usage)
from subagents.models.scripted import ScriptedModel, Step, text, tool_call
from subagents.prompting import PromptSet
from subagents.sources import SourceRegistry
from subagents.tools import Tool, ToolContext, Toolbox
from subagents.worker import SubagentRun, run_subagent


class Q(BaseModel):
    q: str


class Recorder:
    def __init__(self) -> None:
        self.records: list[EventRecord] = []

    def on_event(self, record: EventRecord) -> None:
        self.records.append(record)

    def of(self, kind: type) -> list[Any]:
        return [r.event for r in self.records if isinstance(r.event, kind)]


def make_spec(model: ScriptedModel, *, limits: Limits = Limits(), tools: list[Tool] | None = None,
              **kw: Any) -> tuple[AgentSpec, Recorder]:
    async def echo(args: Q, ctx: ToolContext) -> str:
        return f"result for {args.q}"

    box = Toolbox(tools if tools is not None else [Tool("look", "Look something up.", Q, echo)])
    bus = EventBus("run")
    seen = Recorder()
    bus.subscribe(seen)
    spec = AgentSpec(model=model, system="You research.", toolbox=box, allowed=box.names(),
                     tool_ctx=ToolContext("a", SourceRegistry()), events=bus.agent("a"),
                     context=lambda: RequestContext(AgentRole.SUBAGENT, "a", tuple(box.names())), limits=limits,
                     continue_prompt="Continue exactly where you stopped.", **kw)
    return spec, seen


def start() -> LoopState:
    return LoopState(messages=[Message("user", [TextBlock("Find it.")])])


def looks(n: int, usage: Usage = Usage(10, 10)) -> list[ModelResponse]:
    return [tool_call("look", {"q": f"q{i}"}, usage=usage) for i in range(n)]


# ---------------------------------------------------------------- budgets


async def test_token_budget_stops_the_agent_before_its_next_call() -> None:
    model = ScriptedModel(looks(5, Usage(60, 10)))
    spec, seen = make_spec(model, limits=Limits(max_tokens=100))
    state = await agent_loop(spec, start())
    assert state.stop is LoopStop.TOKEN_BUDGET and len(model.calls) == 2
    [event] = seen.of(BudgetExhausted)
    assert (event.budget, event.used, event.limit) == ("token_budget", 140, 100)


@pytest.mark.parametrize("usage, calls", [(Usage(50, 50), 1), (Usage(50, 49), 2)])
async def test_token_budget_is_reached_at_the_limit_not_past_it(usage: Usage, calls: int) -> None:
    model = ScriptedModel(looks(1, usage) + [text("done")])
    spec, _ = make_spec(model, limits=Limits(max_tokens=100))
    state = await agent_loop(spec, start())
    assert len(model.calls) == calls
    assert state.stop is (LoopStop.TOKEN_BUDGET if calls == 1 else LoopStop.END_TURN)


async def test_output_tokens_count_against_the_budget_too() -> None:
    model = ScriptedModel(looks(3, Usage(1, 60)))
    spec, _ = make_spec(model, limits=Limits(max_tokens=100))
    assert (await agent_loop(spec, start())).stop is LoopStop.TOKEN_BUDGET and len(model.calls) == 2


async def test_tool_budget_refuses_calls_past_it_then_stops() -> None:
    model = ScriptedModel([tool_call("look", {"q": "a"}, ("look", {"q": "b"}), ("look", {"q": "c"})), text("x")])
    spec, seen = make_spec(model, limits=Limits(max_tool_calls=2))
    state = await agent_loop(spec, start())
    results = [b for b in state.messages[-1].content if isinstance(b, ToolResultBlock)]
    assert [r.is_error for r in results] == [False, False, True] and "budget" in results[2].content
    assert state.stop is LoopStop.TOOL_BUDGET and state.tool_calls == 2 and len(model.calls) == 1
    [event] = seen.of(BudgetExhausted)
    assert (event.budget, event.used, event.limit) == ("tool_budget", 2, 2)


async def test_exempt_tools_do_not_count_against_the_tool_budget() -> None:
    async def note(args: Q, ctx: ToolContext) -> str:
        return "noted"

    async def echo(args: Q, ctx: ToolContext) -> str:
        return "ok"

    tools = [Tool("look", "d", Q, echo), Tool("note", "d", Q, note)]
    model = ScriptedModel([tool_call("note", {"q": "1"}, ("note", {"q": "2"}), ("look", {"q": "3"})), text("done")])
    spec, _ = make_spec(model, tools=tools, limits=Limits(max_tool_calls=1, exempt=frozenset({"note"})))
    state = await agent_loop(spec, start())
    results = [b for b in state.messages[2].content if isinstance(b, ToolResultBlock)]
    assert not any(r.is_error for r in results) and state.tool_calls == 1
    assert state.stop is LoopStop.TOOL_BUDGET


async def test_max_turns_stops_a_model_that_never_ends() -> None:
    model = ScriptedModel(looks(10))
    spec, seen = make_spec(model, limits=Limits(max_turns=3))
    state = await agent_loop(spec, start())
    assert state.stop is LoopStop.MAX_TURNS and state.turns == 3 and len(model.calls) == 3
    [event] = seen.of(BudgetExhausted)
    assert (event.budget, event.used, event.limit) == ("max_turns", 3, 3)


# ---------------------------------------------------------------- continuations


async def test_a_reply_cut_by_the_output_limit_is_continued_and_joined() -> None:
    model = ScriptedModel([text("The first half, ", "max_tokens"), text("and the second half.")])
    spec, _ = make_spec(model)
    state = await agent_loop(spec, start())
    assert state.final_text == "The first half, and the second half." and state.stop is LoopStop.END_TURN
    second = model.calls[1].messages
    assert [m.role for m in second] == ["user", "assistant", "user"]
    assert second[1].text() == "The first half, " and second[2].text() == "Continue exactly where you stopped."


async def test_continuations_are_bounded() -> None:
    model = ScriptedModel([text(f"part {i}. ", "max_tokens") for i in range(MAX_CONTINUATIONS + 2)])
    spec, _ = make_spec(model)
    state = await agent_loop(spec, start())
    assert len(model.calls) == MAX_CONTINUATIONS + 1 and state.stop is LoopStop.MAX_TOKENS
    assert state.final_text == "".join(f"part {i}. " for i in range(MAX_CONTINUATIONS + 1))
    assert not state.stop.finished


async def test_a_paused_turn_is_sent_back_as_it_is() -> None:
    model = ScriptedModel([text("Searching the web…", "pause_turn"), text("Found it.")])
    spec, _ = make_spec(model)
    state = await agent_loop(spec, start())
    assert state.stop is LoopStop.END_TURN and state.final_text == "Found it."
    second = model.calls[1].messages
    assert [m.role for m in second] == ["user", "assistant"] and second[-1].text() == "Searching the web…"


async def test_pauses_are_bounded_too() -> None:
    model = ScriptedModel([text("…", "pause_turn") for _ in range(MAX_CONTINUATIONS + 2)])
    spec, _ = make_spec(model)
    state = await agent_loop(spec, start())
    assert len(model.calls) == MAX_CONTINUATIONS + 1 and state.stop is LoopStop.PAUSE_TURN


@pytest.mark.parametrize("reason, stop", [("refusal", LoopStop.REFUSAL), ("stop_sequence", LoopStop.STOP_SEQUENCE),
                                          ("model_context_window_exceeded", LoopStop.CONTEXT_EXCEEDED),
                                          ("other", LoopStop.OTHER)])
async def test_other_stop_reasons_end_the_loop_as_they_are(reason: str, stop: LoopStop) -> None:
    model = ScriptedModel([text("no.", reason)])
    spec, _ = make_spec(model)
    state = await agent_loop(spec, start())
    assert state.stop is stop and state.final_text == "no." and len(model.calls) == 1
    assert stop.finished == (stop is LoopStop.STOP_SEQUENCE)


# ---------------------------------------------------------------- one turn, many calls


async def test_one_turns_tool_calls_run_concurrently(autojump_clock: trio.testing.MockClock) -> None:
    """Each call waits for the other to have started: run one after the other, they would never finish."""
    started = {"a": trio.Event(), "b": trio.Event()}

    async def meet(args: Q, ctx: ToolContext) -> str:
        started[args.q].set()
        other = "b" if args.q == "a" else "a"
        with trio.fail_after(5):
            await started[other].wait()
        return f"met {other}"

    model = ScriptedModel([tool_call("meet", {"q": "a"}, ("meet", {"q": "b"})), text("done")])
    spec, _ = make_spec(model, tools=[Tool("meet", "d", Q, meet)])
    state = await agent_loop(spec, start())
    results = [b for b in state.messages[2].content if isinstance(b, ToolResultBlock)]
    assert [r.content for r in results] == ["met b", "met a"]  # in the order of the calls


async def test_every_step_is_an_event_in_order() -> None:
    model = ScriptedModel([tool_call("look", {"q": "x"}, usage=Usage(7, 3)), text("done", usage=Usage(9, 1))])
    spec, seen = make_spec(model)
    state = await agent_loop(spec, start())
    kinds = [r.kind for r in seen.records]
    assert kinds == ["model_request", "model_response", "message", "tool_call", "tool_result", "message",
                     "model_request", "model_response", "message"]
    assert [r.turn for r in seen.records] == [1, 1, 1, 1, 1, 1, 2, 2, 2]
    assert [r.seq for r in seen.records] == list(range(len(kinds)))
    assert [e.n_messages for e in seen.of(ModelRequested)] == [1, 3]
    assert [e.usage for e in seen.of(ModelResponded)] == [Usage(7, 3), Usage(9, 1)]
    assert state.usage == Usage(16, 4) and [c.usage for c in state.calls] == [Usage(7, 3), Usage(9, 1)]


async def test_the_context_hook_rewrites_the_conversation_and_says_so() -> None:
    def hook(messages: list[Message], system: str, specs: list) -> tuple[list[Message], list[str]]:
        if len(messages) < 3:
            return messages, []
        return [messages[0]], [f"dropped {len(messages) - 1} messages"]

    model = ScriptedModel(looks(1) + [text("done")])
    spec, seen = make_spec(model, context_hook=hook)
    await agent_loop(spec, start())
    assert len(model.calls[1].messages) == 1
    assert [e.notes for e in seen.of(ContextCondensed)] == [["dropped 2 messages"]]


# ---------------------------------------------------------------- a subagent under its budget


def subagent_run(model: ScriptedModel) -> tuple[SubagentRun, EventBus, Recorder]:
    async def search(args: Q, ctx: ToolContext) -> str:
        src = ctx.sources.register(key=f"k:{args.q}", kind="corpus", title=args.q, locator=args.q,
                                   text=f"All about {args.q}.")
        return f"{src.id}: All about {args.q}."

    bus = EventBus("run")
    seen = Recorder()
    bus.subscribe(seen)
    return (SubagentRun(model=model, toolbox=Toolbox([Tool("look", "d", Q, search)]), sources=SourceRegistry(),
                        prompts=PromptSet("default")), bus, seen)


async def test_a_token_budget_stops_a_subagent_which_submits_partial_findings() -> None:
    submit = tool_call("submit_findings", {"status": "ok", "claims": [{"text": "All about a.", "source_ids": ["S1"]}]})
    model = ScriptedModel(looks(5, Usage(600, 0)))
    model.responses.insert(2, submit)  # the wrap-up turn: only submit_findings is offered
    run, bus, seen = subagent_run(model)
    delegation = Delegation(objective="Find a", tools=["look"], budget=Budget(max_tokens=1000))
    result = await run_subagent(delegation, agent_id="sub1", run=run, events=bus.agent("sub1"))
    assert result.stop == "token_budget" and result.status is AgentStatus.PARTIAL
    assert len(model.calls) == 3 and [t.name for t in model.calls[2].tools] == ["submit_findings"]
    assert model.calls[2].context.wrap_up and result.findings.claims[0].source_ids == ["S1"]
    assert [e.budget for e in seen.of(BudgetExhausted)] == ["token_budget"]
    assert seen.of(FindingsSubmitted)[0].findings.status.value == "partial"


async def test_the_time_budget_stops_a_subagent_stuck_in_a_call(autojump_clock: trio.testing.MockClock) -> None:
    model = ScriptedModel([tool_call("look", {"q": "a"}), Step(tool_call("look", {"q": "b"}), delay=3600),
                           tool_call("submit_findings", {"status": "ok", "claims": []})])
    run, bus, _ = subagent_run(model)
    delegation = Delegation(objective="Find a", tools=["look"], budget=Budget(max_seconds=30))
    t0 = trio.current_time()
    result = await run_subagent(delegation, agent_id="sub1", run=run, events=bus.agent("sub1"))
    assert result.stop == "time_budget" and result.status is AgentStatus.PARTIAL
    assert trio.current_time() - t0 == pytest.approx(30)
    assert model.calls[-1].context.wrap_up


# ---------------------------------------------------------------- what the model and the transcript get


class Recording:
    """A model that answers from a queue, reports one retry per call, and keeps each request as sent."""

    name = "recorder"
    is_language_model = True

    def __init__(self, *responses: ModelResponse) -> None:
        self.responses = list(responses)
        self.requests: list[Any] = []

    async def complete(self, request: Any) -> ModelResponse:
        self.requests.append(request)
        request.on_retry(RetryNotice(model="recorder", status=529, attempt=1, wait=0.5, error="busy"))
        return self.responses.pop(0)


async def test_the_request_and_every_event_carry_their_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(10, 1000))
    clock = types.SimpleNamespace(monotonic=lambda: next(ticks) * 0.123456)  # the loop's own clock only
    monkeypatch.setattr("subagents.loop.time", clock)
    first = tool_call("look", {"q": "x"}, ("look", {"q": "y"}), usage=Usage(7, 3))
    model = Recording(first)
    spec, seen = make_spec(model, limits=Limits(max_tool_calls=1), max_tokens=1234, tool_choice=ToolChoice.any(),
                           stream=True)
    state = await agent_loop(spec, start())
    req = model.requests[0]
    assert (req.system, req.max_tokens, req.tool_choice, req.stream) == ("You research.", 1234, ToolChoice.any(), True)
    assert [t.name for t in req.tools] == ["look"] and req.context.agent_id == "a"
    assert [(e.model, e.status, e.wait) for e in seen.of(ModelRetried)] == [("recorder", 529, 0.5)]
    [r1] = seen.of(ModelRequested)
    assert (r1.model, r1.system_sha256, r1.tools, r1.tool_choice, r1.max_tokens, r1.n_messages) == (
        "recorder", hashlib.sha256(b"You research.").hexdigest()[:16], ["look"], "any", 1234, 1)
    [p1] = seen.of(ModelResponded)
    assert (p1.content, p1.stop_reason, p1.usage, p1.model, p1.seconds) == (
        first.content, "tool_use", Usage(7, 3), "recorder", 0.1235)
    assert [(c.model, c.usage, c.seconds) for c in state.calls] == [("recorder", Usage(7, 3), 0.1235)]
    ids = [b.id for b in first.content]
    # one turn's calls run concurrently: their events come in whatever order trio runs them
    assert sorted((e.id, e.name, e.input) for e in seen.of(ToolCalled)) == [(ids[0], "look", {"q": "x"}),
                                                                             (ids[1], "look", {"q": "y"})]
    returned = sorted(seen.of(ToolReturned), key=lambda e: e.id)
    assert [(e.id, e.name, e.is_error, e.content, e.seconds) for e in returned] == [
        (ids[0], "look", False, "result for x", 0.1235),
        (ids[1], "look", True, "Refused: the tool-call budget of this agent is exhausted.", 0.1235)]
    messages = seen.of(MessageAdded)
    assert [m.role for m in messages] == ["assistant", "user"] and messages[0].content == first.content
    assert [b.tool_use_id for b in messages[1].content] == ids
    assert state.messages[1:] == [Message(m.role, m.content) for m in messages]


async def test_an_empty_reply_is_kept_as_empty_text_under_the_model_that_answered() -> None:
    model = Recording(ModelResponse([], StopReason.END_TURN, Usage(1, 1), model="claude-x"))
    spec, seen = make_spec(model)
    state = await agent_loop(spec, start())
    [message] = seen.of(MessageAdded)
    assert (message.role, message.content) == ("assistant", [TextBlock("")])
    assert seen.of(ModelResponded)[0].model == "claude-x" and state.calls[0].model == "claude-x"


async def test_a_terminal_tool_ends_the_loop_done() -> None:
    async def submit(args: Q, ctx: ToolContext) -> str:
        return "recorded"

    model = ScriptedModel([tool_call("submit", {"q": "answer"}), text("never")])
    spec, _ = make_spec(model, tools=[Tool("submit", "d", Q, submit, terminal=True)])
    state = await agent_loop(spec, start())
    assert state.stop is LoopStop.DONE and state.stop.finished and state.terminal == Q(q="answer")


async def test_a_tool_use_stop_without_tool_calls_ends_as_other() -> None:
    model = ScriptedModel([text("I meant to call a tool", "tool_use")])
    spec, _ = make_spec(model)
    assert (await agent_loop(spec, start())).stop is LoopStop.OTHER


async def test_with_no_tool_calls_left_the_model_still_gets_its_turn() -> None:
    model = ScriptedModel([text("From what I have: nothing.")])
    spec, _ = make_spec(model, limits=Limits(max_tool_calls=0))
    state = await agent_loop(spec, start())
    assert len(model.calls) == 1 and state.stop is LoopStop.END_TURN


async def test_the_context_hook_sees_the_system_prompt_and_the_tools() -> None:
    got: list[tuple[str, list[str]]] = []

    def hook(messages: list[Message], system: str, specs: list) -> tuple[list[Message], list[str]]:
        got.append((system, [s.name for s in specs]))
        return messages, []

    spec, _ = make_spec(ScriptedModel([text("done")]), context_hook=hook)
    await agent_loop(spec, start())
    assert got == [("You research.", ["look"])]
