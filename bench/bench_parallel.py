"""Parallel subagents against a fake Messages API: wall time vs the critical-path bound, speed-up over
running them one at a time, and how much of each agent's repeated prompt prefix is read from the
(simulated) prompt cache.

    python bench/bench_parallel.py [--subagents 10] [--latency 0.3] [--tps 50] [--min-cacheable 0] [--dependent 0]

The real anthropic SDK talks to FakeAnthropicServer on 127.0.0.1 (base latency + output tokens at
`--tps` tokens/s). The fake plays the lead (one plan of N tasks, then a report citing the findings)
and N subagents (3 tool turns: search_corpus, read_passage, read_passage; then submit_findings) over
a synthetic corpus written to a temp dir. Two runs: concurrency N, then concurrency 1.

Critical path, from the transcripts: the lead's planning call + the longest path through the plan's
DAG, each subagent weighing its model calls + per turn the longest of its tool calls (with
`--dependent K` the last K tasks depend on the first, so they cannot start before it ends) + the
lead's synthesis call. wall/critical-path near 1 means the orchestration adds next to nothing on top
of the unavoidable model latency.

Prompt cache: the fake simulates Anthropic's cache. Each request is split into blocks in prompt order
(tools, system, message blocks); a prefix hashed up to a `cache_control` breakpoint is written to the
cache (usable once the first token would have been sent); a later request reads the longest cached
prefix ending at a block boundary at most 20 blocks before one of its breakpoints (Anthropic's lookback).
Reported per call: cache_read = that prefix, cache_creation = from there to the last breakpoint, input =
the rest. Token counts are chars/4 (cheap, deterministic). `--min-cacheable` models the minimum
cacheable prompt length (0 = off; Anthropic documents 1024-4096 tokens by model, 4096 for Haiku 4.5
and Opus 4.5/4.6).
The target (issue: "share of repeated prefix tokens read from cache >= 0.8") is checked on
cache_read / the prefix each call shares with the agent's previous call (1.0 means nothing repeated was
paid for twice). Also printed, for context: cache_read / all input tokens of every call after each
agent's first, which new tool results keep well below 1 for short agents.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lead_agent import api  # noqa: E402
from subagents.plan_graph import longest_path  # noqa: E402
from subagents.transcript import read_events  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, text, tool_use  # noqa: E402

LEAD_MODEL = "claude-opus-4-6"
SUB_MODEL = "claude-haiku-4-5"
TOOL_TURNS = 3
LOOKBACK = 20
TOPICS = ["lighthouse", "glacier", "volcano", "orchard", "harbour", "desert", "reef", "canyon", "prairie", "tundra",
          "delta", "fjord", "savanna", "marsh", "atoll", "steppe"]
ASPECTS = ["history", "climate", "wildlife", "economy"]


# ---------------------------------------------------------------- a synthetic corpus


def write_corpus(root: Path, n_topics: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for t in TOPICS[:n_topics]:
        parts = [f"# The {t}\n"]
        for a in ASPECTS:
            sentences = [f"The {a} of the {t} region is described in record {i} of the survey, which notes that "
                         f"the {t} {a} changed slowly over many decades and was measured every season."
                         for i in range(6)]
            parts.append(f"## {a.title()} of the {t}\n\n" + " ".join(sentences) + "\n")
        (root / f"{t}.md").write_text("\n".join(parts), encoding="utf-8")


# ---------------------------------------------------------------- the simulated prompt cache


def _tokens(s: str) -> int:
    return max(1, len(s) // 4)


def _strip(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


class PromptCache:
    """Anthropic-style prompt cache over the blocks of a request (see the module docstring)."""

    def __init__(self, latency: float, min_cacheable: int = 0) -> None:
        self.latency = latency
        self.min_cacheable = min_cacheable
        self.entries: dict[str, float] = {}  # prefix hash -> time it becomes readable
        self.previous: dict[str, list[str]] = {}  # agent -> hashes of its previous request's blocks
        self.lock = threading.Lock()
        self.log: list[dict[str, Any]] = []  # per request: agent, usage, repeated prefix tokens

    @staticmethod
    def blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        for t in body.get("tools") or []:
            out.append((json.dumps(["tool", _strip(t)], sort_keys=True), "cache_control" in t))
        system = body.get("system") or []
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        for b in system:
            out.append((json.dumps(["system", _strip(b)], sort_keys=True), "cache_control" in b))
        choice = json.dumps(body.get("tool_choice"), sort_keys=True)  # changing it invalidates message blocks
        for i, m in enumerate(body.get("messages") or []):
            content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            for j, b in enumerate(content):
                out.append((json.dumps([choice, i, m["role"], j, _strip(b)], sort_keys=True), "cache_control" in b))
        return out

    def account(self, agent: str, body: dict[str, Any]) -> dict[str, int]:
        now = time.monotonic()
        blocks = self.blocks(body)
        h = hashlib.sha256(str(body.get("model")).encode())
        hashes, cum, total = [], [], 0
        for s, _ in blocks:
            h.update(s.encode())
            hashes.append(h.hexdigest())
            total += _tokens(s)
            cum.append(total)
        bps = [i for i, (_, bp) in enumerate(blocks) if bp]
        with self.lock:
            read_at = -1
            for bp in bps:
                for i in range(bp, max(-1, bp - LOOKBACK - 1), -1):
                    if self.entries.get(hashes[i], float("inf")) <= now:
                        read_at = max(read_at, i)
                        break
            read = cum[read_at] if read_at >= 0 else 0
            written = 0
            for bp in bps:  # past the read point: written (again, if a concurrent write is not readable yet)
                if bp > read_at and cum[bp] >= self.min_cacheable:
                    self.entries[hashes[bp]] = min(self.entries.get(hashes[bp], float("inf")), now + self.latency)
                    written = max(written, cum[bp])
            creation = max(0, written - read)
            cached_through = max(read, written)
            usage = {"input_tokens": total - cached_through, "cache_creation_input_tokens": creation,
                     "cache_read_input_tokens": read}
            prev = self.previous.get(agent, [])
            common = 0
            while common < min(len(prev), len(hashes)) and prev[common] == hashes[common]:
                common += 1
            repeated = cum[common - 1] if common else 0
            self.log.append({"agent": agent, "first": agent not in self.previous, "usage": usage,
                             "repeated": repeated, "total": total})
            self.previous[agent] = hashes
        return usage


# ---------------------------------------------------------------- the fake's agents


def _blocks(m: dict[str, Any]) -> list[dict[str, Any]]:
    return m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]


def _text(b: dict[str, Any]) -> str:
    c = b.get("content", b.get("text", ""))
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)


def _material(s: str) -> Any:
    m = re.search(r"<retrieved_material[^>]*>\s*(.*)\s*</retrieved_material>", s, re.S)
    return json.loads(m.group(1)) if m else None


class Play:
    def __init__(self, n: int, cache: PromptCache, dependent: int = 0) -> None:
        self.n = n
        self.cache = cache
        self.dependent = dependent
        self.errors: list[str] = []

    def plan(self) -> dict[str, Any]:
        tasks = [{"id": f"t{i}", "objective": f"Describe the history of the {t}",
                  "tools": ["search_corpus", "read_passage"], "queries": [f"{t} history"],
                  "budget": {"max_tool_calls": 6, "max_seconds": 300}} for i, t in enumerate(TOPICS[: self.n], 1)]
        for t in tasks[max(1, self.n - self.dependent):]:
            t["depends_on"] = ["t1"]  # starts when the first task has finished
        return {"query_type": "breadth_first", "rationale": "one subagent per region", "tasks": tasks}

    @staticmethod
    def agent_of(body: dict[str, Any]) -> str:
        if "delegate" in [t["name"] for t in body.get("tools") or []]:
            return "lead"
        first = _text(_blocks(body["messages"][0])[0])
        return json.loads(re.search(r"<delegation>\s*(.*?)\s*</delegation>", first, re.S).group(1))["objective"]

    def __call__(self, body: dict[str, Any]) -> Reply:
        try:
            names = [t["name"] for t in body.get("tools") or []]
            if "delegate" in names:
                agent, reply = "lead", self.lead(body)
            elif "submit_findings" in names:
                agent = self.agent_of(body)
                reply = self.sub(agent, body)
            else:
                raise ValueError(f"unexpected tools {names}")
        except Exception as e:
            self.errors.append(f"{type(e).__name__}: {e}")
            raise
        reply.usage = {**self.cache.account(agent, body), **reply.usage}
        return reply

    def lead(self, body: dict[str, Any]) -> Reply:
        results = [b for b in _blocks(body["messages"][-1]) if b.get("type") == "tool_result"]
        if not results:
            return tool_use(("delegate", self.plan()))
        found = re.search(r"<findings[^>]*>\s*(.*?)\s*</findings>", _text(results[0]), re.S)
        lines = ["# Regions", ""]
        for sub in json.loads(found.group(1))["subagents"]:
            for c in sub["claims"]:
                lines.append(f"{c['text']} [{', '.join(c['source_ids'])}]")
        return text("\n".join(lines))

    def sub(self, objective: str, body: dict[str, Any]) -> Reply:
        msgs = body["messages"]
        turn = sum(1 for m in msgs if m["role"] == "assistant")
        if turn == 0:
            region = objective.rsplit(" ", 1)[-1]
            return tool_use(("search_corpus", {"query": f"{region} history", "k": 5}))
        search = _material(_text(_blocks(msgs[2])[0]))["results"]
        if turn < TOOL_TURNS:
            return tool_use(("read_passage", {"passage_id": search[turn - 1]["passage_id"]}))
        passage = _material(_text(_blocks(msgs[-1])[0]))
        first = passage["text"].split(". ")[0].strip().rstrip(".") + "."
        return tool_use(("submit_findings", {"status": "ok", "summary": first,
                                             "claims": [{"text": first, "source_ids": [passage["source_id"]]}]}))


# ---------------------------------------------------------------- measuring


def critical_path(run_dir: Path) -> dict[str, Any]:
    def chain(agent: str) -> tuple[float, list[float]]:
        model: list[float] = []
        tools: dict[int, float] = defaultdict(float)
        for e in read_events(run_dir / "agents" / f"{agent}.jsonl"):
            if e["kind"] == "model_response":
                model.append(e["data"]["seconds"])
            elif e["kind"] == "tool_result" and e["data"]["name"] != "delegate":
                tools[e["turn"]] = max(tools[e["turn"]], e["data"]["seconds"])
        return sum(model) + sum(tools.values()), model

    m = json.loads((run_dir / "manifest.json").read_text())
    subs = [a["agent_id"] for a in m["agents"] if a["role"] == "subagent"]
    chains = {a: chain(a)[0] for a in subs}
    _, lead_calls = chain("lead")
    plan, synthesis = lead_calls[0], sum(lead_calls[1:])
    tasks = json.loads((run_dir / "plan.v1.json").read_text())["tasks"]
    agent_of = {t["id"]: t["agent_id"] for t in tasks if t.get("id")}
    deps = {t["agent_id"]: [agent_of[d] for d in t.get("depends_on", [])] for t in tasks}
    path_len, path = longest_path(chains, deps)  # the DAG: a dependent starts after its dependencies end
    return {"plan": plan, "synthesis": synthesis, "slowest": " -> ".join(path), "sub_chain": path_len,
            "sum_chains": sum(chains.values()), "bound": plan + path_len + synthesis, "manifest": m}


def turn_share(log: list[dict[str, Any]]) -> dict[int, float]:
    """Cache-read share by call number within an agent (1 = its first call)."""
    n: dict[str, int] = defaultdict(int)
    read: dict[int, int] = defaultdict(int)
    total: dict[int, int] = defaultdict(int)
    for c in log:
        n[c["agent"]] += 1
        read[n[c["agent"]]] += c["usage"]["cache_read_input_tokens"]
        total[n[c["agent"]]] += sum(c["usage"].values())
    return {k: read[k] / total[k] for k in sorted(total) if total[k]}


def gaps(run_dir: Path, m: dict[str, Any]) -> dict[str, float]:
    """Where time outside model and tool calls went, from the transcripts' shared clock `t`."""
    lead = list(read_events(run_dir / "agents" / "lead.jsonl"))
    delegate_call = next(e["t"] for e in lead if e["kind"] == "tool_call")
    first_request = min(e["t"] for e in lead if e["kind"] == "model_request")
    starts, ends, between = [], [], 0.0
    for a in m["agents"]:
        if a["role"] != "subagent":
            continue
        evs = list(read_events(run_dir / "agents" / f"{a['agent_id']}.jsonl"))
        starts.append(evs[0]["t"])
        ends.append(evs[-1]["t"])
        last = None
        for e in evs:  # time from a turn's last tool result (or the start) to the next model request
            if e["kind"] == "model_request" and last is not None:
                between = max(between, e["t"] - last)
            if e["kind"] in ("agent_start", "tool_result"):
                last = e["t"]
    delegate_result = next(e["t"] for e in lead if e["kind"] == "tool_result")
    next_request = min((e["t"] for e in lead if e["kind"] == "model_request" and e["t"] > delegate_result), default=0)
    return {"before first lead request": first_request, "delegate call -> last subagent start": max(starts) - delegate_call,
            "last subagent end -> delegate result": delegate_result - max(ends),
            "delegate result -> synthesis request": next_request - delegate_result,
            "max gap between a subagent's turns": between}


async def one_run(corpus: Path, runs: Path, n: int, concurrency: int, args: argparse.Namespace) -> dict[str, Any]:
    cache = PromptCache(args.latency, args.min_cacheable)
    play = Play(n, cache, args.dependent)
    with FakeAnthropicServer(handler=play, base_latency=args.latency, tokens_per_second=args.tps) as srv:
        t0 = time.monotonic()
        result = await api.research(
            "Describe the history of each region", corpus=[corpus], runs_dir=runs, max_subagents=n,
            concurrency=concurrency, max_rounds=1, lead_model=LEAD_MODEL, subagent_model=SUB_MODEL,
            base_url=srv.base_url, api_key="sk-bench", use_config_file=False)
        wall = time.monotonic() - t0
        server: dict[str, list[float]] = defaultdict(list)  # agent key -> server-side durations, in order
        for r in srv.requests:
            server[play.agent_of(r.body)].append(r.duration or 0.0)
        overlap, requests = srv.max_overlap(), len(srv.requests)
    if play.errors or srv.handler_errors:
        raise SystemExit(f"the fake failed: {play.errors or srv.handler_errors}")
    cp = critical_path(result.run_dir)
    m = cp.pop("manifest")
    if m["status"] != "completed":
        raise SystemExit(f"run {m['status']}: {m.get('error')}")
    later = [c for c in cache.log if not c["first"]]
    read = sum(c["usage"]["cache_read_input_tokens"] for c in later)
    allin = sum(sum(c["usage"].values()) for c in later)
    repeated = sum(c["repeated"] for c in later)
    # per call: what the client measured (transcript) minus what the server took = SDK + HTTP + adapter
    plan = json.loads((result.run_dir / "plan.v1.json").read_text())
    key = {t["agent_id"]: t["objective"] for t in plan["tasks"]} | {"lead": "lead"}
    over = [(c["seconds"] - s, i == 0) for a in m["agents"]
            for i, (c, s) in enumerate(zip(a["calls"], server[key[a["agent_id"]]]))]
    firsts = sorted(o for o, first in over if first)
    rest = sorted(o for o, first in over if not first)
    return {"wall": wall, "run_seconds": m["timings"]["seconds"], **cp, "overlap": overlap, "requests": requests,
            "share": read / allin if allin else 0.0, "share_of_repeated": read / repeated if repeated else 0.0,
            "read": read, "all_input": allin, "repeated": repeated, "later_calls": len(later),
            "overhead": sum(o for o, _ in over), "calls": len(over), "first_over": firsts, "rest_over": rest,
            "cost": m["cost_usd"], "turn_share": turn_share(cache.log),
            "usage": m["usage"], "gaps": gaps(result.run_dir, m), "claims": sum(a.get("claims", 0) for a in m["agents"]),
            "citations": m["citation_check"]}


async def main_async(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        os.environ["RESEARCH_CACHE_DIR"] = str(tmpd / "cache")
        corpus = tmpd / "corpus"
        write_corpus(corpus, args.subagents)
        n = args.subagents
        t = time.perf_counter()
        import anthropic  # noqa: F401  (imported lazily by the first run otherwise: timed here, not there)
        print(f"importing the anthropic SDK: {time.perf_counter() - t:.2f}s (once per process, before a run starts)")
        print(f"{n} subagents x {TOOL_TURNS + 1} turns ({args.dependent} of them after the first); fake latency "
              f"{args.latency}s + output tokens at {args.tps} tok/s; "
              f"min cacheable {args.min_cacheable} tokens")
        par = await one_run(corpus, tmpd / "runs-par", n, n, args)
        seq = await one_run(corpus, tmpd / "runs-seq", n, 1, args)
    for name, r in (("parallel (concurrency %d)" % n, par), ("sequential (concurrency 1)", seq)):
        print(f"\n{name}:")
        print(f"  wall {r['wall']:.2f}s (run dir clock {r['run_seconds']:.2f}s); {r['requests']} requests, "
              f"at most {r['overlap']} in flight")
        print(f"  critical path {r['bound']:.2f}s = lead plan {r['plan']:.2f}s + longest subagent path "
              f"{r['sub_chain']:.2f}s ({r['slowest']}) + synthesis {r['synthesis']:.2f}s; all chains summed "
              f"{r['sum_chains']:.2f}s")
        print(f"  wall / critical path: {r['wall'] / r['bound']:.3f}  (target <= 1.05)")
        f, o = r["first_over"], r["rest_over"]
        print(f"  client-measured model time - server time (SDK + HTTP + adapter), {r['calls']} calls: "
              f"{r['overhead']:.3f}s in all; each agent's first call median {1000 * f[len(f) // 2]:.1f} ms "
              f"(max {1000 * f[-1]:.1f}), later calls median {1000 * o[len(o) // 2]:.1f} ms (max {1000 * o[-1]:.1f})")
        print("  gaps: " + "; ".join(f"{k} {v * 1000:.0f} ms" for k, v in r["gaps"].items()))
        print(f"  prompt cache, calls after each agent's first: read {r['read']} of {r['all_input']} input tokens "
              f"-> share of all input {r['share']:.3f}; read / repeated prefix {r['read']}/{r['repeated']} = "
              f"{r['share_of_repeated']:.3f} (target >= 0.8); new (never-sent) tokens per later call: "
              f"{(r['all_input'] - r['repeated']) / max(1, r['later_calls']):.0f} vs repeated "
              f"{r['repeated'] / max(1, r['later_calls']):.0f}")
        print("  share by call number: " + ", ".join(f"call {k}: {v:.2f}" for k, v in r["turn_share"].items()))
        u = r["usage"]
        print(f"  usage in {u['input_tokens']} / cache write {u['cache_creation_input_tokens']} / cache read "
              f"{u['cache_read_input_tokens']} / out {u['output_tokens']}; cost ${r['cost']:.4f}; "
              f"citations {r['citations']['supported']}/{r['citations']['markers']} supported")
    print(f"\nparallel speed-up vs concurrency 1: {seq['wall'] / par['wall']:.2f}x "
          f"(ideal, from the sequential run's chains: {(seq['plan'] + seq['sum_chains'] + seq['synthesis']) / par['bound']:.2f}x)")
    print(f"wall / critical path (parallel): {par['wall'] / par['bound']:.3f} -> "
          f"{'meets' if par['wall'] / par['bound'] <= 1.05 else 'MISSES'} the 1.05 target")
    print(f"repeated prefix read from cache (parallel): {par['share_of_repeated']:.3f} -> "
          f"{'meets' if par['share_of_repeated'] >= 0.8 else 'MISSES'} the 0.8 target "
          f"(share of all input after each agent's first call: {par['share']:.3f})")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--subagents", type=int, default=10)
    ap.add_argument("--latency", type=float, default=0.3, help="fake base latency, seconds")
    ap.add_argument("--tps", type=float, default=50.0, help="fake output tokens per second")
    ap.add_argument("--min-cacheable", type=int, default=0, help="minimum cacheable prefix, tokens (0: off)")
    ap.add_argument("--dependent", type=int, default=0, help="the last N tasks depend on the first (a DAG)")
    args = ap.parse_args()
    if not 1 <= args.subagents <= len(TOPICS):
        ap.error(f"--subagents must be 1..{len(TOPICS)}")
    return trio.run(main_async, args)


if __name__ == "__main__":
    sys.exit(main())
