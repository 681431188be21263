"""Editing one entry in place: a person changes its text, key or tags (the memory panel's edit).

A save appends and updates by key; an edit names the entry by its version id (`PATH#@…`) and says
which exact text it read (`version`), so a note a person's editor changed since is refused, never
written over: the panel shows the two side by side. The old lines go to the trash first, as a keyed
save's do. Past days are frozen for edits as for saves: `correct` writes the newer fact today.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.entries import (
    FIELDS,
    MARKER,
    SAVED,
    Entry,
    field_in,
    holding_key,
    iter_entries,
    literal,
    tags_in,
)
from memvault.vault.errors import UsageError
from memvault.vault.fileio import TextFile, split_lines, update_note
from memvault.vault.forget import entry_version
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout
from memvault.vault.sections import entry_lines
from memvault.vault.trash import trash_entry

_STAMP = re.compile(r"^(\d{1,2}:\d{2}) ")
_TRAILING_TAGS = re.compile(r"(?:[ \t]+#[\w/-]+)+[ \t]*$")
# where the entry came from, and how important it is, stay with it
KEPT_FIELDS = ("superseded", "corrects", "source", "conversation", "importance")


class EditConflict(UsageError):
    """The entry is no longer what the page read: changed (or gone) in its note since."""


def editable(text: str) -> tuple[str, list[str]]:
    """An entry's text as a person edits it: without its fields, `saved` comment and `HH:MM` stamp, and
    the `#tags` ending its first line apart (a save appends them there); tags inside the words stay."""
    first, sep, rest = SAVED.sub("", text).partition("\n")
    first = _STAMP.sub("", FIELDS.sub("", first)).rstrip()
    ending = _TRAILING_TAGS.search(first)
    tags = tags_in(ending.group(0)) if ending else ()
    if ending and ending.start() > 0:
        first = first[: ending.start()]
    return literal(first + sep + FIELDS.sub("", rest)).strip(), list(tags)


@dataclass(frozen=True)
class Edited:
    """The note changed, the entry's line now, its new id, and the trash id of its old lines (`unchanged`:
    the edit said what the entry says already: nothing written)."""

    path: Path
    line: int
    status: str
    trashed: str | None = None


def _frozen(layout: Layout, entry: Entry, today: dt.date) -> bool:
    if entry.path == layout.relative(layout.memory_md) or entry.date is None:
        return False
    return layout.relative(layout.daily_note(dt.date.fromisoformat(entry.date))) == entry.path and (
        entry.date < today.isoformat()
    )


def edit(
    layout: Layout,
    ident: str,
    version: str,
    text: str,
    key: str | None = None,
    tags: tuple[str, ...] = (),
    now: dt.datetime | None = None,
    importance: int | None = None,
) -> Edited:
    """Replace the entry `ident` (its id or place, as `forget` names it) with `text`, `key` and `tags`,
    only if it is still the `version` the caller read (`entry_version`): else `EditConflict`, nothing
    written. Its `HH:MM` stamp, nesting and provenance fields stay; its importance too, unless given
    (0: none)."""
    from memvault.vault.forget import select  # the writing side's module
    from memvault.vault.saving import prepare_entry

    now = now or dt.datetime.now()
    try:
        target, same = select(layout, ident, None)
    except UsageError as exc:
        raise EditConflict(f"{ident}: the entry changed or is gone since it was read ({exc})") from None
    if entry_version(target.text) != version:
        raise EditConflict(f"{target.path}:{target.start_line} changed since it was read; nothing written")
    if _frozen(layout, target, now.date()):
        raise UsageError(f"{target.path} is a past day, which memvault never changes: correct the entry instead")
    if key is not None and key != target.key and holding_key(layout, key):
        raise UsageError(f"key {key} names another entry already; forget or correct that one first")
    fields = tuple((name, value) for name in KEPT_FIELDS if (value := field_in(target.text, name)))
    if importance is not None:  # the one field a person sets here
        fields = (
            *(f for f in fields if f[0] != "importance"),
            *((("importance", str(importance)),) if importance else ()),
        )
    memory = target.path == layout.relative(layout.memory_md)
    entry = prepare_entry(text, key, tags, fields, now.date().isoformat() if memory else None)
    stamp = _STAMP.match(target.text)
    entry = f"{stamp.group(1)} {entry}" if stamp else entry
    done: list[Edited] = []

    def change(current: TextFile | None) -> str:
        if current is None:
            raise EditConflict(f"{target.path} is gone since it was read; nothing written")
        now_there = [e for e in iter_entries(parse_note(target.path, current.text)) if same(e)]
        if len(now_there) != 1 or entry_version(now_there[0].text) != version:
            raise EditConflict(f"{target.path}:{target.start_line} changed since it was read; nothing written")
        old = now_there[0]
        lines = split_lines(current.text)
        old_lines = "".join(lines[old.start_line - 1 : old.end_line])
        if old.text == SAVED.sub("", entry):
            done.append(Edited(layout.root / old.path, old.start_line, "unchanged"))
            return current.text
        marker = MARKER.match(lines[old.start_line - 1])
        indent, bullet = (marker.group(1), marker.group(2)) if marker else ("", "- ")
        new = entry_lines(entry, bullet, indent)
        ending = lines[old.end_line - 1][len(lines[old.end_line - 1].rstrip("\r\n")) :]
        block = [line + current.newline for line in new[:-1]] + [new[-1] + ending]
        trashed = trash_entry(layout, old, old_lines, "replaced by an edit")
        done.append(Edited(layout.root / old.path, old.start_line, "edited", trashed))
        return "".join([*lines[: old.start_line - 1], *block, *lines[old.end_line :]])

    update_note(layout, layout.root / target.path, change)
    return done[-1]
