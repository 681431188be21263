"""Forgetting entries, recoverably, and putting them back: one entry (`forget`) or every entry of a
section or of the vault (`clear`). The lines go to the trash first, then leave the note; `restore`
puts them back where they were, byte for byte when the note has not changed since, else at the end
of their section."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.entries import (
    Entry,
    entry_id,
    entry_ref,
    iter_entries,
    match_form,
    normalise,
    vault_entries,
    version_id,
    with_key,
)
from memvault.vault.errors import MemvaultError, UsageError
from memvault.vault.faults import crash_point
from memvault.vault.fileio import (
    FINISH_TRIES,
    TextFile,
    read_note,
    split_lines,
    update_note,
)
from memvault.vault.locator import Place, check_selector, parse_place
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout, inside, is_note_rel
from memvault.vault.sections import find_sections
from memvault.vault.supersede import mark_superseded, pointer, points_at
from memvault.vault.trash import (
    Placed,
    Trashed,
    is_item,
    list_trashed,
    new_id,
    put_back,
    read_trashed,
    remove_trashed,
    trash_entry,
)


@dataclass(frozen=True)
class MovedEntry:
    """An entry moved between a note and the trash: where (`path`, `line`) and the trash `id`."""

    path: Path
    line: int
    id: str
    exact: bool = True  # restore: put back at its old place (False: at the end of its section)
    summaries: tuple[str, ...] = ()  # the days whose summary it struck a clause of, or lifted the strike of


def _matches(entry: Entry, match: str | None, where: Place | None) -> bool:
    if where is not None:
        return entry.path == where[0] and entry.start_line <= where[2] and where[1] <= entry.end_line
    return match is not None and match_form(match) in normalise(entry.text)


def newest(versions: list[Entry]) -> list[Entry]:
    """Of the entries holding one key, those a key names: the current versions, if any, and of those
    the ones no other points at (a correction killed before its mark left the older one current)."""
    current = [e for e in versions if not e.superseded] or versions
    return [e for e in current if not any(points_at(o.corrects, e) for o in current if o is not e)] or current


def _selector(layout: Layout, key: str | None, match: str | None) -> tuple[str | None, Place | None]:
    """A KEY argument that reads as a place (`vault.locator`) names the entry that overlaps it instead."""
    if (key is None) == (match is None):
        raise UsageError("name one entry: KEY, its id (@…), PATH:LINE, PATH#L5-L7 or --match TEXT")
    check_selector(key, match)
    place = parse_place(key or "")
    if place is None:
        return key, None
    if not is_note_rel(place[0]):
        raise UsageError(f"{key}: not a note path and line (PATH.md:LINE or PATH.md#L5-L7)")
    inside(layout, place[0])
    return None, place


def entry_version(text: str) -> str:
    """An entry's exact version: its text as the note holds it, fields, tags and case included (an id,
    `@…`, is of the normalised text and misses a changed key or case): what a person's edit or forget
    carries, so that an entry changed since they read it is refused."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def select(layout: Layout, key: str | None, match: str | None) -> tuple[Entry, Callable[[Entry], bool]]:
    """The one entry named by key (`with_key`), a place (given as the key) or a piece of its text,
    and the test that finds it again under the lock; none, or more than one (candidates named), is
    refused. Chosen from whole saves only (`vault.whole`): read while an editor saved in place, a note
    can end mid-line, so a key was found in no entry, or an older version whose `[superseded:: …]` was
    cut off looked current, a `correct` pointed its correction at it and the key was left with two
    current versions."""
    key, where = _selector(layout, key, match)
    entries = list(vault_entries(layout, where[0] if where else None, whole=True))
    found = with_key(entries, key) if key is not None else [e for e in entries if _matches(e, match, where)]
    if key is not None and entry_ref(key) is None:
        found = newest(found)
    what = f"{where[0]}:{where[1]}" if where else f"key {key[:60]!r}" if key is not None else f"text {match!r:.60}"
    if where is not None and where[2] > where[1]:
        what = f"{where[0]}#L{where[1]}-L{where[2]}"
    if not found:
        raise UsageError(f"no entry with {what}")
    if len(found) > 1:
        places = ", ".join(f"{e.path}:{e.start_line}" for e in found[:10])
        raise UsageError(f"{len(found)} entries match {what} ({places}); name one as PATH:LINE")
    if key is not None:  # found again under the lock by its id: its key as spelled, or its text
        ident = (entry_id(found[0]), version_id(found[0]))
        return found[0], lambda e: (entry_id(e), version_id(e)) == ident
    return found[0], lambda e: _matches(e, match, where)


def forget(layout: Layout, key: str | None = None, match: str | None = None, version: str | None = None
           ) -> MovedEntry:  # fmt: skip
    """Move exactly one entry (by key, by `PATH:LINE`, or by a piece of its text) to the trash; more
    than one match is refused with the candidates named, never guessed (`vault.purge` removes one for
    good). With `version` (`entry_version` of the text a person read), an entry an editor changed
    since is refused, under the lock too: a person never forgets what they did not see."""
    target, same = select(layout, key, match)
    if version is not None:
        if entry_version(target.text) != version:
            raise UsageError(f"{target.path}:{target.start_line} changed since it was read; nothing forgotten")
        named = same
        same = lambda e: named(e) and entry_version(e.text) == version  # noqa: E731
    path = layout.root / target.path
    moved: list[MovedEntry] = []

    def change(current: TextFile | None) -> str:
        assert current is not None
        still_there(target, same, current.text, "forgetting")
        new, ids = _cut(layout, current, [target], "forgotten")
        moved.append(MovedEntry(path, target.start_line, ids[0]))
        return new

    update_note(layout, path, change)
    from memvault.vault.struck import strike  # (days' summaries: read only when an entry is forgotten)

    struck = strike(layout, target.fact, "forgotten", dt.date.today().isoformat())
    return dataclasses.replace(moved[0], summaries=tuple(struck))


def take_back(layout: Layout, path: Path, same: Callable[[Entry], bool], reason: str) -> None:
    """Take out again the entry a verb has just written to `path` (the one `same` finds there alone),
    to the trash as a forgotten one goes, when the verb's next step cannot be made: the verb then
    changed nothing, as its error says (`mark_or_undo`)."""
    rel = layout.relative(path)

    def change(current: TextFile | None) -> str:
        found = [e for e in iter_entries(parse_note(rel, current.text)) if same(e)] if current else []
        if current is None or len(found) != 1:
            raise UsageError(f"{rel}: the entry just written is no longer there alone")
        return _cut(layout, current, found, reason)[0]

    update_note(layout, path, change, tries=FINISH_TRIES)


def mark_or_undo(layout: Layout, target: Entry, day: str, written: Path, status: str) -> int:
    """`mark_superseded`, the newer version of `target` having just been written to `written` (a save's
    `status`: `added` when this run wrote it). When the mark cannot be made, that version is taken out
    again, and the error says nothing was written; when it cannot be (or was there before this run),
    the error says where it stays and that running the command again finishes the mark."""
    try:
        return mark_superseded(layout, target, day)
    except MemvaultError as exc:
        rel, ptr = layout.relative(written), pointer(target)
        try:
            if status != "added":
                raise
            take_back(layout, written, lambda e: e.corrects == ptr and e.key == target.key, "not applied")
        except MemvaultError:
            raise type(exc)(f"{exc}; its newer version stays in {rel}: run the same command again to mark "
                            f"{target.path}:{target.start_line}") from exc  # fmt: skip
        if "nothing written" in str(exc):  # `kept_changing` says so already
            raise
        raise type(exc)(f"{exc}; nothing written") from exc


def still_there(target: Entry, same: Callable[[Entry], bool], text: str, doing: str) -> None:
    """Refuse when the note, read again under the lock, no longer holds `target` alone at its lines."""
    entries = [e for e in iter_entries(parse_note(target.path, text)) if same(e)]
    if [(e.start_line, e.end_line) for e in entries] != [(target.start_line, target.end_line)]:
        raise UsageError(f"{target.path} changed while {doing}; try again")


def _cut(layout: Layout, current: TextFile, targets: list[Entry], reason: str, batch: str | None = None
         ) -> tuple[str, list[str]]:  # fmt: skip
    """The note without `targets`, each trashed first. Their `after` is the note once they are all out,
    hashed once (once per entry made a clear of 10,000 entries quadratic), and a batch's entry records
    `at`, its line there, so restoring the batch, or the entry alone, puts it back exactly."""
    lines = split_lines(current.text)
    targets = sorted(targets, key=lambda e: e.start_line)
    kept = [True] * len(lines)
    for entry in targets:
        kept[entry.start_line - 1 : entry.end_line] = [False] * (entry.end_line - entry.start_line + 1)
    new = "".join(x for x, k in zip(lines, kept, strict=True) if k)
    after = hashlib.sha256(current.encode(new)).hexdigest()
    ids, gone = [], 0  # lines of the targets above the next one
    for entry in targets:
        body = "".join(lines[entry.start_line - 1 : entry.end_line])
        ids.append(trash_entry(layout, entry, body, reason, after=after, batch=batch, at=entry.start_line - gone))
        gone += entry.end_line - entry.start_line + 1
    crash_point("after-trash")
    return new, ids


@dataclass(frozen=True)
class Cleared:
    """What a `clear` moved to the trash (or, dry, would move): `count` entries from `paths`, all
    under one `batch` id that `restore` takes to put them all back."""

    batch: str
    count: int
    paths: list[Path]


def clear(layout: Layout, section: str | None = None, everything: bool = False, dry_run: bool = False) -> Cleared:
    """Move every entry of a MEMORY.md section, or of the whole vault, to the trash; headings, the
    daily notes' counters and all other lines stay. Each entry is its own trash item."""
    if (section is None) == (not everything):
        raise UsageError("say what to clear: --section NAME (of MEMORY.md) or --all")
    memory = layout.relative(layout.memory_md)
    rel = memory if section is not None else None
    if rel is not None and not layout.memory_md.is_file():
        raise UsageError(f"{memory}: no such note")

    def wanted(e: Entry) -> bool:
        return section is None or e.section == section

    by_note: dict[str, int] = {}
    for entry in vault_entries(layout, rel, skipped="skipped: its entries are not cleared"):
        if wanted(entry):
            by_note[entry.path] = by_note.get(entry.path, 0) + 1
    if section is not None and not by_note and section not in _titles(layout, memory):
        raise UsageError(f"{memory} has no section {section!r}")
    batch = new_id()
    if dry_run:
        return Cleared(batch, sum(by_note.values()), [layout.root / p for p in by_note])
    count = 0
    for path_rel in by_note:
        moved: list[int] = []

        def change(current: TextFile | None, path_rel: str = path_rel, moved: list[int] = moved) -> str:
            if current is None:
                return ""
            targets = [e for e in iter_entries(parse_note(path_rel, current.text)) if wanted(e)]
            new, ids = _cut(layout, current, targets, f"cleared ({'section ' + section if section else 'all'})", batch)
            moved.append(len(ids))
            return new

        update_note(layout, layout.root / path_rel, change)
        count += moved[-1] if moved else 0
    return Cleared(batch, count, [layout.root / p for p in by_note])


def _titles(layout: Layout, rel: str) -> set[str]:
    text = read_note(layout.root / rel, rel, layout=layout).text
    return {s.title for s in find_sections([line.rstrip("\r") for line in text.split("\n")], 2)}


def restore(layout: Layout, ident: str) -> list[MovedEntry]:
    """Put a trashed entry back, or every entry of a `clear` batch (each note written once, with all of
    its entries, each exactly where it was when nothing else changed)."""
    if is_item(layout, ident):
        item = read_trashed(layout, ident)
        _key_free(layout, [item])
        lifted = _unstrike(layout, [item])
        return _with_days(_restore_note(layout, [item]), lifted)
    by_note: dict[str, list[Trashed]] = {}
    for item in sorted((t for t in list_trashed(layout) if t.meta.get("batch") == ident),
                       key=lambda t: (str(t.meta.get("origin")), int(t.meta.get("line") or 0))):  # fmt: skip
        by_note.setdefault(str(item.meta.get("origin")), []).append(item)
    if not by_note:
        read_trashed(layout, ident)  # the one-line error: not an id, or no such item
    _key_free(layout, [item for items in by_note.values() for item in items])
    lifted = _unstrike(layout, [item for items in by_note.values() for item in items])
    return _with_days([moved for items in by_note.values() for moved in _restore_note(layout, items)], lifted)


def _key_free(layout: Layout, items: list[Trashed]) -> None:
    """Refuse, before anything is written, to put back a current entry whose key another current entry
    holds now (saved again after the forget): one key names one fact, and two would refuse every later
    save of it. The item stays in the trash. The same entry holding it is no other: a spare copy of an
    entry still in place, or one a killed restore put back already, goes back as no change."""
    from memvault.vault.entries import entries_in, holding_key, normalise

    for item in items:
        for entry in entries_in(item.body)[:1]:
            if not entry.key or entry.superseded:
                continue
            now = [e for e in holding_key(layout, entry.key) if normalise(e.text) != normalise(entry.text)]
            if now:
                raise UsageError(
                    f"{item.id}: key {entry.key} is held by {now[0].path}:{now[0].start_line} now; forget that "
                    "entry first to put this one back, or leave it in the trash"
                )


def _unstrike(layout: Layout, items: list[Trashed]) -> list[str]:
    """Lift the strikes the forgets of `items` made in the days' summaries (`vault.struck`), before they
    go back: a note whose summary was struck after its entry went is then as the forget left it, and its
    entry goes back exactly where it was."""
    from memvault.vault.entries import entries_in
    from memvault.vault.struck import unstrike

    facts = [e.fact for item in items if item.meta.get("reason") == "forgotten" for e in entries_in(item.body)[:1]]
    return unstrike(layout, facts) if facts else []


def _with_days(moved: list[MovedEntry], days: list[str]) -> list[MovedEntry]:
    return [dataclasses.replace(moved[0], summaries=tuple(days)), *moved[1:]] if moved and days else moved


def _retired_copy(layout: Layout, path: Path) -> TextFile | None:
    """The latest trash copy of a daily note retention (or a whole-note removal) took out of `daily/`."""
    from memvault.vault.catalog import retired_copy

    copy = retired_copy(layout, path)
    return read_note(copy, layout.relative(copy)) if copy is not None else None


def _restore_note(layout: Layout, items: list[Trashed]) -> list[MovedEntry]:
    """Put items of one note back (`vault.trash.put_back`) in one write; each item goes once the note is
    written."""
    origin = str(items[0].meta.get("origin") or "")
    if not is_note_rel(origin):
        raise UsageError(f"{items[0].id}: its origin {origin!r} is not a note path")
    path = inside(layout, origin)
    placed: list[Placed] = []
    retired = _retired_copy(layout, path)

    def change(current: TextFile | None) -> str:
        # a day retention moved to the trash comes back whole, then its entries
        text, placed[:] = put_back(current or retired, items)
        return text

    update_note(layout, path, change)
    for one in placed:
        crash_point("before-untrash")
        remove_trashed(layout, one.item.id)
    return [MovedEntry(path, p.line, p.item.id, p.exact) for p in placed]
