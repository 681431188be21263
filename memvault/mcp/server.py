"""The MCP server over stdio: the tools of `memvault.mcp.tools`, and the vault's daemon started when none
runs, so a saved entry is searchable in the next call."""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Callable
from typing import Any

from memvault.api import Vault
from memvault.mcp.resources import add_resources
from memvault.mcp.tools import MemoryTools
from memvault.scopes import Scopes
from memvault.vault.errors import MemvaultError

log = logging.getLogger("memvault")

INSTRUCTIONS = """\
memvault is this user's long-term memory: Markdown notes (a daily log and a sectioned MEMORY.md) in a
project vault, and a user vault for what holds in every project. Search it before you answer questions
about the user, the project or past work, and before you save, so you update an entry instead of adding
a duplicate. Save lasting facts: the user's preferences, decisions and their reasons, constraints,
solutions to problems that took effort, configuration. Do not save one-off chatter, secrets or
anything the user asked you to keep out. Call memory_context at the start of a task for a prompt-ready
block."""


# what each tool does to the vault, for the agent's host (MCP tool annotations); nothing reaches outside it
READ_ONLY = {"memory_search", "memory_get", "memory_list", "memory_context", "memory_status", "memory_sections",
             "memory_trash"}  # fmt: skip
DESTRUCTIVE = {"memory_forget"}  # to the trash, restorable, but gone from recall
IDEMPOTENT = READ_ONLY | {"memory_save"}  # the same save twice writes once


def build_server(vault: Vault) -> Any:
    """The MCP server for one project vault (and the user vault beside it)."""
    from importlib.metadata import version

    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("memvault", instructions=INSTRUCTIONS, version=version("memvault"))
    add_resources(server, vault)
    for tool in MemoryTools(vault).all():
        name = tool.__name__
        hints = ToolAnnotations(read_only_hint=name in READ_ONLY, destructive_hint=name in DESTRUCTIVE,
                                idempotent_hint=name in IDEMPOTENT, open_world_hint=False)  # fmt: skip
        server.add_tool(compact(tool), description=inspect.cleandoc(tool.__doc__ or ""), annotations=hints)
    return server


def compact(tool: Callable[..., Any]) -> Callable[..., Any]:
    """The tool with its result sent as structured content and as compact JSON text (the SDK's own text
    is indented: 28 % more of an agent's context for the same fields); its signature, and so its
    schemas, stay the tool's."""
    from mcp.types import CallToolResult, TextContent

    @functools.wraps(tool)
    def call(*args: Any, **kwargs: Any) -> CallToolResult:
        data = tool(*args, **kwargs)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    call.__signature__ = inspect.signature(tool, eval_str=True)  # type: ignore[attr-defined]  # without `self`
    return call


def serve(vault: Vault, idle_exit: float) -> None:
    """Serve stdio, each vault's daemon held for the session: one it starts (none ran) stops with the
    session when no other client holds it, and else `idle_exit` seconds after the last one let go and
    no request came, so a session killed before its end leaves no daemon behind either."""
    from memvault.daemon.client import hold, holders

    started: list[Vault] = []
    held: list[tuple[Vault, Any]] = []
    with Scopes(vault) as scopes:
        for _, each in scopes.read("all"):
            if not each.daemon_status()["running"]:
                try:
                    each.start_daemon(["--idle-exit", f"{idle_exit:g}"])
                    started.append(each)
                except MemvaultError as exc:  # the tools still work, in this process
                    log.warning(f"{each.root}: no daemon ({exc}); answering here")
            if (conn := hold(each.layout)) is not None:
                held.append((each, conn))
        try:
            build_server(vault).run("stdio")
        finally:
            for each, conn in held:
                alone = holders(each.layout) <= 1
                conn.close()
                if each not in started or not alone:
                    continue
                try:
                    each.stop_daemon()
                except MemvaultError as exc:
                    log.warning(f"{each.root}: the daemon this session started did not stop: {exc}")
