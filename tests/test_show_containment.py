"""`research show` (and `read_run`) never read outside the run directory: symlinked files and
manifest paths that lead out are refused and named, never followed."""

from __future__ import annotations

import json
from pathlib import Path

from lead_agent.api import research_sync
from subagents.runs import read_run

from .conftest import run_cli

SECRET = "TOP-SECRET-OUTSIDE-THE-RUN"


def a_run(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gears.md").write_text("# Gears\n\nThe gears of a widget are aligned by turning the main shaft.\n")
    (docs / "pumps.md").write_text("# Pumps\n\nA pump moves water through the pipes of the plant.\n")
    result = research_sync("How are widget gears aligned?", corpus=[docs], runs_dir=tmp_path / "runs",
                           cache_dir=tmp_path / "cache", use_config_file=False, environ={})
    assert result.status == "completed"
    return result.run_dir


def outside_files(tmp_path: Path, run_dir: Path) -> dict[str, Path]:
    """Files beside the run holding a secret, shaped like what the run would read."""
    out = tmp_path / "outside"
    out.mkdir()
    lead = json.loads((run_dir / "agents" / "lead.jsonl").read_text().splitlines()[0])
    lead["agent_id"] = "intruder"
    lead["data"]["question"] = SECRET
    files = {"jsonl": out / "intruder.jsonl", "report": out / "report.md", "sources": out / "sources.json"}
    files["jsonl"].write_text(json.dumps(lead) + "\n")
    files["report"].write_text(f"# {SECRET}\n")
    sources = json.loads((run_dir / "sources.json").read_text())
    sources[0]["title"] = sources[0]["text"] = SECRET
    files["sources"].write_text(json.dumps(sources))
    return files


def test_show_refuses_symlinks_and_manifest_paths_leading_outside(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    files = outside_files(tmp_path, run_dir)
    (run_dir / "agents" / "intruder.jsonl").symlink_to(files["jsonl"])
    (run_dir / "report.md").unlink()
    (run_dir / "report.md").symlink_to(files["report"])
    (run_dir / "sources.json").unlink()
    (run_dir / "sources.json").symlink_to(files["sources"])
    m = json.loads((run_dir / "manifest.json").read_text())
    m["agents"][0]["transcript"] = "../../outside/intruder.jsonl"
    m["plans"].append(str(files["report"]))
    (run_dir / "manifest.json").write_text(json.dumps(m))

    run = read_run(run_dir)
    assert run.report is None and run.sources == [] and "intruder" not in run.trace.agents
    assert len(run.refused) == 5
    show = run_cli("show", str(run_dir), cwd=tmp_path)
    assert show.returncode == 0, show.stderr
    assert SECRET not in show.stdout + show.stderr
    refused = [line for line in show.stdout.splitlines() if line.startswith("Refused (not read):")]
    assert len(refused) == 5
    assert any("agents/intruder.jsonl" in line for line in refused)
    assert any("../../outside/intruder.jsonl" in line for line in refused)
    assert "report: none" in show.stdout


def test_a_symlinked_agents_directory_is_not_followed(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    files = outside_files(tmp_path, run_dir)
    (run_dir / "agents").rename(run_dir / "agents.real")
    (run_dir / "agents").symlink_to(files["jsonl"].parent)
    run = read_run(run_dir)
    assert "intruder" not in run.trace.agents and any("intruder.jsonl" in r for r in run.refused)
    (run_dir / "agents").unlink()
    (run_dir / "agents.real").rename(run_dir / "agents")
    assert read_run(run_dir).refused == []
