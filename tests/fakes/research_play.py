"""A handler for FakeAnthropicServer that plays a whole research run like a language model that
follows its prompts: the lead, its subagents, a single agent and the comparison judge, told apart by
the tools each request offers (what a real model sees too).

- Lead (`delegate`): plans `default_tasks` depth-first tasks, or N when its system prompt says
  "Use at most N subagents" (a prompt variant can change what it does); then writes a report citing
  every claim of the findings.
- Subagent (`submit_findings`): searches the corpus for its objective, then submits the first hit.
- Single agent (`search_corpus` without `submit_findings` or `delegate`): searches, then reports.
- Judge (`submit_rubric` / `submit_preference`): scores a report by its citations; prefers the
  report with more citations whatever its position (so swapped orders agree), ties when equal.

Thread-safe (no state), usable by tests and by bench/bench_compare.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .anthropic_server import Reply, text, tool_use

LIMIT = re.compile(r"Use at most (\d+) subagents")
MARKER = re.compile(r"\[\d+\]")


def _blocks(m: dict[str, Any]) -> list[dict[str, Any]]:
    return m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]


def _text(b: dict[str, Any]) -> str:
    c = b.get("content", b.get("text", ""))
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)


def _system(body: dict[str, Any]) -> str:
    s = body.get("system") or ""
    return s if isinstance(s, str) else "".join(b.get("text", "") for b in s)


def _material(s: str) -> Any:
    m = re.search(r"<retrieved_material[^>]*>\s*(.*)\s*</retrieved_material>", s, re.S)
    return json.loads(m.group(1)) if m else None


def _tag(s: str, name: str) -> str:
    m = re.search(rf"<{name}[^>]*>\s*(.*?)\s*</{name}>", s, re.S)
    return m.group(1) if m else ""


class ResearchPlay:
    def __init__(self, default_tasks: int = 3) -> None:
        self.default_tasks = default_tasks

    def __call__(self, body: dict[str, Any]) -> Reply:
        names = [t["name"] for t in body.get("tools") or []]
        if "delegate" in names:
            return self.lead(body)
        if "submit_findings" in names:
            return self.worker(body, submit=True)
        if "submit_rubric" in names:
            return self.rubric(body)
        if "submit_preference" in names:
            return self.prefer(body)
        if "search_corpus" in names:
            return self.worker(body, submit=False)
        raise ValueError(f"unexpected tools {names}")

    # ---- the lead
    def lead(self, body: dict[str, Any]) -> Reply:
        msgs = body["messages"]
        results = [b for b in _blocks(msgs[-1]) if b.get("type") == "tool_result"]
        question = _tag(_text(_blocks(msgs[0])[0]), "question")
        if not results:
            found = LIMIT.search(_system(body))
            n = int(found.group(1)) if found else self.default_tasks
            aspects = ["definition", "behaviour", "examples", "caveats", "history"][:n]
            tasks = [{"objective": f"{question} ({a})", "tools": ["search_corpus", "read_passage"],
                      "queries": [question], "budget": {"max_tool_calls": 4, "max_seconds": 120}} for a in aspects]
            return tool_use(("delegate", {"query_type": "depth_first", "rationale": "angles", "tasks": tasks}))
        findings = json.loads(_tag(_text(results[0]), "findings"))
        lines = [f"# {question}", ""]
        for sub in findings["subagents"]:
            for c in sub["claims"]:
                lines.append(f"{c['text']} [{', '.join(c['source_ids'])}]")
        return text("\n".join(lines))

    # ---- a subagent or the single agent
    def worker(self, body: dict[str, Any], *, submit: bool) -> Reply:
        msgs = body["messages"]
        first = _text(_blocks(msgs[0])[0])
        goal = _tag(first, "question") or json.loads(_tag(first, "delegation"))["objective"]
        if len(msgs) == 1:
            return tool_use(("search_corpus", {"query": re.sub(r"\(.*?\)", "", goal).strip(), "k": 3}))
        hits = (_material(_text(_blocks(msgs[2])[0])) or {}).get("results", [])
        claims = [{"text": h["snippet"].split(". ")[0].strip(" .…") + ".", "source_ids": [h["source_id"]]}
                  for h in hits[:1] if h.get("snippet")]
        if submit:
            return tool_use(("submit_findings", {"status": "ok" if claims else "failed", "summary": "",
                                                 "claims": claims}))
        return text("\n".join([f"# {goal}", ""] + [f"{c['text']} [{c['source_ids'][0]}]" for c in claims]))

    # ---- the judge
    def rubric(self, body: dict[str, Any]) -> Reply:
        report = _tag(_text(_blocks(body["messages"][0])[0]), "report")
        cited = min(1.0, len(MARKER.findall(report)) / 4)
        score = {"score": round(cited, 3), "reason": f"{len(MARKER.findall(report))} citation(s)"}
        return tool_use(("submit_rubric", {c: score for c in ("factual_accuracy", "citation_accuracy", "completeness",
                                                               "source_quality", "tool_efficiency")}))

    def prefer(self, body: dict[str, Any]) -> Reply:
        task = _text(_blocks(body["messages"][0])[0])
        a, b = (len(MARKER.findall(_tag(task, t))) for t in ("report_a", "report_b"))
        winner = "tie" if a == b else ("A" if a > b else "B")
        return tool_use(("submit_preference", {"winner": winner, "reason": f"citations A {a}, B {b}"}))
