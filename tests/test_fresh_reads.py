"""No read is stale: a search never shows text its note no longer holds (issue 26), with no daemon to
catch up. The index is built, then the files change behind it; the CLI runs in this process."""

from __future__ import annotations

import json

import jsonschema

from memvault.search.hits import RESULT_SCHEMA


def _search(cli, *args):
    result = cli("search", "--json", *args)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    jsonschema.validate(data, RESULT_SCHEMA)
    return data


def _ok(result):
    assert result.returncode == 0, result.stderr
    return result


def test_a_forgotten_entry_is_not_found_before_the_next_index(layout, cli):
    _ok(cli("init", "--lang", "en"))
    _ok(cli("remember", "--type", "preference", "--key", "editor", "uses vim"))
    _ok(cli("remember", "--type", "preference", "--key", "editor", "switched to helix"))
    _ok(cli("index"))
    assert "switched to helix" in _search(cli, "helix", "--mode", "bm25")["hits"][0]["text"]
    _ok(cli("forget", "editor"))
    data = _search(cli, "helix", "--mode", "bm25")
    assert data["hits"] == []
    assert "changed since the last index" in data["reason"]


def test_a_deleted_note_gives_no_hits_and_the_next_note_moves_up(layout, cli):
    (layout.root / "notes").mkdir()
    (layout.root / "notes" / "a.md").write_text("# A\n\nkayak trip on the lake, kayak rental\n", encoding="utf-8")
    (layout.root / "notes" / "b.md").write_text("# B\n\nthe kayak needs a new paddle\n", encoding="utf-8")
    _ok(cli("index"))
    before = [h["path"] for h in _search(cli, "kayak", "--mode", "bm25")["hits"]]
    assert sorted(before) == ["notes/a.md", "notes/b.md"]
    (layout.root / before[0]).unlink()
    for mode in ("bm25", "hybrid", "vector"):
        data = _search(cli, "kayak", "--mode", mode, "--limit", "1")
        assert [h["path"] for h in data["hits"]] == [before[1]], mode
        if mode == "bm25":  # the deleted note ranked first, so it was looked at, and the answer says so
            assert "1 note has changed since the last index" in data["reason"]


def test_an_edit_that_removes_the_text_removes_the_hit(layout, cli):
    note = layout.root / "plans.md"
    note.write_text("# Plans\n\n## Trips\n\nkayak trip in June\n\n## Food\n\nbuy bread\n", encoding="utf-8")
    _ok(cli("index"))
    assert _search(cli, "kayak", "--mode", "bm25")["hits"]
    note.write_text("# Plans\n\n## Trips\n\ncancelled\n\n## Food\n\nbuy bread\n", encoding="utf-8")
    assert _search(cli, "kayak", "--mode", "bm25")["hits"] == []
    assert [h["text"] for h in _search(cli, "bread", "--mode", "bm25")["hits"]] == ["## Food\n\nbuy bread"]


def test_lines_inserted_above_move_the_hit_to_where_its_text_is(layout, cli):
    note = layout.root / "plans.md"
    note.write_text("# Plans\n\n## Trips\n\nkayak trip in June\n", encoding="utf-8")
    _ok(cli("index"))
    hit = _search(cli, "kayak", "--mode", "bm25")["hits"][0]
    assert (hit["start_line"], hit["end_line"]) == (3, 5)
    note.write_text("# Plans\n\n" + "".join(f"line {i}\n" for i in range(10)) + "\n## Trips\n\nkayak trip in June\n",
                    encoding="utf-8")  # fmt: skip
    hit = _search(cli, "kayak", "--mode", "bm25")["hits"][0]
    lines = note.read_text(encoding="utf-8").splitlines()
    assert lines[hit["start_line"] - 1 : hit["end_line"]] == ["## Trips", "", "kayak trip in June"]
    assert hit["heading"] == ["Plans", "Trips"]


def test_a_note_as_indexed_is_not_read_again(layout, cli):
    """The check is by stat: an unchanged note's hits come from the index, and the answer says nothing."""
    (layout.root / "a.md").write_text("# A\n\nkayak trip\n", encoding="utf-8")
    _ok(cli("index"))
    data = _search(cli, "kayak", "--mode", "bm25")
    assert [h["path"] for h in data["hits"]] == ["a.md"]
    assert not data["reason"]
