"""`research compare` end to end through the Python API: a model whose behaviour depends on its
prompt shows that the harness detects a real difference; failures are recorded and the experiment
goes on; an interrupted experiment resumes without redoing finished cells; --max-cost stops new
cells; every cell's models come from one factory (one rate limiter)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import trio

from lead_agent.compare.experiment import ExperimentDir, build_experiment
from lead_agent.compare.harness import run_comparison
from lead_agent.compare.runner import prepare_experiment
from subagents.context import AgentRole
from subagents.model import ModelError, ModelRequest, ModelResponse, ToolResultBlock, Usage
from subagents.models.scripted import text, tool_call
from subagents.runs import read_run

TOPICS = ["lighthouse", "glacier", "volcano", "orchard", "harbour", "desert", "reef", "canyon"]
LIMIT = re.compile(r"Use at most (\d+) subagents")


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for t in TOPICS:
        body = " ".join(f"The {t} keeper wrote record {i} about the {t} and its seasons, noting the {t} weather "
                        f"every morning." for i in range(6))
        (root / f"{t}.md").write_text(f"# The {t}\n\n## About the {t}\n\n{body}\n")
    return root


def write_questions(path: Path, n: int = len(TOPICS)) -> Path:
    lines = [json.dumps({"id": f"t{i + 1}", "question": f"What did the {t} keeper record?",
                         "answers": [f"{t} keeper"], "gold_sources": [f"{t}.md"], "tags": ["what-is"]})
             for i, t in enumerate(TOPICS[:n])]
    path.write_text("\n".join(lines) + "\n")
    return path


def fewer_subagents_variant(tmp_path: Path, n: int) -> Path:
    """The default lead_system prompt plus one sentence asking for at most n subagents."""
    from subagents.prompting import prompts_root

    d = tmp_path / f"at-most-{n}"
    d.mkdir()
    base = (prompts_root() / "default" / "lead_system.txt").read_text()
    (d / "lead_system.txt").write_text(base + f"\nUse at most {n} subagents per round, whatever the question.\n")
    return d


def _results(request: ModelRequest) -> list[dict[str, Any]]:
    for block in reversed(request.messages[-1].content):
        if isinstance(block, ToolResultBlock) and not block.is_error:
            body = re.search(r"<retrieved_material[^>]*>\s*(.*)\s*</retrieved_material>", block.content, re.S)
            return json.loads(body.group(1))["results"] if body else []
    return []


class PromptFollower:
    """A test model that, like a language model, does what its system prompt says: the lead plans
    three tasks unless the prompt says "Use at most N subagents". Subagents and a single agent
    search the corpus once and cite the first hit. Priced as claude-haiku-4-5."""

    is_language_model = True

    def __init__(self, name: str = "claude-haiku-4-5") -> None:
        self.name = name
        self.calls: list[tuple[str, str]] = []  # (agent id, question)
        self.fail_question: str | None = None  # the lead fails on this question
        self.block_question: str | None = None  # the lead never answers on this question

    async def complete(self, request: ModelRequest) -> ModelResponse:
        ctx = request.context
        assert ctx is not None
        usage = Usage(len(request.system) // 4 + 40 * len(request.messages), 60)
        if ctx.role is AgentRole.LEAD:
            self.calls.append((ctx.agent_id, ctx.question))
            if ctx.question == self.fail_question:
                raise ModelError("scripted failure for this question")
            if ctx.question == self.block_question:
                await trio.sleep_forever()
            if not ctx.rounds:
                found = LIMIT.search(request.system)
                n = int(found.group(1)) if found else 3
                tasks = [{"objective": f"{ctx.question} (angle {i})", "tools": list(ctx.limits.subagent_tools),
                          "queries": [ctx.question]} for i in range(1, n + 1)]
                return tool_call("delegate", {"query_type": "depth_first", "rationale": "angles", "tasks": tasks},
                                 usage=usage)
            claims = [c for s in ctx.rounds[-1].subagents for c in s.findings.claims]
            return text("\n".join([f"# {ctx.question}", ""] + [f"{c.text} [{', '.join(c.source_ids)}]" for c in claims]),
                        usage=usage)
        goal = ctx.question if ctx.role is AgentRole.SINGLE else ctx.delegation.objective
        hits = _results(request)
        if len(request.messages) == 1:
            tool = "web_search" if "web_search" in ctx.allowed_tools else "search_corpus"
            return tool_call(tool, {"query": re.sub(r"\(.*?\)", "", goal).strip(), "k": 3}, usage=usage)
        first = hits[0]["snippet"].split(". ")[0].strip(" .…") + "." if hits else ""
        if ctx.role is AgentRole.SINGLE:
            return text(f"# {goal}\n\n{first} [{hits[0]['source_id']}]" if hits else "nothing found", usage=usage)
        return tool_call("submit_findings", {"status": "ok", "summary": first,
                                             "claims": [{"text": first, "source_ids": [hits[0]["source_id"]]}]},
                         usage=usage)


def experiment(tmp_path: Path, variants: list[str], **extra: Any):
    corpus = write_corpus(tmp_path / "corpus")
    values = {"questions": str(write_questions(tmp_path / "q.jsonl", extra.pop("n", len(TOPICS)))),
              "corpus": [str(corpus)], "cache_dir": str(tmp_path / "cache"), "lead_model": "follower",
              "subagent_model": "follower", "max_rounds": 1, "parallel": 4, **extra}
    exp = build_experiment(values, variants)
    return exp, ExperimentDir(tmp_path / "runs" / exp.id)


async def compare(exp, where, model: PromptFollower, **kw):
    return await run_comparison(exp, where, environ={}, use_config_file=False, models={"follower": model},
                                progress=kw.pop("progress", None), **kw)


async def test_a_prompt_asking_for_fewer_subagents_is_detected_as_a_real_difference(tmp_path: Path) -> None:
    variant = fewer_subagents_variant(tmp_path, 1)
    exp, where = experiment(tmp_path, ["default", str(variant)])
    result = await compare(exp, where, PromptFollower())
    assert all(r["status"] == "completed" for r in result.rows) and len(result.rows) == 2 * len(TOPICS)
    subs = result.comparison("subagents")
    assert (subs.mean_a, subs.mean_b, subs.n) == (3, 1, len(TOPICS))
    assert subs.significant and subs.p_wilcoxon == pytest.approx(2 / 2 ** len(TOPICS))
    assert subs.verdict.startswith("at-most-1 starts fewer subagents by 67% [67%, 67%], p=0.008")
    cost = result.comparison("cost_usd")
    assert cost.significant and cost.mean_b < cost.mean_a and "is cheaper by" in cost.verdict
    assert not result.comparison("answer_match").significant  # both find the keeper in every topic
    assert result.note is None  # a language model reads the prompts
    assert "at-most-1 starts fewer subagents by 67%" in (where.path / "summary.md").read_text()
    # every run is an ordinary run directory that records its variant and every prompt's hash
    row = next(r for r in result.rows if r["variant"] == "at-most-1")
    run = read_run(where.path / row["run_dir"])
    labels = run.trace.started.options["labels"]
    assert labels["variant"] == "at-most-1" and labels["cell"] == row["cell"] and labels["repeat"] == 1
    other = read_run(where.path / next(r for r in result.rows if r["variant"] == "default")["run_dir"])
    assert run.manifest["prompts"]["files"]["lead_system"]["sha256"] != \
        other.manifest["prompts"]["files"]["lead_system"]["sha256"]
    assert run.manifest["prompts"]["files"]["subagent_system"] == other.manifest["prompts"]["files"]["subagent_system"]
    lines = (where.path / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(result.rows) and json.loads(lines[0])["metrics"]["gold_source_cited"] == 1.0


async def test_a_failing_cell_is_recorded_and_resume_redoes_only_failed_cells(tmp_path: Path) -> None:
    exp, where = experiment(tmp_path, ["default", "single"], n=3)
    model = PromptFollower()
    model.fail_question = exp.questions[1].question
    result = await compare(exp, where, model)
    failed = [r for r in result.rows if r["status"] != "completed"]
    assert [r["cell"] for r in failed] == ["default/t2/1"]  # the single agent has no lead: it went on
    assert "scripted failure for this question" in failed[0]["error"]
    assert "| A: default | prompts default | claude-haiku-4-5 / claude-haiku-4-5 | 2 | 1 |" in result.summary
    assert "- default/t2/1: " in result.summary
    before = {p.name for p in where.runs.iterdir()}
    model.fail_question, model.calls = None, []
    again = await compare(exp, where, model, resume=True)
    assert all(r["status"] == "completed" for r in again.rows) and len(again.rows) == 6
    assert {q for _, q in model.calls} == {exp.questions[1].question}  # only the failed cell ran again
    assert len({p.name for p in where.runs.iterdir()} - before) == 1


async def test_an_interrupted_experiment_resumes_without_redoing_finished_cells(tmp_path: Path) -> None:
    exp, where = experiment(tmp_path, ["default", "single"], n=3, parallel=2)
    model = PromptFollower()
    model.block_question = exp.questions[2].question
    lines: list[str] = []
    with trio.move_on_after(30):
        async with trio.open_nursery() as nursery:
            def progress(line: str) -> None:
                lines.append(line)
                if sum(" completed in " in x for x in lines) == 5:  # everything but the blocked lead
                    nursery.cancel_scope.cancel()

            nursery.start_soon(lambda: compare(exp, where, model, progress=progress))
    assert not (where.path / "results.jsonl").exists()
    statuses = sorted(read_run(p).status for p in where.runs.iterdir())
    assert statuses == ["completed"] * 5 + ["interrupted"]
    model.block_question, model.calls = None, []
    done: list[str] = []
    again = await compare(exp, where, model, resume=True, progress=done.append)
    assert "5 already done" in done[0]
    assert [r["status"] for r in again.rows] == ["completed"] * 6
    assert {q for _, q in model.calls} == {exp.questions[2].question}


async def test_max_cost_stops_new_cells_and_the_summary_says_so(tmp_path: Path) -> None:
    exp, where = experiment(tmp_path, ["default", "single"], n=3, parallel=1, max_cost=1e-9)
    result = await compare(exp, where, PromptFollower())
    assert len(result.rows) == 1 and result.rows[0]["status"] == "completed"
    assert "5 not started (max cost)" in result.summary
    log = [json.loads(x) for x in (where.path / "cells.jsonl").read_text().splitlines()]
    assert sum(r["event"] == "skipped" for r in log) == 5


def test_every_cell_uses_models_from_one_factory_sharing_one_rate_limiter(tmp_path: Path) -> None:
    exp, where = experiment(tmp_path, ["default", "single:lead_model=claude-sonnet-4-5"], n=2,
                            lead_model="claude-opus-4-6", subagent_model="claude-haiku-4-5",
                            requests_per_minute=50, judge_model="claude-sonnet-4-5")
    p = prepare_experiment(exp, where, environ={"ANTHROPIC_API_KEY": "sk-test"}, use_config_file=False)
    lead_a, sub_a = p.models["default"]
    lead_b, sub_b = p.models["single[lead_model=claude-sonnet-4-5]"]
    assert sub_a is sub_b and lead_b is p.judge and lead_a is not lead_b
    assert lead_a.limiter is not None and lead_a.limiter is sub_a.limiter is lead_b.limiter is p.judge.limiter
    assert not where.path.exists()  # preparing writes nothing


async def test_variants_see_identical_web_sources_through_one_shared_cache(tmp_path: Path) -> None:
    from subagents.web import WebConfig

    calls: list[str] = []

    def backend(query: str, k: int) -> list[dict[str, str]]:  # a search engine whose answers change each call
        calls.append(query)
        return [{"title": f"Result {i}", "href": f"https://example.org/{len(calls)}/{i}",
                 "body": f"The keeper recorded call {len(calls)} weather for {query}. More text."} for i in range(2)]

    exp, where = experiment(tmp_path, ["default", "single"], n=2, corpus=None, web=True)
    result = await compare(exp, where, PromptFollower(), web_config=WebConfig(search_backend=backend))
    assert all(r["status"] == "completed" for r in result.rows)
    assert sorted(calls) == sorted(set(calls)) and len(calls) == 2  # one live search per distinct query
    for q in exp.questions:
        texts = []
        for v in ("default", "single"):
            row = next(r for r in result.rows if r["variant"] == v and r["question_id"] == q.id)
            texts.append(sorted(s.text for s in read_run(where.path / row["run_dir"]).sources))
        assert texts[0] == texts[1]  # both variants saw exactly the same results
    assert list((where.web / "search").glob("*.json"))
