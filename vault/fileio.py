"""Reading notes as text, and changing them atomically under the vault's write lock.

A note is decoded without normalising its line endings, so an edit that only
appends leaves every existing byte as it was; new lines use the file's own
dominant line ending and encoding.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from memvault.vault.effects import before_write
from memvault.vault.errors import LockError, MemvaultError, NoteReadError, PathError, UsageError, unwritable
from memvault.vault.locks import try_lock
from memvault.vault.paths import Layout, make_state_dir, vault_file
from memvault.vault.regular import NotRegular, read_regular
from memvault.vault.swap import (
    ASIDE,
    KEPT,
    ChangedMeanwhile,
    Held,
    holding,
    keep,
    names,
    read_held,
    remember_ours,
    swap_in,
    untouched,
)

MAX_NOTE_BYTES = 10 * 1024 * 1024
LOCK_TIMEOUT = 30.0
ABSENT = "absent"  # `atomic_write(expect=ABSENT)`: the note must still not exist
T = TypeVar("T")
TRIES = 5  # read-modify-write passes before a note that keeps changing under memvault is left alone
FINISH_TRIES = 50  # the same for the second note of a verb whose first is written (a correction's mark)
_LEFTOVER = re.compile(rf"^\.(.+)\.([0-9]{{1,9}})(?:-[0-9]+)?\.(tmp|{ASIDE}|{KEPT})$")  # see `_leftover`
LEFTOVERS = "leftovers"  # in the trash: temp files of saves that never finished
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class TextFile:
    """A note's decoded text plus what is needed to write it back the same way; `sha256` is the hex
    digest of the bytes it was decoded from when `read_note` read it ("" otherwise)."""

    text: str
    encoding: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"
    sha256: str = ""
    cr_only: bool = False  # the file ends its lines with a lone CR (old Mac): `text` has LF, put back on writing

    def encode(self, text: str) -> bytes:
        return self.bom + (text.replace("\n", "\r") if self.cr_only else text).encode(self.encoding)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on `\\n` only (unlike `str.splitlines`, which
    also splits on form feeds and Unicode separators and would shift line numbers)."""
    return _LINE.findall(text)


def _detect_newline(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def decode_note(data: bytes, name: str) -> TextFile:
    """Decode UTF-8 (with or without BOM) or BOM-marked UTF-16; refuse everything else by name."""
    bom, encoding = next(((b, e) for b, e in _BOMS if data.startswith(b)), (b"", "utf-8"))
    if not bom and b"\x00" in data[:8192]:
        raise NoteReadError(f"{name}: binary file (NUL bytes), not a Markdown note")
    body = data[len(bom) :]
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        raise NoteReadError(
            f"{name}: not valid {encoding.upper()} (byte 0x{body[exc.start]:02x} at offset "
            f"{exc.start + len(bom)}); convert it to UTF-8"
        ) from None
    if "\x00" in text:
        raise NoteReadError(f"{name}: binary file (NUL characters), not a Markdown note")
    if "\r" in text and "\n" not in text:  # lines ended by CR alone: read as lines, written back so
        return TextFile(text.replace("\r", "\n"), encoding, bom, "\n", cr_only=True)
    return TextFile(text, encoding, bom, _detect_newline(text))


def read_note(
    path: Path,
    name: str | None = None,
    max_bytes: int = MAX_NOTE_BYTES,
    *,
    size: int | None = None,
    missing: str = "no such note",
    layout: Layout | None = None,
) -> TextFile:
    """Read one note (its bytes once), turning every way it can fail into a one-line `NoteReadError`.

    `size` is the size a caller already knows from its own `stat` (the walk's): the limit is
    checked against it and the file is not stat-ed again. `missing` says what a missing file is
    ("vanished before it could be read" for a file the walk had just seen). With the vault's `layout`,
    the path must first pass its one path rule (`vault_file`: inside the vault, a regular file)."""
    label = name or str(path)
    try:
        if layout is not None:
            path = vault_file(layout, path, label)
        if size is None:
            size = path.stat().st_size
        if size > max_bytes:
            raise NoteReadError(f"{label}: {size:,} bytes is over the {max_bytes:,}-byte note limit")
        data = read_regular(path)  # a FIFO is refused, never waited on
    except NoteReadError:
        raise
    except PathError as exc:
        raise NoteReadError(str(exc)) from None
    except FileNotFoundError:
        raise NoteReadError(f"{label}: {missing}") from None
    except IsADirectoryError:
        raise NoteReadError(f"{label}: is a directory, not a note") from None
    except NotRegular as exc:
        raise NoteReadError(f"{label}: {exc.strerror}") from None
    except OSError as exc:
        raise NoteReadError(f"{label}: cannot read ({exc.strerror or exc})") from None
    return replace(decode_note(data, label), sha256=hashlib.sha256(data).hexdigest())


@contextmanager
def vault_lock(layout: Layout, timeout: float = LOCK_TIMEOUT, sweep: Path | None = None) -> Iterator[None]:
    """Serialise every memvault write in a vault through one advisory lock file.

    The lock is on a sidecar file, not on the note: notes are replaced by
    rename, so a lock on the note's inode would not outlive the first write.
    `sweep`: the folder about to be written, whose leftovers of dead saves go to the trash first.
    """
    path = make_state_dir(layout) / "write.lock"
    deadline = time.monotonic() + timeout
    while (fd := _lock(layout, path)) is None:
        if time.monotonic() > deadline:
            raise LockError(f"{path}: vault is locked by another writer for over {timeout:.0f}s")
        time.sleep(0.005)
    try:
        if sweep is not None:
            sweep_leftovers(layout, sweep)
        yield
    finally:
        os.close(fd)


def _lock(layout: Layout, path: Path) -> int | None:
    try:
        return try_lock(path)
    except OSError as exc:
        raise unwritable(exc, path, layout.root) or exc from None


def _gone(pid: int) -> bool:
    """No process has this pid (one we may not signal, or a zombie, still counts as there)."""
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False
    return False


def _leftover(name: str) -> tuple[str, str, str] | None:
    """(note name, pid, kind) of a file a save leaves beside its note: `.NAME.PID.tmp` (its temp file),
    `.NAME.PID.aside` (the version read, renamed aside) or `.NAME.PID-N.kept` (a version displaced)."""
    found = _LEFTOVER.match(name)
    return (found.group(1), found.group(2), found.group(3)) if found else None


def sweep_leftovers(layout: Layout, folder: Path) -> list[Path]:
    """Finish what dead saves left in `folder`: a version renamed aside (`vault.swap`) goes back to its
    note's name when that is still empty; a temp file or aside version of a process that is gone, and
    every kept version, moves into `.trash/leftovers/` as `NAME.PID.bak`, each said in a warning: never
    deleted, since one can hold the only copy of an editor's save that an interrupted swap displaced.
    A live writer's file, another name, or a trash that is not in the vault leaves it where it is."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    moved = []
    for name in names:
        found = _leftover(name)
        if found is None or (found[2] != KEPT and not _gone(int(found[1]))):
            continue
        source, note = folder / name, folder / found[0]
        try:
            if not stat.S_ISREG(os.lstat(source).st_mode):
                continue
            if found[2] == ASIDE and not os.path.lexists(note):
                os.rename(source, note)  # the write died with the note aside: it is put back as it was
                continue
            pid = found[1]
            target = vault_file(layout, layout.trash_dir / LEFTOVERS / f"{layout.relative(note)}.{pid}.bak")
            target.parent.mkdir(parents=True, exist_ok=True)
            while target.exists():
                target = target.with_name(f"{target.name[:-4]}-1.bak")
            os.rename(source, target)
        except (OSError, PathError):
            continue
        import logging  # rare: a no-change `index` (which reads the catalog through here) imports none of it

        logging.getLogger("memvault").warning(
            "%s: left by a save that never finished or was overtaken (process %s); moved to %s (it may hold "
            "an editor's save: compare it with %s)", layout.relative(source), pid, layout.relative(target),
            layout.relative(note),
        )  # fmt: skip
        moved.append(target)
    return moved


def _put_in_place(tmp: Path, path: Path, expect: str | None, held: Held | None) -> None:
    """Rename `tmp` over `path`, only if `path` still holds the bytes memvault read (`expect`, their
    sha256; ABSENT: no file; None: no check), proven untouched up to the swap (`vault.swap`): `held` is
    the note as it was held while read, else it is held here and its bytes compared with `expect`."""
    if expect is None:
        os.replace(tmp, path)
    elif expect != ABSENT:
        if held is not None:
            swap_in(tmp, path, held)
            return
        with holding(path) as now:
            if now is None:
                raise ChangedMeanwhile(f"{path}: removed while memvault was writing it")
            if hashlib.sha256(read_held(now)).hexdigest() != expect:
                raise ChangedMeanwhile(f"{path}: changed while memvault was writing it")
            swap_in(tmp, path, now)
    else:
        _create(tmp, path)


def _create(tmp: Path, path: Path) -> None:
    changed = ChangedMeanwhile(f"{path}: created while memvault was writing it")
    try:
        os.link(tmp, path)  # fails when the note appeared meanwhile
    except FileExistsError:
        raise changed from None
    except OSError:  # a file system without hard links (FAT, some network shares): check, then rename
        if os.path.lexists(path):
            raise changed from None
        os.replace(tmp, path)
        return
    tmp.unlink()


def atomic_write(
    path: Path, data: bytes, expect: str | None = None, new_mode: int = 0o644, held: Held | None = None
) -> None:
    """Write to a temp file in the same folder, fsync, rename over the target, fsync the folder.

    A crash leaves either the old note or the new one, never a torn mix. `expect`: the sha256 of the
    version this write replaces (`TextFile.sha256`), or ABSENT; a note that is no longer that version
    is left as it is and `ChangedMeanwhile` raised. A file replaced keeps its mode; a new one gets `new_mode`.
    A note that cannot be written (`unwritable`) is `NoteWriteError` naming it, not its temp file.
    """
    try:
        _atomic_write(path, data, expect, new_mode, held)
    except OSError as exc:
        refusal = unwritable(exc, path)
        if refusal is None:
            raise
        raise refusal from exc


def _atomic_write(path: Path, data: bytes, expect: str | None, new_mode: int, held: Held | None) -> None:
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    ours = os.fstat(fd).st_ino
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        before_write(path, data, None if expect == ABSENT else (expect or ""))
        _put_in_place(tmp, path, expect, held)
    except BaseException:
        _drop_ours(tmp, path, ours)
        raise
    remember_ours(path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _drop_ours(tmp: Path, path: Path, ours: int) -> None:
    """Remove the temp file of a write that did not happen, if it is still memvault's version; a version
    a failed swap left under its name is someone's save, kept for the trash (`vault.swap.keep`)."""
    try:
        there = os.lstat(tmp).st_ino
    except FileNotFoundError:
        return
    if there == ours:
        tmp.unlink()
    else:
        keep(path, tmp)


def update_note(
    layout: Layout,
    path: Path,
    change: Callable[[TextFile | None], str],
    tries: int = TRIES,
) -> str:
    """Read-modify-write one note under the vault lock; `change` gets None for a new note.

    The result is encoded the way the note already was, so a UTF-8-with-BOM or UTF-16 note stays so.
    Written only over the version read: when a person's editor saves the note meanwhile, `change` is
    applied again to what the editor saved (up to `tries` times), so neither side's lines are lost.
    A result over the note size limit (which could not be read back) is refused before writing.
    """
    rel = layout.relative(path)
    vault_file(layout, path, rel)
    with vault_lock(layout, sweep=path.parent):
        return until_whole(rel, lambda: _update_once(layout, path, rel, change), tries)


def until_whole(rel: str, attempt: Callable[[], T], tries: int = TRIES) -> T:
    """`attempt` again while the note it read changed meanwhile (`ChangedMeanwhile`), up to `tries` times."""
    last = None
    for _ in range(tries):
        try:
            return attempt()
        except ChangedMeanwhile as exc:
            last = exc
    raise kept_changing(rel, last, tries)


@contextmanager
def held_note(layout: Layout | None, path: Path, rel: str) -> Iterator[tuple[TextFile | None, Held | None]]:
    """The note read while it is held (`vault.swap.holding`): a whole save, not an in-place save's empty
    or partial file; (None, None) when there is no note. `still_whole` tells later whether it still is.
    `layout`: the vault whose path rule it must pass (None: a path the vault's walk has just checked)."""
    with holding(path) as held:
        current = read_note(path, rel, layout=layout) if held is not None else None
        if held is not None and current is not None:
            held.sha256 = current.sha256
            still_whole(held, path, rel)
        yield current, held


def still_whole(held: Held | None, path: Path, rel: str) -> None:
    """What was read is still the note (nobody replaced it, wrote into it or opened it for writing since),
    so what was decided on it may be told; `ChangedMeanwhile` otherwise, and the next pass reads again."""
    if held is not None and not (names(held, path) and untouched(held)):
        raise ChangedMeanwhile(f"{rel}: changed while memvault was reading it")


def _update_once(layout: Layout, path: Path, rel: str, change: Callable[[TextFile | None], str]) -> str:
    """One pass: an answer decided on what was read (nothing to change, or an error such as "no entry")
    is given only if that read is still the note; else `ChangedMeanwhile` and the next pass reads again."""
    with held_note(layout, path, rel) as (current, held):
        try:
            new_text = change(current)
        except MemvaultError:
            still_whole(held, path, rel)
            raise
        if current is not None and new_text == current.text:
            still_whole(held, path, rel)
            return new_text  # nothing changed: no write, so no mtime change and no reindex
        data = (current or TextFile("")).encode(new_text)
        if len(data) > MAX_NOTE_BYTES:  # it could not be read again: refused, nothing written
            raise UsageError(f"{rel} would be {len(data):,} bytes, over the {MAX_NOTE_BYTES:,}-byte note "
                             "limit; nothing written (move some of it to another note)")  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, current.sha256 if current else ABSENT, held=held)
        return new_text


def kept_changing(rel: str, last: ChangedMeanwhile | None = None, tries: int = TRIES) -> ChangedMeanwhile:
    why = f"; last: {str(last).partition(': ')[2]}" if last is not None else ""
    return ChangedMeanwhile(f"{rel} kept changing while memvault wrote it ({tries} tries{why}): nothing written; "
                            "save again once the editor is done")  # fmt: skip
