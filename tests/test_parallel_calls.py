"""One `Vault` (or the MCP server built on it) called from many threads at once, as agents call tools
in parallel and host programs use `asyncio.to_thread`: every call gets its own, whole reply."""

from __future__ import annotations

import concurrent.futures as cf

import pytest

from memvault import Vault
from memvault.verbs.notes import Saved
from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV


def _mixed_calls(v: Vault, n: int) -> list[tuple[str, object]]:
    """`n` rounds of save + search + list + status, all at once; returns (what, reply) pairs."""
    calls = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for i in range(n):
            calls.append(("note", pool.submit(v.note, f"parallel note number {i} about the lighthouse")))
            calls.append(("search", pool.submit(v.search_result, "lighthouse", mode="bm25", limit=50)))
            calls.append(("list", pool.submit(v.entries)))
            calls.append(("status", pool.submit(v.status)))
        return [(what, future.result(timeout=120)) for what, future in calls]


def _check(replies: list[tuple[str, object]], n: int) -> None:
    kinds = {"note": Saved, "list": object, "status": dict}
    for what, reply in replies:
        if what == "search":
            assert reply.source in ("bm25", "substring") and all("lighthouse" in h.text for h in reply.hits)
        elif what == "list":
            assert all("text" in e for e in reply.entries)
        else:
            assert isinstance(reply, kinds[what]), (what, reply)
    saved = [r for w, r in replies if w == "note"]
    assert {s.status for s in saved} == {"added"} and len(saved) == n


@pytest.mark.parametrize("through", ["daemon", "here"])
def test_parallel_calls_on_one_vault_each_get_their_reply(layout, cli, through, monkeypatch):
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash-384")
    assert cli("init", "--lang", "en").returncode == 0
    if through == "daemon":
        start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        with Vault(layout.root) as v:
            _check(_mixed_calls(v, 6), 6)
            listed = v.entries()
            assert sum("parallel note number" in e["text"] for e in listed.entries) == 6
    finally:
        if through == "daemon":
            cli("daemon", "stop")


async def _parallel_tools(layout, user_root) -> None:
    import json
    import os

    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from tests.conftest import MEMVAULT

    env = {**os.environ, **HASH_ENV, "MEMVAULT_VAULT": str(layout.root), "MEMVAULT_USER_VAULT": str(user_root)}
    params = StdioServerParameters(command=MEMVAULT, args=["mcp"], env=env, cwd=str(layout.root.parent))
    calls = [("memory_save", {"text": f"parallel fact {i} about the harbour", "type": "discovery"}) for i in range(8)]
    calls += [("memory_search", {"query": "harbour", "mode": "bm25"}), ("memory_list", {}), ("memory_status", {})] * 6
    with anyio.fail_after(300):  # a bound that only catches a hang
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            results: list = [None] * len(calls)

            async def one(i: int, name: str, args: dict) -> None:
                results[i] = await session.call_tool(name, args)

            async with anyio.create_task_group() as tasks:
                for i, (name, args) in enumerate(calls):
                    tasks.start_soon(one, i, name, args)
            for (name, _), result in zip(calls, results, strict=True):
                assert not result.is_error, (name, result.content)
                data = json.loads(result.content[0].text)
                expected = {"memory_save": "status", "memory_search": "hits", "memory_list": "entries",
                            "memory_status": "files_on_disk"}[name]  # fmt: skip
                assert expected in data, (name, data)
            listed = json.loads((await session.call_tool("memory_list", {})).content[0].text)
            assert sum("parallel fact" in e["text"] for e in listed["entries"]) == 8


def test_parallel_mcp_tool_calls_each_get_their_reply(layout, cli, user_root):
    import anyio

    assert cli("init", "--lang", "en").returncode == 0
    try:
        anyio.run(_parallel_tools, layout, user_root)
    finally:
        cli("daemon", "stop")
