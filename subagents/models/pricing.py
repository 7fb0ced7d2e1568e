"""What a model call cost, from `pricing.json` (USD per million tokens, each entry with its
source page and date). Unknown model -> None: a cost is never guessed.

Anthropic usage counts are disjoint: `input_tokens` excludes cache writes and cache reads,
which are billed at their own rates (cache_write is the 5-minute write rate, the default TTL).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..model import Usage

PRICING_FILE = Path(__file__).with_name("pricing.json")
PER = 1_000_000
_SUFFIX = re.compile(r"(-\d{8}|-latest|@\d{8})$")


@dataclass(frozen=True)
class Price:
    model: str
    input: float  # USD per million tokens
    output: float
    cache_write: float  # 5-minute cache write
    cache_read: float
    source: str
    as_of: str


@lru_cache(maxsize=1)
def _table() -> dict[str, Price]:
    raw = json.loads(PRICING_FILE.read_text(encoding="utf-8"))["models"]
    table: dict[str, Price] = {}
    for name, e in raw.items():
        price = Price(name, e["input"], e["output"], e["cache_write"], e["cache_read"], e["source"], e["as_of"])
        for key in [name, *e.get("aliases", [])]:
            table[key] = price
    return table


def normalize(model: str) -> str:
    """'claude-haiku-4-5-20251001' -> 'claude-haiku-4-5'; '…-latest' and Vertex '@date' too."""
    return _SUFFIX.sub("", model.strip().lower())


def price_for(model: str) -> Price | None:
    table = _table()
    return table.get(model) or table.get(normalize(model))


def cost(usage: Usage, model: str) -> float | None:
    """USD for one usage record, or None when the model's price is unknown."""
    p = price_for(model)
    if p is None:
        return None
    return (
        usage.input_tokens * p.input
        + usage.output_tokens * p.output
        + usage.cache_creation_input_tokens * p.cache_write
        + usage.cache_read_input_tokens * p.cache_read
    ) / PER


def add_costs(*costs: float | None) -> float | None:
    """Sum of costs; None as soon as any part is unknown (a partial sum would mislead)."""
    total = 0.0
    for c in costs:
        if c is None:
            return None
        total += c
    return total
