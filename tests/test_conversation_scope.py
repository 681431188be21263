"""Seed 000's "this conversation / all" switch: an entry keeps the `[conversation:: ID]` it was saved
with, `list` carries it and narrows to one conversation, on the CLI and through MCP's own client."""

from __future__ import annotations

import json

from tests.mcp_client import run_session
from tests.reliability.conftest import HASH_ENV
from tests.test_mcp_surface import _data


def _two_conversations(cli) -> None:
    assert cli("init", "--lang", "en").returncode == 0
    for ident, said in (("conv-a", "We ship on Tuesdays"), ("conv-b", "The demo is on Friday")):
        messages = [{"role": "user", "content": said}, {"role": "assistant", "content": "Noted."}]
        done = cli("extract", "-", "--id", ident, "--title", f"talk {ident}", input=json.dumps(messages), env=HASH_ENV)
        assert done.returncode == 0, done.stderr
    assert cli("remember", "--type", "config", "The API key rotates monthly").returncode == 0


def test_list_narrows_to_one_conversation_and_carries_it(layout, cli):
    _two_conversations(cli)
    everything = json.loads(cli("list", "--json").stdout)["entries"]
    by = {e["conversation"] for e in everything}
    assert {"conv-a", "conv-b", None} <= by  # each entry says where it came from
    one = json.loads(cli("list", "--json", "--conversation", "conv-a").stdout)["entries"]
    assert one and all(e["conversation"] == "conv-a" for e in one)
    assert any("talk conv-a" in e["text"] for e in one) and not any("conv-b" in e["text"] for e in one)
    assert json.loads(cli("list", "--json", "--conversation", "nope").stdout)["entries"] == []


def test_memory_list_takes_a_conversation(layout, cli, user_root):
    _two_conversations(cli)

    async def body(session) -> None:
        listed = _data(await session.call_tool("memory_list", {"conversation": "conv-b"}))
        assert listed["total"] >= 1 and all(e["conversation"] == "conv-b" for e in listed["entries"])
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["memory_list"].input_schema["properties"]["conversation"]["description"]

    run_session(layout, user_root, body)


def test_export_narrows_to_one_conversation(layout, cli):
    _two_conversations(cli)
    document = json.loads(cli("export", "--conversation", "conv-b").stdout)
    assert document["count"] == len(document["entries"]) >= 1 and document["days"] == []
    assert all(e["conversation"] == "conv-b" for e in document["entries"])
    assert any("talk conv-b" in e["text"] for e in document["entries"])
    everything = json.loads(cli("export").stdout)
    assert everything["count"] > document["count"] and everything["days"] is not None
