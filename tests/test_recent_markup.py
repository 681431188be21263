"""What an agent is given reads as the note says it (issue 44): with nothing relevant the newest daily
entries fill the block (`recent`); one whose text merely holds `[key:: K]` and a `saved` comment reads
as it was said, not as fields it never had."""

from __future__ import annotations

import json


def _ok(result):
    assert result.returncode == 0, result.stderr
    return result


def test_a_recent_entry_that_quotes_markup_reads_as_it_was_said(layout, cli):
    """Before, the markup was read twice (once as the entry's fact, once more for the prompt), so the
    block said `The wiki shows and as examples (key K; saved 2026-01-01)`: fields the entry never had,
    and the quoted text gone."""
    _ok(cli("init", "--lang", "en"))
    said = "The wiki shows [key:: K] and <!-- saved 2026-01-01 --> as examples"
    _ok(cli("note", said))
    _ok(cli("index"))
    given = json.loads(_ok(cli("context", "--json", "zzqxv")).stdout)
    assert given["tier"] == "recent", given
    block = given["text"].split("</memory-stable>\n", 1)[1]
    assert f"] {said}\n" in block and "(key K" not in block, block
    assert [item["text"] for item in given["recall"]] == [said]
