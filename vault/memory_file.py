"""MEMORY.md: its `##` sections, appending to them, and whole-note rewrites that keep a backup."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from memvault.vault.cjk import script_of
from memvault.vault.config import require
from memvault.vault.daily import append_daily, vault_lang
from memvault.vault.errors import UsageError
from memvault.vault.fileio import ABSENT, MAX_NOTE_BYTES, TextFile, atomic_write, read_note, vault_lock
from memvault.vault.guards import check_entry, check_section_name
from memvault.vault.paths import Layout, vault_file
from memvault.vault.saving import BatchSaved, NewEntry, SavedEntry, save_batch, save_entry
from memvault.vault.sections import Section, find_sections
from memvault.vault.templates import DAILY_TYPES, LANGS, MEMORY_SECTIONS, SAVE_TYPES, memory_template
from memvault.vault.trash import backup

LAST_SECTION = {"zh": "笔记", "en": "Notes"}  # a MEMORY.md with no `##` section gets this one


def list_sections(layout: Layout) -> list[Section]:
    if not layout.memory_md.exists():
        return []
    return _sections(read_note(layout.memory_md, layout.relative(layout.memory_md), layout=layout).text)


def _sections(text: str) -> list[Section]:
    """MEMORY.md's `##` sections, its lines read whatever their line ends."""
    return find_sections([line.rstrip("\r") for line in text.split("\n")], 2)


def _section_for_type(kind: str, text: str, lang: str) -> str:
    titles = MEMORY_SECTIONS[kind]
    present = {s.title for s in find_sections(text.split("\n"), 2)}
    return next((t for t in (titles["zh"], titles["en"]) if t in present), titles[lang])


def _last_section(text: str, lang: str) -> str:
    """Where an entry saved with no section and no type goes: the end of MEMORY.md, as seed 003's
    `appendToMemory` appends, which is its last `##` section (one made when the note has none, named in
    the note's script)."""
    sections = _sections(text)
    if sections:
        return sections[-1].title
    return LAST_SECTION["zh" if script_of(text) == "cjk" else "en"] if text.strip() else LAST_SECTION[lang]


def remember(
    layout: Layout,
    text: str,
    section: str | None = None,
    kind: str | None = None,
    key: str | None = None,
    tags: tuple[str, ...] = (),
    fields: tuple[tuple[str, str], ...] = (),
) -> SavedEntry:
    """Save an entry to a MEMORY.md section, chosen by name or by save type (neither: the last section,
    the end of the note, as seed 003 appends); with a key, the entry
    holding that key (in any section) is replaced in place instead; the same text twice in a section
    is saved once. `fields` are written on it as `[name:: value]` (its provenance: `source`).

    `conversation` and `daily` types go to today's daily note instead, as the
    design's save-type table says.
    """
    if kind is not None and kind not in SAVE_TYPES:
        raise UsageError(f"{kind!r}: unknown type; use one of {', '.join(SAVE_TYPES)}")
    if kind in DAILY_TYPES and section is None:
        saved = append_daily(layout, text, section="conversation", key=key, tags=tags, fields=fields)
        return dataclasses.replace(saved, section="daily")
    title = check_section_name(section) if section is not None else None
    require(layout.root, "long_term_memory")
    lang = vault_lang(layout)

    def section_of(body: str) -> str:
        if title or kind is not None:
            return title or _section_for_type(str(kind), body, lang)
        return _last_section(body, lang)

    return save_entry(
        layout, layout.memory_md, text,
        prefix="- ",
        template=lambda: memory_template(lang),
        section_of=section_of,
        key=key, tags=tags, fields=fields, saved=dt.date.today().isoformat(),
    )  # fmt: skip


def remember_batch(layout: Layout, entries: list[NewEntry]) -> BatchSaved:
    """Add many entries to MEMORY.md sections in one locked atomic write (sections created if
    missing); the guards, format and dedupe of `remember`, but a batch never replaces an entry."""
    for entry in entries:
        check_section_name(entry.section)
    require(layout.root, "long_term_memory")
    lang = vault_lang(layout)
    return save_batch(layout, layout.memory_md, entries, "- ", lambda: memory_template(lang))


def rewrite(layout: Layout, path: Path, text: str) -> Path | None:
    """Replace a whole note (an explicit user command), keeping the old one in `.trash/`.

    The new text is written in the note's existing encoding; returns the backup's path.
    """
    check_entry(text, limit=MAX_NOTE_BYTES)
    vault_file(layout, path)
    with vault_lock(layout, sweep=path.parent):
        kept = None
        encoder = TextFile("")
        if path.exists():
            encoder = read_note(path, layout.relative(path), layout=layout)
            kept = backup(layout, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, encoder.encode(text), encoder.sha256 if kept else ABSENT)  # over the version kept
    return kept


def init_vault(layout: Layout, lang: str = "zh") -> list[Path]:
    """Create `daily/` and MEMORY.md if they are missing; never touches what exists."""
    if lang not in LANGS:
        raise UsageError(f"{lang!r}: unknown language; use one of {', '.join(LANGS)}")
    created = []
    if not layout.daily_dir.is_dir():
        layout.daily_dir.mkdir(parents=True, exist_ok=True)
        created.append(layout.daily_dir)
    vault_file(layout, layout.memory_md)
    with vault_lock(layout):
        if not layout.memory_md.exists():
            atomic_write(layout.memory_md, memory_template(lang).encode("utf-8"), ABSENT)
            created.append(layout.memory_md)
    return created
