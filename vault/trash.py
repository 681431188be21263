"""The vault's trash: `.trash/` keeps a recoverable copy of everything memvault replaces or removes.

Whole notes (`rewrite`) are kept as `<path>.<stamp>.bak`; single entries (an entry replaced by a save
with its key) as one Markdown file each under `.trash/entries/`, whose frontmatter says where the
entry was and when, and whose body is its lines exactly as they were, so a person can read and
restore them in any editor.

An item records `after`, the SHA-256 of the note once the entry was out: `put_back` puts it back at its
line only into that note, byte for byte. The entries one `clear` took from a note share one `after`
(the note once all of them were out), and each records `at`, its line in that note, so the note is
hashed once for the batch, not once per entry, and the batch goes back in one pass.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.vault.effects import before_remove
from memvault.vault.entries import Entry, iter_entries, normalise
from memvault.vault.errors import NoteReadError, UsageError
from memvault.vault.fileio import TextFile, atomic_write, read_note, split_lines
from memvault.vault.logger import log
from memvault.vault.notes import parse_note
from memvault.vault.paths import TRASH_DIR, Layout, vault_file
from memvault.vault.regular import read_regular
from memvault.vault.sections import insert_in_section

ENTRIES_DIR = "entries"


def backup(layout: Layout, path: Path, stamp: str | None = None, data: bytes | None = None) -> Path:
    """Copy a note into `.trash/` before it is replaced or removed; returns the copy's path. `data`: its
    bytes as a write about to replace them read them (else read here)."""
    stamp = stamp or dt.datetime.now().strftime("%Y%m%dT%H%M%S%f")
    target = vault_file(layout, trash_folder(layout) / f"{layout.relative(path)}.{stamp}.bak")
    data = read_regular(vault_file(layout, path)) if data is None else data
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data)  # synced: the original may be replaced or removed next
    return target


def trash_folder(layout: Layout, sub: str = "") -> Path:
    """`.trash/` (or a folder in it), refused in one line when it is a symlink out of the vault or not a
    folder: a copy kept there must stay in the vault, where `trash` and `restore` find it."""
    vault_file(layout, layout.trash_dir, TRASH_DIR + "/", folder=True)
    return vault_file(layout, layout.trash_dir / sub, f"{TRASH_DIR}/{sub}", folder=True) if sub else layout.trash_dir


def trash_entry(
    layout: Layout,
    entry: Entry,
    lines: str,
    reason: str,
    now: dt.datetime | None = None,
    after: str | None = None,
    batch: str | None = None,
    at: int | None = None,
) -> str:
    """Keep an entry's lines with their origin; returns the trash id. Written (and synced) before the
    note changes, so a crash between the two leaves a copy too many, never one too few. `after` is
    the SHA-256 of the note without the entry: `restore` puts it back at its line only into that note.
    `batch` is the id shared by the entries one `clear` removed, restored together; `at` is then the
    entry's line in the note `after` names (the note without every entry of the batch)."""
    now = now or dt.datetime.now()
    folder = trash_folder(layout, ENTRIES_DIR)
    ident = new_id(now)
    while (folder / f"{ident}.md").exists():  # a second's ids share their stamp: 10,000 entries cleared in one
        ident = new_id(now)  # second drew the same six hex digits three times, and wrote over those items
    meta = {
        "id": ident,
        "origin": entry.path,
        "section": entry.section,
        "line": entry.start_line,
        "key": entry.key,
        "removed": now.isoformat(timespec="seconds"),
        "reason": reason,
        "after": after,
        **({"batch": batch} if batch else {}),
        **({"at": at} if batch and at is not None else {}),
    }
    folder.mkdir(parents=True, exist_ok=True)
    import yaml  # (on first use: a process that never trashes anything never imports it)

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's: the pure-Python one took 70% of a clear
    text = "---\n" + yaml.dump(meta, Dumper=dumper, allow_unicode=True, sort_keys=False) + "---\n" + lines
    atomic_write(folder / f"{ident}.md", text.encode("utf-8"))
    return ident


def new_id(now: dt.datetime | None = None) -> str:
    """A trash id: the time (so ids sort by age) and six random hex digits."""
    return f"{now or dt.datetime.now():%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Trashed:
    """One item of the trash: its id, its frontmatter and its lines as they were in the note."""

    id: str
    meta: dict[str, Any]
    body: str


_ID = re.compile(r"^\d{8}T\d{6}-[0-9a-f]{6}$")


def _item_path(layout: Layout, ident: str) -> Path:
    if not _ID.match(ident):
        raise UsageError(f"{ident[:60]!r}: not a trash id (see `memvault trash`)")
    return layout.trash_dir / ENTRIES_DIR / f"{ident}.md"


def is_item(layout: Layout, ident: str) -> bool:
    return _item_path(layout, ident).is_file()


def read_trashed(layout: Layout, ident: str) -> Trashed:
    """One item, checked: a hand-edited one without its `origin`, `line` (a number) or `removed`
    (when) is refused in one line naming its file."""
    path = _item_path(layout, ident)
    if not path.is_file():
        raise UsageError(f"{ident}: no such item in {layout.trash_dir / ENTRIES_DIR}")
    rel = layout.relative(path)
    item = parse_note(rel, read_note(path, rel, layout=layout).text)
    if item.problem or not item.frontmatter:
        raise UsageError(item.problem or f"{rel}: not a trash item (no frontmatter)")
    meta = item.frontmatter
    line = meta.get("line")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise UsageError(f"{rel}: not a trash item (its line is {str(line)[:40]!r}, not a line number)")
    for name in ("origin", "removed"):
        if not isinstance(meta.get(name), str | dt.date) or not str(meta[name]).strip():
            raise UsageError(f"{rel}: not a trash item (no {name!r})")
    return Trashed(ident, {**meta, "removed": str(meta["removed"]), "reason": str(meta.get("reason") or "")}, item.body)


def list_trashed(layout: Layout) -> list[Trashed]:
    """The trashed entries, oldest first; an item that cannot be read is named in a warning and
    skipped (it stays on disk), and the rest are listed."""
    out = []
    for path in sorted((trash_folder(layout, ENTRIES_DIR)).glob("*.md")):
        try:
            out.append(read_trashed(layout, path.stem))
        except (UsageError, NoteReadError) as exc:
            name = layout.relative(path)
            log.warning("%s; skipped", exc if name in str(exc) else f"{name}: {exc}")
    return out


def remove_trashed(layout: Layout, ident: str) -> None:
    path = _item_path(layout, ident)
    before_remove(path)
    path.unlink(missing_ok=True)


def scrub_trash(layout: Layout, secret: str, key: str | None = None) -> int:
    """Remove every copy of one entry from the trash: an entry whose normalised text is `secret`, the
    whole of it (a piece of a longer entry is another entry), or one holding `key` (its earlier
    versions); an empty `secret` is nobody's text and matches nothing. Trashed entries go, whole-note
    backups lose those entries' lines. Returns how many copies went."""

    def same(e: Entry) -> bool:
        return (bool(secret) and normalise(e.text) == secret) or (bool(key) and e.key == key)

    removed = 0
    for path in sorted(trash_folder(layout).rglob("*")) if layout.trash_dir.is_dir() else ():
        if not path.is_file() or path.suffix not in (".md", ".bak"):
            continue
        rel = layout.relative(path)
        try:
            found = read_note(path, rel, layout=layout)
        except NoteReadError:
            continue
        text = found.text
        hits = [e for e in iter_entries(parse_note(rel, text)) if same(e)]
        if not hits:
            continue
        removed += len(hits)
        if path.suffix == ".md":  # a trashed entry: the item is the copy
            before_remove(path)
            path.unlink()
            continue
        lines = split_lines(text)
        drop = {i for e in hits for i in range(e.start_line - 1, e.end_line)}
        atomic_write(path, found.encode("".join(x for i, x in enumerate(lines) if i not in drop)))
    return removed


@dataclass(frozen=True)
class Placed:
    """Where `put_back` put an item: `line` in the new text, `exact` (at its old place, or found there
    already), else at the end of its section (`line` 0)."""

    item: Trashed
    line: int
    exact: bool


def put_back(current: TextFile | None, items: Sequence[Trashed]) -> tuple[str, list[Placed]]:
    """A note's text with these trashed entries of it back: each at its old line when the note is the one
    its removal left (`after`), found there already when a crash came between trashing it and writing
    the note (or between writing it back and removing the item), else at the end of its section
    (created if missing). In one pass: a batch of 10,000 entries restored one write and one hash of the
    note each took 49 s."""
    text = current.text if current is not None else ""
    if any(not isinstance(item.meta.get("at"), int) for item in items):
        return _put_back_each(current, sorted(items, key=_line))
    read = _digest(current, text)
    lines = split_lines(text)
    inserts: list[tuple[int, list[str]]] = []  # (index in `lines`, the item's lines), in order
    placed: list[Placed] = []
    ends: dict[str, list[Trashed]] = {}
    shift = 0  # lines put back above the next one
    for item in sorted(items, key=lambda t: (t.meta["at"], _line(t))):
        body = split_lines(item.body)
        at = item.meta["at"]
        if item.meta.get("after") == read and at - 1 <= len(lines):
            inserts.append((at - 1, body))
            placed.append(Placed(item, at + shift, True))
            shift += len(body)
        elif (where := _found(lines, body, (_line(item), at))) is not None:
            placed.append(Placed(item, where, True))
        else:
            ends.setdefault(str(item.meta.get("section") or ""), []).append(item)
    text = _merged(lines, inserts) if inserts else text
    for section, left in ends.items():
        text = _at_end(current, text, section, [raw.rstrip("\r\n") for t in left for raw in split_lines(t.body)])
        placed += [Placed(t, 0, False) for t in left]
    return text, placed


def _put_back_each(current: TextFile | None, items: Sequence[Trashed]) -> tuple[str, list[Placed]]:
    """Items from before batches recorded `at` (each `after` the note without it and every later entry of
    its batch): one at a time, the note hashed again for each."""
    text = current.text if current is not None else ""
    placed: list[Placed] = []
    for item in items:
        lines, line = split_lines(text), _line(item)
        body = split_lines(item.body)
        if _digest(current, text) == item.meta.get("after") and line - 1 <= len(lines):
            text = "".join(lines[: line - 1]) + item.body + "".join(lines[line - 1 :])
            placed.append(Placed(item, line, True))
        elif _found(lines, body, (line,)) is not None:
            placed.append(Placed(item, line, True))
        else:
            section = str(item.meta.get("section") or "")
            text = _at_end(current, text, section, [raw.rstrip("\r\n") for raw in body])
            placed.append(Placed(item, 0, False))
    return text, placed


def _line(item: Trashed) -> int:
    return int(item.meta.get("line") or 1)


def _digest(current: TextFile | None, text: str) -> str:
    return hashlib.sha256(current.encode(text) if current is not None else b"").hexdigest()


def _found(lines: list[str], body: list[str], places: tuple[int, ...]) -> int | None:
    """The first of these 1-based lines where the note holds the item's lines already."""
    return next((p for p in places if p >= 1 and lines[p - 1 : p - 1 + len(body)] == body), None)


def _merged(lines: list[str], inserts: list[tuple[int, list[str]]]) -> str:
    """`lines` with each insert's lines before its index (inserts in index order), in one pass."""
    out: list[str] = []
    done = 0
    for index, body in inserts:
        out += lines[done:index]
        out += body
        done = index
    out += lines[done:]
    return "".join(out)


def _at_end(current: TextFile | None, text: str, section: str, body: list[str]) -> str:
    newline = current.newline if current is not None else "\n"
    if section:
        return insert_in_section(text, section, body, newline)[0]
    return text + ("" if not text or text.endswith("\n") else newline) + "".join(b + newline for b in body)
