"""`forget --purge`: an entry removed for good, with every copy of its text memvault keeps, and a purge
cut short finished by the next one.

A purge removes the entry from its note (no trash copy), then the copies memvault made: its trashed
versions and the lines of whole-note backups (`vault.trash.scrub_trash`), the temp files of saves that
never finished (swept into the trash first), the review queue's proposals that quote it, and each
clause of a day's summary that tells it (the `index` frontmatter that `correct` writes, and with it
the catalog line). Its text is matched as
`normalise`d whole words (`says`), so "ok" takes nothing from "booked".

What it is doing is written first to `.memvault/purging.json` (mode 0600) and removed only once the
index is purged too (`done`, called by the verb after `rt.purge`): a purge killed midway leaves that
mark, and `resume` finishes it the next time a purge runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from memvault.vault.catalog import sync as sync_catalog
from memvault.vault.cjk import cjk_share
from memvault.vault.days import SUMMARY_KEY, read_day, summary_of
from memvault.vault.entries import iter_entries, normalise, vault_entries
from memvault.vault.errors import NoteReadError
from memvault.vault.faults import crash_point
from memvault.vault.fileio import TextFile, atomic_write, read_note, split_lines, sweep_leftovers, update_note
from memvault.vault.forget import select, still_there
from memvault.vault.notes import parse_note
from memvault.vault.paths import REVIEW_FILE, Layout, daily_notes, make_state_dir
from memvault.vault.trash import scrub_trash

MARK = "purging.json"
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Purged:
    """What a purge removed: the entry's place, the trash copies, the days whose summary lost a clause
    (vault-relative notes), the notes the index must now forget it from, and the entries that still say
    it (PATH:LINE: a person's other notes are theirs to edit)."""

    path: str
    line: int
    key: str | None
    scrubbed: int
    summaries: tuple[str, ...]
    paths: tuple[str, ...]
    elsewhere: tuple[str, ...]
    resumed: bool = False  # finished a purge an earlier run began

    def names(self, key: str | None, match: str | None, secret: str) -> bool:
        """Is this the purge a request names (its key, or a piece of its text)?"""
        return (key is not None and key == self.key) or (match is not None and normalise(match) in secret)


def says(text: str, secret: str) -> bool:
    """Whether a text holds the purged (`normalise`d) text as whole words, punctuation aside, or for
    Chinese as a run of characters (its words are not spaced); an empty text is in nothing."""
    if cjk_share(secret) >= 0.5:
        run = "".join(_WORD.findall(secret))
        return bool(run) and run in "".join(_WORD.findall(normalise(text)))
    words, have = _WORD.findall(secret), _WORD.findall(normalise(text))
    return bool(words) and any(have[i : i + len(words)] == words for i in range(len(have) - len(words) + 1))


def purge(layout: Layout, key: str | None = None, match: str | None = None) -> Purged:
    """Remove exactly one entry for good (named as `forget` names it), and every copy of its text."""
    target, same = select(layout, key, match)
    _mark(layout, {"secret": normalise(target.text), "key": target.key, "path": target.path,
                   "line": target.start_line})  # fmt: skip

    def change(current: TextFile | None) -> str:
        assert current is not None
        still_there(target, same, current.text, "purging")
        lines = split_lines(current.text)
        return "".join(lines[: target.start_line - 1] + lines[target.end_line :])

    try:
        update_note(layout, layout.root / target.path, change)
    except BaseException:
        done(layout)  # nothing was removed: nothing to finish
        raise
    crash_point("purge-after-note")
    return _finish(layout, _read_mark(layout) or {})


def resume(layout: Layout) -> tuple[Purged, str] | None:
    """Finish a purge an earlier run began (its notes, not yet its index); with its normalised text."""
    mark = _read_mark(layout)
    if mark is None:
        return None
    return dataclasses.replace(_finish(layout, mark), resumed=True), str(mark.get("secret", ""))


def done(layout: Layout) -> None:
    """The purge is over, the index included: its mark goes, and the text with it."""
    (layout.state_dir / MARK).unlink(missing_ok=True)


def _finish(layout: Layout, mark: dict[str, Any]) -> Purged:
    secret, key = str(mark.get("secret", "")), mark.get("key")
    for folder in sorted({p.parent for p in layout.root.rglob(".*.tmp")} - {layout.state_dir}):
        sweep_leftovers(layout, folder)  # a killed save's temp file can hold the text: into the trash, scrubbed
    scrubbed = scrub_trash(layout, secret, key if isinstance(key, str) else None) + _scrub_queue(layout, secret)
    summaries = _scrub_summaries(layout, secret)
    crash_point("purge-after-copies")
    elsewhere = tuple(f"{e.path}:{e.start_line}" for e in vault_entries(layout) if says(e.text, secret))
    path = str(mark.get("path", ""))
    return Purged(path, int(mark.get("line", 0)), key if isinstance(key, str) else None, scrubbed, summaries,
                  tuple(dict.fromkeys(filter(None, [path, *summaries]))), elsewhere)  # fmt: skip


def _scrub_summaries(layout: Layout, secret: str) -> tuple[str, ...]:
    """Drop each clause ("; "-separated) of a day's summary that tells the text, in the daily notes and
    in their backups in the trash (the catalog reads a retired day's from there); returns the notes."""
    changed: list[str] = []
    for _, path in daily_notes(layout):
        note = read_day(layout, path)
        if note is None or not says(summary_of(note) or "", secret):
            continue
        with contextlib.suppress(_Gone):
            update_note(layout, path, lambda current: _without(_there(current).text, secret))
            changed.append(layout.relative(path))
    for path in sorted(layout.trash_dir.rglob("*.bak")) if layout.trash_dir.is_dir() else ():
        try:
            found = read_note(path, layout.relative(path), layout=layout)
        except NoteReadError:
            continue
        if (new := _without(found.text, secret)) != found.text:
            atomic_write(path, found.encode(new))
    if changed:
        sync_catalog(layout, {int(rel[6:10]) for rel in changed})
    return tuple(changed)


def _scrub_queue(layout: Layout, secret: str) -> int:
    """Drop the review queue's proposals that tell the text (extract quoted the user); returns how many."""
    path = layout.root / REVIEW_FILE
    dropped: list[int] = []

    def change(current: TextFile | None) -> str:
        text = _there(current).text
        told = [e for e in iter_entries(parse_note(REVIEW_FILE, text)) if says(e.text, secret)]
        dropped[:] = [len(told)]
        gone = {i for e in told for i in range(e.start_line - 1, e.end_line)}
        return "".join(x for i, x in enumerate(split_lines(text)) if i not in gone)

    if path.is_file():
        with contextlib.suppress(_Gone):
            update_note(layout, path, change)
    return sum(dropped)


class _Gone(Exception):
    """A note deleted while its summary was scrubbed: nothing of it is left to scrub."""


def _there(current: TextFile | None) -> TextFile:
    if current is None:
        raise _Gone
    return current


def _without(text: str, secret: str) -> str:
    """The note with the clauses of its `index` line that tell the text taken out (the line too, when
    none is left); any other note, or a summary that does not tell it, as it was."""
    lines = split_lines(text)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return text
    for i in range(1, len(lines)):
        line = lines[i]
        if line.rstrip("\r\n") in ("---", "..."):
            break
        if not line.startswith(f"{SUMMARY_KEY}:"):
            continue
        try:
            summary = json.loads(line[len(SUMMARY_KEY) + 1 :].strip())
        except json.JSONDecodeError:  # not the double-quoted scalar memvault writes: a person's, left to them
            return text
        if not isinstance(summary, str) or not says(summary, secret):
            return text
        kept = [c for c in summary.split("; ") if not says(c, secret)]
        newline = line[len(line.rstrip("\r\n")) :]
        lines[i] = f"{SUMMARY_KEY}: {json.dumps('; '.join(kept), ensure_ascii=False)}{newline}" if kept else ""
        return "".join(lines)
    return text


def _mark(layout: Layout, mark: dict[str, Any]) -> None:
    make_state_dir(layout)
    atomic_write(layout.state_dir / MARK, json.dumps(mark).encode(), new_mode=0o600)  # it holds the text


def _read_mark(layout: Layout) -> dict[str, Any] | None:
    try:
        mark = json.loads((layout.state_dir / MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return mark if isinstance(mark, dict) else None
