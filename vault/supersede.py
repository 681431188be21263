"""Marking an entry superseded once the newer fact that replaces it is written: the one step
`memvault correct` and a keyed save onto a frozen day share, so both leave the same marks.

The new entry is written first, pointing at the old one (`[corrects:: PATH#ID]`, the old entry's
`vault.entries.entry_id`, which an edit above it leaves as it is), then the old one gets
`[superseded:: DAY]`. Killed between the two, both are still whole; running the same command
again finds the new entry there and only marks. When the mark cannot be made (its note kept changing
under an editor that saves in place, or the old entry is no longer as it was read), the new entry is
taken out again (`vault.forget.mark_or_undo`): the verb changed nothing, as its error says, and the
key keeps one current version (the editor harness, `tests/reliability`, found it left with two).
"""

from __future__ import annotations

from memvault.vault.entries import SAVED, Entry, entry_ids, entry_ref, iter_entries, version_id
from memvault.vault.errors import UsageError
from memvault.vault.fileio import FINISH_TRIES, TextFile, split_lines, update_note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout


def pointer(entry: Entry) -> str:
    """How a correction names the entry it corrects: its note and version id (the correction keeps
    the key, so the key alone would name both)."""
    return f"{entry.path}#{version_id(entry)}"


def points_at(ptr: str | None, entry: Entry) -> bool:
    """Whether a `corrects` pointer names `entry`: by id (`PATH#ID`), or, as corrections written
    before ids were, by line (`PATH:LINE`: the line as it was then)."""
    if not ptr:
        return False
    if (ref := entry_ref(ptr)) is not None:
        return ref[0] == entry.path and ref[1] in entry_ids(entry)
    path, _, line = ptr.rpartition(":")
    return path == entry.path and line == str(entry.start_line)


def mark_superseded(layout: Layout, target: Entry, day: str) -> int:
    """Mark `target` superseded on `day`, its correction being written already: `[superseded:: DAY]`
    on the entry's first line (found by its text, nearest its old line: a correction written into the
    same note may have moved it; its pointer names the entry by id, not line). Returns its line now."""
    rel = target.path
    found: list[int] = []

    def change(current: TextFile | None) -> str:
        entries = [e for e in iter_entries(parse_note(rel, current.text if current else "")) if e.text == target.text]
        if current is None or not entries:
            raise UsageError(f"{rel} changed while correcting: line {target.start_line} is no longer as it was read")
        entry = min(entries, key=lambda e: abs(e.start_line - target.start_line))
        lines = split_lines(current.text)
        first = lines[entry.start_line - 1]
        body = first.rstrip("\r\n")
        saved = SAVED.search(body)  # the mark goes before a trailing `<!-- saved DAY -->`
        cut = saved.start() if saved and saved.end() == len(body) else len(body)
        lines[entry.start_line - 1] = f"{body[:cut]} [superseded:: {day}]{first[cut:]}"
        found.append(entry.start_line)
        return "".join(lines)

    update_note(layout, layout.root / rel, change, tries=FINISH_TRIES)  # the correction is written: finish
    return found[0]
