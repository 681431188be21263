"""Placing a formatted entry into a note's text: over the entry holding its key, merged into the same
fact said again, or at the end of its section. The text alone: the caller reads and writes the note
(`vault.saving`, under the lock)."""

from __future__ import annotations

from dataclasses import dataclass

from memvault.vault.entries import FIELDS, MARKER, SAVED, Entry, iter_entries, says_same, tags_in
from memvault.vault.fileio import split_lines
from memvault.vault.notes import parse_note
from memvault.vault.sections import entry_lines, insert_in_section, title_in


@dataclass(frozen=True)
class Placed:
    """What a save did: `added`, `updated` (the entry with its key was replaced in place; `old` is that
    entry and `old_lines` its lines as they were), `unchanged` (already there) or `merged` (already
    there, and given the tags or key the save brought); `section` is where."""

    status: str
    section: str
    old: Entry | None = None
    old_lines: str = ""
    created_section: bool = False


def place_entry(
    text: str, rel: str, title: str, entry: str, prefix: str, newline: str, key: str | None
) -> tuple[str, Placed]:
    """Put a formatted entry into a note's text: over the current (not superseded) entry with the same
    key anywhere in the note, else nowhere if section `title` already holds the same text, else at
    the end of that section (created if missing). Every other byte stays as it was; the new lines
    use the note's line ending."""
    entries = list(iter_entries(parse_note(rel, text)))
    title = title_in(text, title)
    lines = entry_lines(entry, prefix)
    old = next((e for e in entries if e.key == key and not e.superseded), None) if key is not None else None
    if old is not None:
        if says_same(old.text, entry):
            return _merged(text, old, entry, key)
        split = split_lines(text)
        nested = MARKER.match(split[old.start_line - 1])
        lines = entry_lines(entry, prefix, nested.group(1) if nested else "")  # a nested item stays nested
        ending = split[old.end_line - 1][len(split[old.end_line - 1].rstrip("\r\n")) :]
        block = [line + newline for line in lines[:-1]] + [lines[-1] + ending]
        new = "".join([*split[: old.start_line - 1], *block, *split[old.end_line :]])
        return new, Placed("updated", old.section, old, "".join(split[old.start_line - 1 : old.end_line]))
    same = next((e for e in entries if e.section == title and not e.superseded and says_same(e.text, entry)), None)
    if same is not None:  # one fact is one entry, whatever tags or key each save gave it
        return _merged(text, same, entry, key if same.key is None else None)
    new, created = insert_in_section(text, title, lines, newline)
    return new, Placed("added", title, created_section=created)


def _merged(text: str, old: Entry, entry: str, key: str | None) -> tuple[str, Placed]:
    """`text` with the entry `old` given the `#tags` of `entry` it lacks, and `key` if it has none:
    written on its first line before its fields, every other byte as it was."""
    tags = [t for t in tags_in(entry) if t not in tags_in(old.text)]
    if not tags and (key is None or old.key is not None):
        return text, Placed("unchanged", old.section)
    split = split_lines(text)
    line = split[old.start_line - 1]
    body = line.rstrip("\r\n")
    marks = [m.start() for m in (FIELDS.search(body), SAVED.search(body)) if m]
    cut = min(marks) if marks else len(body)
    while cut > 0 and body[cut - 1] in " \t":
        cut -= 1
    added = "".join(f" #{t}" for t in tags) + (f" [key:: {key}]" if key and old.key is None else "")
    split[old.start_line - 1] = body[:cut] + added + body[cut:] + line[len(body) :]
    return "".join(split), Placed("merged", old.section)
