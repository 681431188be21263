"""The entry is the unit of recall (issue 26): a hit is one entry, or neighbours that answer together,
and says what it is (its id, key, #tags, day, superseded / corrects), every locator a hit carries is
taken by the verbs that act on an entry, and a correction's pointer survives edits above the entry it
corrects. CLI in this process."""

from __future__ import annotations

import datetime as dt
import json

from tests.conftest import search_json

DAY = "2026-11-20"
NOTE = f"""---
date: {DAY}
tags: [travel]
---
# {DAY} Daily Log

## Conversations

- 09:10 Lunch at the noodle bar with Sam
- 10:02 Booked the kayak trip for June #trip [key:: kayak-trip]
  paddles included
- 11:30 Fixed the flaky socket test by waiting on a counter #testing
- 12:15 Reviewed the pull request for the exporter
- 14:00 Planned the sprint with the team
- 15:20 Wrote the release notes for version 2
- 16:45 Moved the standup to eleven
- 17:30 Closed the laptop early
"""


def _search(cli, *args):
    return search_json(cli, *args)["hits"]


def _ok(result):
    assert result.returncode == 0, result.stderr
    return result


def _vault(layout, cli):
    _ok(cli("init", "--lang", "en"))
    (layout.root / "daily" / f"{DAY}.md").write_text(NOTE, encoding="utf-8")
    _ok(cli("index"))


def test_a_hit_is_one_entry_and_says_what_it_is(layout, cli):
    _vault(layout, cli)
    for mode in ("bm25", "hybrid"):
        hit = _search(cli, "what did I eat for lunch", "--mode", mode)[0]
        assert hit["text"] == "- 09:10 Lunch at the noodle bar with Sam", mode  # not the section around it
        assert (hit["start_line"], hit["end_line"], hit["unit"], hit["day"]) == (9, 9, "entry", DAY)
        assert hit["entry_id"].startswith("@") and "key" not in hit and hit["tags"] == ["travel"]
    kayak = _search(cli, "kayak trip", "--mode", "bm25")[0]
    assert kayak["text"] == "- 10:02 Booked the kayak trip for June #trip [key:: kayak-trip]\n  paddles included"
    assert (kayak["key"], kayak["entry_id"], kayak["tags"]) == ("kayak-trip", "kayak-trip", ["travel", "trip"])
    listed = json.loads(cli("list", "--json", "--key", "kayak-trip").stdout)["entries"][0]
    assert (listed["start_line"], listed["end_line"]) == (kayak["start_line"], kayak["end_line"])
    in_one = _search(cli, "socket test", "--mode", "bm25", "--per-doc", "0")
    assert len({(h["start_line"], h["end_line"]) for h in in_one}) == len(in_one)  # no entry twice


def test_every_locator_a_hit_carries_names_its_entry(layout, cli):
    """The source (`PATH#Lx-Ly`) and the id, taken by get (MCP's memory_get, through the API), forget
    and correct; the entry is the one the hit showed."""
    from memvault import Vault

    _vault(layout, cli)
    lunch = _search(cli, "lunch noodle bar", "--mode", "bm25")[0]
    source = f"{lunch['path']}#L{lunch['start_line']}-L{lunch['end_line']}"
    with Vault(layout.root) as v:
        from memvault.verbs.notes import Get

        for ref in (source, lunch["entry_id"]):
            got = v.run(Get(ref))
            assert (got.path, got.start_line, got.text) == (lunch["path"], 9, lunch["text"]), ref
    socket = _search(cli, "flaky socket", "--mode", "bm25")[0]
    _ok(cli("correct", socket["entry_id"], "The socket test waits on an event now"))
    assert "[superseded::" in (layout.root / socket["path"]).read_text(encoding="utf-8").splitlines()[11]
    _ok(cli("forget", source))
    assert "noodle bar" not in (layout.root / lunch["path"]).read_text(encoding="utf-8")


def test_a_correction_still_names_its_entry_after_lines_are_inserted_above_it(layout, cli):
    _vault(layout, cli)
    _ok(cli("correct", "--match", "noodle bar", "Lunch was at the dumpling place"))
    note = layout.root / "daily" / f"{DAY}.md"
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("## Conversations\n\n", "## Conversations\n\n" + "- 08:00 an early line\n" * 10),
                    encoding="utf-8")  # fmt: skip
    old = next(e for e in json.loads(cli("list", "--json").stdout)["entries"] if "noodle" in e["text"])
    today = f"daily/{dt.date.today().isoformat()}.md"
    assert old["start_line"] == 19 and old["superseded_by"].startswith(f"{today}:")
    hits = [h for h in _search(cli, "lunch noodle bar", "--mode", "bm25") if h["unit"] == "entry"]  # not the summary
    assert [h["path"] for h in hits[:2]] == [today, f"daily/{DAY}.md"]  # the correction first, then the old entry
    assert hits[0]["corrects"] == f"daily/{DAY}.md#{hits[1]['entry_id']}" and hits[1]["superseded"]


def test_an_older_line_pointer_still_resolves(layout, cli):
    """Corrections written before entry ids point by `PATH:LINE`: still followed, by nearest line."""
    _ok(cli("init", "--lang", "en"))
    marked = NOTE.replace("noodle bar with Sam", "noodle bar with Sam [superseded:: 2026-11-21]")
    (layout.root / "daily" / f"{DAY}.md").write_text(marked, encoding="utf-8")
    (layout.root / "daily" / "2026-11-21.md").write_text(
        f"# 2026-11-21\n\n## Conversations\n\n- Lunch was at the dumpling place [corrects:: daily/{DAY}.md:9]\n",
        encoding="utf-8",
    )
    _ok(cli("index"))
    hits = _search(cli, "lunch noodle bar", "--mode", "bm25")
    assert [h["path"] for h in hits[:2]] == ["daily/2026-11-21.md", f"daily/{DAY}.md"]


TALK = f"""# {DAY}

## Conversations

- 09:00 **Ana**: Where do we hold the team offsite in March?
- 09:01 **Ben**: The offsite is in Lisbon this year, by the river.
- 09:02 **Ana**: Good, then I book the flights to Lisbon today.
- 09:03 **Ben**: The budget review moved to Friday.
- 09:04 **Ana**: Noted, and the printer on floor two is fixed.
- 09:05 **Ben**: The new laptops arrive next week.
- 09:06 **Ana**: Someone left an umbrella in room four.
- 09:07 **Ben**: Lisbon hotels fill up quickly in spring.
"""


def test_neighbouring_entries_that_answer_a_query_together_are_one_hit(layout, cli):
    """The question, its answer and the follow-up are one hit of the lines they span, naming its entries;
    a neighbour that holds none of the query's words stays out, and a far one is a hit of its own."""
    _ok(cli("init", "--lang", "en"))
    note = layout.root / "daily" / f"{DAY}.md"
    note.write_text(TALK, encoding="utf-8")
    _ok(cli("index"))
    lines = TALK.split("\n")
    for mode in ("bm25", "substring"):  # the files' own answer (no index) joins as the index's does
        hits = _search(cli, "team offsite in Lisbon", "--mode", mode, "--per-doc", "0")
        joined = hits[0]
        assert (joined["unit"], joined["start_line"], joined["end_line"]) == ("entries", 5, 7), mode  # no budget
        assert joined["text"] == "\n".join(lines[4:7])  # the note's own lines
        assert len(joined["entries"]) == 3 and joined["entry_id"] in joined["entries"] and joined["day"] == DAY
        assert joined["snippet"].count("\n") == 2  # all three lines, not a window of them
        far = [h for h in hits if h["start_line"] == 12]
        assert far and far[0]["unit"] == "entry" and far[0]["end_line"] == 12  # "Lisbon hotels", five lines on
    from memvault import Vault
    from memvault.verbs.notes import Get

    with Vault(layout.root) as v:
        got = v.run(Get(f"{joined['path']}#L5-L7"))
    assert got.text == joined["text"]
    refused = cli("forget", f"{joined['path']}#L5-L7")
    assert refused.returncode == 2 and "3 entries match" in refused.stderr  # named, nothing removed
    _ok(cli("forget", joined["entries"][1]))
    assert "Lisbon this year" not in note.read_text(encoding="utf-8")
