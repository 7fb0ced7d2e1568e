"""How fast `research --help` starts: whole-process wall time (median of N), against the bare
interpreter and against a process that imports the run machinery (`lead_agent.api`), which is what
`--help` loaded before the CLI imported it lazily; and the slowest imports from `python -X importtime`.

    python bench/bench_startup.py [--repeat 10]

Goal: `research --help` in at most 60% of the time of importing the run machinery.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL = 0.6


def wall(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def slowest_imports(module: str, n: int = 5) -> list[tuple[int, str]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                          text=True, check=True)
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    research = shutil.which("research", path=str(Path(sys.executable).parent)) or "research"
    floor = wall([sys.executable, "-c", "pass"], args.repeat)
    machinery = wall([sys.executable, "-c", "import lead_agent.api"], args.repeat)
    helps = wall([research, "--help"], args.repeat)
    print(f"median of {args.repeat} runs: python -c pass {floor * 1000:.0f} ms; "
          f"import lead_agent.api {machinery * 1000:.0f} ms; research --help {helps * 1000:.0f} ms")
    ratio = helps / machinery
    print(f"research --help / run machinery import: {ratio:.2f} (goal <= {GOAL}: {'PASS' if ratio <= GOAL else 'MISS'})")
    print("slowest imports of lead_agent.cli (cumulative µs):")
    for us, name in slowest_imports("lead_agent.cli"):
        print(f"  {us:>8} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
