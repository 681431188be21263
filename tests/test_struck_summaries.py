"""A day's summary after the fact it told is corrected or forgotten (issue 48, seed 004's "facts stay
true"): the clause is struck through in the note, kept for a person (and the catalog), and out of what
is searched and given to an agent; `restore` lifts a forget's strike, the note byte for byte as before."""

from __future__ import annotations

import datetime as dt

import pytest

from memvault.api import Vault
from memvault.vault.catalog import recent_summaries
from memvault.vault.days import read_day, summary_of
from memvault.verbs.days import Catalog, Summary
from tests.conftest import write_notes

TODAY = dt.date.today()
PAST = TODAY - dt.timedelta(days=3)
SUMMARY = "Redis test port 6379; backups kept 30 days; Redis for the test cache"


@pytest.fixture
def vault(layout):
    write_notes(layout, {
        "MEMORY.md": "# Memory\n\n## Preferences\n\n- Prefers short answers\n",
        f"daily/{PAST}.md": f"---\ndate: {PAST}\n---\n# {PAST}\n\n## Conversations\n\n"
                            "- 10:00 The test Redis runs on port 6379\n- 10:05 Backups are kept 30 days\n"
                            "- 10:09 Redis is the test cache\n",
    })  # fmt: skip
    with Vault(layout.root) as v:
        v.run(Summary(SUMMARY, PAST.isoformat()))
        v.index()
        yield v


def _summary(layout, day=PAST):
    return summary_of(read_day(layout, layout.daily_note(day)))


def _told(vault, query, word):
    """The summary units among the hits for `query` that still say `word`."""
    return [h.text for h in vault.search(query, limit=10) if h.unit == "summary" and word in h.text]


def test_a_correction_strikes_the_old_days_clause_and_the_summary_no_longer_answers_with_it(layout, vault):
    assert _told(vault, "Redis test port", "6379")  # before: the day's summary answers with the old port
    done = vault.correct("The test Redis runs on port 6380", match="Redis runs on port")
    rel = f"daily/{PAST}.md"
    assert done.summaries == [rel]
    assert _summary(layout) == (f"~~Redis test port 6379~~ (corrected {TODAY}); backups kept 30 days; "
                                "Redis for the test cache")  # fmt: skip
    assert not _told(vault, "Redis test port", "6379")  # no stale read: the reply reindexed the day
    today = _summary(layout, TODAY)
    assert today and "6380" in today and "~~" not in today  # the correction's own clause stays
    vault.run(Catalog())
    line = next(x for x in (layout.root / "catalog" / f"{PAST.year}.tsv").read_text().splitlines() if str(PAST) in x)
    assert "~~Redis test port 6379~~" in line  # a person still reads what the day said
    said = dict(recent_summaries(layout, TODAY, 30))[PAST]
    assert said == "backups kept 30 days; Redis for the test cache"  # an agent reads what it still says


def test_a_forget_strikes_the_clause_and_restore_puts_the_note_back_byte_for_byte(layout, vault):
    path = layout.daily_note(PAST)
    before = path.read_bytes()
    assert _told(vault, "backups kept", "backups")
    moved = vault.forget(match="Backups are kept")
    assert moved.summaries == [f"daily/{PAST}.md"]
    assert f"~~backups kept 30 days~~ (forgotten {TODAY})" in _summary(layout)
    assert not _told(vault, "backups kept", "backups")
    back = vault.restore(moved.id)
    assert back.exact and back.summaries == [f"daily/{PAST}.md"]
    assert path.read_bytes() == before
    assert _told(vault, "backups kept", "backups")


def test_a_restore_lifts_only_its_forgets_strike_not_a_corrections(layout, vault):
    vault.correct("The test Redis runs on port 6380", match="Redis runs on port")
    moved = vault.forget(match="Redis is the test cache")
    assert "~~Redis for the test cache~~ (forgotten" in _summary(layout)
    vault.restore(moved.id)
    assert _summary(layout).startswith("~~Redis test port 6379~~ (corrected")
    assert _summary(layout).endswith("; Redis for the test cache")


def test_a_keyed_save_onto_a_frozen_day_strikes_too_and_a_clause_that_still_holds_stays(layout, vault):
    path = layout.daily_note(PAST)
    path.write_text(path.read_text().replace("runs on port 6379", "runs on port 6379 [key:: redis-port]"))
    saved = vault.note("The test Redis runs on port 6390", key="redis-port")
    assert saved.status == "superseded"
    assert _summary(layout).startswith(f"~~Redis test port 6379~~ (corrected {TODAY}); backups kept 30 days")
    assert "; Redis for the test cache" in _summary(layout)  # shares Redis and test, not the old port


def test_chinese_clauses_are_struck_by_their_characters(layout):
    write_notes(layout, {
        f"daily/{PAST}.md": f"---\ndate: {PAST}\n---\n# {PAST}\n\n## 对话\n\n- 10:00 测试环境的 Redis 端口是 6379\n"
                            "- 10:05 备份保留 30 天\n",
    })  # fmt: skip
    with Vault(layout.root) as v:
        v.run(Summary("测试 Redis 端口 6379；备份保留 30 天", PAST.isoformat()))
        v.correct("测试环境的 Redis 端口是 6380", match="端口是 6379")
    said = _summary(layout)
    assert said.startswith("~~测试 Redis 端口 6379~~ (") and said.endswith("；备份保留 30 天")
