"""Days: a summary holding a character `str.splitlines` breaks on (U+2028, U+0085, \\v, \\f, ...) is one
line in the catalog and the frontmatter, not two; and no write makes the note of a day to come."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from memvault.vault.daily import append_daily, backfill_daily
from memvault.vault.days import set_summary
from memvault.vault.errors import UsageError
from memvault.vault.saving import NewEntry
from tests.reliability.conftest import HASH_ENV

TODAY = dt.date.today()
BREAKS = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"


def _catalog(layout, year: int) -> str:
    return (layout.root / "catalog" / f"{year}.tsv").read_bytes().decode("utf-8")


def test_line_separators_in_a_summary_become_spaces_in_the_note_and_the_catalog(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    day = dt.date(2025, 4, 7)
    said = cli("summary", day.isoformat(), "Shipped" + BREAKS + "the catalog")
    assert said.returncode == 0, said.stderr
    front = layout.daily_note(day).read_text(encoding="utf-8").split("---")[1]
    assert front.count("\n") == 3 and 'index: "Shipped' in front  # `date`, `index`: one line each
    assert not any(c in front for c in BREAKS)
    # a person's note with a separator typed into its index (a YAML escape) is one catalog line too
    hand = dt.date(2025, 4, 8)
    layout.daily_note(hand).write_text('---\ndate: 2025-04-08\nindex: "Hand\\u2028typed\\x85here"\n---\n- x\n',
                                       encoding="utf-8")  # fmt: skip
    assert cli("index", env=HASH_ENV).returncode == 0
    assert _catalog(layout, 2025).split("\n") == ["2025-04-07\tShipped" + " " * len(BREAKS) + "the catalog",
                                                  "2025-04-08\tHand typed here", ""]  # fmt: skip
    shown = json.loads(cli("catalog", "2025", "--json").stdout)["years"]["2025"]
    assert [line["date"] for line in shown] == ["2025-04-07", "2025-04-08"]
    printed = cli("catalog", "2025").stdout
    assert printed.count("\n") == 2 and "Hand typed here" in printed


@pytest.mark.parametrize("args", [
    ("note", "--date", "{far}", "Written ahead"), ("note", "--date", "{next}", "--section", "todo", "Two days on"),
    ("summary", "{far}", "A day to come"),
])  # fmt: skip
def test_a_write_to_a_day_to_come_is_refused_in_one_line(layout, cli, args):
    assert cli("init", "--lang", "en").returncode == 0
    far, after_next = TODAY + dt.timedelta(days=40), TODAY + dt.timedelta(days=2)
    args = tuple(a.format(far=far.isoformat(), next=after_next.isoformat()) for a in args)
    done = cli(*args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"today is {TODAY.isoformat()}" in done.stderr
    assert not layout.daily_note(far).exists() and not layout.daily_note(after_next).exists()


def test_one_day_ahead_is_allowed_for_a_clock_or_time_zone_ahead(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    tomorrow = TODAY + dt.timedelta(days=1)
    assert cli("note", "--date", tomorrow.isoformat(), "Set up before midnight").returncode == 0
    with pytest.raises(UsageError):  # the root: the daily note a write is addressed to
        append_daily(layout, "x", day=TODAY + dt.timedelta(days=2))
    with pytest.raises(UsageError):
        set_summary(layout, TODAY + dt.timedelta(days=3), "ahead", "# x\n")
    with pytest.raises(UsageError):
        backfill_daily(layout, TODAY + dt.timedelta(days=3), [NewEntry("x", "conversation")])
    assert sorted(p.name for p in layout.daily_dir.iterdir()) == [f"{tomorrow.isoformat()}.md"]


@pytest.mark.parametrize("document", [
    {"version": 1, "memories": [{"content": "ok"}, {"content": "from the future", "createdAt": "{far}T09:00:00"}]},
    {"memvault_export": 1, "entries": [{"text": "ahead", "path": "daily/{far}.md", "date": "{far}"}]},
    {"memvault_export": 1, "entries": [], "days": [{"date": "{far}", "summary": "a day to come"}]},
])  # fmt: skip
def test_an_import_naming_a_day_to_come_is_refused_whole(layout, cli, tmp_path, document):
    assert cli("init", "--lang", "en").returncode == 0
    far = (TODAY + dt.timedelta(days=40)).isoformat()
    before = layout.memory_md.read_bytes()
    file = tmp_path / "import.json"
    file.write_text(json.dumps(document).replace("{far}", far), encoding="utf-8")
    done = cli("import", str(file))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and f"today is {TODAY.isoformat()}" in done.stderr
    assert layout.memory_md.read_bytes() == before and not list(layout.daily_dir.iterdir())
