"""Forgetting one entry, recoverably, and putting it back: the entry's lines go to the trash first,
then leave the note; `restore` puts them back where they were, byte for byte when the note has not
changed since, else at the end of their section."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from vault.entries import Entry, iter_entries, normalise, vault_entries
from vault.errors import UsageError
from vault.faults import crash_point
from vault.fileio import TextFile, split_lines, update_note
from vault.notes import parse_note
from vault.paths import Layout, inside, is_note_rel
from vault.sections import insert_in_section
from vault.trash import read_trashed, remove_trashed, trash_entry

_WHERE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")


@dataclass(frozen=True)
class Moved:
    """An entry moved between a note and the trash: where (`path`, `line`) and the trash `id`."""

    path: Path
    line: int
    id: str
    exact: bool = True  # restore: put back at its old place (False: at the end of its section)


def _matches(entry: Entry, key: str | None, match: str | None, where: tuple[str, int] | None) -> bool:
    if where is not None:
        return entry.path == where[0] and entry.start_line <= where[1] <= entry.end_line
    if match is not None:
        return normalise(match) in normalise(entry.text)
    return entry.key == key


def _selector(layout: Layout, key: str | None, match: str | None) -> tuple[str | None, tuple[str, int] | None]:
    """A KEY argument that reads `PATH:LINE` names a place instead."""
    if (key is None) == (match is None):
        raise UsageError("name one entry: KEY, PATH:LINE or --match TEXT")
    found = _WHERE.match(key or "")
    if found is None:
        return key, None
    rel = found["path"].removeprefix("./")
    if not is_note_rel(rel):
        raise UsageError(f"{key}: not a note path and line (PATH.md:LINE)")
    inside(layout, rel)
    return None, (rel, int(found["line"]))


def forget(layout: Layout, key: str | None = None, match: str | None = None) -> Moved:
    """Remove exactly one entry (by key, by `PATH:LINE`, or by a piece of its text); more than one
    match is refused with the candidates named, never guessed."""
    key, where = _selector(layout, key, match)
    found = [e for e in vault_entries(layout, where[0] if where else None) if _matches(e, key, match, where)]
    what = f"key {key}" if key else f"{where[0]}:{where[1]}" if where else f"text {match!r}"
    if not found:
        raise UsageError(f"no entry with {what}")
    if len(found) > 1:
        places = ", ".join(f"{e.path}:{e.start_line}" for e in found[:10])
        raise UsageError(f"{len(found)} entries match {what} ({places}); name one as PATH:LINE")
    target = found[0]
    path = layout.root / target.path
    moved: list[Moved] = []

    def change(current: TextFile | None) -> str:
        assert current is not None
        entries = [e for e in iter_entries(parse_note(target.path, current.text)) if _matches(e, key, match, where)]
        if [(e.start_line, e.end_line) for e in entries] != [(target.start_line, target.end_line)]:
            raise UsageError(f"{target.path} changed while forgetting; try again")
        lines = split_lines(current.text)
        new = "".join(lines[: target.start_line - 1] + lines[target.end_line :])
        removed = "".join(lines[target.start_line - 1 : target.end_line])
        after = hashlib.sha256(current.encode(new)).hexdigest()
        moved.append(Moved(path, target.start_line, trash_entry(layout, target, removed, "forgotten", after=after)))
        crash_point("after-trash")
        return new

    update_note(layout, path, change)
    return moved[0]


def restore(layout: Layout, ident: str) -> Moved:
    """Put a trashed entry back: at its old line when its note is as the forget left it, else at the
    end of its old section (created if missing). The trash item goes once the note is written."""
    item = read_trashed(layout, ident)
    origin = str(item.meta.get("origin") or "")
    if not is_note_rel(origin):
        raise UsageError(f"{ident}: its origin {origin!r} is not a note path")
    path = inside(layout, origin)
    placed: list[Moved] = []

    def change(current: TextFile | None) -> str:
        text = current.text if current else ""
        encoded = current.encode(text) if current else b""
        line = int(item.meta.get("line") or 1)
        lines = split_lines(text)
        if "".join(lines[line - 1 : line - 1 + len(split_lines(item.body))]) == item.body:
            placed.append(Moved(path, line, ident, True))  # still there: the save or forget that trashed it
            return text  # was killed before it wrote the note, so this item is only a spare copy
        if hashlib.sha256(encoded).hexdigest() == item.meta.get("after") and line - 1 <= len(lines):
            placed.append(Moved(path, line, ident, True))
            return "".join(lines[: line - 1]) + item.body + "".join(lines[line - 1 :])
        newline = current.newline if current else "\n"
        body = [raw.rstrip("\r\n") for raw in split_lines(item.body)]
        section = str(item.meta.get("section") or "")
        if section:
            new, _ = insert_in_section(text, section, body, newline)
        else:
            new = text + ("" if not text or text.endswith("\n") else newline) + "".join(b + newline for b in body)
        placed.append(Moved(path, 0, ident, False))
        return new

    update_note(layout, path, change)
    crash_point("before-untrash")
    remove_trashed(layout, ident)
    return placed[0]
