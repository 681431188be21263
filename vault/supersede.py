"""Marking an entry superseded once the newer fact that replaces it is written: the one step
`memvault correct` and a keyed save onto a frozen day share, so both leave the same marks.

The new entry is written first, pointing at the old one (`[corrects:: PATH:LINE]`), then the old one
gets `[superseded:: DAY]`. Killed between the two, both are still whole; running the same command
again finds the new entry there and only marks.
"""

from __future__ import annotations

from pathlib import Path

from memvault.vault.entries import SAVED, Entry, iter_entries, normalise
from memvault.vault.errors import UsageError
from memvault.vault.fileio import TextFile, split_lines, update_note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout


def pointer(entry: Entry) -> str:
    """How a correction names the entry it corrects: `PATH:LINE`."""
    return f"{entry.path}:{entry.start_line}"


def mark_superseded(layout: Layout, target: Entry, day: str, written: Path, text: str) -> int:
    """Mark `target` superseded on `day`, its correction (`text`) being in the note `written` already;
    returns its line now. A correction written into the same note above it moves it down a line or
    more: the correction's pointer follows it."""
    line = _mark(layout, target, day)
    if line != target.start_line:
        _repoint(layout, written, pointer(target), f"{target.path}:{line}", normalise(text))
    return line


def _mark(layout: Layout, target: Entry, day: str) -> int:
    """Add `[superseded:: DAY]` to the entry's first line (found by its text, nearest its old line:
    a correction written into the same note may have moved it); returns its line."""
    rel = target.path
    found: list[int] = []

    def change(current: TextFile | None) -> str:
        entries = [e for e in iter_entries(parse_note(rel, current.text if current else "")) if e.text == target.text]
        if current is None or not entries:
            raise UsageError(f"{rel} changed while correcting: the correction is saved; mark the old entry again")
        entry = min(entries, key=lambda e: abs(e.start_line - target.start_line))
        lines = split_lines(current.text)
        first = lines[entry.start_line - 1]
        body = first.rstrip("\r\n")
        saved = SAVED.search(body)  # the mark goes before a trailing `<!-- saved DAY -->`
        cut = saved.start() if saved and saved.end() == len(body) else len(body)
        lines[entry.start_line - 1] = f"{body[:cut]} [superseded:: {day}]{first[cut:]}"
        found.append(entry.start_line)
        return "".join(lines)

    update_note(layout, layout.root / rel, change)
    return found[0]


def _repoint(layout: Layout, path: Path, old: str, new: str, text: str) -> None:
    rel = layout.relative(path)

    def change(current: TextFile | None) -> str:
        assert current is not None
        entries = iter_entries(parse_note(rel, current.text))
        entry = next(e for e in entries if e.corrects == old and normalise(e.text).startswith(text))
        lines = split_lines(current.text)
        lines[entry.start_line - 1] = lines[entry.start_line - 1].replace(f"[corrects:: {old}]", f"[corrects:: {new}]")
        return "".join(lines)

    update_note(layout, path, change)
