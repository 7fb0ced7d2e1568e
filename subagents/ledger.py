"""The run-wide ledger: one per run, every model call of every agent passes through it.

Before a call the agent loop asks `admit`; after it, `charge` books the call's usage (every token
kind) and its cost (each kind at its own price, `models.pricing.cost`, the same prices
`--estimate` uses). Once a run budget is reached (`--max-cost`, `--max-tokens`, `--deadline`) the
ledger says so for good: no new calls are admitted, except one wrap-up call per agent (a subagent
submitting what it has, the lead writing its report). Calls already in flight finish and are
booked. So past the line there is at most one call per agent that was running.

Time is trio time (`trio.current_time()`), so tests can run it on a MockClock; `elapsed` carries
over the seconds earlier attempts of a resumed run already used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable

import trio

from .model import Usage
from .models.pricing import cost, price_for


class BudgetKind(StrEnum):
    """Which run budget stopped a run."""

    COST = "max_cost"
    TOKENS = "max_tokens"
    DEADLINE = "deadline"


@dataclass(frozen=True)
class RunBudget:
    max_cost: float | None = None  # USD
    max_tokens: int | None = None  # every token kind
    deadline: float | None = None  # seconds of run time

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.max_cost, self.max_tokens, self.deadline))

    def to_dict(self) -> dict[str, float | int | None]:
        return {"max_cost": self.max_cost, "max_tokens": self.max_tokens, "deadline": self.deadline}


@dataclass(frozen=True)
class BudgetLine:
    """The moment a budget was reached: which, how much was used, the limit."""

    budget: BudgetKind
    used: float
    limit: float


@dataclass
class Ledger:
    budget: RunBudget = field(default_factory=RunBudget)
    usage: Usage = field(default_factory=Usage)  # spent so far, earlier attempts included
    cost_usd: float = 0.0  # of calls with a known price (or no tokens)
    unpriced_calls: int = 0  # calls whose model has no known price
    elapsed_before: float = 0.0  # seconds used by earlier attempts of this run
    on_reached: Callable[[BudgetLine], None] | None = None
    calls: int = 0
    reached: BudgetLine | None = None
    _t0: float | None = None
    _grace: set[str] = field(default_factory=set)  # agents that used their wrap-up call past the line

    # ---- time
    def start(self) -> None:
        """Start the clock (inside trio); idempotent."""
        if self._t0 is None:
            self._t0 = trio.current_time() - self.elapsed_before

    def elapsed(self) -> float:
        if self._t0 is None:
            return self.elapsed_before
        return trio.current_time() - self._t0

    def deadline_at(self) -> float:
        """The deadline as trio time (inf without one): for cancel scopes."""
        if self.budget.deadline is None:
            return math.inf
        self.start()
        assert self._t0 is not None
        return self._t0 + self.budget.deadline

    def remaining_seconds(self) -> float | None:
        return None if self.budget.deadline is None else max(0.0, self.budget.deadline - self.elapsed())

    def remaining_tokens(self, model: str | None = None) -> int | None:
        """Tokens the run can still spend: the token budget left, and the cost budget left at the
        model's input price (None: no bound)."""
        bounds: list[float] = []
        if self.budget.max_tokens is not None:
            bounds.append(self.budget.max_tokens - self.usage.total())
        if self.budget.max_cost is not None and model is not None:
            p = price_for(model)
            if p is not None and p.input > 0:
                bounds.append((self.budget.max_cost - self.cost_usd) / p.input * 1_000_000)
        return None if not bounds else max(0, int(min(bounds)))

    # ---- booking
    def charge(self, usage: Usage, model: str) -> None:
        self.calls += 1
        self.usage = self.usage + usage
        c = cost(usage, model)
        if c is None and usage.total():
            self.unpriced_calls += 1
        else:
            self.cost_usd += c or 0.0
        self.check()

    def check(self) -> BudgetLine | None:
        """The budget line, once reached (it stays reached)."""
        if self.reached is None:
            self.reached = self._crossed()
            if self.reached is not None and self.on_reached is not None:
                self.on_reached(self.reached)
        return self.reached

    def _crossed(self) -> BudgetLine | None:
        b = self.budget
        if b.max_cost is not None and self.cost_usd >= b.max_cost:
            return BudgetLine(BudgetKind.COST, round(self.cost_usd, 6), b.max_cost)
        if b.max_tokens is not None and self.usage.total() >= b.max_tokens:
            return BudgetLine(BudgetKind.TOKENS, self.usage.total(), b.max_tokens)
        if b.deadline is not None and self._t0 is not None and self.elapsed() >= b.deadline:
            return BudgetLine(BudgetKind.DEADLINE, round(self.elapsed(), 3), b.deadline)
        return None

    def admit(self, agent_id: str, *, wrap_up: bool = False) -> bool:
        """May this agent make a model call now? Past the line only one wrap-up call per agent."""
        self.start()
        if self.check() is None:
            return True
        if wrap_up and agent_id not in self._grace:
            self._grace.add(agent_id)
            return True
        return False

    @property
    def stopped(self) -> bool:
        return self.check() is not None

    def state(self) -> dict[str, Any]:
        """The budget state for the manifest."""
        return {"limits": self.budget.to_dict(),
                "used": {"tokens": self.usage.total(), "cost_usd": round(self.cost_usd, 6),
                         "seconds": round(self.elapsed(), 3), "calls": self.calls},
                "stopped_by": self.reached.budget.value if self.reached else None}
