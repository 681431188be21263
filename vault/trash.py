"""The vault's trash: `.trash/` keeps a recoverable copy of everything memvault replaces or removes.

Whole notes (`rewrite`) are kept as `<path>.<stamp>.bak`; single entries (an entry replaced by a save
with its key) as one Markdown file each under `.trash/entries/`, whose frontmatter says where the
entry was and when, and whose body is its lines exactly as they were, so a person can read and
restore them in any editor.
"""

from __future__ import annotations

import datetime as dt
import secrets
import shutil
from pathlib import Path

import yaml

from vault.entries import Entry
from vault.fileio import atomic_write
from vault.paths import Layout

ENTRIES_DIR = "entries"


def backup(layout: Layout, path: Path, stamp: str | None = None) -> Path:
    """Copy a note into `.trash/` before it is replaced or removed; returns the copy's path."""
    stamp = stamp or dt.datetime.now().strftime("%Y%m%dT%H%M%S%f")
    target = layout.trash_dir / f"{layout.relative(path)}.{stamp}.bak"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, target)
    return target


def trash_entry(layout: Layout, entry: Entry, lines: str, reason: str, now: dt.datetime | None = None) -> str:
    """Keep an entry's lines with their origin; returns the trash id. Written (and synced) before the
    note changes, so a crash between the two leaves a copy too many, never one too few."""
    now = now or dt.datetime.now()
    ident = f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    meta = {
        "id": ident,
        "origin": entry.path,
        "section": entry.section,
        "line": entry.start_line,
        "key": entry.key,
        "removed": now.isoformat(timespec="seconds"),
        "reason": reason,
    }
    folder = layout.trash_dir / ENTRIES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    text = "---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n" + lines
    atomic_write(folder / f"{ident}.md", text.encode("utf-8"))
    return ident
