"""The MCP set-up for each host, to paste: this installation's memvault, and the vault by absolute path
when one was named (the same vault whatever folder the host starts it in), else none: each project's."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from memvault.vault.errors import UsageError
from memvault.vault.paths import Layout

HOSTS = ("claude-code", "codex", "cursor")


def memvault_program() -> list[str]:
    """This installation's memvault by absolute path: its console script, else the interpreter and module."""
    script = Path(sys.executable).parent / "memvault"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "memvault.cli"]


def server_command(layout: Layout | None) -> list[str]:
    """This vault by absolute path, or (`layout` None) none: the server then serves the project vault of
    the folder the host starts it in (Claude Code and Codex start it in the session's project)."""
    vault = ["--vault", str(layout.root.resolve())] if layout is not None else []
    return [*memvault_program(), *vault, "mcp"]


def mcp_config(layout: Layout | None, host: str) -> str:
    command, *args = server_command(layout)
    if host == "claude-code":  # `claude mcp add NAME -- COMMAND ARGS...`; --scope user for every project
        return f"claude mcp add --scope user memvault -- {shlex.join([command, *args])}\n"
    if host == "codex":  # ~/.codex/config.toml
        return f"[mcp_servers.memvault]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
    if host == "cursor":  # ~/.cursor/mcp.json, or .cursor/mcp.json in a repository
        return json.dumps({"mcpServers": {"memvault": {"command": command, "args": args}}}, indent=2) + "\n"
    raise UsageError(f"{host!r}: no such host; use one of {', '.join(HOSTS)}")
