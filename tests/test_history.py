"""What each conversation said, kept (issue 48, seed 000's recall_memory: "how did we solve X last
time?"): `extract` appends a conversation's messages to its own note in conversations/, which search
finds (`--kind conversation`), which is never an entry nor in a prompt's recall, which a secret never
reaches, which retention moves to the trash, and which `keep_conversations = false` turns off."""

from __future__ import annotations

import datetime as dt
import json

from tests.reliability.conftest import HASH_ENV


def _extract(cli, ident: str, *said: tuple[str, str]):
    messages = [{"role": role, "content": text} for role, text in said]
    done = cli("extract", "-", "--id", ident, "--title", "the flaky socket", "--json", input=json.dumps(messages),
               env=HASH_ENV)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_conversation_is_kept_searched_and_never_an_entry(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    first = _extract(cli, "sess-42", ("user", "The socket test is flaky on CI again"),
                     ("assistant", "We fixed it last time by raising the accept backlog to 128"))  # fmt: skip
    note = layout.root / first["history"]
    assert first["history"] == f"conversations/{dt.date.today()}-sess-42.md" and note.is_file()
    second = _extract(cli, "sess-42", ("user", "my key is AKIAIOSFODNN7EXAMPLE"), ("assistant", "Do not paste keys."))
    assert second["history"] == first["history"]  # the same conversation: appended to its note
    text = note.read_text(encoding="utf-8")
    assert "[conversation:: sess-42]" in text and "accept backlog to 128" in text and "Do not paste keys." in text
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "(left out:" in text  # the guards' refusal, never the secret
    assert cli("index", env=HASH_ENV).returncode == 0
    found = json.loads(cli("search", "--json", "--kind", "conversation", "how did we fix the flaky socket test",
                           env=HASH_ENV).stdout)["hits"]  # fmt: skip
    assert found and all(h["path"] == first["history"] for h in found)
    assert any("backlog" in h["text"] for h in found[:3]), found  # what the fix was, said in that conversation
    listed = json.loads(cli("list", "--json", env=HASH_ENV).stdout)["entries"]
    assert not any(e["path"].startswith("conversations/") for e in listed)  # history, not entries
    given = json.loads(cli("context", "--json", "accept backlog socket test flaky", env=HASH_ENV).stdout)
    assert not any(item["path"].startswith("conversations/") for item in given["recall"])


def test_turned_off_and_retired(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    (layout.root / "memvault.toml").write_text("keep_conversations = false\n")
    assert _extract(cli, "off-1", ("user", "We ship on Tuesdays"))["history"] is None
    assert not (layout.root / "conversations").exists()
    (layout.root / "memvault.toml").write_text("keep_conversations = 1\n")
    refused = cli("status", env=HASH_ENV)
    assert refused.returncode == 2 and "keep_conversations must be true or false" in refused.stderr
    (layout.root / "memvault.toml").write_text("")
    old = layout.root / "conversations" / "2020-01-02-old.md"
    old.parent.mkdir()
    old.write_text("# old\n\n## Messages\n\n- **user** 10:00: long ago\n", encoding="utf-8")
    kept = _extract(cli, "new-1", ("user", "We ship on Tuesdays"))["history"]
    done = cli("retention", "--days", "30", "--apply", env=HASH_ENV)
    assert done.returncode == 0, done.stderr
    assert not old.exists() and (layout.root / kept).is_file()
    assert any("2020-01-02-old.md" in p.name for p in layout.trash_dir.rglob("*"))  # recoverable


def test_a_long_conversation_goes_on_in_parts_and_a_failure_costs_nothing_else(layout, cli, monkeypatch):
    import memvault.vault.history as history

    assert cli("init", "--lang", "en").returncode == 0
    monkeypatch.setattr(history, "PART_BYTES", 300)  # a small part, so that the test's turns fill one
    for n in range(4):
        _extract(cli, "long-1", ("user", f"turn {n}: " + "words " * 20), ("assistant", f"answer {n}"))
    parts = sorted(p.name for p in (layout.root / "conversations").iterdir())
    assert parts[0] == f"{dt.date.today()}-long-1.md" and len(parts) >= 2 and parts[1].endswith(".part2.md"), parts
    text = "".join((layout.root / "conversations" / p).read_text(encoding="utf-8") for p in parts)
    assert all(f"answer {n}" in text for n in range(4))
    from memvault.vault.errors import NoteWriteError

    def full_disk(*args, **kwargs):  # (the fault a root test cannot make with permissions)
        raise NoteWriteError("conversations/x.md: cannot be written: No space left on device")

    monkeypatch.setattr(history, "keep_messages", full_disk)
    done = _extract(cli, "blocked-1", ("user", "We decided to ship on Tuesdays from now on."))
    assert done["history"] is None and any("was not kept" in w for w in done["warnings"]), done
    assert "ship on Tuesdays" in cli("review").stdout  # the proposal, and the summary, were written


def test_a_part_run_again_is_kept_once(layout, cli):
    """An extract killed after it kept the part, then run again (the kill campaign's case), keeps it
    once, whatever minute the second run falls in."""
    from memvault.vault.conversation import Message
    from memvault.vault.history import keep_messages

    assert cli("init", "--lang", "en").returncode == 0
    said = [Message("user", "We decided to keep the monorepo."), Message("assistant", "Understood.")]
    first = keep_messages(layout, "again-1", None, said, dt.datetime(2026, 12, 5, 10, 0))
    again = keep_messages(layout, "again-1", None, said, dt.datetime(2026, 12, 5, 10, 7))
    text = (layout.root / str(first)).read_text(encoding="utf-8")
    assert again == first and text.count("keep the monorepo") == 1 and text.count("Understood.") == 1
    keep_messages(layout, "again-1", None, [Message("user", "And squash merges.")], dt.datetime(2026, 12, 5, 10, 9))
    assert (layout.root / str(first)).read_text(encoding="utf-8").count("squash merges") == 1
