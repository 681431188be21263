"""The one save path of an entry, shared by daily notes and MEMORY.md: guards, key and tags, update
by key across the vault, no duplicates, the replaced entry kept in the trash, writes under the vault
lock."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memvault.vault.entries import (
    Entry,
    escape,
    field_in,
    holding_key,
    iter_entries,
    normalise,
    tags_in,
)
from memvault.vault.errors import GuardError, UsageError
from memvault.vault.faults import crash_point
from memvault.vault.fileio import (
    ABSENT,
    MAX_NOTE_BYTES,
    TextFile,
    atomic_write,
    held_note,
    still_whole,
    until_whole,
    update_note,
    vault_lock,
)
from memvault.vault.forget import mark_or_undo
from memvault.vault.guards import check_entry
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout, vault_file
from memvault.vault.placing import Placed, place_entry
from memvault.vault.sections import entry_lines, insert_in_section, spellings, title_key
from memvault.vault.supersede import mark_superseded, pointer, points_at
from memvault.vault.swap import Held
from memvault.vault.trash import trash_entry

_NAME = re.compile(r"^[^\W_][\w.-]{0,99}$")
_TAG_NAME = re.compile(r"^[\w-]{1,100}$")


def check_key(key: str) -> str:
    """A key is one word of at most 100 letters, digits, `_`, `-` or `.` (any script), starting with a
    letter or digit: nothing that could break the `[key:: ...]` field, a line or a path."""
    if not _NAME.match(key):
        raise UsageError(
            f"{key[:60]!r}: a key is 1-100 letters, digits, '_', '-' or '.', starting with a letter or digit"
        )
    return key


def check_tag(tag: str) -> str:
    clean = tag[1:] if tag.startswith("#") else tag
    if not _TAG_NAME.match(clean) or clean.isdigit():
        raise UsageError(f"{tag[:60]!r}: a tag is 1-100 letters, digits, '_' or '-', not digits alone")
    return clean


@dataclass(frozen=True)
class SavedEntry:
    """Where an entry went and what happened: `added`, `updated` (the entry with its key replaced in
    place, the old one kept in the trash as `trashed`), `superseded` (the entry with its key is in a
    note a save never changes: the new one went to `path`, the old one, at `superseded`, is marked
    as `correct` marks it) or `unchanged` (already remembered)."""

    path: Path
    section: str
    created_section: bool
    status: str = "added"
    trashed: str | None = None
    superseded: str | None = None  # `PATH:LINE` of the entry marked superseded
    summaries: tuple[str, ...] = ()  # the days whose summary had a clause telling the old fact struck

    def notes(self, layout: Layout) -> list[str]:
        """The notes the save changed, vault-relative: its own, the one it marked an entry in, and the
        days whose summary it struck a clause of."""
        rel = layout.relative(self.path)
        marked = [self.superseded.rpartition(":")[0]] if self.superseded else []
        return list(dict.fromkeys([rel, *marked, *self.summaries]))


def prepare_entry(
    text: str,
    key: str | None = None,
    tags: tuple[str, ...] = (),
    fields: tuple[tuple[str, str], ...] = (),
    saved: str | None = None,
    stored: bool = False,
) -> str:
    """The entry as it will be written, after the guards (a credential, an over-long or empty text, a
    hostile key or tag is refused with one line): the one check every save path makes. The text is
    what a person or agent said, `escape`d so it reads back as said whatever it holds (`stored`: it is
    an entry's text as a note holds it, an export's, fields and all); the tags it lacks are appended as
    `#tag`, then the key field and `fields`, and the day it was `saved` as a comment last."""
    clean_tags = tuple(check_tag(t) for t in tags)
    key = check_key(key) if key is not None else None
    text = check_entry(text) if stored else escape(check_entry(text))
    missing = [t for t in clean_tags if t not in tags_in(text)]
    first, sep, rest = text.partition("\n")
    suffix = "".join(f" #{t}" for t in missing) + (f" [key:: {key}]" if key else "")
    suffix += "".join(f" [{name}:: {value}]" for name, value in fields)
    suffix += f" <!-- saved {saved} -->" if saved else ""
    return first + suffix + sep + rest


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
    now: dt.datetime | None = None,
) -> SavedEntry:
    """Save one entry into the note at `path` (created from `template()`), in the section that
    `section_of(text)` names; `on_add(text, section)` adjusts a note an entry was added to. A
    `frozen` note may be created but never changed: the message says why, checked under the lock.
    `saved` (a day) is recorded on the entry, for notes whose entries have no day of their own.

    A key names one entry in the whole vault, so a keyed save updates the current entry holding it
    wherever it is. In this note, MEMORY.md or today's note it is replaced in place; anywhere else
    (a past day is frozen) the new entry goes here and the old one is marked superseded, as
    `correct` does. Two entries holding the key are refused, named, and nothing is written."""
    entry = prepare_entry(text, key, tags, fields, saved)
    if key is None:
        return _save_in(layout, path, entry, prefix, template, section_of, key, on_add, frozen)
    if frozen and path.exists():
        raise UsageError(frozen)
    now = now or dt.datetime.now()
    found = _holding(layout, key, now.date().isoformat())
    if len(found) > 1:
        places = ", ".join(f"{e.path}:{e.start_line}" for e in found[:10])
        raise UsageError(f"{len(found)} entries hold key {key} ({places}); forget or correct all but one first")
    old = found[0] if found else None
    rel, memory = layout.relative(path), layout.relative(layout.memory_md)
    live = (memory, layout.relative(layout.daily_note(now.date())))
    if old is not None and old.corrects and (old.path == rel or old.path in live):
        fields = (*fields, ("corrects", old.corrects))  # the newer fact of what it corrected still
        entry = prepare_entry(text, key, tags, fields, saved)
    if old is None or old.path == rel:
        return _save_in(layout, path, entry, prefix, template, section_of, key, on_add, frozen)
    if old.path in live:  # in the other live note: replaced there, in that note's style
        there = prepare_entry(text, key, tags, fields, now.date().isoformat() if old.path == memory else None)
        style = "- " if old.path == memory else f"- {now:%H:%M} "
        where = layout.root / old.path
        return _save_in(layout, where, there, style, str, lambda _: old.section, key, must_replace=True)
    if normalise(old.text) == normalise(entry):
        return SavedEntry(layout.root / old.path, old.section, False, "unchanged")
    if rel not in live:  # a correction is looked for in its day's note or MEMORY.md only
        raise UsageError(f"key {key} is on {old.path}:{old.start_line}, which a save never changes; save to "
                         "today's note or MEMORY.md to mark it superseded")  # fmt: skip
    entry = prepare_entry(text, key, tags, (*fields, ("corrects", pointer(old))), saved)
    done = _save_in(layout, path, entry, prefix, template, section_of, key, on_add, frozen)
    crash_point("before-supersede")
    line = mark_or_undo(layout, old, now.date().isoformat(), done.path, done.status)
    from memvault.vault.struck import strike  # (a save rarely supersedes: the scan of the days only then)

    struck = strike(layout, old.fact, "corrected", now.date().isoformat(), new=text)
    return dataclasses.replace(done, status="superseded", superseded=f"{old.path}:{line}", summaries=tuple(struck))


def _holding(layout: Layout, key: str, day: str) -> list[Entry]:
    """The current (not superseded) entries holding `key`, anywhere in the vault. A keyed save killed
    between writing the newer entry and marking the older left both current, the newer pointing at
    the older: the mark is finished here, as running `correct` again would."""
    found = holding_key(layout, key)
    for newer in list(found):
        older = next((e for e in found if points_at(newer.corrects, e)), None)
        if older is not None and newer in found:
            mark_superseded(layout, older, day)
            found.remove(older)
    return found


def _save_in(
    layout: Layout,
    path: Path,
    entry: str,
    prefix: str,
    template: Callable[[], str],
    section_of: Callable[[str], str],
    key: str | None,
    on_add: Callable[[str, str], str] | None = None,
    frozen: str | None = None,
    must_replace: bool = False,
) -> SavedEntry:
    """Place a prepared entry in one note under the vault lock; `must_replace`: only over the entry
    with its key, found before the lock was taken (gone meanwhile: nothing is written)."""
    rel = layout.relative(path)
    outcome: list[tuple[Placed, str | None]] = []

    def change(current: TextFile | None) -> str:
        if current is not None and frozen:
            raise UsageError(frozen)
        body = current.text if current else template()
        new, placed = place_entry(body, rel, section_of(body), entry, prefix, current.newline if current else "\n", key)
        if must_replace and placed.old is None and placed.status not in ("unchanged", "merged"):
            raise UsageError(f"{rel} changed while saving: the entry with key {key} moved; save again")
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
    return SavedEntry(path, placed.section, placed.created_section, placed.status, trashed)


@dataclass(frozen=True)
class NewEntry:
    """One entry of a batch: its text, the section title it goes under, its key, tags and saved day;
    `stored`: the text is an entry's as a note holds it (`prepare_entry`)."""

    text: str
    section: str
    key: str | None = None
    tags: tuple[str, ...] = ()
    saved: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    stored: bool = False


@dataclass(frozen=True)
class BatchSaved:
    """What a batch did, entry by entry (`statuses[i]` for `entries[i]`): `added`, `unchanged`
    (already in the note), `refused` (with `reasons[i]`: a guard, or a key the note already holds)
    or `frozen` (the note exists and may not be changed: nothing was written); `written`: the note was."""

    path: Path
    statuses: list[str]
    reasons: list[str | None]
    created_sections: list[str] = field(default_factory=list)
    written: bool = False

    def count(self, status: str) -> int:
        return self.statuses.count(status)


def _prepare_all(entries: Sequence[NewEntry]) -> tuple[list[str | None], list[str | None]]:
    """Each entry formatted as `save_entry` formats it, or None with the guard's reason."""
    prepared: list[str | None] = []
    reasons: list[str | None] = []
    for item in entries:
        try:
            prepared.append(prepare_entry(item.text, item.key, item.tags, item.fields, item.saved, item.stored))
            reasons.append(None)
        except (GuardError, UsageError) as exc:
            prepared.append(None)
            reasons.append(str(exc))
    return prepared, reasons


def _titled(body: str, entries: Sequence[NewEntry]) -> list[NewEntry]:
    """The entries with their sections spelled as the note (or, for a new one, the batch's first entry
    naming it) spells them: one section, however a save wrote its title (`vault.sections.title_key`)."""
    spelled = spellings(body)
    out = []
    for item in entries:
        title = spelled.setdefault(title_key(item.section), item.section)
        out.append(item if title == item.section else dataclasses.replace(item, section=title))
    return out


def _new_blocks(
    rel: str, existing: list[Entry], entries: Sequence[NewEntry], prepared: list[str | None], statuses: list[str],
    reasons: list[str | None], prefix: str,
) -> dict[str, list[str]]:  # fmt: skip
    """The lines to add, by section: an entry its section of the note (or the batch, earlier) holds
    already is `unchanged`, as `save_entry` finds it; one whose key a current entry of the note holds
    is `refused` (a batch never writes over an entry); a superseded one (an export's) holds no key."""
    seen = {(normalise(e.text), e.section) for e in existing}
    keys = {e.key: f"on {rel}:{e.start_line}" for e in existing if e.key and not e.superseded}
    blocks: dict[str, list[str]] = {}
    for i, (entry, item) in enumerate(zip(prepared, entries, strict=True)):
        if entry is None:
            continue
        wanted, key = (normalise(entry), item.section), field_in(entry, "key")
        key = key if field_in(entry, "superseded") is None else None
        if wanted in seen:
            statuses[i] = "unchanged"
        elif key is not None and key in keys:
            statuses[i], reasons[i] = "refused", f"key {key} is already {keys[key]}"
        else:
            seen.add(wanted)
            if key is not None:
                keys[key] = "on an earlier entry of this batch"
            blocks.setdefault(item.section, []).extend(entry_lines(entry, prefix))
    return blocks


def save_batch(
    layout: Layout,
    path: Path,
    entries: Sequence[NewEntry],
    prefix: str,
    template: Callable[[], str],
    on_add: Callable[[str, dict[str, int]], str] | None = None,
    create_only: bool = False,
) -> BatchSaved:
    """Save many entries into one note with one read and one atomic write under the vault lock, so an
    import of thousands is not thousands of whole-file rewrites. Each entry passes the same guards and
    gets the same format as `save_entry`; an entry already in its section of the note (normalised text)
    or earlier in the batch is `unchanged`. A batch only adds: an entry whose key the note already
    holds is refused, never written over. `on_add(text, {section: added})` adjusts the note (daily
    counters); a `create_only` note that exists is left alone (every entry `frozen`)."""
    prepared, reasons = _prepare_all(entries)

    def once() -> BatchSaved:  # written only over the version read: an editor's save meanwhile, and again
        return _batch_once(layout, path, entries, prepared, list(reasons), prefix, template, on_add, create_only)

    with vault_lock(layout, sweep=path.parent):
        return until_whole(layout.relative(path), once)


def _batch_once(
    layout: Layout, path: Path, entries: Sequence[NewEntry], prepared: list[str | None], reasons: list[str | None],
    prefix: str, template: Callable[[], str], on_add: Callable[[str, dict[str, int]], str] | None,
    create_only: bool,
) -> BatchSaved:  # fmt: skip
    rel = layout.relative(path)
    vault_file(layout, path, rel)
    with held_note(layout, path, rel) as (current, held):
        saved = _batch_on(layout, path, rel, current, held, entries, prepared, reasons, prefix, template, on_add,
                          create_only)  # fmt: skip
        if not saved.written:
            still_whole(held, path, rel)  # what was decided on a read is told only if it still stands
        return saved


def _batch_on(
    layout: Layout, path: Path, rel: str, current: TextFile | None, held: Held | None, entries: Sequence[NewEntry],
    prepared: list[str | None], reasons: list[str | None], prefix: str, template: Callable[[], str],
    on_add: Callable[[str, dict[str, int]], str] | None, create_only: bool,
) -> BatchSaved:  # fmt: skip
    statuses = ["refused" if entry is None else "added" for entry in prepared]
    created: list[str] = []
    if current is not None and create_only:
        return BatchSaved(path, ["frozen"] * len(entries), [None] * len(entries))
    body = current.text if current else template()
    existing = list(iter_entries(parse_note(rel, body)))
    entries = _titled(body, entries)
    blocks = _new_blocks(rel, existing, entries, prepared, statuses, reasons, prefix)
    if not blocks:
        return BatchSaved(path, statuses, reasons)
    for title, lines in blocks.items():
        body, made = insert_in_section(body, title, lines, current.newline if current else "\n")
        created += [title] if made else []
    if on_add is not None:
        added = [item.section for item, status in zip(entries, statuses, strict=True) if status == "added"]
        body = on_add(body, {title: added.count(title) for title in blocks})
    data = (current or TextFile("")).encode(body)
    if len(data) > MAX_NOTE_BYTES:
        raise UsageError(f"{rel} would be {len(data):,} bytes, over the {MAX_NOTE_BYTES:,}-byte note limit; "
                         "save fewer entries at once")  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data, current.sha256 if current else ABSENT, held=held)
    return BatchSaved(path, statuses, reasons, created, written=True)
