"""Putting memvault's new version of a note in place of the version it read, and never over anyone else's.

Editors save a note in one of two ways while memvault may be writing it:
- by rename (write a temp file, rename it over the note): the note's name points at a new inode;
- in place (truncate, then write; a shell's `>`): the same inode changes, and the editor holds it open
  for writing from the truncate to its last write, so a reader in between sees an empty or partial file.

A check of the bytes just before memvault's rename sees neither a rename that lands after it nor an
in-place write into the inode it displaces, so the version read is *held* while it is replaced:
- a read lease (Linux `F_SETLEASE`) on the note: granted only while no process has the file open for
  writing, and broken by any later open for writing, so holding it from the check to after the swap
  proves no in-place save is under way or started (memvault waits while a program holds the note
  open for writing; a save that starts meanwhile makes memvault put the note back and try again);
- an atomic swap (`renameat2(RENAME_EXCHANGE)`, macOS `renamex_np(RENAME_SWAP)`), so the version
  displaced can be looked at after the swap and swapped back when it is not the one held; without a
  swap, the note is renamed aside and memvault's version linked in, then checked (`_swap_by_aside`).
Where no lease is granted (macOS, NFS, a note another user owns), the held version is compared by bytes,
size and modification time, and a note modified in the last `SETTLE` seconds is waited on first: the
best that can be done against an in-place save there, which only a lease can prove absent.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from memvault.vault.errors import MemvaultError
from memvault.vault.faults import crash_point, lacks

SETTLE = 0.25  # without a lease: a note modified this recently may be mid-save in place, so it is waited on
# with a lease: how long a displaced version is watched for an open that looked the name up before the swap
# (microseconds unless that program is descheduled), longer while another program has lately been
# opening the note for writing (an editor saving in place), when a busy machine can delay it that much
GRACE, CONTENDED_GRACE, CONTENDED_FOR = 0.005, 0.05, 60.0
_CONTENDED: dict[str, float] = {}  # path -> when a program was last seen opening it for writing
HOLD_WAIT = 2.0  # how long a program may hold the note open for writing before this try gives up
ASIDE = "aside"  # `.NAME.PID.aside`: the version read, renamed aside while memvault's is linked in
KEPT = "kept"  # `.NAME.PID.kept`: a version displaced that could not be put back; swept into the trash
_HELD: set[tuple[int, int]] = set()  # (device, inode) of the notes this process holds now
_OURS: dict[str, tuple[int, int, int]] = {}  # path -> (inode, mtime, size) memvault itself wrote last


class ChangedMeanwhile(MemvaultError):
    """The note is no longer the version memvault read (a person's editor saved it meanwhile): nothing
    was written over it."""


@dataclass
class Held:
    """A note's inode, open read-only (`fd`) and, where the system grants one, under a read lease, from
    before memvault reads it to after its own version is in place; `sha256`: the bytes read."""

    fd: int
    ino: int
    dev: int
    mtime_ns: int
    size: int
    leased: bool
    path: str = ""
    sha256: str = ""


def side_name(path: Path, kind: str) -> Path:
    return path.parent / f".{path.name}.{os.getpid()}.{kind}"


def _lease(fd: int) -> bool | None:
    """Take a read lease on `fd`: True when taken, None while a program has the file open for writing,
    False where leases are not granted (another OS, NFS, FUSE, a file another user owns). A lease broken
    by a writer's open signals its holder; SIGURG (ignored by default) is asked for, not SIGIO (fatal)."""
    if lacks("lease") or not hasattr(fcntl, "F_SETLEASE"):
        return False
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return None
        return False
    return True


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    return b"".join(iter(lambda: os.read(fd, 1 << 20), b""))


def read_whole(fd: int) -> bytes:
    """A regular file's bytes once no program has it open for writing (waiting up to `HOLD_WAIT`), read
    under a read lease so that a save starting meanwhile is seen: then it is read again. Where no lease
    is granted, read as it is."""
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) in _HELD:  # this process holds it (a write under way here): as it is
        return _read_fd(fd)
    deadline = time.monotonic() + HOLD_WAIT
    while (leased := _lease(fd)) is None and time.monotonic() < deadline:
        time.sleep(0.005)
    if not leased:
        return _read_fd(fd)
    try:
        while True:
            data = _read_fd(fd)
            if _leased(fd) or time.monotonic() > deadline:
                return data
            _unlease(fd)  # a writer opened it meanwhile: let it save, then read what it saved
            while _lease(fd) is None and time.monotonic() < deadline:
                time.sleep(0.005)
    finally:
        _unlease(fd)


@contextmanager
def holding(path: Path) -> Iterator[Held | None]:
    """Hold the note (`Held`; None when there is none) once no program has it open for writing: read it
    inside, and what was read is a whole save, and stays the note's until `untouched` says otherwise.
    `ChangedMeanwhile` when a program keeps it open for writing for over `HOLD_WAIT` seconds."""
    deadline = time.monotonic() + HOLD_WAIT
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except FileNotFoundError:
            yield None
            return
        wait, leased = _why_wait(fd, path)
        if wait is None:
            break
        os.close(fd)
        if time.monotonic() > deadline:
            raise ChangedMeanwhile(f"{path}: {wait} for over {HOLD_WAIT:.0f}s while memvault was writing it")
        time.sleep(0.01)
    st = os.fstat(fd)
    held = Held(fd, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_size, leased, str(path))
    _HELD.add((st.st_dev, st.st_ino))
    try:
        yield held
    finally:
        _HELD.discard((st.st_dev, st.st_ino))
        if held.leased:
            _unlease(fd)
        os.close(fd)


def _why_wait(fd: int, path: Path) -> tuple[str | None, bool]:
    """Why the note cannot be held yet (a writer has it open, or it was just modified and no lease can
    tell whether a save is under way), or None once it can; and whether a lease was granted (one broken
    the next moment is still one: `untouched` then says so, where a re-check would say "no lease")."""
    leased = _lease(fd)
    if leased is None:
        _CONTENDED[str(path)] = time.monotonic()
        return "held open for writing by another program", False
    if leased:
        return None, True
    st = os.fstat(fd)
    if _OURS.get(str(path)) == (st.st_ino, st.st_mtime_ns, st.st_size):
        return None, False  # memvault's own last write, untouched since
    if time.time_ns() - st.st_mtime_ns < SETTLE * 1e9:
        return "kept being modified", False
    return None, False


def read_held(held: Held) -> bytes:
    """The held inode's bytes (what `sha256` is then set from)."""
    data = _read_fd(held.fd)
    held.sha256 = hashlib.sha256(data).hexdigest()
    return data


def _leased(fd: int) -> bool:
    if lacks("lease") or not hasattr(fcntl, "F_GETLEASE"):
        return False
    try:
        return bool(fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK)
    except OSError:
        return False


def _unlease(fd: int) -> None:
    if hasattr(fcntl, "F_SETLEASE"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)


def untouched(held: Held) -> bool:
    """Nobody wrote into the held inode nor opened it for writing since it was checked: its lease was
    not broken, or (no lease) its size, modification time and bytes are those checked."""
    if held.leased:
        if _leased(held.fd):
            return True
        _CONTENDED[held.path] = time.monotonic()
        return False
    st = os.fstat(held.fd)
    if (st.st_mtime_ns, st.st_size) != (held.mtime_ns, held.size):
        return False
    return hashlib.sha256(_read_fd(held.fd)).hexdigest() == held.sha256


def names(held: Held, path: Path) -> bool:
    """`path` is the inode held (not another version a rename put there)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    return (st.st_ino, st.st_dev) == (held.ino, held.dev)


def remember_ours(path: Path) -> None:
    """Note the version memvault just put in place, so (without a lease) its next write of the note does
    not wait `SETTLE` on a modification time that is its own."""
    try:
        st = os.stat(path)
    except OSError:
        return
    _OURS[str(path)] = (st.st_ino, st.st_mtime_ns, st.st_size)


@cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically: Linux renameat2 RENAME_EXCHANGE, macOS renamex_np RENAME_SWAP. False
    where the system or the file system cannot (and the caller renames aside instead)."""
    import ctypes

    if lacks("exchange"):
        return False
    libc = _libc()
    if (renameat2 := getattr(libc, "renameat2", None)) is not None:
        done = renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2)  # AT_FDCWD, RENAME_EXCHANGE
    elif (renamex_np := getattr(libc, "renamex_np", None)) is not None:
        done = renamex_np(os.fsencode(a), os.fsencode(b), 2)  # RENAME_SWAP
    else:
        return False
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    if code == errno.ENOENT:
        raise ChangedMeanwhile(f"{b}: removed while memvault was writing it")
    raise OSError(code, os.strerror(code), str(b))


def keep(path: Path, displaced: Path) -> None:
    """A displaced version that could not be put back (a second save replaced memvault's meanwhile) is
    never deleted: it is renamed `.NAME.PID-N.kept`, which the next write's sweep moves into the trash."""
    n = 0
    while os.path.lexists(target := path.parent / f".{path.name}.{os.getpid()}-{n}.{KEPT}"):
        n += 1
    os.rename(displaced, target)


def swap_in(tmp: Path, path: Path, held: Held) -> None:
    """Put `tmp` (memvault's version) at `path` only if `path` still names the version held, untouched
    from its read to after the swap; `ChangedMeanwhile` otherwise, with `tmp` removed (or, when it holds
    a version displaced that could not be put back, kept) and nobody's version lost."""
    changed = ChangedMeanwhile(f"{path}: changed while memvault was writing it")
    if not (names(held, path) and untouched(held)):
        raise changed
    ours = _hold_ours(tmp)
    try:
        if not exchange(tmp, path):
            _swap_by_aside(tmp, path, held, ours)
            return
        crash_point("note-swapped")
        if names(held, tmp) and untouched(held):
            _retire(path, tmp, held, ours)
            return
        if _names(ours, path):  # the version displaced back in place, ours out again
            exchange(tmp, path)
            tmp.unlink()
        else:  # a rename-style save replaced ours meanwhile: it stays, and what ours displaced is kept
            keep(path, tmp)
        raise changed
    finally:
        _unlease(ours[0])
        os.close(ours[0])


def _hold_ours(tmp: Path) -> tuple[int, int, bool]:
    """memvault's version open read-only, under a read lease too where one is granted: (fd, inode,
    leased). A program that opens the note once ours is in place breaks that lease."""
    fd = os.open(tmp, os.O_RDONLY | os.O_NOCTTY | os.O_CLOEXEC)
    return fd, os.fstat(fd).st_ino, bool(_lease(fd))


def _names(ours: tuple[int, int, bool], path: Path) -> bool:
    try:
        return os.lstat(path).st_ino == ours[1]
    except FileNotFoundError:
        return False


def _retire(path: Path, displaced: Path, held: Held, ours: tuple[int, int, bool]) -> None:
    """Remove the version displaced once no program can still be opening it. An open that looked the
    note's name up just before the swap reaches the displaced inode a moment later, past any check, so
    with a lease memvault waits `GRACE` and looks again: a lease broken by then means a program is
    opening the displaced version to write it, which goes back in place (ours out, to be applied again
    to what the program saves) unless a program opened ours too; then ours stays and theirs is kept."""
    if held.leased:
        time.sleep(_grace(path))
        if not untouched(held):
            if ours[2] and _leased(ours[0]) and _put_back_displaced(path, displaced, ours):
                raise ChangedMeanwhile(f"{path}: opened for writing while memvault was writing it")
            keep(path, displaced)
            return
    displaced.unlink()


def _grace(path: Path) -> float:
    seen = _CONTENDED.get(str(path))
    return CONTENDED_GRACE if seen is not None and time.monotonic() - seen < CONTENDED_FOR else GRACE


def _put_back_displaced(path: Path, displaced: Path, ours: tuple[int, int, bool]) -> bool:
    """The displaced version back at `path` in place of ours, only while `path` still names ours; True
    when done (ours removed)."""
    if exchange(displaced, path):
        if _names(ours, displaced):
            displaced.unlink()
            return True
        exchange(displaced, path)  # a save replaced ours meanwhile: it goes back, and it stays
        return False
    away = side_name(path, "tmp")  # a crash leaves it to the sweep, as any temp file
    os.rename(path, away)
    if os.lstat(away).st_ino != ours[1]:
        _put_back(away, path)
        return False
    _put_back(displaced, path)
    if os.path.lexists(displaced):  # kept: a save created the name in the gap
        return False
    away.unlink()
    return True


def _swap_by_aside(tmp: Path, path: Path, held: Held, ours: tuple[int, int, bool]) -> None:
    """The swap without an atomic exchange: rename the note aside and link ours in at once (which fails
    if a save created the note meanwhile), then check that what went aside is the version held; when it
    is not, it goes back in place of ours. The name is absent only between those two system calls, so a
    program opening it then finds no file for a few microseconds; a crash there leaves the version read
    aside, which the next write puts back (`fileio.sweep_leftovers`)."""
    aside = side_name(path, ASIDE)
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        raise ChangedMeanwhile(f"{path}: removed while memvault was writing it") from None
    crash_point("note-aside")
    changed = ChangedMeanwhile(f"{path}: changed while memvault was writing it")
    try:
        os.link(tmp, path)
    except OSError as exc:  # a save landed in the gap; or no hard links here (FAT, some network shares)
        if isinstance(exc, FileExistsError) or os.path.lexists(path):
            if names(held, aside) and untouched(held):  # that save stays, and is newer than the read
                aside.unlink()
            else:
                keep(path, aside)
            raise changed from None
        os.rename(tmp, path)  # the narrowest check, then rename
    else:
        tmp.unlink()
    if not names(held, aside) or not (held.leased or untouched(held)):  # a save just before: it goes
        if not _put_back_displaced(path, aside, ours) and os.path.lexists(aside):  # back, or is kept
            keep(path, aside)
        raise changed
    _retire(path, aside, held, ours)


def _put_back(aside: Path, path: Path) -> None:
    """The version renamed aside back at its name, unless a save created the name meanwhile (then that
    save is newest and the one aside is kept)."""
    try:
        os.link(aside, path)
    except FileExistsError:
        keep(path, aside)
        return
    except OSError:
        if os.path.lexists(path):
            keep(path, aside)
        else:
            os.rename(aside, path)
        return
    aside.unlink()
