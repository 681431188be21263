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
from memvault.mcp.params import described
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


def tool_annotations(tool: Callable[..., Any]) -> Any:
    """What a tool does to the vault, for the agent's host: read-only when none of the verbs it runs
    writes (`memvault.mcp.tools.runs`, `Request.writes`: the one place that says it); nothing reaches
    outside the vault."""
    from mcp.types import ToolAnnotations

    from memvault.verbs import verb

    ops, destructive, idempotent = tool.ops, tool.destructive, tool.idempotent  # type: ignore[attr-defined]
    writes = any(verb(op)[0].writes for op in ops)
    return ToolAnnotations(read_only_hint=not writes, destructive_hint=writes and destructive,
                           idempotent_hint=not writes or idempotent, open_world_hint=False)  # fmt: skip


def build_server(vault: Vault) -> Any:
    """The MCP server for one project vault (and the user vault beside it)."""
    from importlib.metadata import version

    from memvault.mcp.refusals import Server

    server = Server("memvault", instructions=INSTRUCTIONS, version=version("memvault"))
    add_resources(server, vault)
    for tool in MemoryTools(vault).all():
        described = inspect.cleandoc(tool.__doc__ or "")
        server.add_tool(compact(tool), description=described, annotations=tool_annotations(tool))
    return server


def compact(tool: Callable[..., Any]) -> Callable[..., Any]:
    """The tool with its result sent as structured content and as compact JSON text (the SDK's own text
    is indented: 28 % more of an agent's context for the same fields); its signature, and so its
    schemas, stay the tool's, every parameter described (`memvault.mcp.params`)."""
    from mcp.types import CallToolResult, TextContent

    @functools.wraps(tool)
    def call(*args: Any, **kwargs: Any) -> CallToolResult:
        data = tool(*args, **kwargs)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    call.__signature__ = described(tool)  # type: ignore[attr-defined]  # without `self`
    return call


def serve(vault: Vault, idle_exit: float, http: tuple[str, int] | None = None,
          ready: Callable[[str], None] = print) -> None:  # fmt: skip
    """Serve stdio, or streamable HTTP at `http` (host, port; `memvault.mcp.http`), each vault's daemon
    held for the session: one it starts (none ran) stops with the session when no other client holds
    it, and else `idle_exit` seconds after the last one let go and no request came, so a session killed
    before its end leaves no daemon behind either."""
    from memvault.daemon.client import hold, holders
    from memvault.vault.config import load_settings

    started: list[Vault] = []
    held: list[tuple[Vault, Any]] = []
    with Scopes(vault) as scopes:
        for _, each in scopes.read("all"):
            if not each.daemon_status()["running"] and load_settings(each.root).auto_index:  # (a person's switch)
                try:
                    each.start_daemon(["--idle-exit", f"{idle_exit:g}"])
                    started.append(each)
                except MemvaultError as exc:  # the tools still work, in this process
                    log.warning(f"{each.root}: no daemon ({exc}); answering here")
            if (conn := hold(each.layout)) is not None:
                held.append((each, conn))
        try:
            if http is None:
                build_server(vault).run("stdio")
            else:
                from memvault.mcp.http import serve_http

                serve_http(build_server(vault), *http, ready)
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
