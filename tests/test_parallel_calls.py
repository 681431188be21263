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


WORDS = [f"harbour{a}{b}" for a in "bcdfghjk" for b in "aeiou"]  # 40 words no other fact holds
CALLS = 1000
AT_ONCE = 16


def _plan(seed: int) -> list[tuple[str, int]]:
    """1,000 calls in a random mix: a search for one fact's word, a list by its key, a new save, a
    status; each checkable against what was asked (the reply must be that call's, not another's)."""
    import random

    rnd = random.Random(seed)
    return [(rnd.choice(("search", "search", "list", "save", "status")), rnd.randrange(len(WORDS)))
            for _ in range(CALLS)]  # fmt: skip


def _right_reply(what: str, i: int, n: int, data: dict) -> bool:
    word = WORDS[i]
    if what == "search":
        return bool(data["hits"]) and word in data["hits"][0]["snippet"]
    if what == "list":
        return [e["key"] for e in data["entries"]] == [f"fact-{i}"] and word in data["entries"][0]["text"]
    if what == "save":
        return data["status"] == "added" and data["path"] == "MEMORY.md"
    return data["files_on_disk"] >= 1


async def _thousand_tool_calls(layout, user_root) -> None:
    import json
    import os

    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from tests.conftest import MEMVAULT

    env = {**os.environ, **HASH_ENV, "MEMVAULT_VAULT": str(layout.root), "MEMVAULT_USER_VAULT": str(user_root)}
    params = StdioServerParameters(command=MEMVAULT, args=["mcp"], env=env, cwd=str(layout.root.parent))
    plan = _plan(29)
    tools = {"search": "memory_search", "list": "memory_list", "save": "memory_save", "status": "memory_status"}
    with anyio.fail_after(900):  # a bound that only catches a hang
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for i, word in enumerate(WORDS):
                saved = await session.call_tool("memory_save", {"text": f"The {word} pier is open", "type": "config",
                                                                "key": f"fact-{i}"})  # fmt: skip
                assert not saved.is_error, saved.content
            limit = anyio.CapacityLimiter(AT_ONCE)
            wrong: list = []

            async def one(n: int, what: str, i: int) -> None:
                args = {"search": {"query": WORDS[i], "mode": "bm25", "scope": "project"},
                        "list": {"key": f"fact-{i}"}, "status": {},
                        "save": {"text": f"Call {n} saw the {WORDS[i]} pier", "type": "discovery"}}[what]  # fmt: skip
                async with limit:
                    result = await session.call_tool(tools[what], args)
                data = None if result.is_error else json.loads(result.content[0].text)
                if data is None or not _right_reply(what, i, n, data):
                    wrong.append((n, what, WORDS[i], result.content[0].text[:200]))

            async with anyio.create_task_group() as tasks:
                for n, (what, i) in enumerate(plan):
                    tasks.start_soon(one, n, what, i)
            assert wrong == [], (len(wrong), wrong[:5])


def test_a_thousand_mixed_mcp_calls_sixteen_at_a_time_each_get_their_own_reply(layout, cli, user_root):
    """Issue 29: 1,000 calls from one MCP session, up to 16 in flight: no error, and each reply is the
    one its call asked for (a search finds its own word first, a list its own key)."""
    import anyio

    assert cli("init", "--lang", "en").returncode == 0
    try:
        anyio.run(_thousand_tool_calls, layout, user_root)
    finally:
        cli("daemon", "stop")


def test_a_thousand_mixed_async_api_calls_each_get_their_own_reply(layout, cli, monkeypatch):
    """The same mix from a host's event loop (`asyncio.to_thread`, 16 at a time) on one `Vault`."""
    import asyncio

    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash-384")
    assert cli("init", "--lang", "en").returncode == 0
    start_daemon(cli, layout.root, env=HASH_ENV)

    async def run(v: Vault) -> list:
        for i, word in enumerate(WORDS):
            v.remember(f"The {word} pier is open", type="config", key=f"fact-{i}")
        limit = asyncio.Semaphore(AT_ONCE)

        async def one(n: int, what: str, i: int) -> tuple | None:
            async with limit:
                if what == "search":
                    r = await asyncio.to_thread(v.search_result, WORDS[i], mode="bm25")
                    data = {"hits": [h.to_json() for h in r.hits]}
                elif what == "list":
                    r = await asyncio.to_thread(v.entries, key=f"fact-{i}")
                    data = {"entries": r.entries}
                elif what == "save":
                    r = await asyncio.to_thread(v.remember, f"Call {n} saw the {WORDS[i]} pier", type="discovery")
                    data = {"status": r.status, "path": r.path}
                else:
                    data = await asyncio.to_thread(v.status)
            return None if _right_reply(what, i, n, data) else (n, what, WORDS[i], str(data)[:200])

        return [w for w in await asyncio.gather(*(one(n, what, i) for n, (what, i) in enumerate(_plan(31)))) if w]

    try:
        with Vault(layout.root) as v:
            wrong = asyncio.run(run(v))
        assert wrong == [], (len(wrong), wrong[:5])
    finally:
        cli("daemon", "stop")
