"""No read is stale (issue 26): with no daemon, a search first indexes the notes saved since the last
index (up to `CATCH_UP`); and whatever the index lags behind, it never shows text a note no longer
holds. The CLI runs in this process."""

from __future__ import annotations

import json

from memvault.local import CATCH_UP
from tests.conftest import search_json


def _ok(result):
    assert result.returncode == 0, result.stderr
    return result


def _bulk_change(layout):
    """More new notes than a search indexes first (a `git pull`): the search answers from the index
    as it is, and says so."""
    (layout.root / "pulled").mkdir()
    for i in range(CATCH_UP + 1):
        (layout.root / "pulled" / f"n{i}.md").write_text(f"# N{i}\n\nnothing to see {i}\n", encoding="utf-8")


def test_the_stale_sequence_finds_nothing_with_no_daemon(layout, cli):
    _ok(cli("init", "--lang", "en"))
    _ok(cli("remember", "--type", "preference", "--key", "editor", "uses vim"))
    _ok(cli("remember", "--type", "preference", "--key", "editor", "switched to helix"))
    _ok(cli("index"))
    assert "switched to helix" in search_json(cli, "helix", "--mode", "bm25")["hits"][0]["text"]
    _ok(cli("forget", "editor"))
    for mode in ("bm25", "hybrid"):
        data = search_json(cli, "helix", "--mode", mode)
        assert [h for h in data["hits"] if "helix" in h["text"]] == [], mode
        assert not data["reason"], mode  # caught up before it ranked: nothing to say


def test_a_note_written_with_no_daemon_is_found_by_the_next_search(layout, cli):
    _ok(cli("init", "--lang", "en"))
    _ok(cli("index"))
    _ok(cli("note", "Booked the kayak trip for June"))
    (layout.root / "by-hand.md").write_text("# By hand\n\nthe canoe club meets on Tuesdays\n", encoding="utf-8")
    for query, expected in (("kayak", "Booked the kayak trip"), ("canoe club", "the canoe club meets")):
        data = search_json(cli, query, "--mode", "bm25")
        assert expected in data["hits"][0]["text"], query
    status = json.loads(_ok(cli("status", "--json")).stdout)
    assert status["files_pending"] == 0  # indexed for good, not just searched


def test_a_vault_never_indexed_is_indexed_by_its_first_search(layout, cli):
    (layout.root / "a.md").write_text("# A\n\nkayak trip\n", encoding="utf-8")
    data = search_json(cli, "kayak")
    assert data["source"] == "hybrid"
    assert [h["path"] for h in data["hits"]] == ["a.md"]


def test_a_bulk_change_is_left_to_index_and_said(layout, cli):
    (layout.root / "a.md").write_text("# A\n\nkayak trip\n", encoding="utf-8")
    _ok(cli("index"))
    _bulk_change(layout)
    data = search_json(cli, "nothing to see", "--mode", "bm25")
    assert data["hits"] == []
    assert f"{CATCH_UP + 1} notes changed since the last index and are not searched yet" in data["reason"]
    _ok(cli("index"))
    assert search_json(cli, "nothing to see", "--mode", "bm25")["hits"]


def test_a_deleted_note_gives_no_hits_and_the_next_note_moves_up(layout, cli):
    (layout.root / "notes").mkdir()
    (layout.root / "notes" / "a.md").write_text("# A\n\nkayak trip on the lake, kayak rental\n", encoding="utf-8")
    (layout.root / "notes" / "b.md").write_text("# B\n\nthe kayak needs a new paddle\n", encoding="utf-8")
    _ok(cli("index"))
    before = [h["path"] for h in search_json(cli, "kayak", "--mode", "bm25")["hits"]]
    assert sorted(before) == ["notes/a.md", "notes/b.md"]
    _bulk_change(layout)
    (layout.root / before[0]).unlink()
    for mode in ("bm25", "hybrid", "vector"):
        data = search_json(cli, "kayak", "--mode", mode, "--limit", "1")
        assert [h["path"] for h in data["hits"]] == [before[1]], mode
        if mode == "bm25":  # the deleted note ranked first, so it was looked at, and the answer says so
            assert "1 note has changed since the last index" in data["reason"]


def test_an_edit_that_removes_the_text_removes_the_hit(layout, cli):
    note = layout.root / "plans.md"
    note.write_text("# Plans\n\n## Trips\n\nkayak trip in June\n\n## Food\n\nbuy bread\n", encoding="utf-8")
    _ok(cli("index"))
    assert search_json(cli, "kayak", "--mode", "bm25")["hits"]
    _bulk_change(layout)
    note.write_text("# Plans\n\n## Trips\n\ncancelled\n\n## Food\n\nbuy bread\n", encoding="utf-8")
    assert search_json(cli, "kayak", "--mode", "bm25")["hits"] == []
    assert [h["text"] for h in search_json(cli, "bread", "--mode", "bm25")["hits"]] == ["## Food\n\nbuy bread"]


def test_lines_inserted_above_move_the_hit_to_where_its_text_is(layout, cli):
    note = layout.root / "plans.md"
    note.write_text("# Plans\n\n## Trips\n\nkayak trip in June\n", encoding="utf-8")
    _ok(cli("index"))
    hit = search_json(cli, "kayak", "--mode", "bm25")["hits"][0]
    assert (hit["start_line"], hit["end_line"]) == (3, 5)
    _bulk_change(layout)
    note.write_text("# Plans\n\n" + "".join(f"line {i}\n" for i in range(10)) + "\n## Trips\n\nkayak trip in June\n",
                    encoding="utf-8")  # fmt: skip
    hit = search_json(cli, "kayak", "--mode", "bm25")["hits"][0]
    lines = note.read_text(encoding="utf-8").splitlines()
    assert lines[hit["start_line"] - 1 : hit["end_line"]] == ["## Trips", "", "kayak trip in June"]
    assert hit["heading"] == ["Plans", "Trips"]


def test_a_note_as_indexed_is_not_read_again(layout, cli):
    """The check is by stat: an unchanged note's hits come from the index, and the answer says nothing."""
    (layout.root / "a.md").write_text("# A\n\nkayak trip\n", encoding="utf-8")
    _ok(cli("index"))
    _bulk_change(layout)
    data = search_json(cli, "kayak", "--mode", "bm25")
    assert [h["path"] for h in data["hits"]] == ["a.md"]
    assert "changed since the last index:" not in data["reason"]


def test_a_host_program_finds_what_it_just_saved(layout):
    """One `Vault` for many calls: its search keeps the index open, and still finds each save the moment
    after (a walk runs at most once a second; the process's own saves are brought in at once)."""
    from memvault import Vault

    with Vault(layout.root) as v:
        v.init("en")
        v.index()
        assert not v.search("kayak")
        v.note("Booked the kayak trip for June")
        assert "kayak trip" in v.search("kayak")[0].text
        v.remember("Prefers aisle seats", type="preference")
        assert "aisle seats" in v.search("aisle seats")[0].text


def test_a_big_vault_is_not_walked_but_its_own_saves_are_found(layout, cli, monkeypatch):
    """Over `WALK_MOST` notes the walk would cost a cold search more than it saves (a daemon keeps such
    a vault up to date): a note written by hand waits for `index`; the process's own saves do not.
    The limit is lowered here so the vault can stay small."""
    from memvault import Vault, local

    monkeypatch.setattr(local, "WALK_MOST", 3)
    for i in range(4):
        (layout.root / f"n{i}.md").write_text(f"# N{i}\n\nnote {i}\n", encoding="utf-8")
    _ok(cli("index"))
    (layout.root / "by-hand.md").write_text("# By hand\n\nthe canoe club meets on Tuesdays\n", encoding="utf-8")
    assert search_json(cli, "canoe club", "--mode", "bm25")["hits"] == []
    with Vault(layout.root) as v:
        v.note("Booked the kayak trip for June")
        assert "kayak trip" in v.search("kayak")[0].text
    _ok(cli("index"))
    assert search_json(cli, "canoe club", "--mode", "bm25")["hits"]
