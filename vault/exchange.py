"""Import and export: memories in from a file, every entry out as data.

Three shapes come in: the KinetAios export (`{"version": 1, "memories": [{"content", "createdAt"?,
"conversationId"?}]}`, `vault.kinetaios`), a plain JSON list of strings, and memvault's own export
(`{"memvault_export": 1, "entries": [...]}`, or its JSON-lines form: that header object on the first
line, one entry per line after it). A file is read and checked whole before anything is written, so a
malformed one (not UTF-8, not JSON, the wrong shape, a day to come) is one line of error and changes
nothing. Another program's memory is text that is saved as said (`vault.entries.escape`); a memvault
export's entry is an entry's text as its note held it, written back as is, fields and all.

Where an entry lands: one with a day goes to that day's daily note while the note does not exist (it is
created, as a backfill; an existing day is frozen), else to MEMORY.md, under its own section (a memvault
export of a MEMORY.md entry) or the import's section. Text already in the vault (a memvault export's: at
its place), or earlier in the file, is skipped (`vault.entries.normalise`); an entry the guards refuse is
named with its reason, the rest imported. Each note is written once, in one locked atomic write
(`vault.saving.save_batch`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from memvault.vault.daily import backfill_daily, daily_title, vault_lang
from memvault.vault.days import check_day, check_summary, read_day, set_summary, summary_of
from memvault.vault.entries import Entry, field_in, normalise, vault_entries
from memvault.vault.errors import GuardError, UsageError
from memvault.vault.fileio import MAX_NOTE_BYTES
from memvault.vault.guards import check_section_name
from memvault.vault.kinetaios import read_memory
from memvault.vault.memory_file import remember_batch
from memvault.vault.notes import note_kind
from memvault.vault.paths import Layout, daily_notes
from memvault.vault.saving import BatchSaved, NewEntry, prepare_entry
from memvault.vault.templates import IMPORTED_SECTION, daily_template

EXPORT_MARK = "memvault_export"
EXPORT_VERSION = 1
DEFAULT_SECTION = IMPORTED_SECTION
MAX_IMPORT_BYTES = 256 * 1024 * 1024
SHAPES = (
    'a KinetAios export {"memories": [...]}, a memvault export {"memvault_export": 1, ...} or a JSON list of strings'
)


@dataclass(frozen=True)
class Incoming:
    """One memory read from a file. `index` is its 1-based place there (what a refusal names); `daily`
    says it may go to the daily note of its `date`; `section` is its own MEMORY.md section, if any, and
    `daily_section` its daily note's section (a memvault export's)."""

    index: int
    text: str
    date: str | None = None
    daily: bool = False
    section: str | None = None
    daily_section: str = "conversation"
    key: str | None = None
    tags: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()  # provenance kept on the entry: a KinetAios `conversation`
    stamped: bool = True  # a MEMORY.md entry with no day is saved as of today (a memvault export's keeps none)
    stored: bool = False  # a memvault export's: the text as its note held it, written back as is (fields kept)
    day_summary: bool = False  # not an entry: the summary (frontmatter `index`) of the day `date`
    fact: bool = False  # a fact from a conversation (KinetAios's): its day counts conversations, not facts


@dataclass(frozen=True)
class ImportResult:
    imported: int
    skipped: int
    refused: list[dict[str, Any]]
    paths: dict[str, int] = field(default_factory=dict)  # note -> entries written there
    created_sections: list[str] = field(default_factory=list)
    summaries: int = 0  # days' summaries set (a memvault export's `days`)


# reading --------------------------------------------------------------------
def read_import(path: str, name: str | None = None, today: dt.date | None = None) -> list[Incoming]:
    """The memories of an import file, checked whole; any fault is one `UsageError` naming the file."""
    label = name or path
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{label}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise UsageError(f"{label}: over the {MAX_IMPORT_BYTES:,}-byte import limit; split it up")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{label}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return parse_import(text, label, today)


def parse_import(text: str, label: str = "import", today: dt.date | None = None) -> list[Incoming]:
    """The memories of an import file's text, in any of the accepted shapes. A day after `today` (and the
    day of slack `vault.days.check_day` gives) is a fault of the file: no note is written ahead of its day."""
    today = today or dt.date.today()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        lines = _json_lines(text, label)
        if lines is None:
            raise UsageError(f"{label}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
        data = lines
    except RecursionError:
        raise UsageError(f"{label}: nested too deeply to be an import file") from None
    if isinstance(data, list):
        return [_plain(label, i, item) for i, item in enumerate(data, 1)]
    if isinstance(data, dict) and EXPORT_MARK in data:
        if data[EXPORT_MARK] != EXPORT_VERSION:
            raise UsageError(f"{label}: memvault export version {data[EXPORT_MARK]!r}; this memvault reads version 1")
        entries = data.get("entries")
        if not isinstance(entries, list):
            raise UsageError(f'{label}: a memvault export needs a list "entries"')
        days = data.get("days") or []
        if not isinstance(days, list):
            raise UsageError(f'{label}: "days" must be a list of {{date, summary}}')
        return [_exported(label, i, item, today) for i, item in enumerate(entries, 1)] + [
            _day(label, i, item, today) for i, item in enumerate(days, 1)
        ]
    if isinstance(data, dict) and "memories" in data:
        if data.get("version", 1) != 1:
            raise UsageError(f"{label}: KinetAios export version {data['version']!r}; this memvault reads version 1")
        if not isinstance(data["memories"], list):
            raise UsageError(f'{label}: "memories" must be a list')
        return [_kinetaios(label, i, item, today) for i, item in enumerate(data["memories"], 1)]
    raise UsageError(f"{label}: not an import file; expected {SHAPES}")


def _json_lines(text: str, label: str) -> dict[str, Any] | None:
    """memvault's JSON-lines export as its JSON form, or None when the text is not that."""
    lines = [line for line in text.split("\n") if line.strip()]
    try:
        head = json.loads(lines[0]) if lines else None
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(head, dict) or EXPORT_MARK not in head:
        return None
    entries = []
    for n, line in enumerate(lines[1:], 2):
        try:
            entries.append(json.loads(line))
        except (json.JSONDecodeError, RecursionError):
            raise UsageError(f"{label}: line {n} of the JSON-lines export is not JSON") from None
    return {**head, "entries": entries}


def _plain(label: str, i: int, item: Any) -> Incoming:
    if not isinstance(item, str):
        raise UsageError(f"{label}: item {i} of the list is {_kind(item)}, not a string")
    return Incoming(i, item)


def _kinetaios(label: str, i: int, item: Any, today: dt.date) -> Incoming:
    content, day, conversation = read_memory(f'{label}: item {i} of "memories"', item, today)
    fields = (("conversation", conversation),) if conversation else ()
    return Incoming(i, content, day, daily=day is not None, fields=fields, fact=True)


def _exported(label: str, i: int, item: Any, today: dt.date) -> Incoming:
    where = f'{label}: item {i} of "entries"'
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise UsageError(f'{where} needs a string "text"')
    for name in ("section", "key", "date", "path"):
        if item.get(name) is not None and not isinstance(item[name], str):
            raise UsageError(f'{where}: "{name}" must be a string, not {_kind(item[name])}')
    tags = item.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise UsageError(f'{where}: "tags" must be a list of strings')
    day = item.get("date")
    if day is not None:
        try:
            day = dt.date.fromisoformat(day).isoformat()
        except ValueError:
            raise UsageError(f'{where}: "date" {day[:40]!r} is not YYYY-MM-DD') from None
        check_day(dt.date.fromisoformat(day), today, f'{where}: "date"')
    kind = note_kind(item.get("path") or "")
    section = item.get("section") or None
    return Incoming(i, item["text"], day, daily=kind == "daily" and day is not None,
                    section=section if kind == "memory" else None, daily_section=section or "conversation",
                    key=item.get("key"), tags=tuple(tags), stamped=False, stored=True)  # fmt: skip


def _day(label: str, i: int, item: Any, today: dt.date) -> Incoming:
    where = f'{label}: item {i} of "days"'
    if not isinstance(item, dict) or not isinstance(item.get("date"), str):
        raise UsageError(f'{where} needs a string "date"')
    try:
        day = dt.date.fromisoformat(item["date"]).isoformat()
    except ValueError:
        raise UsageError(f'{where}: "date" {item["date"][:40]!r} is not YYYY-MM-DD') from None
    check_day(dt.date.fromisoformat(day), today, f'{where}: "date"')
    return Incoming(i, check_summary(item.get("summary"), where), day, day_summary=True)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", type(None): "null", bool: "true or false"}.get(
        type(value), f"a {type(value).__name__}"
    )


# importing ------------------------------------------------------------------
def _clean(text: str, stored: bool = False) -> str:
    """One entry's text: line endings as `\\n`, blank lines dropped (what another program exported may
    hold anything), surrounding space stripped. A `stored` text (a memvault export's) keeps its blank
    lines: it is an entry's own, which a blank line inside did not end (its next line is indented)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line for line in lines if stored or line.strip()).strip()


def import_memories(layout: Layout, incoming: list[Incoming], section: str = DEFAULT_SECTION,
                    today: dt.date | None = None) -> ImportResult:  # fmt: skip
    """Write the memories where they belong (see the module), each note in one batch; returns the counts.
    A memvault export's entry is skipped when its text is at its place already (its day's note, or its
    MEMORY.md section): the same words on two days, or in two sections, are two entries, and come back
    as two. Any other file's memory is skipped when its text is anywhere in the vault. A key is held by
    the current entry alone: a superseded version of a keyed fact (`correct`) keeps its key and takes none."""
    default = check_section_name(section)
    today_iso = (today or dt.date.today()).isoformat()
    held = list(vault_entries(layout))
    seen = {normalise(e.text) for e in held}
    placed = {(normalise(e.text), e.path, e.section) for e in held}
    keys = {e.key: f"on {e.path}:{e.start_line}" for e in held if e.key and not e.superseded}
    lang, memory_rel = vault_lang(layout), layout.relative(layout.memory_md)
    refused: list[dict[str, Any]] = []
    skipped = 0
    days: dict[str, list[tuple[Incoming, NewEntry]]] = {}
    memory: list[tuple[Incoming, NewEntry]] = []
    summaries = [item for item in incoming if item.day_summary]
    for item in (i for i in incoming if not i.day_summary):
        try:
            text = _clean(item.text, item.stored)
            key = item.key if item.key and field_in(text, "key") is None else None
            entry = prepare_entry(text, key, item.tags, stored=item.stored)
            title = check_section_name(item.section) if item.section else default
        except (GuardError, UsageError) as exc:
            refused.append({"index": item.index, "reason": str(exc)})
            continue
        wanted, own_key = normalise(entry), field_in(entry, "key")
        day_note = layout.daily_note(dt.date.fromisoformat(item.date)) if item.daily and item.date else None
        to_day = day_note is not None and not day_note.exists()
        spots = [(wanted, memory_rel, title)]  # where an export's entry may be already, where it goes first
        if day_note is not None:
            spots.insert(0, (wanted, layout.relative(day_note), daily_title(item.daily_section, lang)))
        there = any(spot in placed for spot in spots) if item.stored else wanted in seen
        if there:
            skipped += 1
            continue
        holds = own_key is not None and field_in(entry, "superseded") is None
        if holds and own_key in keys:
            refused.append({"index": item.index, "reason": f"key {own_key} is already {keys[own_key]}"})
            continue
        seen.add(wanted)
        placed.add(spots[0] if to_day else spots[-1])
        if holds and own_key is not None:
            keys[own_key] = f"on item {item.index} of the file"
        if to_day:
            new = NewEntry(text, item.daily_section, key, item.tags, fields=item.fields, stored=item.stored)
            days.setdefault(item.date or "", []).append((item, new))
        else:
            day = item.date or (today_iso if item.stamped else None)
            memory.append((item, NewEntry(text, title, key, item.tags, day, item.fields, item.stored)))
    _check_size(layout, [e for _, e in memory])
    result = ImportResult(0, skipped, refused)
    for day, batch in sorted(days.items()):
        facts = [item for item, _ in batch if item.fact]
        talks = {dict(item.fields).get("conversation") for item in facts} - {None} if facts else None
        done = backfill_daily(layout, dt.date.fromisoformat(day), [e for _, e in batch],
                              None if talks is None else len(talks))  # fmt: skip
        for (item, new), status in zip(batch, done.statuses, strict=True):
            if status == "frozen":  # the day's note appeared meanwhile: a save may not change it
                memory.append((item, dataclasses.replace(new, section=default, saved=item.date)))
        result = _tally(layout, result, done, batch)
    if memory:
        result = _tally(layout, result, remember_batch(layout, [e for _, e in memory]), memory)
    result = _set_summaries(layout, result, summaries)
    result.refused.sort(key=lambda r: r["index"])
    return result


def _set_summaries(layout: Layout, result: ImportResult, summaries: list[Incoming]) -> ImportResult:
    """Each day's summary, on a day that has none yet (the note is made if missing); the same one
    again is skipped, a day with a summary of its own keeps it and the import's is refused."""
    skipped, refused, paths, done = result.skipped, list(result.refused), dict(result.paths), 0
    for item in summaries:
        day = dt.date.fromisoformat(item.date or "")
        path = layout.daily_note(day)
        note = read_day(layout, path) if path.exists() else None
        own = summary_of(note) if note is not None else None
        if own == item.text:
            skipped += 1
        elif own is not None:
            refused.append({"index": item.index, "reason": f"{layout.relative(path)} has a summary of its own"})
        else:
            set_summary(layout, day, item.text, daily_template(day, vault_lang(layout)))
            paths.setdefault(layout.relative(path), 0)
            done += 1
    return ImportResult(result.imported, skipped, refused, paths, result.created_sections, result.summaries + done)


Routed = list[tuple[Incoming, NewEntry]]


def _tally(layout: Layout, result: ImportResult, done: BatchSaved, batch: Routed) -> ImportResult:
    """The running counts, with what one note's batch did."""
    added = done.count("added")
    paths = {**result.paths, layout.relative(done.path): added} if added else result.paths
    refused = result.refused + [{"index": item.index, "reason": reason}
                                for (item, _), status, reason in zip(batch, done.statuses, done.reasons, strict=True)
                                if status == "refused"]  # fmt: skip
    made = done.created_sections if done.path == layout.memory_md else []  # a new day's sections are its own
    return ImportResult(result.imported + added, result.skipped + done.count("unchanged"), refused, paths,
                        result.created_sections + made)  # fmt: skip


def _check_size(layout: Layout, entries: list[NewEntry]) -> None:
    """Refuse, before any note is written, an import that would grow MEMORY.md past the note limit
    (past it, the note could not be read back)."""
    current = layout.memory_md.stat().st_size if layout.memory_md.exists() else 0
    grows = sum(len(e.text.encode("utf-8")) + len(e.text.split("\n")) * 6 + 40 for e in entries)
    if current + grows > MAX_NOTE_BYTES:
        raise UsageError(f"this import would make MEMORY.md about {current + grows:,} bytes, over the "
                         f"{MAX_NOTE_BYTES:,}-byte note limit; import it in parts")  # fmt: skip


def import_file(layout: Layout, path: str, section: str = DEFAULT_SECTION) -> ImportResult:
    return import_memories(layout, read_import(path), section)


# exporting ------------------------------------------------------------------
def export_entry(entry: Entry) -> dict[str, Any]:
    """One entry as export data: `vault.entries.Entry`'s fields, tags as a list."""
    return {**asdict(entry), "tags": list(entry.tags)}


def export_entries(layout: Layout, failed: list[str] | None = None) -> list[dict[str, Any]]:
    """Every entry of the vault (`vault.entries.vault_entries`), notes in path order; each note that
    cannot be read is named in `failed` (the export is then partial, and says so)."""
    return [export_entry(e) for e in vault_entries(layout, skipped="skipped, not exported", failed=failed)]


def export_days(layout: Layout) -> list[dict[str, str]]:
    """Each day's summary (frontmatter `index`, what the catalog holds), oldest first."""
    out = []
    for day, path in daily_notes(layout):
        note = read_day(layout, path)
        said = summary_of(note) if note is not None else None
        if said is not None:
            out.append({"date": day.isoformat(), "summary": said})
    return out


def export_document(entries: list[dict[str, Any]], days: list[dict[str, str]] | None = None,
                    now: dt.datetime | None = None, skipped: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """memvault's own export: self-describing (`memvault_export`, its version) and importable as is;
    `days` (the days' summaries) in the head, so the JSON-lines form's first line carries them, and
    `skipped`: the notes that could not be read, each with why (a partial backup says so in itself)."""
    stamp = (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds")
    return {EXPORT_MARK: EXPORT_VERSION, "exported_at": stamp, "count": len(entries), "days": days or [],
            "skipped": skipped or [], "entries": entries}  # fmt: skip
