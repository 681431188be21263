"""A note read as a verb that changes the vault must read it: one whole save, never a partial one.

An editor that saves in place truncates the note, then writes it again, so a plain read in that moment
ends mid-line or finds the note empty. A verb that decides on such a read decides wrongly: `forget`
found no entry with a key it had, `correct` took an older version whose `[superseded:: …]` was cut off
for the current one, and a keyed save saw no entry holding its key (`tests/reliability`, the editor
harness, in place). Held while it is read (`vault.fileio.held_note`), a read is of one whole save.
"""

from __future__ import annotations

from pathlib import Path

from memvault.vault.fileio import held_note, until_whole
from memvault.vault.paths import Layout


def read_whole(layout: Layout | None, path: Path, rel: str) -> str:
    """The note's text as its last whole save left it ("" when it is gone); `ChangedMeanwhile` when it
    kept changing under an editor for `TRIES` reads, and a `NoteReadError` as `read_note` gives one.
    `layout`: as `held_note` takes it."""

    def attempt() -> str:
        with held_note(layout, path, rel) as (current, _held):
            return current.text if current is not None else ""

    return until_whole(rel, attempt)
