"""Entries: list items with an inline `[key:: NAME]` and `#tags`, parsed the same whether memvault or a
person wrote them; `memvault list` and `search --tag` with no query, on the CLI and through the daemon."""

from __future__ import annotations

import json

from tests.reliability.conftest import HASH_ENV
from vault.entries import iter_entries, normalise
from vault.notes import parse_note

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


def test_list_through_the_daemon(layout, cli):
    _plant(layout)
    assert cli("daemon", "start", env=HASH_ENV).returncode == 0
    try:
        from memvault.daemon.client import ask

        reply = ask(layout, {"op": "list", "tag": "editor"})
        assert reply["ok"] and [e["text"] for e in reply["entries"]] == ["Uses tabs, never spaces #editor"]
        assert ask(layout, {"op": "list", "tag": 5})["error"] == '"tag" must be a string, not int'
    finally:
        cli("daemon", "stop")
