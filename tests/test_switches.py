"""Seed 003's switches in memvault.toml (issue 48): `daily_notes`, `long_term_memory` and
`embedding_cache` (`auto_index` is tested with the hooks). A switch turned off refuses memvault's writes
of that kind in one line naming the file; what the vault holds stays searchable."""

from __future__ import annotations

import json
import sqlite3

from tests.conftest import write_notes

CONVERSATION = json.dumps([
    {"role": "user", "content": "I prefer tabs over spaces in every repository"},
    {"role": "assistant", "content": "Noted: tabs."},
])  # fmt: skip


def _off(layout, *switches):
    (layout.root / "memvault.toml").write_text("".join(f"{s} = false\n" for s in switches))


def test_daily_notes_off_refuses_a_note_and_extract_writes_no_summary(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("note", "Deploys go out on Thursdays").returncode == 0  # before: written
    _off(layout, "daily_notes")
    before = sorted(p.name for p in layout.daily_dir.iterdir())
    refused = cli("note", "The staging box is called kiwi")
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"memvault: error: {layout.root / 'memvault.toml'}: daily_notes = false: " \
                                     "memvault writes no daily note"  # fmt: skip
    talk = tmp_path / "talk.json"
    talk.write_text(CONVERSATION)
    done = cli("extract", str(talk), "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["path"] == "" and any("daily_notes = false" in w for w in reply["warnings"])
    assert reply["proposals"]  # the review queue still gets what was worth keeping
    assert sorted(p.name for p in layout.daily_dir.iterdir()) == before
    assert "kiwi" not in "".join(p.read_text() for p in layout.daily_dir.iterdir())
    found = cli("search", "--json", "deploys Thursdays")
    assert found.returncode == 0 and "Thursdays" in found.stdout  # what is there stays searchable


def test_long_term_memory_off_refuses_remember(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    memory = (layout.root / "MEMORY.md").read_text()
    _off(layout, "long_term_memory")
    refused = cli("remember", "--type", "preference", "Prefers dark mode")
    assert refused.returncode == 2 and "long_term_memory = false" in refused.stderr
    assert (layout.root / "MEMORY.md").read_text() == memory
    assert cli("note", "daily notes still work").returncode == 0


def test_embedding_cache_off_keeps_no_vectors(layout, cli):
    write_notes(layout, {"MEMORY.md": "# Memory\n\n## Facts\n\n- The office plant is a fern\n"})
    _off(layout, "embedding_cache")
    assert cli("index").returncode == 0
    caches = list(layout.state_dir.rglob("embeddings.sqlite"))
    rows = [sqlite3.connect(p).execute("SELECT COUNT(*) FROM embed_cache").fetchone()[0] for p in caches]
    assert sum(rows) == 0
    (layout.root / "memvault.toml").unlink()
    assert cli("index", "--rebuild").returncode == 0
    caches = list(layout.state_dir.rglob("embeddings.sqlite"))
    assert sum(sqlite3.connect(p).execute("SELECT COUNT(*) FROM embed_cache").fetchone()[0] for p in caches) > 0
