"""Rate limits that would stall or unbound a run are usage errors: 0, negative, nan, inf, and
absurdly small values such as 1e-300 (one request in 10^300 minutes)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lead_agent.settings import UsageError, resolve_settings
from subagents.models.ratelimit import RateLimiter

from .conftest import run_cli


BAD = [("requests_per_minute", v) for v in (0, -5, math.nan, math.inf, 1e-300, 0.5)] + \
      [("tokens_per_minute", v) for v in (0, math.nan, -math.inf, 1e-300, 10)]


@pytest.mark.parametrize("name, value", BAD)
def test_absurd_rate_limit_is_a_usage_error(name: str, value: float) -> None:
    flag = "--" + name.replace("_", "-")
    with pytest.raises(UsageError, match=f"^{flag} must be a finite number of at least"):
        resolve_settings({"question": "q?", name: value}, environ={}, use_config_file=False)


@pytest.mark.parametrize("flag, value", [("--requests-per-minute", "1e-300")])
def test_cli_absurd_rate_limit_exits_2_writing_nothing(tmp_path: Path, cache_env: Path, flag: str, value: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nWidget gears are aligned by a shaft.\n")
    proc = run_cli("run", "How are widget gears aligned?", "--corpus", str(docs), "--runs-dir", "runs",
                   f"{flag}={value}", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"research: error: {flag} must be a finite number of at least")
    assert not (tmp_path / "runs").exists() and not cache_env.exists()


@pytest.mark.parametrize("key, value", [("requests_per_minute", "1e-300"), ("tokens_per_minute", "nan"),
                                        ("requests_per_minute", "0")])
def test_config_file_absurd_rate_limit_is_a_usage_error(tmp_path: Path, key: str, value: str) -> None:
    cfg = tmp_path / "research.toml"
    cfg.write_text(f"{key} = {value}\n")
    with pytest.raises(UsageError):
        resolve_settings({"question": "q?"}, environ={"RESEARCH_CONFIG": str(cfg)})


def test_sensible_rate_limits_are_kept() -> None:
    s = resolve_settings({"question": "q?", "requests_per_minute": 1, "tokens_per_minute": 40_000.5}, environ={},
                         use_config_file=False)
    assert (s.models.requests_per_minute, s.models.tokens_per_minute) == (1, 40_000.5)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf])
def test_rate_limiter_refuses_non_finite_limits(bad: float) -> None:
    with pytest.raises(ValueError):
        RateLimiter(requests_per_minute=bad if bad else -1)
    with pytest.raises(ValueError):
        RateLimiter(tokens_per_minute=bad if bad else -1)
