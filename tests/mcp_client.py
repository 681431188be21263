"""One MCP session with `memvault mcp` through the SDK's own stdio client, for the tests of the tools."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import MEMVAULT
from tests.reliability.conftest import HASH_ENV


def run_session(layout, user_root, body: Callable[[ClientSession], Awaitable[None]]) -> None:
    """`body` run in an initialised session over the vault (the hash embedder, its own user vault)."""
    env = {**os.environ, **HASH_ENV, "MEMVAULT_VAULT": str(layout.root), "MEMVAULT_USER_VAULT": str(user_root)}
    params = StdioServerParameters(command=MEMVAULT, args=["mcp"], env=env, cwd=str(layout.root.parent))

    async def run() -> None:
        with anyio.fail_after(300):  # a bound that only catches a hang
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await body(session)

    anyio.run(run)
