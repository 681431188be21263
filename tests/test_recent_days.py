"""Seed 004's last 30 days: the stable block (`context`, and so `SessionStart`) ends with the days of the
last month that have a summary, newest first, each with its note, within the budget; an older day, or
a day with no summary, is not there."""

from __future__ import annotations

import datetime as dt

from tests.conftest import write_notes
from tests.reliability.conftest import HASH_ENV


def _day(date: dt.date, summary: str | None) -> str:
    head = f"---\ndate: {date}\nindex: {summary}\n---\n" if summary else ""
    return f"{head}# {date}\n\n## Conversations\n\n- 10:00 worked on things\n"


def test_the_stable_block_ends_with_the_last_months_days(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    today = dt.date.today()
    days = {today - dt.timedelta(days=2): "migrated billing to Postgres 16",
            today - dt.timedelta(days=9): "chose Qdrant Edge for vectors",
            today - dt.timedelta(days=12): None,
            today - dt.timedelta(days=45): "the old offsite"}  # fmt: skip
    write_notes(layout, {f"daily/{d}.md": _day(d, s) for d, s in days.items()})
    assert cli("index", env=HASH_ENV).returncode == 0  # the catalog is the indexer's
    stable = cli("context", env=HASH_ENV).stdout
    block = stable.split("## Recent days\n", 1)[1]
    first, second = (today - dt.timedelta(days=2)), (today - dt.timedelta(days=9))
    assert block.startswith(f"- {first} (daily/{first}.md): migrated billing to Postgres 16\n"), stable
    assert f"- {second} (daily/{second}.md): chose Qdrant Edge" in block
    assert "the old offsite" not in stable and str(today - dt.timedelta(days=12)) not in stable
    tight = cli("context", "--budget", "300", env=HASH_ENV).stdout  # the first to go when the budget is tight
    assert len(tight) <= 300 + 40


def test_a_memory_md_written_by_hand_in_english_gets_english_headings():
    from memvault.vault.templates import detect_lang

    assert detect_lang("# Memory\n\n## Notes\n\n- Prefers Vue 3 for front ends\n") == "en"  # no template names
    assert detect_lang("# 记忆\n\n## 笔记\n\n- 前端偏好 Vue 3\n") == "zh"
    assert detect_lang("") == "zh"  # as before: an empty note says nothing
