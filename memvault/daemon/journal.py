"""Exactly-once write verbs across a daemon's death: what each identified request changed, and its reply.

A client gives every write request an id (`request_id` on the wire). The daemon notes the request
when it starts, each file the verb is about to change (`memvault.vault.effects`: the file's sha256
before and after), and the reply once the verb returns, before it re-indexes and answers. A client
whose daemon died on the way asks `earlier` before running the verb itself:

- the reply was noted: it is the answer (the verb is not run again);
- nothing the verb was about to change is changed: it never took effect, and runs again;
- else it stopped part way (or after its writes): it is not run again, and the error names what it
  had already written, so a line locator (`forget MEMORY.md:14`) never removes a second entry.

The journal is `.memvault/requests.sqlite`. It is needed for moments (a client asks it right after
its daemon went away), so a row goes `KEEP_S` after its request began; a reply can hold a note's
text (`extract`'s proposals), so a purge empties it (`scrub`), its deleted pages zeroed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvault.vault.effects import file_sha, watch
from memvault.vault.errors import MemvaultError
from memvault.vault.paths import Layout

KEEP_S = 600.0
SCHEMA = """CREATE TABLE IF NOT EXISTS requests (
    id TEXT PRIMARY KEY, op TEXT NOT NULL, started REAL NOT NULL, changes TEXT NOT NULL DEFAULT '[]', reply TEXT
)"""


class Interrupted(MemvaultError):
    """A write verb the daemon began and did not finish: it is not run a second time."""

    exit_code = 9


def journal_path(layout: Layout) -> Path:
    return layout.state_dir / "requests.sqlite"


class Journal:
    """The daemon's side: one connection, shared by its request threads under a lock."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._db = _connect(layout)
        self._lock = threading.Lock()

    @contextmanager
    def running(self, request_id: str, op: str) -> Iterator[None]:
        """Note the request, then every change the verb makes before it makes it."""
        with self._lock:
            now = time.time()
            self._db.execute("DELETE FROM requests WHERE started < ?", (now - KEEP_S,))
            self._db.execute("INSERT OR IGNORE INTO requests (id, op, started) VALUES (?, ?, ?)", (request_id, op, now))

        def changing(path: Path, now: str | None, after: str | None) -> None:
            change = [self.layout.relative(path), now, after]
            with self._lock:
                self._db.execute("UPDATE requests SET changes = json_insert(changes, '$[#]', json(?)) WHERE id = ?",
                                 (json.dumps(change), request_id))  # fmt: skip

        with watch(changing):
            yield

    def done(self, request_id: str, reply: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("UPDATE requests SET reply = ? WHERE id = ?", (json.dumps(reply), request_id))

    def earlier(self, request_id: str) -> dict[str, Any] | None:
        with self._lock:
            return _earlier(self.layout, self._db, request_id)

    def close(self) -> None:
        self._db.close()


def _connect(layout: Layout) -> sqlite3.Connection:
    db = sqlite3.connect(journal_path(layout), timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")  # a SIGKILL loses nothing written; a power cut takes the client too
    db.execute("PRAGMA secure_delete=ON")
    db.execute(SCHEMA)
    return db


def scrub(layout: Layout) -> None:
    """Forget every finished request, leaving no byte of their replies in a free page or the WAL (a
    purge does this: a reply can quote the purged text)."""
    if not journal_path(layout).is_file():
        return
    db = _connect(layout)
    try:
        db.execute("DELETE FROM requests WHERE reply IS NOT NULL")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def earlier(layout: Layout, request_id: str, stalled: bool = False) -> dict[str, Any] | None:
    """The client's side, after its daemon went away mid-request or (`stalled`) did not answer in time:
    the reply the daemon noted (an error reply too), None when the verb never took effect; `Interrupted`
    when it did in part, or when a stalled daemon that took it is still alive (it may yet finish it). A
    daemon that hung up is not asked after: dying, it may hold its lock a moment longer."""
    from memvault.daemon.files import read_pid

    path = journal_path(layout)
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error:
        return None
    try:
        return _earlier(layout, db, request_id, running=stalled and read_pid(layout) is not None)
    except sqlite3.Error:
        return None
    finally:
        db.close()


def _earlier(layout: Layout, db: sqlite3.Connection, request_id: str, running: bool = False) -> dict[str, Any] | None:
    row = db.execute("SELECT op, changes, reply FROM requests WHERE id = ?", (request_id,)).fetchone()
    if row is None:
        return None
    op, changes, reply = row
    if reply is not None:
        return json.loads(reply)
    if running:
        raise Interrupted(f"the daemon took {op} and has not answered in time; it is still running: not run here "
                          "(check with `memvault list` or `memvault trash` in a moment)")  # fmt: skip
    made = [rel for rel, now, after in json.loads(changes) if file_sha(layout.root / rel) != now]
    if not made:
        return None
    raise Interrupted(f"the daemon stopped in the middle of {op}, after it had changed {', '.join(made)}: not "
                      "run again (check with `memvault list` or `memvault trash` before you repeat it)")  # fmt: skip
