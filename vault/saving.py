"""The one save path of an entry, shared by daily notes and MEMORY.md: guards, key and tags, update
by key, no duplicates, the replaced entry kept in the trash, all under the vault lock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vault.entries import Placed, check_key, check_tag, format_entry, place_entry
from vault.errors import UsageError
from vault.faults import crash_point
from vault.fileio import TextFile, update_note
from vault.guards import check_entry
from vault.paths import Layout
from vault.trash import trash_entry


@dataclass(frozen=True)
class Saved:
    """Where an entry went and what happened: `added`, `updated` (the entry with its key replaced in
    place, the old one kept in the trash as `trashed`) or `unchanged` (already remembered)."""

    path: Path
    section: str
    created_section: bool
    status: str = "added"
    trashed: str | None = None


def save_entry(
    layout: Layout,
    path: Path,
    text: str,
    prefix: str,
    template: Callable[[], str],
    section_of: Callable[[str], str],
    key: str | None = None,
    tags: tuple[str, ...] = (),
    on_add: Callable[[str, str], str] | None = None,
    frozen: str | None = None,
    fields: tuple[tuple[str, str], ...] = (),
    saved: str | None = None,
) -> Saved:
    """Save one entry into the note at `path` (created from `template()`), in the section that
    `section_of(text)` names; `on_add(text, section)` adjusts a note an entry was added to. A
    `frozen` note may be created but never changed: the message says why, checked under the lock.
    `saved` (a day) is recorded on the entry, for notes whose entries have no day of their own."""
    tags = tuple(check_tag(t) for t in tags)
    entry = format_entry(check_entry(text), check_key(key) if key is not None else None, tags, fields, saved)
    rel = layout.relative(path)
    outcome: list[tuple[Placed, str | None]] = []

    def change(current: TextFile | None) -> str:
        if current is not None and frozen:
            raise UsageError(frozen)
        body = current.text if current else template()
        new, placed = place_entry(body, rel, section_of(body), entry, prefix, current.newline if current else "\n", key)
        if placed.status == "added" and on_add is not None:
            new = on_add(new, placed.section)
        trashed = None
        if placed.old is not None:
            trashed = trash_entry(layout, placed.old, placed.old_lines, f"replaced by a save with key {key}")
            crash_point("after-trash")
        outcome.append((placed, trashed))
        return new

    update_note(layout, path, change)
    placed, trashed = outcome[-1]
    return Saved(path, placed.section, placed.created_section, placed.status, trashed)
