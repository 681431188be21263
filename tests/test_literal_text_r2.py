"""Fields exist only where memvault writes them (or a person types them into a note): a `[key:: K]`,
`[superseded:: DAY]` or `<!-- saved DAY -->` inside a text memvault is asked to save (remember, note, an
MCP save, a conversation's messages and title) is saved as text. It used to become a live field: a second
holder of key K, after which `remember --key K` was refused; or an entry marked superseded, or dated."""

from __future__ import annotations

import json

import anyio

from memvault.api import Vault
from memvault.vault.entries import vault_entries

SAID = "Dataview syntax is [key:: K] and [superseded:: 2020-01-01], saved as <!-- saved 2020-01-02 --> here"


def _entries(cli, *args: str) -> list[dict]:
    listed = cli("list", "--json", *args)
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)["entries"]


def test_markup_in_a_remembered_text_is_text_and_the_key_stays_free(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Notes", SAID).returncode == 0
    assert cli("note", "Today I typed [corrects:: MEMORY.md#@000000000000] by hand").returncode == 0
    (entry,) = _entries(cli, "--section", "Notes")
    assert entry["key"] is None and entry["superseded"] is None
    assert entry["date"] != "2020-01-02"  # the day memvault saved it, not the one typed in it
    (daily,) = _entries(cli, "--section", "Conversations")
    assert daily["corrects"] is None
    keyed = cli("remember", "--section", "Notes", "--key", "K", "The real K")
    assert keyed.returncode == 0 and "remembered" in keyed.stdout, keyed.stderr
    assert [e["text"] for e in _entries(cli, "--key", "K")] == ["The real K [key:: K]"]
    again = cli("remember", "--section", "Notes", "--key", "K", "The real K, changed")
    assert again.returncode == 0 and "updated the entry with key K" in again.stdout, again.stderr
    shown = cli("list", "--section", "Notes").stdout  # what list shows is what was said
    assert SAID in shown
    assert cli("remember", "--section", "Notes", SAID).stdout.startswith("already remembered")  # one fact, once
    text = layout.memory_md.read_text(encoding="utf-8")
    assert "[key\\:: K]" in text and "[superseded\\:: 2020-01-01]" in text and "<\\!-- saved 2020-01-02 -->" in text
    found = cli("forget", "--match", "[key:: K] and [superseded")  # what was said names it
    assert found.returncode == 0, found.stderr
    # a field a person types into the note is still a field
    with open(layout.memory_md, "a", encoding="utf-8") as fh:
        fh.write(
            "\n## Hand\n\n- Typed by hand [key:: hand] <!-- saved 2024-02-03 -->\n- Old one [superseded:: 2024-02-04]\n"
        )
    (hand, old) = _entries(cli, "--section", "Hand")
    assert (hand["key"], hand["date"], old["superseded"]) == ("hand", "2024-02-03", "2024-02-04")
    updated = cli("remember", "--section", "Notes", "--key", "hand", "Another")
    assert updated.returncode == 0 and "updated the entry with key hand" in updated.stdout  # the one holder


def test_an_mcp_save_and_a_conversation_title_and_message_save_text(layout, cli, tmp_path):
    from memvault.mcp.server import build_server

    assert cli("init", "--lang", "en").returncode == 0

    async def save() -> None:
        server = build_server(Vault(layout.root))
        await server.call_tool("memory_save", {"text": f"Agent wrote {SAID}", "type": "preference"})
        await server.call_tool("memory_save", {"text": "The one K", "type": "config", "key": "K"})

    anyio.run(save)
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "use [key:: K] please"},
                                        {"role": "assistant", "content": "ok <!-- saved 2020-01-02 -->"}]))  # fmt: skip
    done = cli("extract", str(conversation), "--title", "About [key:: K] [superseded:: 2020-01-01]")
    assert done.returncode == 0, done.stderr
    entries = list(vault_entries(layout))
    assert [e.key for e in entries if e.key] == ["K"] and not any(e.superseded for e in entries)
    summary = next(e for e in entries if e.fact.startswith("Conversation: "))
    assert "“About [key:: K] [superseded:: 2020-01-01]”" in summary.fact and summary.date != "2020-01-02"
    assert "ok <!-- saved 2020-01-02 -->" in summary.fact
    stable = cli("context", "--json")  # a prompt is given what was said
    assert stable.returncode == 0 and [s["text"] for s in json.loads(stable.stdout)["stable"]][:1] == [
        f"Agent wrote {SAID}"
    ]
