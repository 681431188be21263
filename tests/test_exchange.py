"""Import and export: the three shapes in, where each memory lands, the dedupe and the refusals with
their reasons; ten thousand memories (three in ten duplicates) in one write per note, then indexed and
found; export -> import into an empty vault -> export gives the same entries; a malformed file changes
no byte of the vault."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memvault.vault import saving
from memvault.vault.entries import normalise
from memvault.vault.exchange import import_file
from memvault.vault.memory_file import init_vault
from memvault.vault.paths import Layout
from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV

TODAY = dt.date.today().isoformat()
PAST_DAY = """---
date: 2024-03-02
---
# 2024-03-02 Daily Log

## Conversations

- Written on the day itself
"""


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _imported(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _entries(cli, *args: str) -> list[dict]:
    result = cli("list", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["entries"]


def test_a_kinetaios_export_backfills_missing_days_and_puts_the_rest_in_memory(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Solutions", "Restart the socket on EPIPE").returncode == 0
    past = layout.root / "daily" / "2024-03-02.md"
    past.write_text(PAST_DAY, encoding="utf-8")
    memories = [
        {"content": "Prefers green tea", "conversationId": "c1", "createdAt": "2024-03-01T09:00:00Z"},
        {"content": "Deploys go out on Tuesdays", "createdAt": "2024-03-01T23:30:00-05:00"},  # the day as written
        {"content": "Lives in Lisbon", "createdAt": "2024-03-02T10:00:00Z"},  # that day's note exists: frozen
        {"content": "Uses Helix\r\n\r\n  with the default keymap"},  # no date; a blank line would split it
        {"content": "password=hunter2hunter2"},
        {"content": "x" * 4001},
        {"content": "restart the socket  on EPIPE"},  # already in the vault
        {"content": "prefers GREEN tea", "createdAt": "2024-05-01T00:00:00Z"},  # earlier in the file
    ]
    file = _write(tmp_path / "kinetaios.json", {"version": 1, "exportedAt": "2024-06-01T00:00:00Z",
                                                "memories": memories})  # fmt: skip
    reply = _imported(cli("import", str(file), "--json"))
    assert (reply["imported"], reply["skipped"]) == (4, 2)
    assert [r["index"] for r in reply["refused"]] == [5, 6]
    assert "looks like a secret assignment" in reply["refused"][0]["reason"]
    assert "4,001 characters; the limit is 4,000" in reply["refused"][1]["reason"]
    assert reply["paths"] == {"daily/2024-03-01.md": 2, "MEMORY.md": 2} and reply["created_sections"] == ["Imported"]

    assert past.read_text(encoding="utf-8") == PAST_DAY  # an existing past day is never changed
    backfilled = (layout.root / "daily" / "2024-03-01.md").read_text(encoding="utf-8")
    assert backfilled.startswith("---\ndate: 2024-03-01\n---\n")
    assert "- Conversations: 1\n" in backfilled  # two facts, one of them from a conversation
    assert "- Prefers green tea [conversation:: c1]\n- Deploys go out on Tuesdays\n" in backfilled  # its source kept
    imported = _entries(cli, "--section", "Imported")
    assert [(e["text"], e["date"]) for e in imported] == [
        ("Lives in Lisbon", "2024-03-02"), ("Uses Helix\nwith the default keymap", TODAY)
    ]  # fmt: skip
    human = cli("import", str(file))  # again: everything is there already, and said
    assert human.returncode == 0 and human.stdout.startswith("imported 0, skipped 6 already in the vault")
    assert "item 5: refused: line 1 of the entry looks like a secret assignment" in human.stdout


def test_a_plain_list_of_strings_goes_to_the_section_asked_for(layout, cli, tmp_path, user_root):
    file = _write(tmp_path / "list.json", ["Answers in English", "Keeps replies short #style", "answers in english"])
    result = cli("import", str(file), "--section", "Profile", "--scope", "user")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("imported 2 (MEMORY.md 2), skipped 1") and "created the user vault" in result.stderr
    rows = _entries(cli, "--scope", "user")
    assert [(r["scope"], r["section"], r["text"], r["tags"]) for r in rows] == [
        ("user", "Profile", "Answers in English", []), ("user", "Profile", "Keeps replies short #style", ["style"])
    ]  # fmt: skip
    assert not (layout.root / "MEMORY.md").exists()  # the project vault untouched


def test_memvault_exports_round_trip_with_keys_tags_sections_and_days(layout, cli, tmp_path):
    for args in (("init", "--lang", "en"),
                 ("remember", "--type", "preference", "--key", "editor", "--tag", "tools", "Uses Helix"),
                 ("remember", "--section", "Team", "--tag", "people", "Ana owns billing"),
                 ("remember", "--section", "Team", "Two-line fact\n```\nwith a fence line"),
                 ("note", "--date", "2024-05-01", "--section", "todo", "--key", "standup", "Move the standup"),
                 ("note", "--tag", "release", "Shipped 2.0 today")):  # fmt: skip
        assert cli(*args).returncode == 0, args
    first = tmp_path / "first.json"
    first.write_text(cli("export").stdout, encoding="utf-8")
    exported = json.loads(first.read_text(encoding="utf-8"))
    assert exported["memvault_export"] == 1 and exported["count"] == 5

    def import_into(name: str, file: Path, *more: str) -> tuple[dict, list[dict]]:
        (tmp_path / name).mkdir(exist_ok=True)
        env = {"MEMVAULT_VAULT": str(tmp_path / name)}  # an empty folder: no init
        reply = _imported(cli("import", str(file), "--json", env=env))
        header, *rows = [json.loads(line) for line in cli("export", "--format", "jsonl", env=env).stdout.splitlines()]
        return {**reply, "header": header}, rows

    reply, second = import_into("second", first)
    assert (reply["imported"], reply["skipped"], reply["refused"]) == (5, 0, [])
    assert reply["header"]["count"] == 5
    jsonl = tmp_path / "second.jsonl"
    jsonl.write_text(cli("export", "--format", "jsonl", env={"MEMVAULT_VAULT": str(tmp_path / "second")}).stdout)
    _, third = import_into("third", jsonl)

    def same(rows: list[dict]) -> list[tuple]:
        return sorted((r["text"], r["key"], tuple(r["tags"]), r["section"] if r["path"] == "MEMORY.md" else None,
                       r["date"], r["path"]) for r in rows)  # fmt: skip

    assert same(second) == same(third) == same(exported["entries"])
    env = {"MEMVAULT_VAULT": str(tmp_path / "third")}
    keyed = json.loads(cli("list", "--json", "--key", "editor", env=env).stdout)["entries"]
    assert [(e["text"], e["tags"]) for e in keyed] == [("Uses Helix #tools [key:: editor]", ["tools"])]
    assert "updated the entry with key editor" in cli("remember", "--type", "preference", "--key", "editor",
                                                      "Uses Zed", env=env).stdout  # fmt: skip


def test_export_import_export_carries_days_summaries_and_undated_entries_and_kinetaios_round_trips(
    layout, cli, tmp_path
):
    """Issue 25, case 19: the days' summaries were dropped, an undated MEMORY.md entry came back dated
    today, and export wrote only memvault's own shape, not the KinetAios one `import` reads."""
    import datetime as dt

    assert cli("init", "--lang", "en").returncode == 0
    with open(layout.memory_md, "a", encoding="utf-8") as fh:
        fh.write("\n## Team\n\n- Ana owns billing #people\n- Prefers tea\n")  # by hand: no saved day
    for args in (("note", "--date", "2024-05-01", "Move the standup"), ("summary", "2024-05-01", "Standup moved"),
                 ("summary", "2024-05-02", "A quiet day"), ("note", "Shipped 2.0 today #release"),
                 ("summary", "Shipped 2.0")):  # fmt: skip
        assert cli(*args).returncode == 0, args

    def exported(root: Path, *fmt: str) -> dict:
        out = cli("export", *fmt, env={"MEMVAULT_VAULT": str(root)})
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def carried(doc: dict) -> tuple:
        rows = sorted((r["text"], r["key"], tuple(r["tags"]), r["section"], r["date"], r["path"])
                      for r in doc["entries"])  # fmt: skip
        return rows, [(d["date"], d["summary"]) for d in doc["days"]]

    first = exported(layout.root)
    assert [d["date"] for d in first["days"]] == ["2024-05-01", "2024-05-02", dt.date.today().isoformat()]
    assert ("Prefers tea", None, (), "Team", None, "MEMORY.md") in carried(first)[0]
    (tmp_path / "first.json").write_text(json.dumps(first), encoding="utf-8")
    second = tmp_path / "second"
    second.mkdir()
    env = {"MEMVAULT_VAULT": str(second), "LC_ALL": "en_US.UTF-8"}  # an empty vault writes in the locale's language
    reply = _imported(cli("import", str(tmp_path / "first.json"), "--json", env=env))
    assert reply["summaries"] == 3 and reply["refused"] == [], reply
    assert carried(exported(second)) == carried(first)  # entries, keys, tags, sections, days, summaries
    again = _imported(cli("import", str(tmp_path / "first.json"), "--json", env=env))
    assert (again["imported"], again["summaries"], again["refused"]) == (0, 0, [])  # nothing twice

    kinetaios = exported(layout.root, "--format", "kinetaios")
    assert kinetaios["version"] == 1 and kinetaios["exportedAt"] and len(kinetaios["memories"]) == 4
    midnight = int(dt.datetime(2024, 5, 1).astimezone().timestamp() * 1000)  # Unix ms, as KinetAios has it
    assert {"content": "Move the standup", "createdAt": midnight} in kinetaios["memories"]
    (tmp_path / "k.json").write_text(json.dumps(kinetaios), encoding="utf-8")
    third = tmp_path / "third"
    third.mkdir()
    assert (
        _imported(cli("import", str(tmp_path / "k.json"), "--json", env={"MEMVAULT_VAULT": str(third)}))["imported"]
        == 4
    )
    back = exported(third, "--format", "kinetaios")["memories"]

    def days(memories: list[dict]) -> list[tuple]:  # an undated memory entered the vault today; a day has no times
        now = dt.datetime.now().timestamp() * 1000
        return sorted((m["content"], dt.date.fromtimestamp(m.get("createdAt", now) / 1000), m.get("conversationId", ""))
                      for m in memories)  # fmt: skip

    assert days(back) == days(kinetaios["memories"])


def test_hostile_fields_and_taken_keys_are_refused_one_by_one(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Team", "--key", "owner", "Ana owns billing").returncode == 0
    entries = [
        {"text": "Bob owns search", "key": "owner", "path": "MEMORY.md", "section": "Team"},  # key taken
        {"text": "A fact", "tags": ["a\nb"]},
        {"text": "Another fact", "key": "a]b"},
        {"text": "Third fact", "section": "## forged", "path": "MEMORY.md"},
        {"text": "Fourth fact [key:: four]"},
        {"text": "Fifth fact [key:: four]"},  # the same key twice in the file
        {"text": "Kept fact", "tags": ["kept"], "path": "notes/other.md", "section": "Anything"},
    ]
    reply = _imported(cli("import", str(_write(tmp_path / "x.json", {"memvault_export": 1, "entries": entries})),
                          "--json"))  # fmt: skip
    assert (reply["imported"], reply["skipped"]) == (2, 0)
    reasons = {r["index"]: r["reason"] for r in reply["refused"]}
    assert reasons[1] == "key owner is already on MEMORY.md:15"
    assert reasons[6] == "key four is already on item 5 of the file"
    assert set(reasons) == {1, 2, 3, 4, 6} and all("\n" not in r for r in reasons.values())
    assert [(e["text"], e["tags"]) for e in _entries(cli, "--section", "Imported")] == [
        ("Fourth fact [key:: four]", []), ("Kept fact #kept", ["kept"])
    ]  # fmt: skip


def _word(i: int) -> str:
    """A word of its own for memory `i`, so a search can find that one memory."""
    return "w" + "".join(chr(97 + (i // 26**k) % 26) for k in range(4))


def _ten_thousand(tmp_path: Path) -> tuple[Path, list[str]]:
    """7,000 new memories, 500 the vault already holds and 2,500 repeats within the file, case and
    spacing changed: 3,000 duplicates. Every tenth new one is dated, 35 on each of 20 days."""
    held = [f"Held fact {i} about {_word(10_000 + i)}" for i in range(500)]
    memories: list[dict] = []
    for i in range(7_000):
        memory = {"content": f"Fact {i}: the {_word(i)} service runs on port {i}"}
        if i % 10 == 0:
            memory["createdAt"] = f"2024-01-{1 + (i // 10) % 20:02d}T12:00:00Z"
        memories.append(memory)
    memories += [{"content": text.upper()} for text in held]
    memories += [{"content": "  " + memories[i * 2]["content"].lower().replace(" ", "  ")} for i in range(2_500)]
    file = _write(tmp_path / "ten-thousand.json", {"version": 1, "exportedAt": "2024-06-01", "memories": memories})
    return file, held


def _plant_held(layout: Layout, held: list[str]) -> Path:
    lines = "".join(f"- {text}\n" for text in held)
    (layout.root / "MEMORY.md").write_text(f"# Long-term Memory\n\n## Solutions\n\n{lines}", encoding="utf-8")
    day = layout.root / "daily" / "2024-01-05.md"  # one of the 20 days has a note already: frozen
    day.parent.mkdir(exist_ok=True)
    day.write_text(PAST_DAY.replace("2024-03-02", "2024-01-05"), encoding="utf-8")
    return day


def test_ten_thousand_memories_with_three_in_ten_duplicates(layout, cli, tmp_path):
    file, held = _ten_thousand(tmp_path)
    frozen = _plant_held(layout, held)
    reply = _imported(cli("import", str(file), "--json"))
    assert (reply["imported"], reply["skipped"], reply["refused"]) == (7_000, 3_000, [])
    assert len(reply["paths"]) == 20 and reply["paths"]["MEMORY.md"] == 7_000 - 19 * 35  # 35 dated per day
    assert "daily/2024-01-05.md" not in reply["paths"]
    assert frozen.read_text(encoding="utf-8") == PAST_DAY.replace("2024-03-02", "2024-01-05")
    rows = _entries(cli)
    texts = [normalise(r["text"]) for r in rows]
    assert len(texts) == 500 + 7_000 + 1 and len(set(texts)) == len(texts)  # no duplicate entry in the vault

    indexed = cli("index", "--json", env=HASH_ENV)
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["files_failed"] == 0
    for i, path in ((4321, "MEMORY.md"), (70, "daily/2024-01-08.md")):  # 70 is dated: day 1 + 7
        result = cli("search", "--json", "--mode", "bm25", f"{_word(i)} service", env=HASH_ENV)
        assert result.returncode == 0, result.stderr
        hits = json.loads(result.stdout)["hits"]
        assert hits and hits[0]["path"] == path and f"Fact {i}:" in hits[0]["snippet"], (i, hits[:2])


def test_an_import_writes_each_note_once(layout, tmp_path, monkeypatch):
    """10,000 memories are one locked atomic write per note touched, never one per memory."""
    file, held = _ten_thousand(tmp_path)
    _plant_held(layout, held)
    writes: list[str] = []
    real = saving.atomic_write

    def counted(path: Path, data: bytes, expect: str | None = None, **kwargs) -> None:
        writes.append(layout.relative(path))
        real(path, data, expect, **kwargs)

    monkeypatch.setattr(saving, "atomic_write", counted)
    done = import_file(layout, str(file))
    assert done.imported == 7_000 and sorted(writes) == sorted(done.paths) and len(writes) == 20


def _tree(root: Path) -> dict[str, bytes | None]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


@pytest.mark.parametrize("scope", ["project", "user"])
def test_a_malformed_file_is_one_line_and_changes_nothing(layout, cli, tmp_path, user_root, scope):
    init_vault(layout, "en")
    assert cli("remember", "--section", "Team", "Ana owns billing").returncode == 0
    good = [{"content": f"fact {i}"} for i in range(999)]
    bad: dict[str, bytes] = {
        "not-json.json": b"{memories: []}",
        "empty.json": b"",
        "latin1.json": '["café"]'.encode("latin-1"),
        "no-shape.json": b'{"notes": []}',
        "a-number.json": b"42",
        "memories-not-list.json": b'{"version": 1, "memories": "fact"}',
        "content-not-string.json": json.dumps({"memories": [*good, {"content": 5}]}).encode(),
        "bad-date.json": json.dumps({"memories": [*good, {"content": "x", "createdAt": "last Tuesday"}]}).encode(),
        "list-of-numbers.json": b'["fine", 2]',
        "bad-conversation.json": json.dumps(
            {"memories": [*good, {"content": "x", "conversationId": "a] [k:: v"}]}
        ).encode(),
        "future-version.json": b'{"memvault_export": 2, "entries": []}',
        "tags-not-list.json": b'{"memvault_export": 1, "entries": [{"text": "a", "tags": "x"}]}',
        "bad-jsonl.jsonl": b'{"memvault_export": 1}\n{"text": "a"}\n{oops\n',
        "deep.json": b"[" * 100_000,
    }
    before, user_before = _tree(layout.root), user_root.exists()
    for name, data in bad.items():
        (tmp_path / name).write_bytes(data)
        result = cli("import", str(tmp_path / name), "--scope", scope)
        assert result.returncode == 2, (name, result.stdout, result.stderr)
        assert result.stderr.startswith(f"memvault: error: {tmp_path / name}: ") and result.stderr.count("\n") == 1, (
            name, result.stderr)  # fmt: skip
    assert cli("import", str(tmp_path / "missing.json")).returncode == 2
    assert _tree(layout.root) == before and user_root.exists() == user_before


def test_an_import_through_the_daemon_is_searchable_at_once(layout, cli, tmp_path):
    init_vault(layout, "en")
    file = _write(tmp_path / "list.json", ["The quokka cluster restarts nightly"])
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        from memvault.daemon.client import ask

        refused = ask(layout, {"op": "import", "path": "relative.json"})
        assert refused and not refused["ok"] and "absolute path" in refused["error"]
        reply = _imported(cli("import", str(file), "--json"))
        assert reply["imported"] == 1 and reply["indexed"]
        hits = json.loads(cli("search", "--json", "--mode", "bm25", "quokka").stdout)["hits"]
        assert [h["path"] for h in hits] == ["MEMORY.md"]
    finally:
        cli("daemon", "stop")
