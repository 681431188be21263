"""Exactly-once write verbs across a daemon's death: what each identified request changed, and its reply.

A client gives every write request an id (`request_id` on the wire). The daemon notes the request
when it starts, each file the verb is about to change (`memvault.vault.effects`: the file's sha256
before and after), and the reply once the verb returns, before it re-indexes and answers. A client
whose daemon died on the way asks `earlier` before running the verb itself:

- the reply was noted: it is the answer (the verb is not run again);
- nothing the verb was about to change is changed: it never took effect, and runs again;
- else it stopped part way (or after its writes): it is not run again, and the error names what it
  had already written, so a line locator (`forget MEMORY.md:14`) never removes a second entry;
- the journal is not there or cannot be read: nothing tells, so it is not run again either.

The journal is `.memvault/requests.sqlite`. The daemon keeps its rows in memory too, and before each
note it checks that the file at that path is still the one it opened and still a SQLite file: one
deleted, replaced or garbled under it is started afresh from those rows (a damaged one set aside as
`requests.sqlite.damaged-TIME`), so a client never finds the record of a write it made gone. One
that cannot be written (read-only, locked by another process) refuses the write with one line naming
it (`JournalError`): a write not noted could not be told apart from one never run.

It is needed for moments (a client asks it right after its daemon went away), so a row goes `KEEP_S`
after its request began; a reply can hold a note's text (`extract`'s proposals), so a purge empties it
(`scrub`), its deleted pages zeroed, and removes the copies set aside.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvault.daemon.journal_file import (
    DAMAGED,
    MAGIC,
    PUT_CHANGE,
    PUT_ROW,
    SIDECARS,
    JournalError,
    changes_of,
    code,
    connect,
    forget_finished,
    journal_path,
    not_a_journal,
    remove_set_aside,
    set_aside,
    unwritable,
)
from memvault.vault.effects import file_sha, watch
from memvault.vault.errors import MemvaultError
from memvault.vault.paths import Layout

__all__ = ["Interrupted", "Journal", "JournalError", "decide", "earlier", "journal_path", "scrub"]
log = logging.getLogger("memvault.daemon")
KEEP_S = 600.0


class Interrupted(MemvaultError):
    """A write verb the daemon began and did not finish: it is not run a second time."""

    exit_code = 9


class _Row:
    """One request as the daemon holds it: what the file says, kept where deleting the file cannot reach."""

    __slots__ = ("changes", "op", "reply", "started")

    def __init__(self, op: str, started: float, changes: list[list[Any]], reply: str | None) -> None:
        self.op, self.started, self.changes, self.reply = op, started, changes, reply

    def values(self, request_id: str) -> tuple[str, str, float, str | None]:
        return request_id, self.op, self.started, self.reply


class Journal:
    """The daemon's side: its rows in memory and in the file, shared by its request threads under a lock."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.path = journal_path(layout)
        self._lock = threading.Lock()
        self._rows: dict[str, _Row] = {}
        self._running: set[str] = set()  # requests between `running` and its end: asked again, not run twice
        self._db: sqlite3.Connection | None = None
        self._fd: int | None = None  # the journal's file, kept open: is the one at its path still it?
        with self._lock:
            try:
                self._open()
            except JournalError as exc:  # reads need no journal; each write tries again, and says why it cannot
                log.warning("%s", exc)

    @contextmanager
    def running(self, request_id: str, op: str) -> Iterator[None]:
        """Note the request, then every change the verb makes before it makes it; `JournalError` (the
        verb not run, or stopped before that change) when the note cannot be written."""
        with self._lock:
            now = time.time()
            self._prune(now)
            fresh = request_id not in self._rows
            if fresh:
                self._rows[request_id] = _Row(op, now, [], None)
            try:
                self._persist(request_id)
            except JournalError:
                if fresh:
                    del self._rows[request_id]
                raise
            self._running.add(request_id)

        def changing(path: Path, now: str | None, after: str | None) -> None:
            change = [self.layout.relative(path), now, after]
            with self._lock:
                self._rows[request_id].changes.append(change)
                self._persist(request_id, change)

        try:
            with watch(changing):
                yield
        finally:
            with self._lock:
                self._running.discard(request_id)

    def done(self, request_id: str, reply: dict[str, Any]) -> None:
        """Note the reply. It is still sent when the file cannot take it: the client that waits for it is
        alive; only its record for a daemon that dies before answering is lost, and that is logged."""
        with self._lock:
            row = self._rows.get(request_id)
            if row is None:
                return
            row.reply = json.dumps(reply)
            try:
                self._persist(request_id)
            except JournalError as exc:
                log.warning("%s; the reply to %s is sent but not noted", exc, row.op)

    def earlier(self, request_id: str) -> dict[str, Any] | None:
        """What a request sent again is answered with (`decide`); one still running here is not run twice."""
        with self._lock:
            row = self._rows.get(request_id)
            if row is None:
                return None
            return decide(self.layout, row.op, row.changes, row.reply, running=request_id in self._running)

    def scrub(self) -> None:
        """`scrub` with this daemon's journal open: the replies it holds in memory go too."""
        with self._lock:
            self._rows = {k: row for k, row in self._rows.items() if row.reply is None}
            db = self._checked()
            try:
                forget_finished(db)
            except sqlite3.Error as exc:
                raise unwritable(self.layout, exc) from None
        remove_set_aside(self.layout)

    def close(self) -> None:
        with self._lock:
            self._close()

    # the file -------------------------------------------------------------
    def _persist(self, request_id: str, change: list[Any] | None = None) -> None:
        """Write one row as it is in memory, or add its latest `change`; a file damaged meanwhile is set
        aside and every row written to a fresh one (this row with them)."""
        db = self._checked()
        try:
            if change is None:
                db.execute(PUT_ROW, self._rows[request_id].values(request_id))
            else:
                db.execute(PUT_CHANGE, (request_id, *change))
        except sqlite3.DatabaseError as exc:
            if code(exc) not in DAMAGED:
                raise unwritable(self.layout, exc) from None
            self._open(damaged=str(exc))

    def _prune(self, now: float) -> None:
        old = [k for k, row in self._rows.items() if row.started < now - KEEP_S and k not in self._running]
        for k in old:
            del self._rows[k]
        if old and self._db is not None:
            with contextlib.suppress(sqlite3.Error):  # what is left is pruned by the next request
                self._db.execute("DELETE FROM changes WHERE id IN (SELECT id FROM requests WHERE started < ?)",
                                 (now - KEEP_S,))  # fmt: skip
                self._db.execute("DELETE FROM requests WHERE started < ?", (now - KEEP_S,))

    def _checked(self) -> sqlite3.Connection:
        """The open journal while the file at its path is still the one opened and still a SQLite file;
        else the file there now, or a fresh one, with every row this daemon holds (`_open`)."""
        if self._db is not None and self._fd is not None and self._intact():
            return self._db
        return self._open()

    def _intact(self) -> bool:
        assert self._fd is not None
        try:
            here, ours = os.lstat(self.path), os.fstat(self._fd)
            head = os.pread(self._fd, len(MAGIC), 0)
        except OSError:
            return False
        return (here.st_dev, here.st_ino) == (ours.st_dev, ours.st_ino) and head == MAGIC

    def _open(self, damaged: str | None = None) -> sqlite3.Connection:
        """Start on the file at the journal's path: `damaged` (or found so) set aside first; the rows it
        holds taken in, then every row this daemon holds written to it."""
        self._close()
        problem = damaged or not_a_journal(self.path)
        if problem or not self.path.exists():
            set_aside(self.layout, problem)
        try:
            db = connect(self.path, check=True)
            try:
                self._take_in(db)
                self._fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except BaseException:
                db.close()
                raise
        except sqlite3.DatabaseError as exc:
            if code(exc) not in DAMAGED or damaged is not None:  # (a fresh file damaged at once: not ours to mend)
                raise unwritable(self.layout, exc) from None
            return self._open(damaged=str(exc))
        except OSError as exc:
            raise unwritable(self.layout, exc) from None
        self._db = db
        return db

    def _take_in(self, db: sqlite3.Connection) -> None:
        """One transaction: the file's recent rows into memory, then every row in memory into the file
        (a client that reads it meanwhile sees it before or after, never without a request's changes)."""
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            rows = db.execute("SELECT id, op, started, reply FROM requests WHERE started >= ?", (now - KEEP_S,))
            for request_id, op, started, reply in rows.fetchall():
                if request_id not in self._rows:
                    self._rows[request_id] = _Row(op, started, changes_of(db, request_id), reply)
            db.execute("DELETE FROM requests WHERE started < ?", (now - KEEP_S,))
            db.execute("DELETE FROM changes")
            db.executemany(PUT_ROW, [row.values(k) for k, row in self._rows.items()])
            db.executemany(PUT_CHANGE, [(k, *change) for k, row in self._rows.items() for change in row.changes])
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def scrub(layout: Layout) -> None:
    """Forget every finished request, leaving no byte of their replies in a free page or the WAL (a
    purge does this: a reply can quote the purged text); a journal that is none is removed with them."""
    path = journal_path(layout)
    if not_a_journal(path) is not None:
        for end in SIDECARS:
            with contextlib.suppress(OSError):
                os.unlink(f"{path}{end}")
    elif path.is_file():
        try:
            db = connect(path)
            try:
                forget_finished(db)
            finally:
                db.close()
        except sqlite3.DatabaseError as exc:
            if code(exc) not in DAMAGED:
                raise unwritable(layout, exc) from None
            for end in SIDECARS:
                with contextlib.suppress(OSError):
                    os.unlink(f"{path}{end}")
    remove_set_aside(layout)


def earlier(layout: Layout, request_id: str, stalled: bool = False) -> dict[str, Any] | None:
    """The client's side, after its daemon went away mid-request or (`stalled`) did not answer in time:
    the reply the daemon noted (an error reply too), None when the verb never took effect; `Interrupted`
    when it did in part, when a stalled daemon that took it is still alive (it may yet finish it), or when
    the journal is gone or cannot be read (nothing tells whether it took effect). A daemon that hung up is
    not asked after: dying, it may hold its lock a moment longer."""
    from memvault.daemon.files import read_pid

    path = journal_path(layout)
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, timeout=30)  # rw: it may recover the WAL
        try:
            row = db.execute("SELECT op, reply FROM requests WHERE id = ?", (request_id,)).fetchone()
            changes = changes_of(db, request_id) if row else []
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise Interrupted(f"{path}: the daemon went away before answering and its request journal cannot be read "
                          f"({exc}): whether the write took effect is unknown, so it is not run here (check with "
                          "`memvault list` or `memvault trash` before you repeat it)") from None  # fmt: skip
    if row is None:
        return None
    op, reply = row
    return decide(layout, op, changes, reply, running=stalled and read_pid(layout) is not None)


def decide(layout: Layout, op: str, changes: list[list[Any]], reply: str | None, running: bool = False
           ) -> dict[str, Any] | None:  # fmt: skip
    """A request's noted reply; None when none of its changes is on disk (it never took effect), else
    `Interrupted`."""
    if reply is not None:
        return json.loads(reply)
    if running:
        raise Interrupted(f"the daemon took {op} and has not answered in time; it is still running: not run here "
                          "(check with `memvault list` or `memvault trash` in a moment)")  # fmt: skip
    made = [rel for rel, now, after in changes if file_sha(layout.root / rel) != now]
    if not made:
        return None
    raise Interrupted(f"the daemon stopped in the middle of {op}, after it had changed {', '.join(made)}: not "
                      "run again (check with `memvault list` or `memvault trash` before you repeat it)")  # fmt: skip
