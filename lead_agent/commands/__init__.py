"""The subcommands of `research` (see lead_agent/cli.py)."""
