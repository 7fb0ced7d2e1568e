"""`research runs` with many runs: 10,000 run directories (realistic manifests, 1% failed), listed by
the real command in a subprocess. Times: the default listing (newest 20), a rare status
(`--status failed`: reads until 20 match), a full scan (`-n 0 --json`), and the default listing of
100 runs; ratios against `research --help` (the floor of any command) and 10,000 against 100 runs.

    python bench/bench_runs_index.py [--runs 10000]

Goal: the default listing of 10,000 runs within 2x the time of `research --help` + 1 s at most,
i.e. independent of how many runs there are.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

GOAL = 2.0


def manifest(i: int, when: datetime) -> dict:
    run_id = f"{when:%Y%m%d-%H%M%S}-question-number-{i}-{i % 65536:04x}"
    agents = [{"agent_id": "lead", "role": "lead", "status": "ok", "model": "claude-opus-4-6",
               "usage": {"input_tokens": 5000, "output_tokens": 900}, "cost_usd": 0.04,
               "calls": [{"model": "claude-opus-4-6", "usage": {"input_tokens": 2500, "output_tokens": 450},
                          "seconds": 3.2, "cost_usd": 0.02}] * 2}]
    agents += [{"agent_id": f"r1-sub{k}", "role": "subagent", "status": "ok", "model": "claude-haiku-4-5",
                "objective": f"part {k} of question {i}", "usage": {"input_tokens": 9000, "output_tokens": 700},
                "calls": [{"model": "claude-haiku-4-5", "usage": {"input_tokens": 3000, "output_tokens": 230},
                           "seconds": 1.5, "cost_usd": 0.004}] * 3, "cost_usd": 0.012} for k in range(1, 5)]
    return {"run_id": run_id, "question": f"Question number {i}: how does feature {i % 97} behave under load?",
            "status": "failed" if i % 100 == 7 else "completed", "created_at": when.isoformat(timespec="milliseconds"),
            "options": {"corpus": ["/usr/share/doc/python3.11/html"], "max_subagents": 5},
            "models": {"lead": "claude-opus-4-6", "subagent": "claude-haiku-4-5", "language_model_used": True},
            "agents": agents, "usage": {"input_tokens": 41000, "output_tokens": 3700}, "cost_usd": 0.088,
            "timings": {"started_at": when.isoformat(), "seconds": 42.5}, "sources": 37,
            "citation_check": {"markers": 12, "supported": 12, "unsupported": 0, "unknown": 0, "pass_rate": 1.0}}


def make_runs(root: Path, n: int) -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i in range(n):
        m = manifest(i, start + timedelta(minutes=i))
        d = root / m["run_id"]
        (d / "agents").mkdir(parents=True)
        (d / "manifest.json").write_text(json.dumps(m, indent=2))


def wall(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    research = shutil.which("research", path=str(Path(sys.executable).parent)) or "research"
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big", Path(tmp) / "small"
        t = time.perf_counter()
        make_runs(big, args.runs)
        make_runs(small, min(100, args.runs))
        print(f"made {args.runs} run directories in {time.perf_counter() - t:.1f}s "
              f"(manifest {len(json.dumps(manifest(0, datetime.now(timezone.utc)), indent=2))} bytes each)")
        floor = wall([research, "--help"], args.repeat)
        default = wall([research, "runs", "--runs-dir", str(big)], args.repeat)
        few = wall([research, "runs", "--runs-dir", str(small)], args.repeat)
        rare = wall([research, "runs", "--runs-dir", str(big), "--status", "failed"], args.repeat)
        full = wall([research, "runs", "--runs-dir", str(big), "-n", "0", "--json"], 1)
    print(f"research --help {floor * 1000:.0f} ms; research runs: {min(100, args.runs)} runs {few * 1000:.0f} ms, "
          f"{args.runs} runs {default * 1000:.0f} ms (ratio {default / few:.2f})")
    print(f"  --status failed (1% of runs) {rare * 1000:.0f} ms; full scan -n 0 --json {full * 1000:.0f} ms "
          f"({(full - floor) / args.runs * 1e6:.0f} µs per run)")
    ratio = default / floor
    ok = ratio <= GOAL or default - floor <= 1.0
    print(f"default listing / research --help: {ratio:.2f} (goal <= {GOAL} or within 1 s: {'PASS' if ok else 'MISS'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
