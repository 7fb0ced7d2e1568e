"""`--estimate`: what a plan would cost, from its budgets and the price table, without running it.

For each delegation the expected spend models a subagent that makes its tool calls two per turn:
each turn re-sends the prefix (system prompt, tool schemas, task) plus the results so far. It is
capped by the delegation's token budget. The maximum assumes every subagent spends its whole
token budget. The lead's synthesis reads every subagent's findings. All token counts are tiktoken
estimates; costs are None (unknown) for a model without a known price.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from subagents.delegation import Plan
from subagents.model import Usage
from subagents.models.pricing import add_costs, cost
from subagents.tokens import estimate_tokens

if TYPE_CHECKING:
    from .orchestrator import Lead

RESULT_TOKENS = 800  # one tool result (a search page or a passage)
OUTPUT_PER_TURN = 250
FINDINGS_TOKENS_PER_SUBAGENT = 900
REPORT_TOKENS = 2000
CALLS_PER_TURN = 2
MAX_OUTPUT_SHARE = 0.1


def estimate_plan(plan: Plan, *, agent_ids: list[str], subagent_system: str, tool_schema_json: str,
                  lead_prefix_tokens: int, lead_model: str, subagent_model: str) -> dict[str, Any]:
    tasks = []
    for agent_id, task in zip(agent_ids, plan.tasks):
        prefix = estimate_tokens(subagent_system) + estimate_tokens(tool_schema_json) + \
            estimate_tokens(json.dumps(task.model_dump(mode="json")))
        turns = math.ceil(task.budget.max_tool_calls / CALLS_PER_TURN) + 1  # + the submit turn
        inp = sum(prefix + i * CALLS_PER_TURN * RESULT_TOKENS for i in range(turns))
        out = turns * OUTPUT_PER_TURN
        scale = min(1.0, task.budget.max_tokens / max(1, inp + out))
        expected = Usage(int(inp * scale), int(out * scale))
        cap = task.budget.max_tokens
        maximum = Usage(int(cap * (1 - MAX_OUTPUT_SHARE)), int(cap * MAX_OUTPUT_SHARE))
        tasks.append({"agent_id": agent_id, "turns": turns, "expected_usage": expected.to_dict(),
                      "expected_cost_usd": cost(expected, subagent_model),
                      "max_usage": maximum.to_dict(), "max_cost_usd": cost(maximum, subagent_model)})
    lead_usage = Usage(lead_prefix_tokens + FINDINGS_TOKENS_PER_SUBAGENT * len(plan.tasks), REPORT_TOKENS)
    lead_cost = cost(lead_usage, lead_model)
    return {
        "subagent_model": subagent_model, "lead_model": lead_model, "tasks": tasks,
        "lead_synthesis": {"expected_usage": lead_usage.to_dict(), "expected_cost_usd": lead_cost},
        "expected_cost_usd": add_costs(lead_cost, *(t["expected_cost_usd"] for t in tasks)),
        "max_cost_usd": add_costs(lead_cost, *(t["max_cost_usd"] for t in tasks)),
        "assumptions": (f"{CALLS_PER_TURN} tool calls per turn, ~{RESULT_TOKENS} tokens per tool result, "
                        f"~{OUTPUT_PER_TURN} output tokens per turn; maximum = every subagent spends its whole "
                        f"token budget ({int(MAX_OUTPUT_SHARE * 100)}% as output); tiktoken estimates; "
                        "first round only (gap rounds are decided on findings)"),
    }


def render_estimate(est: dict[str, Any]) -> str:
    def usd(v: float | None) -> str:
        return "unknown (no price)" if v is None else f"${v:.4f}"

    lines = [f"Estimate (subagents: {est['subagent_model']}, lead: {est['lead_model']}):"]
    for t in est["tasks"]:
        u = t["expected_usage"]
        lines.append(f"  {t['agent_id']}: ~{u['input_tokens']} in / {u['output_tokens']} out tokens over "
                     f"{t['turns']} turns → {usd(t['expected_cost_usd'])} (max {usd(t['max_cost_usd'])})")
    ls = est["lead_synthesis"]["expected_usage"]
    lines.append(f"  lead synthesis: ~{ls['input_tokens']} in / {ls['output_tokens']} out → "
                 f"{usd(est['lead_synthesis']['expected_cost_usd'])}")
    lines.append(f"  total: {usd(est['expected_cost_usd'])} expected, {usd(est['max_cost_usd'])} at most")
    for note in est.get("run_budget", {}).get("notes", []):
        lines.append(f"  run budget: {note}")
    lines.append(f"  assumptions: {est['assumptions']}")
    return "\n".join(lines)


def budget_notes(est: dict[str, Any], budget: Any) -> dict[str, Any]:
    """The estimate against the run's budgets (--max-cost, --max-tokens), priced the same way the ledger prices."""
    notes = []
    if budget.max_cost is not None:
        expected, most = est["expected_cost_usd"], est["max_cost_usd"]
        if expected is None:
            notes.append(f"--max-cost ${budget.max_cost:g}: the cost cannot be estimated (a model has no price)")
        elif expected > budget.max_cost:
            notes.append(f"--max-cost ${budget.max_cost:g} is below the expected ${expected:.4f}: the run would "
                         "stop early and report what it found by then")
        elif most is not None and most > budget.max_cost:
            notes.append(f"--max-cost ${budget.max_cost:g} covers the expected ${expected:.4f} but not the maximum "
                         f"${most:.4f}")
        else:
            notes.append(f"--max-cost ${budget.max_cost:g} covers even the maximum")
    if budget.max_tokens is not None:
        tokens = sum(sum(t["expected_usage"].values()) for t in est["tasks"]) + \
            sum(est["lead_synthesis"]["expected_usage"].values())
        notes.append(f"--max-tokens {budget.max_tokens:,}: about {tokens:,} expected"
                     + (" — the run would stop early" if tokens > budget.max_tokens else ""))
    return {"limits": budget.to_dict(), "notes": notes}


def estimate_lead_plan(lead: "Lead") -> dict[str, Any]:
    """The estimate of the lead's (only) accepted plan."""
    plan = lead.state.plans[0]
    specs = [vars(spec) for spec in lead.sub.toolbox.specs()]
    est = _estimate(lead, plan, specs)
    if lead.ledger is not None and lead.ledger.budget:
        est["run_budget"] = budget_notes(est, lead.ledger.budget)
    return est


def _estimate(lead: "Lead", plan: Plan, specs: list[dict[str, Any]]) -> dict[str, Any]:
    return estimate_plan(
        plan, agent_ids=[f"r1-sub{i}" for i in range(1, len(plan.tasks) + 1)],
        subagent_system=lead.prompts.render("subagent_system", tools="…"), tool_schema_json=json.dumps(specs),
        lead_prefix_tokens=estimate_tokens(lead.system_prompt()), lead_model=lead.lead_model.name,
        subagent_model=lead.sub.model.name,
    )
