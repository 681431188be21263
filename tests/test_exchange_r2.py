"""Export and import: a backup that misses a note says so and exits non-zero (it used to exit 0), and
export -> import into an empty vault -> export gives back every entry with its text and section as
they were (it used to drop the same text on a second day, a superseded version of a keyed fact, and a
blank line inside an entry)."""

from __future__ import annotations

import json

import pytest

from memvault.vault.errors import NoteReadError

FIELDS = ("text", "section", "key", "tags", "date", "superseded", "corrects")


def _init_with_entries(cli, layout) -> None:
    steps = [
        ("init", "--lang", "en"),
        ("remember", "--type", "preference", "--key", "editor", "--tag", "tools", "Uses Helix"),
        ("remember", "--type", "preference", "--key", "editor", "Uses Zed"),  # updated in place
        ("remember", "--type", "preference", "--key", "shell", "Uses fish"),
        ("correct", "shell", "Uses zsh now"),  # a keyed fact corrected: both versions hold the key
        ("remember", "--section", "Team", "--tag", "people", "Ana owns billing"),
        ("remember", "--section", "Team", "Two-line fact\nwith its second line"),
        ("remember", "--section", "Team", "TBD"), ("remember", "--section", "Later", "TBD"),  # one text, two sections
        ("remember", "--section", "团队", "张三负责前端 #前端"),
        ("remember", "--section", "Team", "Typed [key:: not-a-key] and <!-- saved 2020-01-01 --> as text"),
        ("note", "--date", "2024-05-01", "--section", "todo", "--key", "standup", "Move the standup"),
        ("note", "--date", "2024-05-02", "Daily standup"), ("note", "--date", "2024-05-03", "Daily standup"),
        ("note", "--date", "2024-05-04", "Launch is Friday"),
        ("correct", "--match", "Launch is Friday", "Launch moved to Monday"),
        ("note", "--tag", "release", "Shipped 2.0 today"),
        ("note", "多行的\n第二行"),
    ]  # fmt: skip
    for args in steps:
        done = cli(*args)
        assert done.returncode == 0, (args, done.stderr)
    with open(layout.memory_md, "a", encoding="utf-8") as fh:  # by hand: an entry of two paragraphs
        fh.write("\n## Hand\n\n- First paragraph\n\n  second paragraph of the same entry\n- 中文条目\n  第二行\n")


def _export(cli, root) -> dict:
    done = cli("export", env={"MEMVAULT_VAULT": str(root)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _rows(document: dict) -> list[tuple]:
    """Each entry's fields and its note."""
    return sorted((*(json.dumps(e[f], ensure_ascii=False) for f in FIELDS), e["path"]) for e in document["entries"])


def test_export_import_export_gives_back_every_entry_as_it_was(layout, cli, tmp_path):
    _init_with_entries(cli, layout)
    first = _export(cli, layout.root)
    assert first["count"] == 18
    (tmp_path / "first.json").write_text(json.dumps(first, ensure_ascii=False), encoding="utf-8")
    second = tmp_path / "second"
    second.mkdir()
    env = {"MEMVAULT_VAULT": str(second), "LC_ALL": "en_US.UTF-8"}
    reply = json.loads(cli("import", str(tmp_path / "first.json"), "--json", env=env).stdout)
    assert (reply["imported"], reply["skipped"], reply["refused"]) == (18, 0, []), reply
    again = _export(cli, second)
    assert _rows(again) == _rows(first)  # text, section, key, tags, day, marks: the same; the place too
    assert [d["summary"] for d in again["days"]] == [d["summary"] for d in first["days"]]
    twice = json.loads(cli("import", str(tmp_path / "first.json"), "--json", env=env).stdout)
    assert (twice["imported"], twice["refused"]) == (0, []), twice  # the same file again adds nothing
    assert _rows(_export(cli, second)) == _rows(first)
    keyed = cli("remember", "--type", "preference", "--key", "shell", "Uses nushell", env=env)
    assert keyed.returncode == 0 and "updated the entry with key shell" in keyed.stdout, keyed.stderr


@pytest.mark.parametrize("fmt", ["json", "jsonl", "kinetaios"])
def test_an_export_missing_a_note_says_so_and_exits_non_zero(layout, cli, fmt):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Notes", "Kept in the backup").returncode == 0
    (layout.root / "broken.md").write_bytes(b"- caf\xe9 latin-1, not UTF-8\n")
    done = cli("export", "--format", fmt)
    assert done.returncode == NoteReadError.exit_code, done.stderr
    assert "Kept in the backup" in done.stdout  # what could be read is written
    said = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(said) == 1 and "broken.md" in said[0] and "partial" in said[0], done.stderr
    if fmt == "json":
        (why,) = json.loads(done.stdout)["skipped"]  # the backup says so in itself too
        assert why.startswith("broken.md: not valid UTF-8")
