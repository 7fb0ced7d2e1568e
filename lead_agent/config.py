"""Settings from a config file and the environment; the CLI overrides both.

Precedence: command-line flag > environment variable > config file > built-in default.
The config file is TOML: `$RESEARCH_CONFIG`, else `./research.toml`, else
`~/.config/research-agents/config.toml`. Keys (all optional):

    lead_model = "claude-opus-4-6"        # env RESEARCH_LEAD_MODEL
    subagent_model = "claude-haiku-4-5"   # env RESEARCH_SUBAGENT_MODEL
    provider = "anthropic"                # env RESEARCH_PROVIDER
    base_url = "http://localhost:11434/v1"
    requests_per_minute = 50              # one limiter shared by every agent of a run
    tokens_per_minute = 40000
    timeout = 120                         # seconds per model call
    max_retries = 4
    context_window = 200000               # tokens; subagent contexts are condensed near 75% of it
    allow_private_network = false         # web fetches of intranet / loopback addresses
    cache = "read-through"                # web cache: read-through, record, replay, off

API keys are never read from the config file: use ANTHROPIC_API_KEY / OPENAI_API_KEY.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

KEYS = {
    "lead_model": str, "subagent_model": str, "provider": str, "base_url": str,
    "requests_per_minute": (int, float), "tokens_per_minute": (int, float), "timeout": (int, float),
    "max_retries": int, "context_window": int, "allow_private_network": bool, "cache": str,
}
ENV = {"lead_model": "RESEARCH_LEAD_MODEL", "subagent_model": "RESEARCH_SUBAGENT_MODEL",
       "provider": "RESEARCH_PROVIDER"}


class ConfigError(ValueError):
    """A config file that cannot be read or holds an unknown key or a wrong type."""


def config_path(env: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    if env.get("RESEARCH_CONFIG"):
        p = Path(env["RESEARCH_CONFIG"])
        if not p.is_file():
            raise ConfigError(f"RESEARCH_CONFIG names a missing file: {p}")
        return p
    for p in (Path("research.toml"), Path.home() / ".config" / "research-agents" / "config.toml"):
        if p.is_file():
            return p
    return None


def load_settings(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Config file values overlaid with environment values."""
    env = os.environ if env is None else env
    settings: dict[str, Any] = {}
    path = config_path(env)
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read config {path}: {e}") from None
        for key, value in data.items():
            if key not in KEYS:
                raise ConfigError(f"config {path}: unknown key {key!r} (known: {', '.join(sorted(KEYS))})")
            if not isinstance(value, KEYS[key]) or (isinstance(value, bool) and KEYS[key] is not bool):
                raise ConfigError(f"config {path}: {key} has the wrong type ({type(value).__name__})")
            if key in ("requests_per_minute", "tokens_per_minute", "timeout", "max_retries", "context_window") \
                    and value < (1000 if key == "context_window" else 0):
                raise ConfigError(f"config {path}: {key} is out of range ({value})")
            settings[key] = value
        settings["_path"] = str(path)
    for key, var in ENV.items():
        if env.get(var):
            settings[key] = env[var]
    return settings
