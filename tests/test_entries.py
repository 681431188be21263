"""Entries: list items with an inline `[key:: NAME]` and `#tags`, parsed the same whether memvault or a
person wrote them; `memvault list` and `search --tag` with no query, on the CLI and through the daemon."""

from __future__ import annotations

import datetime as dt
import json
import re

from memvault.vault.entries import iter_entries, normalise, version_id
from memvault.vault.notes import parse_note
from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV

MEMORY = """---
tags: [me]
---
# Long-term Memory

## User Preferences

- Prefers Vue 3 + TypeScript #frontend #projectx [key:: frontend-stack]
  and Vite for builds; see issue #12 and C# docs
- 回答尽量简洁 #偏好
* Uses tabs, never spaces #editor

```
- not an entry: inside a fence #frontend
```

## Architecture Decisions

1. Postgres for billing #projectx [key:: billing-db]
"""
DAILY = """# 2026-11-30 Daily Log

## Overview

- Conversations: 1

## Conversations

- 10:12 Talked about the #projectx launch
"""


def _entries():
    return list(iter_entries(parse_note("MEMORY.md", MEMORY)))


def test_a_hand_written_entry_is_parsed_like_ours():
    first, chinese, tabs, billing = _entries()
    assert (first.start_line, first.end_line) == (8, 9)  # file lines, frontmatter included
    assert MEMORY.split("\n")[7].startswith("- Prefers Vue 3")
    assert first.key == "frontend-stack" and first.section == "User Preferences"
    assert first.tags == ("me", "frontend", "projectx")  # frontmatter tags first; #12 and C# are not tags
    assert first.summary == (
        "Prefers Vue 3 + TypeScript #frontend #projectx and Vite for builds; see issue #12 and C# docs"
    )
    assert chinese.tags == ("me", "偏好") and chinese.key is None
    assert tabs.text == "Uses tabs, never spaces #editor"  # `*` items count, fenced ones do not
    assert (billing.key, billing.section) == ("billing-db", "Architecture Decisions")


def test_daily_overview_counters_are_not_entries_and_entries_carry_the_day():
    entries = list(iter_entries(parse_note("daily/2026-11-30.md", DAILY)))
    assert [(e.text, e.date, e.tags) for e in entries] == [
        ("10:12 Talked about the #projectx launch", "2026-11-30", ("projectx",))
    ]


def test_normalised_text_ignores_key_stamp_space_and_case():
    assert normalise("10:12  Prefers   VUE 3 [key:: x]") == normalise("prefers vue 3") == "prefers vue 3"
    assert normalise("Prefers Vue 3 #frontend") != normalise("Prefers Vue 3")


def _plant(layout):
    (layout.root / "daily").mkdir()
    (layout.root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (layout.root / "daily" / "2026-11-30.md").write_text(DAILY, encoding="utf-8")


def test_list_filters_and_counts_tags(layout, cli):
    _plant(layout)
    long = "Keeps a changelog per release " + "with every migration named " * 8
    with (layout.root / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write(f"- {long} #editor\n")  # line 20, last: no other line moves
    data = json.loads(cli("list", "--json", "--tag", "#projectx").stdout)
    assert [(e["path"], e["start_line"]) for e in data["entries"]] == [
        ("MEMORY.md", 8), ("MEMORY.md", 19), ("daily/2026-11-30.md", 9)
    ]  # fmt: skip
    assert data["tags"] == {"projectx": 3, "me": 2, "frontend": 1}
    assert [e["key"] for e in json.loads(cli("list", "--json", "--key", "billing-db").stdout)["entries"]] == [
        "billing-db"
    ]
    human = cli("list", "--section", "User Preferences")
    assert human.returncode == 0
    lines = human.stdout.splitlines()
    assert lines[0].startswith("MEMORY.md:8  User Preferences  [frontend-stack]  #me #frontend #projectx  Prefers")
    assert len(lines) == 4 and lines[-1].startswith("tags: #me 3")
    tagged = cli("search", "--tag", "editor")
    assert tagged.returncode == 0 and "Uses tabs, never spaces" in tagged.stdout and "MEMORY.md:11" in tagged.stdout
    (clipped,) = [line for line in tagged.stdout.splitlines() if line.startswith("MEMORY.md:20")]
    assert clipped.endswith("  " + " ".join(long.split())[:119] + "…")  # the first 120 characters, the cut marked


def test_list_through_the_daemon(layout, cli):
    _plant(layout)
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        from memvault.daemon.client import ask

        reply = ask(layout, {"op": "list", "tag": "editor"})
        assert reply["ok"] and [e["text"] for e in reply["entries"]] == ["Uses tabs, never spaces #editor"]
        assert ask(layout, {"op": "list", "tag": 5})["error"] == '"tag" must be a string, not int'
        assert ask(layout, {"op": "search", "query": "Vite builds", "mode": "bm25"}, timeout=60)["hits"]
        update = {"op": "remember", "type": "preference", "key": "frontend-stack", "text": "Prefers Solid.js quokka"}
        saved = ask(layout, update, timeout=60)
        assert saved["ok"] and saved["status"] == "updated" and saved["indexed"], saved
        hits = ask(layout, {"op": "search", "query": "quokka", "mode": "bm25"}, timeout=60)["hits"]
        assert "quokka" in hits[0]["text"] and {h["path"] for h in hits} == {"MEMORY.md"}  # at once: indexed
        assert not ask(layout, {"op": "search", "query": "Vite builds", "mode": "bm25"}, timeout=60)["hits"]
    finally:
        cli("daemon", "stop")


def test_same_key_twice_updates_in_place_and_keeps_the_old_entry_in_the_trash(layout, cli):
    _plant(layout)
    before = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    saved = cli("remember", "--type", "architecture", "--key", "frontend-stack", "Prefers Svelte 5 now")
    assert saved.returncode == 0 and "updated the entry with key frontend-stack" in saved.stdout, saved.stderr
    after = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    old_lines = "- Prefers Vue 3 + TypeScript #frontend #projectx [key:: frontend-stack]\n" \
                "  and Vite for builds; see issue #12 and C# docs\n"  # fmt: skip
    # replaced where it was (User Preferences, a hand-written entry), every other byte as it was
    saved_on = f" <!-- saved {dt.date.today().isoformat()} -->"  # the day it was written, hidden when rendered
    assert after == before.replace(old_lines, f"- Prefers Svelte 5 now [key:: frontend-stack]{saved_on}\n")
    (trashed,) = (layout.root / ".trash" / "entries").glob("*.md")
    assert trashed.name in saved.stdout
    meta, body = parse_note("x.md", trashed.read_text(encoding="utf-8")).frontmatter, trashed.read_text()
    assert (meta["origin"], meta["section"], meta["line"], meta["key"]) == ("MEMORY.md", "User Preferences", 8,
                                                                             "frontend-stack")  # fmt: skip
    assert body.endswith("---\n" + old_lines)
    again = cli("remember", "--type", "preference", "--key", "frontend-stack", "prefers  SVELTE 5 now")
    assert again.returncode == 0 and "already remembered" in again.stdout
    assert (layout.root / "MEMORY.md").read_text(encoding="utf-8") == after
    keyed = json.loads(cli("list", "--json", "--key", "frontend-stack").stdout)["entries"]
    assert [e["text"] for e in keyed] == ["Prefers Svelte 5 now [key:: frontend-stack]"]


def test_a_key_names_one_entry_in_the_whole_vault(layout, cli, cli_process):
    """A keyed save finds the key's entry in any note: in the other live note it is replaced there;
    on a frozen past day the new entry goes to the save's note and the old one is marked superseded;
    on two entries it is refused, nothing written."""
    _plant(layout)
    today, past = dt.date.today(), (dt.date.today() - dt.timedelta(days=3)).isoformat()
    (layout.root / "daily" / f"{past}.md").write_text(
        f"# {past}\n\n## Conversations\n\n- Standup at 10 [key:: standup]\n- Lunch at noon [key:: lunch]\n"
    )
    moved = cli("note", "--key", "billing-db", "Postgres 16 for billing")  # billing-db is in MEMORY.md
    assert moved.returncode == 0 and moved.stdout.startswith("updated the entry with key billing-db in MEMORY.md")
    line = f"- Postgres 16 for billing [key:: billing-db] <!-- saved {today.isoformat()} -->"
    assert (layout.root / "MEMORY.md").read_text(encoding="utf-8").splitlines()[18] == line  # in place, no stamp
    assert not layout.daily_note(today).exists()

    fixed = cli("remember", "--type", "preference", "--key", "standup", "Standup at 11")
    assert fixed.returncode == 0, fixed.stderr
    assert f"supersedes daily/{past}.md:5" in fixed.stdout and fixed.stdout.startswith("remembered in MEMORY.md")
    mark = f"[superseded:: {today.isoformat()}]"
    assert f"- Standup at 10 [key:: standup] {mark}\n" in (layout.root / "daily" / f"{past}.md").read_text()
    again = cli("remember", "--type", "preference", "--key", "standup", "Standup at 11:30")  # the old one is past
    assert again.returncode == 0 and again.stdout.startswith("updated the entry with key standup in MEMORY.md")
    rows = json.loads(cli("list", "--json", "--key", "standup").stdout)["entries"]
    new = rows[0]
    assert new["path"] == "MEMORY.md"
    assert new["text"].startswith("Standup at 11:30 [key:: standup] [corrects:: daily/")  # still the newer fact
    assert [r["superseded_by"] for r in rows] == [None, f"MEMORY.md:{new['start_line']}"]
    # killed between writing the new entry and marking the old: both current; the same save again finishes it
    crash = {"MEMVAULT_CRASH_AT": "before-supersede"}
    assert cli_process("note", "--key", "lunch", "Lunch at one", env=crash).returncode == -9
    assert cli("note", "--key", "lunch", "Lunch at one").stdout.startswith("already remembered in daily/")
    assert f"- Lunch at noon [key:: lunch] {mark}\n" in (layout.root / "daily" / f"{past}.md").read_text()
    noon = next(e for e in iter_entries(parse_note("p.md", (layout.root / "daily" / f"{past}.md").read_text()))
                if e.key == "lunch")  # fmt: skip
    ptr = f"daily/{past}.md#{version_id(noon)}"  # the version, by its text: the key is the newer entry's too
    assert f"Lunch at one [key:: lunch] [corrects:: {ptr}]" in layout.daily_note(today).read_text()
    two = cli("remember", "--type", "preference", "--key", "lunch", "Lunch at two")  # the key is in today's note
    assert two.returncode == 0 and two.stdout.startswith(f"updated the entry with key lunch in daily/{today}.md")
    assert re.search(rf"\n- \d\d:\d\d Lunch at two \[key:: lunch\] \[corrects:: {re.escape(ptr)}\]\n",
                     layout.daily_note(today).read_text())  # fmt: skip

    # a key hand-written on two entries: refused with both named, not a byte written anywhere
    memory = layout.root / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- Prefers React [key:: frontend-stack]\n")
    before = {p: p.read_bytes() for p in layout.root.rglob("*") if p.is_file()}
    twice = cli("note", "--key", "frontend-stack", "Prefers Svelte")
    assert twice.returncode == 2 and twice.stderr.count("\n") == 1, twice.stderr
    assert "2 entries hold key frontend-stack (MEMORY.md:8, MEMORY.md:21)" in twice.stderr
    assert {p: p.read_bytes() for p in layout.root.rglob("*") if p.is_file()} == before


def test_same_text_twice_is_one_entry_and_the_note_is_not_rewritten(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    first = cli("remember", "--type", "preference", "--tag", "editor", "User prefers Vue 3 + TypeScript")
    assert first.returncode == 0 and first.stdout.startswith("remembered in MEMORY.md")
    memory = layout.root / "MEMORY.md"
    stat = memory.stat()
    second = cli("remember", "--type", "preference", "--tag", "editor", "user prefers  Vue 3 + TypeScript")
    assert second.returncode == 0 and second.stdout.startswith("already remembered in MEMORY.md")
    assert memory.stat().st_mtime_ns == stat.st_mtime_ns
    assert memory.read_text(encoding="utf-8").count("User prefers Vue 3") == 1
    assert "- User prefers Vue 3 + TypeScript #editor <!-- saved " in memory.read_text(encoding="utf-8")
    for _ in range(2):
        assert cli("note", "--section", "todo", "--key", "standup", "Standup at 10").returncode == 0
    assert cli("note", "--section", "todo", "--key", "standup", "Standup at 11").returncode == 0
    daily = next((layout.root / "daily").glob("*.md")).read_text(encoding="utf-8")
    assert "Standup at 11 [key:: standup]" in daily and "Standup at 10" not in daily
    assert "- Todos: 1\n" in daily  # added once, then updated: the counter counts entries


def test_one_fact_is_one_entry_whatever_tags_or_key_each_save_gave_it(layout, cli):
    """Issue 27, case 6: the same text saved with a key and a tag, then bare, was two entries, and
    updating the key left the bare copy (the old fact) in the stable block."""
    assert cli("init", "--lang", "en").returncode == 0
    fact = "Prefers Vue 3 for front ends"
    assert cli("remember", "--type", "preference", "--key", "fe", "--tag", "frontend", fact).returncode == 0
    memory = layout.root / "MEMORY.md"
    stat = memory.stat()
    bare = cli("remember", "--type", "preference", fact)
    assert bare.returncode == 0 and bare.stdout.startswith("already remembered in MEMORY.md"), bare
    assert memory.stat().st_mtime_ns == stat.st_mtime_ns  # nothing new: not a byte written
    more = cli("remember", "--type", "preference", "--tag", "ui", fact.lower())
    assert more.returncode == 0 and "now has this save's tags" in more.stdout, more
    lines = [t for t in memory.read_text(encoding="utf-8").splitlines() if "Vue" in t]
    assert lines == [f"- {fact} #frontend #ui [key:: fe] <!-- saved {dt.date.today().isoformat()} -->"]
    assert cli("remember", "--type", "preference", "Uses Vim").returncode == 0
    keyed = cli("remember", "--type", "preference", "--key", "editor", "uses vim")  # the key joins the entry
    assert keyed.returncode == 0 and "now has this save's tags and key" in keyed.stdout, keyed
    assert cli("remember", "--type", "preference", "--key", "fe", "Prefers Svelte for front ends").returncode == 0
    assert cli("remember", "--type", "preference", "--key", "editor", "Uses Helix").returncode == 0
    stable = cli("context", "what do I use for front ends?").stdout
    assert "Svelte" in stable and "Vue" not in stable and "Helix" in stable and "Vim" not in stable, stable


def test_hostile_keys_and_tags_are_one_line_refusals(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    before = (layout.root / "MEMORY.md").read_bytes()
    for flag, value in (
        ("--key", "a\nb"),
        ("--key", "a::b"),
        ("--key", "k" * 10_000),
        ("--key", "../x"),
        ("--key", "a]b"),
        ("--tag", "a\nb"),
        ("--tag", "x::y"),
        ("--tag", "a/b"),
        ("--tag", "12"),
    ):
        result = cli("remember", "--type", "preference", flag, value, "a fact")
        assert result.returncode == 2, (value, result.stdout)
        assert result.stderr.startswith("memvault: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert (layout.root / "MEMORY.md").read_bytes() == before


def test_forget_is_gone_from_search_at_once_and_restore_puts_back_the_same_bytes(layout, cli):
    _plant(layout)
    memory = layout.root / "MEMORY.md"
    before = memory.read_bytes()
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        assert _search_paths(cli, "Postgres billing") == ["MEMORY.md"]
        forgot = cli("forget", "billing-db")
        assert forgot.returncode == 0, forgot.stderr
        assert forgot.stdout.startswith("forgot MEMORY.md:19;")
        assert b"Postgres" not in memory.read_bytes()
        assert _search_paths(cli, "Postgres billing") == []  # read-your-writes through the daemon
        (item,) = json.loads(cli("trash", "--json").stdout)["items"]
        assert (item["origin"], item["section"], item["line"], item["key"]) == (
            "MEMORY.md", "Architecture Decisions", 19, "billing-db")  # fmt: skip
        restored = cli("restore", item["id"])
        assert restored.returncode == 0 and "to MEMORY.md:19" in restored.stdout
        assert memory.read_bytes() == before
        assert _search_paths(cli, "Postgres billing") == ["MEMORY.md"]
        assert json.loads(cli("trash", "--json").stdout)["items"] == []
    finally:
        cli("daemon", "stop")


def test_forget_never_guesses_and_restore_into_a_changed_note_appends_to_the_section(layout, cli):
    _plant(layout)
    many = cli("forget", "--match", "#projectx")
    assert many.returncode == 2 and "MEMORY.md:8, MEMORY.md:19" in many.stderr and many.stderr.count("\n") == 1
    assert cli("forget", "no-such-key").returncode == 2
    assert cli("forget", "MEMORY.md:11").returncode == 0  # by place: the tabs entry
    (item,) = json.loads(cli("trash", "--json").stdout)["items"]
    assert cli("remember", "--section", "User Preferences", "A new fact written meanwhile").returncode == 0
    restored = cli("restore", item["id"])
    assert restored.returncode == 0 and "end of its section" in restored.stdout
    prefs = [e["text"] for e in json.loads(cli("list", "--json", "--section", "User Preferences").stdout)["entries"]]
    assert prefs[-2:] == ["A new fact written meanwhile", "Uses tabs, never spaces #editor"]
    assert cli("restore", item["id"]).returncode == 2  # gone from the trash once restored


def test_restore_refuses_an_entry_whose_key_was_saved_again_since(layout, cli):
    """Forgotten, then saved again under its key, then restored: both came back current, and every later
    save, forget or correct of the key was refused ("2 entries hold key"; the editor harness, rename
    editor without the exchange). The restore is refused now, naming the entry that holds the key, and
    the item stays in the trash until that entry is forgotten."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--key", "db-port", "The database listens on 5432").returncode == 0
    assert cli("forget", "db-port").returncode == 0
    (item,) = json.loads(cli("trash", "--json").stdout)["items"]
    assert cli("remember", "--key", "db-port", "The database listens on 5433").returncode == 0
    refused = cli("restore", item["id"])
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused
    assert "key db-port is held by MEMORY.md:" in refused.stderr
    listed = json.loads(cli("list", "--key", "db-port", "--json").stdout)["entries"]
    assert [e["text"] for e in listed] == ["The database listens on 5433 [key:: db-port]"]
    assert cli("remember", "--key", "db-port", "The database listens on 5434").returncode == 0  # one fact still
    assert cli("forget", "db-port").returncode == 0
    assert cli("restore", item["id"]).returncode == 0  # its key free again: it goes back
    listed = json.loads(cli("list", "--key", "db-port", "--json").stdout)["entries"]
    assert [e["text"] for e in listed] == ["The database listens on 5432 [key:: db-port]"]


def _search_paths(cli, query):
    result = cli("search", "--json", "--mode", "bm25", query)
    assert result.returncode == 0, result.stderr
    return [h["path"] for h in json.loads(result.stdout)["hits"]]


def test_list_shows_the_day_memvault_saved_a_memory_entry(layout, cli):
    _plant(layout)
    assert cli("remember", "--section", "User Preferences", "Reads release notes first").returncode == 0
    rows = json.loads(cli("list", "--json", "--section", "User Preferences").stdout)["entries"]
    assert [(r["text"], r["date"]) for r in rows][-2:] == [
        ("Uses tabs, never spaces #editor", None),  # written by hand: no day known
        ("Reads release notes first", dt.date.today().isoformat()),
    ]
    assert "<!-- saved" in (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert cli("list", "--section", "User Preferences").stdout.splitlines()[-2].endswith(dt.date.today().isoformat())


def test_a_multi_line_entry_with_heading_or_fence_lines_stays_one_entry(layout, cli):
    """Continuation lines are indented; at two spaces `## x` or a fence would still be read as a heading or
    a fence (both may be indented up to three), ending the section under the next save's feet."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Solutions", input="first line\n## not a heading\n```\nmore").returncode == 0
    assert cli("remember", "--section", "Solutions", "second fact").returncode == 0
    rows = json.loads(cli("list", "--json", "--section", "Solutions").stdout)["entries"]
    assert [r["text"] for r in rows] == ["first line\n## not a heading\n```\nmore", "second fact"]
    sections = [line.rsplit(None, 1) for line in cli("sections").stdout.splitlines()]
    assert [(title.strip(), count) for title, count in sections][2:4] == [
        ("Solutions", "2"),
        ("Technical Discoveries", "0"),
    ]


def test_a_key_matches_as_typed_then_folded_and_a_hit_source_names_its_entry(layout, cli):
    """Seed 002's rule (as typed, then lower case with spaces as `_`), and one locator across verbs:
    the `PATH#Lx-Ly` a search hit prints is taken by forget and correct like `PATH:LINE` (issue 26)."""
    (layout.root / "MEMORY.md").write_text(
        "# Long-term Memory\n\n## Configuration\n\n- Ruff runs with rule E501 off [key:: ruff-rule]\n"
        "- Deploys go out on Fridays [key:: deploy_day]\n\n## Solutions\n\n- Pin the jieba version\n",
        encoding="utf-8",
    )
    listed = json.loads(cli("list", "--key", "RUFF-RULE", "--json").stdout)["entries"]
    assert [e["key"] for e in listed] == ["ruff-rule"]
    fixed = cli("correct", "Deploy Day", "Deploys go out on Thursdays")
    assert fixed.returncode == 0, fixed.stderr
    assert "[superseded::" in (layout.root / "MEMORY.md").read_text(encoding="utf-8").splitlines()[5]
    assert cli("index").returncode == 0
    hit = json.loads(cli("search", "--json", "jieba version", "--mode", "bm25").stdout)["hits"][0]
    where = f"{hit['path']}#L{hit['start_line']}-L{hit['end_line']}"
    assert cli("forget", where).returncode == 0
    assert "jieba" not in (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    both = cli("forget", "MEMORY.md#L5-L6")  # a range over two entries names neither
    assert both.returncode != 0 and "2 entries match MEMORY.md#L5-L6" in both.stderr
    assert cli("forget", "RUFF-RULE").returncode == 0
    assert "ruff-rule" not in (layout.root / "MEMORY.md").read_text(encoding="utf-8")
