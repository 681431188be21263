"""`forget --purge`: an entry removed for good, with every copy of its text memvault keeps, and a purge
cut short finished by the next one.

A purge removes the entry from its note (no trash copy), then the copies memvault made: its trashed
versions and the lines of whole-note backups (`vault.trash.scrub_trash`), the temp files of saves that
never finished (swept into the trash first), the review queue's proposals that quote it, and each
clause of a day's summary that tells it (the `index` frontmatter that `correct` writes, and with it
the catalog line). Its text is matched as
`normalise`d whole words (`says`), so "ok" takes nothing from "booked".

What it is doing is written first to `.memvault/purging.json` (mode 0600), with the days whose summary
it is about to change added before they change, and removed only once the index is purged too and no
file under the vault holds the text any more (`done`, called by the verb after `rt.purge`, reads them
all: the state folder, the trash, the catalog, temp files): a purge killed midway leaves that mark, and
`resume` finishes it the next time a purge runs, its days' index and catalog lines included. A temp
file of the mark that a kill left is removed then too (it holds the text).
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.vault.catalog import CATALOG_DIR
from memvault.vault.catalog import sync as sync_catalog
from memvault.vault.cjk import cjk_share
from memvault.vault.days import SUMMARY_KEY, read_day, summary_of
from memvault.vault.entries import iter_entries, normalise, vault_entries
from memvault.vault.errors import MemvaultError, NoteReadError
from memvault.vault.faults import crash_point
from memvault.vault.fileio import TextFile, atomic_write, read_note, split_lines, sweep_leftovers, update_note
from memvault.vault.forget import select, still_there
from memvault.vault.notes import parse_note
from memvault.vault.paths import REVIEW_FILE, TRASH_DIR, Layout, daily_notes, is_note_rel, make_state_dir
from memvault.vault.trash import scrub_trash

MARK = "purging.json"
_WORD = re.compile(r"\w+")
_MARK_TEMP = re.compile(rf"^\.{re.escape(MARK)}\.([0-9]+)\.tmp$")  # `atomic_write`'s temp file of the mark
_LEFTOVER = re.compile(r"^\..+\.[0-9]{1,9}(?:-[0-9]+)?\.(?:tmp|aside|kept)$")  # a save's, as `fileio` names them
_GAP = 16  # characters that are no word allowed between two words of the text where a file holds it
_BLOCK = 1 << 20  # a file is read this many bytes at a time


class PurgeUnfinished(MemvaultError):
    """Files still hold the purged text that this run could not take it from (a save still running
    holds it in its temp file): the purge's mark stays, and the next purge finishes it."""


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
        _drop_mark(layout)  # nothing was removed: nothing to finish
        raise
    crash_point("purge-after-note")
    return _finish(layout, _read_mark(layout) or {})


def resume(layout: Layout) -> tuple[Purged, str] | None:
    """Finish a purge an earlier run began (its notes, not yet its index); with its normalised text."""
    _drop_mark_temps(layout)
    mark = _read_mark(layout)
    if mark is None:
        return None
    return dataclasses.replace(_finish(layout, mark), resumed=True), str(mark.get("secret", ""))


def done(layout: Layout) -> None:
    """The purge is over, the index included, once no file under the vault holds the text (`remaining`):
    its mark goes, and the text with it. Else `PurgeUnfinished` names the files and the mark stays."""
    mark = _read_mark(layout)
    left = remaining(layout, str(mark.get("secret", ""))) if mark is not None else []
    if left:
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        raise PurgeUnfinished(f"purge not finished: the text is still in {shown} (a save still under way?); "
                              "run the same `memvault forget --purge` again to finish it")  # fmt: skip
    _drop_mark(layout)


def _drop_mark(layout: Layout) -> None:
    (layout.state_dir / MARK).unlink(missing_ok=True)
    _drop_mark_temps(layout)


def _drop_mark_temps(layout: Layout) -> None:
    """Remove the temp files of marks whose writer is gone: a purge killed before its mark's rename
    left the text in one."""
    with contextlib.suppress(OSError):
        for name in os.listdir(layout.state_dir):
            found = _MARK_TEMP.match(name)
            if found and not _alive(int(found.group(1))):
                (layout.state_dir / name).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """Another process with this pid runs (this process's own temp file is a dead one's: pids are reused)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _finish(layout: Layout, mark: dict[str, Any]) -> Purged:
    secret, key = str(mark.get("secret", "")), mark.get("key")
    for folder in sorted({p.parent for p in _leftovers(layout)}):
        sweep_leftovers(layout, folder)  # a killed save's temp file can hold the text: into the trash, scrubbed
    scrubbed = scrub_trash(layout, secret, key if isinstance(key, str) else None) + _scrub_queue(layout, secret)
    days = _telling_days(layout, secret)
    if set(days) - set(mark.get("summaries") or ()):  # written down before they change: a purge cut short
        mark = {**mark, "summaries": sorted({*days, *(mark.get("summaries") or ())})}  # reindexes them
        _mark(layout, mark)
    _scrub_summaries(layout, secret, days)
    summaries = tuple(str(rel) for rel in mark.get("summaries") or ())
    years = {int(rel[6:10]) for rel in summaries} | _catalog_years_telling(layout, secret)
    if years:  # the catalog follows the days (a retired day's summary is read from its copy in the trash)
        sync_catalog(layout, years)
    crash_point("purge-after-copies")
    elsewhere = [f"{e.path}:{e.start_line}" for e in vault_entries(layout) if says(e.text, secret)]
    held = _holding(layout, secret, index=False)  # and whole files: another entry's copy, a person's summary
    elsewhere += [rel for rel in held["notes"] + held["kept"] if not any(e.startswith(f"{rel}:") for e in elsewhere)]
    path = str(mark.get("path", ""))
    return Purged(path, int(mark.get("line", 0)), key if isinstance(key, str) else None, scrubbed, summaries,
                  tuple(dict.fromkeys(filter(None, [path, *summaries]))), tuple(elsewhere))  # fmt: skip


def _leftovers(layout: Layout) -> Iterator[Path]:
    """Files a save left beside its note (`.NAME.PID.tmp`, `.aside`, `.kept`), outside the state folder."""
    for path in layout.root.rglob(".*"):
        if _LEFTOVER.match(path.name) and not path.is_relative_to(layout.state_dir):
            yield path


def _telling_days(layout: Layout, secret: str) -> list[str]:
    """The daily notes whose summary tells the text."""
    days = []
    for _, path in daily_notes(layout):
        note = read_day(layout, path)
        if note is not None and says(summary_of(note) or "", secret):
            days.append(layout.relative(path))
    return days


def _catalog_years_telling(layout: Layout, secret: str) -> set[int]:
    folder = layout.root / CATALOG_DIR
    years = set()
    for path in folder.glob("*.tsv") if folder.is_dir() else ():
        with contextlib.suppress(OSError, ValueError):
            if says(path.read_text(encoding="utf-8"), secret):
                years.add(int(path.stem))
    return years


def _scrub_summaries(layout: Layout, secret: str, days: list[str]) -> None:
    """Drop each clause ("; "-separated) of a day's summary that tells the text, in these daily notes and
    in the backups in the trash (the catalog reads a retired day's from there)."""
    for rel in days:
        with contextlib.suppress(_Gone):
            update_note(layout, layout.root / rel, lambda current: _without(_there(current).text, secret))
    for path in sorted(layout.trash_dir.rglob("*.bak")) if layout.trash_dir.is_dir() else ():
        try:
            found = read_note(path, layout.relative(path), layout=layout)
        except NoteReadError:
            continue
        if (new := _without(found.text, secret)) != found.text:
            atomic_write(path, found.encode(new))


def remaining(layout: Layout, secret: str) -> list[str]:
    """The files that keep a purge from being done: the index's (the state folder) while no note holds the
    text any more, and the temp files saves leave (a writer still running). Empty when it is done."""
    held = _holding(layout, secret, index=True)
    return held["temp"] + ([] if held["notes"] else held["index"])


def _holding(layout: Layout, secret: str, index: bool) -> dict[str, list[str]]:
    """The files that hold the text (`normalise`d, as `says` finds it: its words in order, any case, spaces
    and punctuation between them), the mark aside, by what they are: `notes` (a person's), `kept` (the
    trash, the catalog, the review queue: copies the purge's rules leave, of a longer entry or a summary
    a person wrote), `temp` (files saves leave beside their note) and, with `index`, `index` (the state
    folder)."""
    held: dict[str, list[str]] = {"notes": [], "kept": [], "temp": [], "index": []}
    found = _pattern(secret)
    for path, rel, kind in _files(layout, index) if found is not None else ():
        if _holds(path, found):  # type: ignore[arg-type]
            held[kind].append(rel)
    return held


def _pattern(secret: str) -> tuple[str, re.Pattern[str]] | None:
    """What `says` looks for, as a search over raw text: the words in order with at most `_GAP` other
    characters between them (Chinese: its characters, as a run); with a piece of it any match holds
    (its longest word, casefolded, or its first character), looked for first."""
    words = _WORD.findall(secret)
    if not words:
        return None
    if cjk_share(secret) >= 0.5:
        run = "".join(words)
        return run[0].casefold(), re.compile(rf"\W{{0,{_GAP}}}".join(map(re.escape, run)), re.IGNORECASE)
    found = re.compile(r"(?<!\w)" + rf"\W{{1,{_GAP}}}".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)
    return max(words, key=len).casefold(), found


def _files(layout: Layout, index: bool) -> Iterator[tuple[Path, str, str]]:
    """(path, vault-relative name, kind: see `_holding`) of each regular file a purge answers for, or that
    says a note still holds the text. Symlinks are not followed; other dot-folders (`.git`, an editor's)
    and files that are no notes are a person's, not read."""
    ours = {layout.state_dir.name, TRASH_DIR, CATALOG_DIR}
    for top, folders, names in os.walk(layout.root):
        base = Path(top)
        rel_dir = "" if base == layout.root else base.relative_to(layout.root).as_posix() + "/"
        first = rel_dir.split("/", 1)[0]
        if not rel_dir:
            state = layout.state_dir.name
            folders[:] = [f for f in folders if (not f.startswith(".") or f in ours) and (index or f != state)]
        for name in names:
            path, rel = base / name, rel_dir + name
            if path == layout.state_dir / MARK or path.is_symlink() or not path.is_file():
                continue
            if kind := _kind(layout, rel, first in ours):
                yield path, rel, kind


def _kind(layout: Layout, rel: str, ours: bool) -> str:
    if _LEFTOVER.match(rel.rsplit("/", 1)[-1]):
        return "temp"
    if rel.startswith(f"{layout.state_dir.name}/"):
        return "index"
    if ours or rel == REVIEW_FILE:
        return "kept"
    return "notes" if is_note_rel(rel) else ""


def _holds(path: Path, found: tuple[str, re.Pattern[str]]) -> bool:
    """Whether the file's bytes, read as UTF-8 (what is not is no word), hold the text; read a block at a
    time, each block searched with the end of the one before, and only where its piece is (a regex run
    over every block of the stores took seconds)."""
    piece, pattern = found
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    keep = 4 * len(pattern.pattern) + 64
    tail = ""
    try:
        with path.open("rb") as fh:
            while block := fh.read(_BLOCK):
                text = tail + decoder.decode(block)
                if piece in text.casefold() and pattern.search(text):
                    return True
                tail = text[-keep:]
    except OSError:
        return False
    text = tail + decoder.decode(b"", final=True)
    return piece in text.casefold() and pattern.search(text) is not None


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
