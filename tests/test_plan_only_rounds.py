"""`--plan-only` stops at every plan; when it stops at a later round's plan, what it prints names the
subagents that already ran instead of saying none did (audit defect 10)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run_cli


def test_a_run_stopped_at_its_gap_round_plan_says_which_subagents_ran(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lists.md").write_text("# Lists\n\nLists are mutable sequences, typically used to store collections of "
                                   "homogeneous items.\n\nA list can be sorted in place with its sort method.\n")
    (docs / "str.md").write_text("# Strings\n\nStrings are immutable sequences of Unicode code points.\n")
    env = {"RESEARCH_CACHE_DIR": str(tmp_path / "cache")}
    first = run_cli("run", "Compare lists and tuples", "--corpus", str(docs), "--runs-dir", str(tmp_path / "runs"),
                    "--plan-only", "-q", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    assert "(plan.v1.json); no subagents ran." in first.stdout
    (run_dir,) = list((tmp_path / "runs").iterdir())

    again = run_cli("approve", str(run_dir), "-q", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    m = json.loads((run_dir / "manifest.json").read_text())
    ran = [a["agent_id"] for a in m["agents"] if a["role"] == "subagent"]
    assert m["status"] == "awaiting_approval" and ran and m["plan_versions"][-1]["round"] == 2
    assert "no subagents ran" not in again.stdout
    assert f"{len(ran)} subagent(s) ran before round 2's plan ({', '.join(ran)})" in again.stdout

