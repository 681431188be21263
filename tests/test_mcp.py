"""`memvault mcp` driven by the MCP SDK's own client over stdio: tools listed, an entry saved, found
in the same session (through the daemon the server started), read, forgotten; bad arguments are
tool errors and the server keeps serving."""

from __future__ import annotations

import json
import os

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import MEMVAULT
from tests.reliability.conftest import HASH_ENV

TOOLS = {"memory_search", "memory_get", "memory_save", "memory_forget", "memory_restore", "memory_correct",
         "memory_list", "memory_context", "memory_status", "memory_extract", "memory_sections",
         "memory_trash", "memory_summaries"}  # fmt: skip


def _data(result) -> dict:
    """The tool's result; its structured half (checked by the SDK against the tool's output schema) must
    say all the text half says: a key the schema lacks would be dropped from it."""
    assert not result.is_error, result.content
    text = result.content[0].text
    data = json.loads(text)
    assert result.structured_content == data and text == json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return data


async def _session(layout, user_root) -> None:
    env = {**os.environ, **HASH_ENV, "MEMVAULT_VAULT": str(layout.root), "MEMVAULT_USER_VAULT": str(user_root)}
    params = StdioServerParameters(command=MEMVAULT, args=["mcp"], env=env, cwd=str(layout.root.parent))
    with anyio.fail_after(300):  # a bound that only catches a hang
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await _tools(session)


async def _tools(session: ClientSession) -> None:
    """The whole session: tools listed, an entry saved, found, read, corrected, forgotten; bad calls."""
    started = await session.initialize()
    assert started.server_info.name == "memvault" and started.server_info.version  # the package's version
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():  # typed results: every tool's fields named, with their types
        schema = tool.output_schema
        assert schema["type"] == "object" and schema.get("properties") and schema.get("required"), name
        assert all("type" in p or "anyOf" in p or "$ref" in p for p in schema["properties"].values()), name
    hit = tools["memory_search"].output_schema["$defs"]["Hit"]
    assert {"source", "snippet", "score"} <= set(hit["required"]) and "key" not in hit["required"]
    assert "search" in tools["memory_save"].description.lower()  # it tells an agent to search first
    assert all("\n    " not in t.description for t in tools.values())  # no docstring indentation
    hints = {name: (t.annotations.read_only_hint, t.annotations.destructive_hint) for name, t in tools.items()}
    assert hints["memory_search"] == (True, False) and hints["memory_forget"] == (False, True)
    assert hints["memory_save"] == (False, False) and tools["memory_save"].annotations.idempotent_hint
    saved = _data(await session.call_tool("memory_save", {
        "text": "The staging database is on port 6543", "type": "config", "key": "staging-db"}))  # fmt: skip
    assert saved == {
        "path": "MEMORY.md",
        "section": "Configuration",
        "status": "added",
        "trashed": None,
        "superseded": None,
        "created_section": False,
        "indexed": True,
        "scope": "project",
    }
    sections = _data(await session.call_tool("memory_sections", {}))["sections"]
    assert {k: v for k, v in sections[-1].items() if k != "line"} == {"title": "Configuration", "items": 1}
    assert (await session.call_tool("memory_sections", {"scope": "user"})).is_error  # no user vault yet
    again = _data(await session.call_tool("memory_save", {"text": "The staging database is on port 6543",
                                                          "type": "config"}))  # fmt: skip
    assert again["status"] == "unchanged"
    found = _data(await session.call_tool("memory_search", {"query": "staging database port", "mode": "bm25"}))
    hit = found["hits"][0]  # read-your-writes: the daemon indexed it before the save returned
    assert hit["source"].startswith("MEMORY.md#L") and hit["scope"] == "project" and "6543" in hit["snippet"]
    start, end = hit["source"].split("#L")[1].split("-L")
    got = _data(await session.call_tool("memory_get", {"path": "MEMORY.md", "start_line": int(start),
                                                       "end_line": int(end)}))  # fmt: skip
    assert "port 6543" in got["text"] and got["source"] == hit["source"]
    assert (hit["unit"], hit["key"], hit["entry_id"]) == ("entry", "staging-db", "staging-db")  # one entry, named
    assert _data(await session.call_tool("memory_get", {"path": hit["source"]})) == got  # the source as the path
    section = _data(await session.call_tool("memory_get", {"path": "memory", "section": "Configuration"}))
    assert section["text"].startswith("## Configuration") and "6543" in section["text"]
    listed = _data(await session.call_tool("memory_list", {"key": "staging-db"}))
    assert listed["total"] == 1 and listed["entries"][0]["section"] == "Configuration"
    context = _data(await session.call_tool("memory_context", {"query": "which port is staging on?"}))
    assert "<memory-context" in context["text"] and "6543" in context["text"]
    assert any("6543" in item["text"] for item in context["recall"]) and "stable" in context
    resources = {str(r.uri): r for r in (await session.list_resources()).resources}  # issue 29: notes to attach
    assert set(resources) == {"memory://project/MEMORY.md", "memory://project/today", "memory://project/catalog"}
    memory_md = (await session.read_resource("memory://project/MEMORY.md")).contents[0]
    assert "port 6543" in memory_md.text and memory_md.mime_type == "text/markdown"
    assert (await session.read_resource("memory://project/catalog")).contents[0].text.strip()
    assert [p.name for p in (await session.list_prompts()).prompts] == ["recall"]
    asked = await session.get_prompt("recall", {"question": "which port is staging on?"})
    said = asked.messages[0].content.text
    assert "<memory-context" in said and "6543" in said and said.endswith("which port is staging on?")

    status = _data(await session.call_tool("memory_status", {}))
    assert status["files_indexed"] >= 1 and status["memory"]["project"]["current"] == 1  # what an agent has
    assert status["memory"]["project"]["keyed"] == 1 and "user" not in status["memory"]  # no user vault yet
    extracted = _data(
        await session.call_tool(
            "memory_extract",
            {
                "messages": [
                    {"role": "user", "content": "We decided to ship on Tuesdays."},
                    {"role": "assistant", "content": "OK."},
                ]
            },
        )
    )
    assert extracted["path"].startswith("daily/") and extracted["proposals"][0]["kind"] == "decision"
    liking = {"text": "Likes short commit messages", "tags": ["preference"]}
    mine = _data(await session.call_tool("memory_save", liking))
    assert mine["scope"] == "user"  # the save created the user vault mid-session: it is searched from its index
    assert mine["path"] == "MEMORY.md"  # a preference, tagged so: in the stable block of every prompt (issue 27)
    stable = _data(await session.call_tool("memory_context", {}))["text"].split("</memory-stable>")[0]
    assert "Likes short commit messages" in stable, stable
    liked = _data(await session.call_tool("memory_search", {"query": "short commit messages", "scope": "user"}))
    assert liked["answered_by"] == "hybrid" and "commit messages" in liked["hits"][0]["snippet"], liked
    assert liked["floor"]["passed"] >= 1 and liked["nothing_relevant"] is False  # the floor is on by default
    helm = {"query": "kubernetes helm chart"}  # issue 27, case 8: nothing about it, and the reply says so
    nothing = _data(await session.call_tool("memory_search", helm))
    assert nothing["hits"] == [] and nothing["nothing_relevant"] is True and nothing["floor"]["min_similarity"] == 0.1
    unfloored = _data(await session.call_tool("memory_search", {**helm, "min_similarity": None}))
    assert unfloored["floor"] is None and unfloored["nothing_relevant"] is False
    auto = _data(await session.call_tool("memory_search", {**helm, "min_similarity": "auto", "mode": "bm25"}))
    assert auto["floor"] is None  # a keyword search has no cosine to cut on: no floor rather than an error
    page = _data(await session.call_tool("memory_list", {"limit": 1}))
    assert len(page["entries"]) == 1 and page["total"] >= 2 and page["next_offset"] == 1
    rest = _data(await session.call_tool("memory_list", {"offset": page["next_offset"], "limit": 200}))
    assert len(rest["entries"]) == page["total"] - 1 and rest["next_offset"] is None
    for bad in (
        ("memory_search", {"query": "x", "limit": "many"}), ("memory_search", {}),
        ("memory_search", {"query": "x", "mode": "psychic"}), ("memory_get", {"path": "../../etc/passwd"}),
        ("memory_save", {"text": "x", "key": "a\nb"}), ("memory_forget", {"key": "no-such-key"}),
        ("memory_save", {"text": "api_key = sk-abcdefghijklmnopqrstuvwxyz123456"}),
        ("memory_get", {"path": "memory", "start_line": 0}), ("memory_get", {"path": "memory", "start_line": 500}),
        ("memory_get", {"path": "memory", "start_line": 5, "end_line": 2}),
        ("memory_get", {"path": "memory", "section": "Nope"}),
    ):  # fmt: skip
        result = await session.call_tool(*bad)
        assert result.is_error, bad
        if bad[0] == "memory_get":  # memvault's own refusal, in one line that says why
            said = result.content[0].text.strip()
            why = ("1-based", "past its end", "'Configuration'", "'..'")
            assert "\n" not in said and any(w in said for w in why), said
        if bad[0] == "memory_forget":  # nothing matched: the refusal names the call that finds it
            assert "no entry" in result.content[0].text and "memory_search finds it" in result.content[0].text
    fixed = _data(await session.call_tool("memory_correct", {"key": "staging-db", "text": "Staging moved to 7654"}))
    assert fixed["superseded"].startswith("MEMORY.md:") and fixed["correction"].startswith("daily/")
    first = _data(await session.call_tool("memory_search", {"query": "staging database port", "mode": "bm25"}))
    assert "7654" in first["hits"][0]["snippet"]  # the correction ranks above the entry it corrects
    old = next(h for h in first["hits"] if "6543" in h["snippet"])
    forgot = _data(await session.call_tool("memory_forget", {"where": old["source"]}))  # a hit's source is a place
    assert forgot["removed"].startswith("MEMORY.md:") and forgot["trash_id"]
    trashed = _data(await session.call_tool("memory_trash", {}))["items"]
    assert [t["origin"] for t in trashed if t["id"] == forgot["trash_id"]] == ["MEMORY.md"]
    gone = _data(await session.call_tool("memory_search", {"query": "staging database port", "mode": "bm25"}))
    assert not any("6543" in h["snippet"] for h in gone["hits"])


def test_mcp_session_over_stdio(layout, user_root, cli):
    assert cli("init", "--lang", "en").returncode == 0
    try:
        anyio.run(_session, layout, user_root)  # the server is `memvault mcp`, a process of its own
        stopped = cli("daemon", "status")
        assert stopped.returncode == 3, stopped.stdout  # the daemon the session started ended with it
    finally:
        cli("daemon", "stop")


def test_a_daemon_a_session_started_outlives_it_only_while_another_holds_it_or_until_idle(layout, user_root, cli):
    """Session A starts the daemon, B finds it running; A's end leaves it to B; B's end (B did not start
    it) leaves it to its idle exit; a session killed outright leaves it to the same idle exit."""
    import subprocess
    import time

    from memvault.daemon.client import holders
    from memvault.daemon.files import read_pid
    from tests.reliability.conftest import pid_gone, wait_for

    assert cli("init", "--lang", "en").returncode == 0
    env = {**os.environ, **HASH_ENV, "MEMVAULT_VAULT": str(layout.root), "MEMVAULT_USER_VAULT": str(user_root)}

    def session() -> subprocess.Popen:
        quiet = subprocess.DEVNULL
        return subprocess.Popen([MEMVAULT, "mcp", "--daemon-idle", "1"], env=env, cwd=str(layout.root.parent),
                                stdin=subprocess.PIPE, stdout=quiet, stderr=quiet)  # fmt: skip

    try:
        a = session()
        pid = wait_for(lambda: read_pid(layout) if holders(layout) == 1 else None, 120)
        b = session()
        wait_for(lambda: holders(layout) == 2, 120)
        a.stdin.close()  # A's session ends: another holds the daemon, so it stays
        assert a.wait(timeout=60) == 0
        time.sleep(2.5)  # longer than its idle exit: held, it does not go
        assert not pid_gone(pid) and holders(layout) == 1
        b.stdin.close()
        assert b.wait(timeout=60) == 0
        wait_for(lambda: pid_gone(pid), 60)  # nobody holds it, no request: its idle exit
        c = session()
        pid = wait_for(lambda: read_pid(layout) if holders(layout) == 1 else None, 120)
        c.kill()  # a host that kills its MCP server: the kernel closes the hold
        c.wait(timeout=60)
        wait_for(lambda: pid_gone(pid), 60)
    finally:
        cli("daemon", "stop")
