"""Correcting an entry. Past days are frozen and the newer fact wins, so a correction is written
today and the old entry stays where it was, marked:

    daily/2026-12-01.md   - 14:02 Prefers Svelte for front ends #frontend [corrects:: MEMORY.md#@5e1f0c9a2b7d]
    MEMORY.md:8           - Prefers Vue 3 for front ends #frontend [superseded:: 2026-12-01]

A person reads the link both ways; the index sees the mark (a superseded entry is a chunk of its
own), and search ranks the correction above the entry it corrects, both still findable.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from memvault.vault.entries import (
    Entry,
    clip,
    entry_ids,
    entry_ref,
    escape,
    says_same,
    tags_in,
    vault_entries,
)
from memvault.vault.errors import NoteReadError, UsageError
from memvault.vault.paths import Layout
from memvault.vault.supersede import mark_superseded, pointer, points_at

T = TypeVar("T")


@dataclass(frozen=True)
class Corrected:
    """The correction's note and status (`added`, or `unchanged`: it was already written, say by a
    run killed before it marked the old entry), and where the corrected entry is now."""

    path: Path
    status: str
    old_path: Path
    old_line: int
    summaries: tuple[str, ...] = ()  # the days whose summary had a clause telling the old fact struck


def _valid_tags(text: str) -> tuple[str, ...]:
    """The old entry's own `#tags`, those a save accepts, so the correction lists with it."""
    from memvault.vault.saving import check_tag  # the writing side's: a search imports this module

    out = []
    for tag in tags_in(text):
        try:
            out.append(check_tag(tag))
        except UsageError:
            continue
    return tuple(out)


def correct(
    layout: Layout,
    key: str | None,
    match: str | None,
    text: str,
    now: dt.datetime | None = None,
    tags: tuple[str, ...] = (),
    version: str | None = None,
) -> Corrected:
    """Write `text` to today's note as the correction of one entry (named as `forget` names it), then
    mark that entry superseded. Killed between the two, running it again finds the correction
    already there and only marks; a mark that cannot be made takes the correction out again. With
    `version` (`vault.forget.entry_version` of the text a person read), an entry an editor changed
    since is refused before anything is written."""
    # the writing side's modules, here: a search reads corrections (below) and imports none of them
    from memvault.vault.daily import append_daily
    from memvault.vault.faults import crash_point
    from memvault.vault.forget import entry_version, mark_or_undo, select
    from memvault.vault.struck import strike

    now = now or dt.datetime.now()
    target, _ = select(layout, key, match)
    if version is not None and entry_version(target.text) != version:
        raise UsageError(f"{target.path}:{target.start_line} changed since it was read; nothing corrected")
    topic = match or target.key or clip(target.fact, 60)  # what the person named it by, else what it said
    if target.corrects and says_same(target.text, escape(text)):  # run again: the correction is the current one
        note_in_summary(layout, now.date(), topic, text)
        return _finish(layout, target, now.date().isoformat())
    if target.superseded:
        raise UsageError(
            f"{target.path}:{target.start_line} was corrected on {target.superseded} already; correct the correction"
        )
    if target.corrects and (older := _corrected(layout, target)) is not None and not older.superseded:
        mark_superseded(layout, older, now.date().isoformat())  # a run killed before its mark left it current
    kept = (("key", target.key),) if target.key else ()  # the newer version of the same fact
    saved = append_daily(layout, text, now=now, tags=tuple(dict.fromkeys((*_valid_tags(target.text), *tags))),
                         fields=(*kept, ("corrects", pointer(target))))  # fmt: skip
    crash_point("before-supersede")
    line = mark_or_undo(layout, target, now.date().isoformat(), saved.path, saved.status)
    note_in_summary(layout, now.date(), topic, text)  # once the mark holds: a correction taken back told nothing
    if target.path == layout.relative(saved.path):  # the day's summary, set above it, may have moved it down
        marked = (e for e in vault_entries(layout, target.path) if e.superseded and points_at(pointer(target), e))
        line = next((e.start_line for e in marked), line)
    struck = strike(layout, target.fact, "corrected", now.date().isoformat(), new=text)
    return Corrected(saved.path, saved.status, layout.root / target.path, line, tuple(struck))


CORRECTED = {"en": "corrected {topic}: {text}", "zh": "更正 {topic}：{text}"}


def note_in_summary(layout: Layout, day: dt.date, topic: str, text: str) -> None:
    """Add the corrected topic and the new truth to the day's summary (its frontmatter `index`), so a
    search or a catalog scan for the topic finds today's word on it beside an old day's (seed 004:
    "in today's index, note the corrected topic and the new truth"). Cut to what the summary's 300
    characters leave; nothing when they leave no room, or when it says so already (a run again)."""
    from memvault.vault.daily import vault_lang
    from memvault.vault.days import SUMMARY_CHARS, read_day, set_summary, summary_of
    from memvault.vault.templates import daily_template

    lang = vault_lang(layout)
    current = read_day(layout, layout.daily_note(day)) if layout.daily_note(day).is_file() else None
    summary = (summary_of(current) if current else None) or ""
    part = CORRECTED[lang].format(topic=" ".join(topic.split()), text=" ".join(text.split()))
    if part in summary:
        return
    room = SUMMARY_CHARS - len(summary) - (2 if summary else 0)
    if room < min(len(part), 40):
        return
    said = f"{summary}; {clip(part, room)}" if summary else clip(part, room)
    set_summary(layout, day, said, daily_template(day, lang))


def _finish(layout: Layout, done: Entry, day: str) -> Corrected:
    """A correction found written already: the entry it corrects is marked, if a run killed before
    the mark left it current."""
    from memvault.vault.struck import strike

    older = _corrected(layout, done)
    if older is None:
        raise UsageError(
            f"{done.path}:{done.start_line} says that already, and corrects nothing left ({done.corrects})"
        )
    line = older.start_line if older.superseded else mark_superseded(layout, older, day)
    struck = strike(layout, older.fact, "corrected", day, new=done.fact)  # a run killed before it struck them
    return Corrected(layout.root / done.path, "unchanged", layout.root / older.path, line, tuple(struck))


def _corrected(layout: Layout, newer: Entry) -> Entry | None:
    """The entry a correction points at, as its note's last whole save has it; None when it is gone."""
    ptr = newer.corrects or ""
    ref = entry_ref(ptr)
    try:
        entries = list(vault_entries(layout, ref[0] if ref else ptr.rpartition(":")[0], whole=True))
    except (UsageError, NoteReadError):
        return None
    return next((e for e in entries if points_at(ptr, e)), None)


def correction_notes(layout: Layout, day: str) -> list[str]:
    """Where the correction of an entry superseded on `day` was written: that day's note (`correct`,
    a keyed `note`) or MEMORY.md (a keyed `remember`). A `day` that is not a date raises ValueError."""
    return [layout.relative(layout.daily_note(dt.date.fromisoformat(day))), layout.relative(layout.memory_md)]


def correction_of(layout: Layout, entry: Entry) -> Entry | None:
    """The correction of a superseded entry: in the notes it may be in, the entry that corrects its
    note, nearest its line (lines move as notes change)."""
    if not entry.superseded:
        return None
    try:
        notes = correction_notes(layout, entry.superseded)
    except ValueError:
        return None
    entries: list[Entry] = []
    for rel in notes:
        try:
            entries += vault_entries(layout, rel)
        except (UsageError, NoteReadError):
            continue
    return nearest_correction(((e, e) for e in entries), entry.path, entry.start_line, entry_ids(entry),
                              lambda: reattach(layout, entry))  # fmt: skip


def reattach(layout: Layout, old: Entry) -> Callable[[list[tuple[T, Entry]]], T | None]:
    """How a superseded entry edited by hand (a typo fixed: its version id, which its correction points
    at, changed) finds its correction again: of the corrections pointing into its note at an id no entry
    there has any more, the one with its key, else the one saying most of its words (two at least)."""
    from memvault.vault.proposals import content_words

    def pick(dangling: list[tuple[T, Entry]]) -> T | None:
        try:
            alive = {i for e in vault_entries(layout, old.path) for i in entry_ids(e)}
        except (UsageError, NoteReadError):
            return None
        orphans = [(thing, e) for thing, e in dangling if (ref := entry_ref(e.corrects or "")) and ref[1] not in alive]
        if old.key and (same := [thing for thing, e in orphans if e.key == old.key]):
            return same[0]
        words = set(content_words(old.fact))
        shared = sorted(
            ((len(words & set(content_words(e.fact))), i) for i, (_, e) in enumerate(orphans)), reverse=True
        )
        return orphans[shared[0][1]][0] if shared and shared[0][0] >= 2 else None

    return pick


def correction_place(layout: Layout, entry: Entry) -> str | None:
    """Where the correction of a superseded entry is, as `PATH:LINE`."""
    found = correction_of(layout, entry)
    return f"{found.path}:{found.start_line}" if found else None


def nearest_correction(
    candidates: Iterable[tuple[T, Entry]], path: str, line: int, idents: tuple[str, ...],
    lost: Callable[[], Callable[[list[tuple[T, Entry]]], T | None]] | None = None,
) -> T | None:  # fmt: skip
    """Of the (thing, entry) pairs, the thing whose entry corrects the entry `idents` (its ids) of note
    `path`: by its `PATH#ID` pointer; else, for pointers written before ids (`PATH:LINE`, the line as
    it was), the one nearest `line`; else what `lost` (`reattach`) picks of the pointers into `path`."""
    best: tuple[int, T] | None = None
    into: list[tuple[T, Entry]] = []
    for thing, e in candidates:
        if (ref := entry_ref(e.corrects or "")) is not None:
            if ref[0] == path and ref[1] in idents:
                return thing
            if ref[0] == path:
                into.append((thing, e))
            continue
        where, _, digits = (e.corrects or "").rpartition(":")
        if where == path:
            distance = abs((int(digits) if digits.isdigit() else 0) - line)
            if best is None or distance < best[0]:
                best = (distance, thing)
    if best is None and into and lost is not None:
        return lost()(into)
    return best[1] if best else None
