"""The KinetAios exchange as seed 000/001 has it: `created_at INTEGER` (Unix milliseconds) and the
snake_case column names come in; `exportedAt` and `createdAt` go out as numbers, a MEMORY.md entry with
the day it was saved, a conversation's digest (what `extract` writes) not at all; facts imported on a
day are not that day's conversations. And an import names only the MEMORY.md sections it made."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

NOON_UTC = 1709294400000  # 2024-03-01T12:00:00Z: 2024-03-01 in every time zone from UTC-11 to UTC+11


def _ms(day: str, hour: int = 0, minute: int = 0) -> int:
    """A local time on `day` as Unix milliseconds, as KinetAios stores `created_at`."""
    return int(dt.datetime.fromisoformat(f"{day}T{hour:02}:{minute:02}").astimezone().timestamp() * 1000)


def _import(cli, tmp_path: Path, data: object, *args: str) -> dict:
    file = tmp_path / "in.json"
    file.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    done = cli("import", str(file), "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_created_at_as_unix_milliseconds_and_snake_case_names_are_read(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    memories = [
        {"id": "m1", "content": "Prefers green tea", "conversationId": "c1", "createdAt": NOON_UTC},
        {"id": "m2", "content": "Deploys go out on Tuesdays", "conversation_id": "c1", "created_at": NOON_UTC + 1000},
        {"id": "m3", "content": "Reviews in the morning", "conversation_id": None, "created_at": NOON_UTC + 2000.0},
    ]
    reply = _import(cli, tmp_path, {"version": 1, "exportedAt": NOON_UTC + 9000, "memories": memories})
    assert (reply["imported"], reply["refused"]) == (3, []), reply
    assert reply["paths"] == {"daily/2024-03-01.md": 3}
    note = (layout.root / "daily" / "2024-03-01.md").read_text(encoding="utf-8")
    assert "- Deploys go out on Tuesdays [conversation:: c1]\n" in note  # the snake_case id kept, not dropped
    assert "- Conversations: 1\n" in note  # three facts of one conversation: one conversation, not three

    for bad, said in (({"content": "x", "createdAt": True}, '"createdAt" must be'),
                      ({"content": "x", "created_at": -5}, '"created_at" -5 is not a time'),
                      ({"content": "x", "createdAt": 1e300}, "is not a time"),
                      ({"content": "x", "createdAt": NOON_UTC, "created_at": NOON_UTC + 86_400_000 * 3},
                       '"createdAt" and "created_at" differ')):  # fmt: skip
        file = tmp_path / "bad.json"
        file.write_text(json.dumps({"memories": [bad]}), encoding="utf-8")
        refused = cli("import", str(file))
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
        assert refused.stderr.count("\n") == 1


def test_the_kinetaios_export_has_numbers_days_for_memory_entries_and_no_digests(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "preference", "Answers in English").returncode == 0
    (layout.root / "daily" / "2024-05-01.md").write_text(
        "---\ndate: 2024-05-01\n---\n# 2024-05-01 Daily Log\n\n## Conversations\n\n"
        "- 09:30 Conversation: “Release plan”, 4 messages, 2 from the user, 2 from the assistant [conversation:: s1]\n"
        "- 10:15 Moved the standup [conversation:: s1]\n",
        encoding="utf-8",
    )
    before = dt.datetime.now().timestamp() * 1000
    done = cli("export", "--format", "kinetaios")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert isinstance(document["exportedAt"], int) and before - 60_000 <= document["exportedAt"]
    assert document["memories"] == [
        {"content": "Answers in English", "createdAt": _ms(dt.date.today().isoformat())},  # its saved day
        {"content": "Moved the standup", "createdAt": _ms("2024-05-01", 10, 15), "conversationId": "s1"},
    ]  # the digest of conversation s1 is not a memory; the stamp is the time, not the text

    again = tmp_path / "again"
    again.mkdir()
    (tmp_path / "k.json").write_text(done.stdout, encoding="utf-8")
    back = cli("import", str(tmp_path / "k.json"), "--json", env={"MEMVAULT_VAULT": str(again)})
    assert back.returncode == 0 and json.loads(back.stdout)["imported"] == 2, back.stderr
    out = json.loads(cli("export", "--format", "kinetaios", env={"MEMVAULT_VAULT": str(again)}).stdout)
    day = lambda m: dt.date.fromtimestamp(m["createdAt"] / 1000)  # noqa: E731
    assert sorted((m["content"], day(m), m.get("conversationId") or "") for m in out["memories"]) == sorted(
        (m["content"], day(m), m.get("conversationId") or "") for m in document["memories"]
    )  # the same memories, days and conversations (the daily notes are read first)


def test_an_import_names_only_the_memory_sections_it_created(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    entries = [
        {"text": "Kept on its day", "path": "daily/2024-05-01.md", "section": "Standup notes", "date": "2024-05-01"},
        {"text": "A team fact", "path": "MEMORY.md", "section": "Team"},
    ]
    file = tmp_path / "export.json"
    file.write_text(json.dumps({"memvault_export": 1, "entries": entries}), encoding="utf-8")
    human = cli("import", str(file))
    assert human.returncode == 0 and human.stdout.startswith("imported 2"), human.stderr
    assert human.stderr == "section 'Team' did not exist in MEMORY.md: created it\n"  # not the day's own section
    assert "## Standup notes\n\n- Kept on its day" in (layout.root / "daily" / "2024-05-01.md").read_text()
    other = tmp_path / "other"
    other.mkdir()
    reply = json.loads(cli("import", str(file), "--json", env={"MEMVAULT_VAULT": str(other)}).stdout)
    assert reply["imported"] == 2 and reply["created_sections"] == ["Team"], reply
