"""`memvault clear`: every entry of a MEMORY.md section, or of every note, to the trash, only when
confirmed; `restore BATCH` puts them all back, byte for byte."""

from __future__ import annotations

import json

from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV
from tests.test_entries import _plant


def _texts(cli, *args):
    return [e["text"] for e in json.loads(cli("list", "--json", *args).stdout)["entries"]]


def test_clear_needs_yes_and_names_what_it_would_move(layout, cli):
    _plant(layout)
    before = (layout.root / "MEMORY.md").read_bytes()
    refused = cli("clear", "--section", "User Preferences")  # stdin is not a terminal: no prompt
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "would move 3 entries of section 'User Preferences'" in refused.stderr and "--yes" in refused.stderr
    assert (layout.root / "MEMORY.md").read_bytes() == before
    unknown = cli("clear", "--section", "No Such Section", "--yes")
    assert unknown.returncode == 2 and "no section 'No Such Section'" in unknown.stderr
    assert cli("clear", "--yes").returncode == 2  # neither --section nor --all
    assert (layout.root / "MEMORY.md").read_bytes() == before


def test_clear_a_section_through_the_daemon_and_restore_the_batch(layout, cli):
    _plant(layout)
    memory = layout.root / "MEMORY.md"
    before = memory.read_bytes()
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        assert cli("search", "--json", "--mode", "bm25", "tabs spaces").stdout.count('"path"') == 1
        cleared = cli("clear", "--section", "User Preferences", "--yes")
        assert cleared.returncode == 0, cleared.stderr
        assert cleared.stdout.startswith("moved 3 entries of MEMORY.md to the trash")
        batch = cleared.stdout.split("memvault restore ")[1].rstrip(")\n")
        text = memory.read_text(encoding="utf-8")
        assert "## User Preferences" in text and "Vue" not in text and "回答" not in text and "tabs" not in text
        assert "- not an entry: inside a fence" in text  # fenced lines are not entries
        assert _texts(cli, "--section", "User Preferences") == []
        assert _texts(cli, "--key", "billing-db")  # other sections keep theirs
        hits = json.loads(cli("search", "--json", "--mode", "bm25", "tabs spaces").stdout)["hits"]
        assert hits == []  # read-your-writes through the daemon
        items = json.loads(cli("trash", "--json").stdout)["items"]
        assert len(items) == 3 and {i["batch"] for i in items} == {batch}
        restored = cli("restore", batch)
        assert restored.returncode == 0 and "restored 3 entries" in restored.stdout and "each where" in restored.stdout
        assert memory.read_bytes() == before
        assert json.loads(cli("trash", "--json").stdout)["items"] == []
        assert cli("search", "--json", "--mode", "bm25", "tabs spaces").stdout.count('"path"') == 1
    finally:
        cli("daemon", "stop")


def test_clear_all_empties_every_note_but_keeps_headings_and_counters(layout, cli):
    _plant(layout)
    daily = layout.root / "daily" / "2026-11-30.md"
    before = {p: p.read_bytes() for p in (layout.root / "MEMORY.md", daily)}
    dry = cli("clear", "--all")
    assert "would move 5 entries of every note" in dry.stderr
    cleared = cli("clear", "--all", "--yes")
    assert cleared.returncode == 0 and cleared.stdout.startswith("moved 5 entries of MEMORY.md, daily/2026-11-30.md")
    assert _texts(cli) == []
    assert daily.read_text(encoding="utf-8").startswith("# 2026-11-30 Daily Log\n\n## Overview\n\n- Conversations: 1\n")
    assert cli("clear", "--all", "--yes").stdout == "nothing to clear\n"
    batch = cleared.stdout.split("memvault restore ")[1].rstrip(")\n")
    assert cli("restore", batch).returncode == 0
    assert {p: p.read_bytes() for p in before} == before
