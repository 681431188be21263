"""MEMORY.md: its `##` sections, appending to them, and whole-note rewrites that keep a backup."""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path

from vault.daily import append_daily, vault_lang
from vault.errors import UsageError
from vault.fileio import MAX_NOTE_BYTES, TextFile, atomic_write, read_note, update_note, vault_lock
from vault.guards import check_entry, check_section_name
from vault.paths import Layout
from vault.sections import Section, entry_lines, find_sections, insert_in_section
from vault.templates import DAILY_TYPES, LANGS, MEMORY_SECTIONS, memory_template

SAVE_TYPES = (*MEMORY_SECTIONS, *DAILY_TYPES)


@dataclass(frozen=True)
class Saved:
    """Where an entry went; `created_section` tells the user a new heading was added."""

    path: Path
    section: str
    created_section: bool


def list_sections(layout: Layout) -> list[Section]:
    if not layout.memory_md.exists():
        return []
    text = read_note(layout.memory_md, layout.relative(layout.memory_md)).text
    return find_sections([line.rstrip("\r") for line in text.split("\n")], 2)


def _section_for_type(kind: str, text: str, lang: str) -> str:
    titles = MEMORY_SECTIONS[kind]
    present = {s.title for s in find_sections(text.split("\n"), 2)}
    return next((t for t in (titles["zh"], titles["en"]) if t in present), titles[lang])


def remember(layout: Layout, text: str, section: str | None = None, kind: str | None = None) -> Saved:
    """Append an entry to a MEMORY.md section, chosen by name or by save type.

    `conversation` and `daily` types go to today's daily note instead, as the
    design's save-type table says.
    """
    if kind is not None and kind not in SAVE_TYPES:
        raise UsageError(f"{kind!r}: unknown type; use one of {', '.join(SAVE_TYPES)}")
    if kind in DAILY_TYPES and section is None:
        path = append_daily(layout, text, section="conversation")
        return Saved(path, "daily", False)
    if section is None and kind is None:
        raise UsageError("say where to remember it: --section NAME or --type TYPE")
    entry = check_entry(text)
    title = check_section_name(section) if section is not None else None
    created = False

    def change(current: TextFile | None) -> str:
        nonlocal title, created
        lang = vault_lang(layout)
        body = current.text if current else memory_template(lang)
        if title is None:
            title = _section_for_type(str(kind), body, lang)
        new, created = insert_in_section(body, title, entry_lines(entry), current.newline if current else "\n")
        return new

    update_note(layout, layout.memory_md, change)
    return Saved(layout.memory_md, str(title), created)


def backup(layout: Layout, path: Path, stamp: str | None = None) -> Path:
    """Copy a note into `.trash/` before it is replaced or removed; returns the copy's path."""
    stamp = stamp or dt.datetime.now().strftime("%Y%m%dT%H%M%S%f")
    target = layout.trash_dir / f"{layout.relative(path)}.{stamp}.bak"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, target)
    return target


def rewrite(layout: Layout, path: Path, text: str) -> Path | None:
    """Replace a whole note (an explicit user command), keeping the old one in `.trash/`.

    The new text is written in the note's existing encoding; returns the backup's path.
    """
    check_entry(text, limit=MAX_NOTE_BYTES)
    with vault_lock(layout):
        kept = None
        encoder = TextFile("")
        if path.exists():
            encoder = read_note(path, layout.relative(path))
            kept = backup(layout, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, encoder.encode(text))
    return kept


def init_vault(layout: Layout, lang: str = "zh") -> list[Path]:
    """Create `daily/` and MEMORY.md if they are missing; never touches what exists."""
    if lang not in LANGS:
        raise UsageError(f"{lang!r}: unknown language; use one of {', '.join(LANGS)}")
    created = []
    if not layout.daily_dir.is_dir():
        layout.daily_dir.mkdir(parents=True, exist_ok=True)
        created.append(layout.daily_dir)
    with vault_lock(layout):
        if not layout.memory_md.exists():
            atomic_write(layout.memory_md, memory_template(lang).encode("utf-8"))
            created.append(layout.memory_md)
    return created
