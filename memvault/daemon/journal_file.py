"""The request journal's SQLite file (`memvault.daemon.journal`): made, checked, read, set aside.

SQLite's own errors tell a damaged file (`DAMAGED`) from one that cannot be written (read-only, locked,
a full disk): the first is set aside under a recoverable name and started afresh, the second refused
in one line naming it (`JournalError`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any

from memvault.vault.errors import MemvaultError, NoteReadError
from memvault.vault.paths import Layout

log = logging.getLogger("memvault.daemon")
BUSY_S = 5.0  # how long a note waits for another process's lock on the journal (a client reads it in moments)
MAGIC = b"SQLite format 3\x00"
SIDECARS = ("", "-wal", "-shm")  # the journal's files: SQLite's write-ahead log and its index go with it
DAMAGED = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB: what a garbled file gives; any other error is "cannot write"
# a request's changes are rows of their own (a `clear` makes thousands: appended to one JSON text, they took
# 6 s of a 4,000-entry clear here); `requests.changes` holds those of a journal written before
SCHEMA = """CREATE TABLE IF NOT EXISTS requests (
    id TEXT PRIMARY KEY, op TEXT NOT NULL, started REAL NOT NULL, changes TEXT NOT NULL DEFAULT '[]', reply TEXT
);
CREATE TABLE IF NOT EXISTS changes (id TEXT NOT NULL, path TEXT NOT NULL, now TEXT, after TEXT);
CREATE INDEX IF NOT EXISTS changes_of ON changes (id)"""
PUT_ROW = "INSERT OR REPLACE INTO requests (id, op, started, reply) VALUES (?, ?, ?, ?)"
PUT_CHANGE = "INSERT INTO changes (id, path, now, after) VALUES (?, ?, ?, ?)"
FINISHED = "SELECT id FROM requests WHERE reply IS NOT NULL"


class JournalError(MemvaultError):
    """The request journal cannot be written (read-only, locked by another process, a full disk)."""

    exit_code = NoteReadError.exit_code  # a file memvault needs and cannot use


def journal_path(layout: Layout) -> Path:
    return layout.state_dir / "requests.sqlite"


def connect(path: Path, check: bool = False) -> sqlite3.Connection:
    """The journal, made when missing; `check` also reads every page (a small file: a few ms), so damage
    is found when it is opened rather than by a later write."""
    db = sqlite3.connect(path, timeout=BUSY_S, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")  # a SIGKILL loses nothing written; a power cut takes the client too
        db.execute("PRAGMA secure_delete=ON")
        db.executescript(SCHEMA)
        if check and (found := db.execute("PRAGMA quick_check").fetchone()[0]) != "ok":
            raise Malformed(f"database disk image is malformed: {found}")
    except BaseException:
        db.close()
        raise
    return db


def changes_of(db: sqlite3.Connection, request_id: str) -> list[list[Any]]:
    """A request's changes in the order they were made (those of a journal written before, first)."""
    (older,) = db.execute("SELECT changes FROM requests WHERE id = ?", (request_id,)).fetchone() or ("[]",)
    try:
        made = json.loads(older)
    except ValueError:
        raise Malformed(f"database disk image is malformed: request {request_id}") from None
    rows = db.execute("SELECT path, now, after FROM changes WHERE id = ? ORDER BY rowid", (request_id,))
    return [*made, *map(list, rows)]


def forget_finished(db: sqlite3.Connection) -> None:
    """Every finished request gone, no byte of it left in a free page (`secure_delete`) or the WAL."""
    db.execute(f"DELETE FROM changes WHERE id IN ({FINISHED})")
    db.execute("DELETE FROM requests WHERE reply IS NOT NULL")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class Malformed(sqlite3.DatabaseError):
    """What `quick_check` or a row found wrong: a damaged file, as SQLite's own SQLITE_CORRUPT."""

    sqlite_errorcode = 11


def code(exc: sqlite3.Error) -> int:
    return int(getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def unwritable(layout: Layout, exc: BaseException) -> JournalError:
    why = getattr(exc, "strerror", None) or str(exc)
    return JournalError(f"{journal_path(layout)}: the daemon's request journal cannot be written ({why}): "
                        "writes through the daemon are refused until it can")  # fmt: skip


def not_a_journal(path: Path) -> str | None:
    """Why what is at `path` cannot be a journal (None: nothing there, or a SQLite file, empty included)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if not stat.S_ISREG(st.st_mode):
        return "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            head = os.pread(fd, len(MAGIC), 0)
        finally:
            os.close(fd)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None if not head or head == MAGIC else "not a SQLite file"


def set_aside(layout: Layout, problem: str | None) -> None:
    """Move the damaged journal (`problem`), or the log and index of one deleted under us (None), to a
    name of its own: recoverable, and never read as a fresh journal's (a stale log would be replayed)."""
    path = journal_path(layout)
    here = [end for end in SIDECARS if os.path.lexists(f"{path}{end}")]
    if not here:
        return
    stamp = time.strftime("%Y%m%dT%H%M%S")
    names = (f"{path}.damaged-{stamp}" + (f"-{n}" if n else "") for n in range(1000))
    aside = next(name for name in names if not any(os.path.lexists(f"{name}{end}") for end in SIDECARS))
    try:
        for end in here:
            os.rename(f"{path}{end}", f"{aside}{end}")
    except OSError as exc:
        raise JournalError(f"{path}: {problem or 'its log left without it'}, and it cannot be set aside "
                           f"({exc.strerror or exc})") from None  # fmt: skip
    if problem:
        log.warning("%s: %s, not a request journal: set aside as %s, a fresh one started", path, problem, aside)


def remove_set_aside(layout: Layout) -> None:
    """The journals set aside may quote a note's text too: a purge takes them with it."""
    for old in layout.state_dir.glob("requests.sqlite.damaged-*"):
        with contextlib.suppress(OSError):
            old.unlink()
