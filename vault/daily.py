"""Daily notes: `daily/YYYY-MM-DD.md`, created from the template, appended to by section."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from memvault.vault.config import require
from memvault.vault.days import check_day
from memvault.vault.errors import UsageError
from memvault.vault.fileio import split_lines
from memvault.vault.paths import Layout, inside
from memvault.vault.saving import BatchSaved, NewEntry, SavedEntry, save_batch, save_entry
from memvault.vault.templates import DAILY_SECTIONS, daily_template, vault_lang


def _bump_counter(text: str, label: str, by: int = 1) -> str:
    """Add `by` to the overview counter line for `label`, if the note still has it."""
    pattern = re.compile(rf"^(- {re.escape(label)}\s*[:：]\s*)(\d+)(\s*)$")
    lines = split_lines(text)
    for i, line in enumerate(lines):
        ending = line[len(line.rstrip("\r\n")) :]
        match = pattern.match(line.rstrip("\r\n"))
        if match:
            lines[i] = f"{match.group(1)}{int(match.group(2)) + by}{match.group(3)}{ending}"
            return "".join(lines)
    return text


def append_daily(
    layout: Layout,
    text: str,
    day: dt.date | None = None,
    section: str = "conversation",
    now: dt.datetime | None = None,
    key: str | None = None,
    tags: tuple[str, ...] = (),
    fields: tuple[tuple[str, str], ...] = (),
) -> SavedEntry:
    """Append one entry to a daily note's section (creating the note from the template), or replace
    the entry with the same key in that note; the same text twice in a section is saved once.

    Today's entries are stamped with the time; entries for another day are not,
    since the time of writing says nothing about that day. Past days are history: a missing one may
    be created (an import, a backfill), an existing one is never changed by a save. A day to come is
    refused (`vault.days.check_day`).
    """
    if section not in DAILY_SECTIONS:
        raise UsageError(f"{section!r}: unknown daily section; use one of {', '.join(DAILY_SECTIONS)}")
    require(layout.root, "daily_notes")
    now = now or dt.datetime.now()
    day = check_day(day or now.date(), now.date())
    rel = layout.relative(layout.daily_note(day))
    path = inside(layout, rel)
    spec = DAILY_SECTIONS[section]
    lang = vault_lang(layout)

    def titles(body: str) -> tuple[str, str]:
        has_zh = f"## {spec['zh'][0]}" in body
        return spec["zh"] if has_zh else spec["en"] if f"## {spec['en'][0]}" in body else spec[lang]

    return save_entry(
        layout, path, text,
        prefix=f"- {now:%H:%M} " if day == now.date() else "- ",
        template=lambda: daily_template(day, lang),
        section_of=lambda body: titles(body)[0],
        key=key, tags=tags, fields=fields, now=now,
        on_add=lambda new, _: _bump_counter(new, titles(new)[1]),
        frozen=f"{rel}: past days are frozen; `memvault correct` changes what one says" if day < now.date() else None,
    )  # fmt: skip


def daily_title(section: str, lang: str) -> str:
    """A daily section's title in a new note of language `lang`: a section key (`conversation`) or a
    title in either language (`Conversations`, `对话记录`) is that section; any other title stays as it is."""
    for key, spec in DAILY_SECTIONS.items():
        if section in (key, spec["zh"][0], spec["en"][0]):
            return spec[lang][0]
    return section


def backfill_daily(layout: Layout, day: dt.date, entries: list[NewEntry], conversations: int | None = None
                   ) -> BatchSaved:  # fmt: skip
    """Write a day's missing note with all these entries at once (sections as `daily_title` reads
    them, counters counted, no time stamp). A note that exists is never changed here, today's
    neither: every entry comes back `frozen`, for the caller to put elsewhere. A day to come is refused.
    `conversations`: the entries are facts taken from that many conversations (an import of another
    program's memories), which is what the day's conversation counter counts, not the facts."""
    check_day(day)
    require(layout.root, "daily_notes")
    lang = vault_lang(layout)
    counters = {spec[lang][0]: spec[lang][1] for spec in DAILY_SECTIONS.values()}
    talks = DAILY_SECTIONS["conversation"][lang]

    def count(text: str, added: dict[str, int]) -> str:
        for title, n in added.items():
            n = conversations if conversations is not None and title == talks[0] and n else n
            text = _bump_counter(text, counters[title], n) if title in counters and n else text
        return text

    titled = [dataclasses.replace(e, section=daily_title(e.section, lang), saved=None) for e in entries]
    path = inside(layout, layout.relative(layout.daily_note(day)))
    return save_batch(layout, path, titled, "- ", lambda: daily_template(day, lang), count, create_only=True)
