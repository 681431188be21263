"""A note is indexed once, under its own name: a symlink to a file of the vault (a daily note linked
from a project folder) is another name for it, not a second note (it used to be indexed twice, and a
search returned the same entry twice). A link out of the vault stays an error, as before."""

from __future__ import annotations

import json

from memvault.vault.scan import scan_vault, stat_entry
from tests.reliability.conftest import HASH_ENV

DAY = "daily/2025-12-01.md"


def test_a_symlink_to_a_note_of_the_vault_is_not_a_second_note(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("note", "--date", "2025-12-01", "Zorblat moved to the new rack").returncode == 0
    (layout.root / "notes").mkdir()
    (layout.root / "notes" / "link.md").symlink_to("../" + DAY)
    (layout.root / "linked-folder").symlink_to(layout.root / "daily", target_is_directory=True)
    (tmp_path / "out.md").write_text("outside", encoding="utf-8")
    (layout.root / "out.md").symlink_to(tmp_path / "out.md")
    walked = {e.rel: e.error for e in scan_vault(layout)}
    assert DAY in walked and "notes/link.md" not in walked
    assert "symlink points outside the vault" in (walked["out.md"] or "")
    # what the watcher asks about one path is judged the same way
    assert stat_entry(layout, "notes/link.md") is None and stat_entry(layout, "linked-folder/2025-12-01.md") is None
    assert stat_entry(layout, DAY) is not None
    assert cli("index", env=HASH_ENV).returncode == 0
    status = json.loads(cli("status", "--json").stdout)
    assert status["files_on_disk"] == status["files_indexed"] + status["files_failed"] == 3  # MEMORY, day, out
    hits = json.loads(cli("search", "--json", "--mode", "bm25", "Zorblat rack", env=HASH_ENV).stdout)["hits"]
    assert [h["path"] for h in hits] == [DAY]
    entries = json.loads(cli("list", "--json").stdout)["entries"]
    assert [e["path"] for e in entries if "Zorblat" in e["text"]] == [DAY]
