"""Retention (opt-in, off by default): daily notes older than `retention_days` move to the trash (and
the conversations' own notes begun before then, `vault.history`),
never deleted, and only once their summary is in the catalog; a day without a summary stays (its
content would otherwise be findable nowhere but the trash), and so does a day holding the current
version of a fact (a keyed entry, a correction): moving it would take the newer fact out of every
prompt, and bring back the one it corrected."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from memvault.vault.catalog import sync as sync_catalog
from memvault.vault.days import read_day, summary_of
from memvault.vault.effects import before_remove
from memvault.vault.entries import iter_entries
from memvault.vault.errors import UsageError
from memvault.vault.fileio import vault_lock
from memvault.vault.paths import Layout, daily_notes
from memvault.vault.places import CONVERSATIONS_DIR
from memvault.vault.trash import backup


@dataclass(frozen=True)
class Retained:
    """What retention moved (or, dry, would move) to the trash, the old days it kept for want of a
    summary (`kept`), and those it kept for the current facts they hold (`holding`)."""

    days: int
    moved: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    dry_run: bool = True
    holding: list[str] = field(default_factory=list)


def _old_conversations(layout: Layout, cutoff: dt.date) -> list[str]:
    """The conversations' own notes (`vault.history`) begun before `cutoff`: their day's summary stays
    in its daily note, so they go with no condition."""
    folder = layout.root / CONVERSATIONS_DIR
    found = []
    for path in sorted(folder.glob("????-??-??-*.md")) if folder.is_dir() else []:
        try:
            begun = dt.date.fromisoformat(path.name[:10])
        except ValueError:
            continue
        if begun < cutoff:
            found.append(layout.relative(path))
    return found


def retention(layout: Layout, days: int | None, apply: bool = False, today: dt.date | None = None) -> Retained:
    if days is None:
        raise UsageError("retention is off: set retention_days in memvault.toml, or give --days N")
    if days < 1:
        raise UsageError("retention_days is a number of days, 1 or more")
    cutoff = (today or dt.date.today()) - dt.timedelta(days=days)
    moved: list[str] = []
    kept: list[str] = []
    holding: list[str] = []
    for path in [path for day, path in daily_notes(layout) if day < cutoff]:
        note = read_day(layout, path)
        if note is not None and any((e.key or e.corrects) and not e.superseded for e in iter_entries(note)):
            holding.append(layout.relative(path))
        else:
            (moved if note is not None and summary_of(note) else kept).append(layout.relative(path))
    moved += _old_conversations(layout, cutoff)
    if not apply or not moved:
        return Retained(days, moved, kept, dry_run=not apply, holding=holding)
    days_moved = [rel for rel in moved if rel.startswith("daily/")]
    sync_catalog(layout, {int(rel[6:10]) for rel in days_moved})  # their lines are in the catalog first
    with vault_lock(layout):
        for rel in moved:
            path = layout.root / rel
            if path.is_file():
                backup(layout, path)  # copied and synced before the note goes: a crash leaves both
                before_remove(path)
                path.unlink()
    sync_catalog(layout, {int(rel[6:10]) for rel in days_moved})  # the lines now come from the trash
    return Retained(days, moved, kept, dry_run=False, holding=holding)
