"""The embedding cache: vectors by (model, content hash), so each text is embedded once, ever.

It lives in a file of its own (`.memvault/embeddings.sqlite`), apart from the manifest, because it
outlives it: a manifest rebuilt (a new format, a corrupt file, `index --rebuild`) starts over from
the notes, and every text it meets again comes from here instead of the model. A cache that
cannot be read is started afresh: it only ever saves work.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from memvault.indexer.postings import select_in
from memvault.vault.logger import log

CACHE_CAP = 200_000
MAX_AGE_DAYS = 30  # seed 003: a vector no index has asked for in this long goes (it is embedded again if needed)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embed_cache (
    model TEXT NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL, used REAL NOT NULL,
    PRIMARY KEY (model, content_hash));
CREATE INDEX IF NOT EXISTS embed_cache_used ON embed_cache(used);
"""


class EmbedCache:
    def __init__(self, path: Path, create: bool = True, enabled: bool = True) -> None:
        self.path = path
        self.db: sqlite3.Connection | None = None
        if not enabled:
            return  # memvault.toml's `embedding_cache = false`: nothing kept, nothing looked up
        if not create and not path.exists():
            return  # a reader of an index built before the cache had a file of its own
        try:
            self._open(create)
        except sqlite3.DatabaseError as exc:
            if not create:
                return
            self._broken(exc)

    def _open(self, create: bool) -> None:
        uri = f"file:{self.path}" + ("" if create else "?mode=rw")
        self.db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if create:
            self.db.executescript(_SCHEMA)
        self.db.execute("SELECT 1 FROM embed_cache LIMIT 1").fetchall()

    def _broken(self, exc: Exception) -> None:
        log.warning(f"{self.path}: unreadable cache of vectors ({str(exc).splitlines()[0]}); starting it afresh")
        self.recreate()

    def recreate(self) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self._open(True)

    def close(self) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self.db = None

    def get(self, model: str, hashes: Sequence[str], touch: bool = True) -> dict[str, np.ndarray]:
        """Cached vectors by content hash; `touch` marks them used (a reader ranking hits does not).
        A cache found damaged here is started afresh (by a writer) or ignored (by a reader)."""
        try:
            return self._get(model, hashes, touch)
        except sqlite3.DatabaseError as exc:
            if touch:
                self._broken(exc)
            return {}

    def _get(self, model: str, hashes: Sequence[str], touch: bool) -> dict[str, np.ndarray]:
        import numpy as np

        out: dict[str, np.ndarray] = {}
        if self.db is None:
            return out
        sql = "SELECT content_hash, vector FROM embed_cache WHERE model=? AND content_hash IN ({marks})"
        for content_hash, blob in select_in(self.db, sql, list(hashes), model):
            out[content_hash] = np.frombuffer(blob, dtype=np.float32)
        if out and touch:
            now = time.time()
            with _transaction(self.db):
                self.db.executemany(
                    "UPDATE embed_cache SET used=? WHERE model=? AND content_hash=?", [(now, model, h) for h in out]
                )
        return out

    def put(self, model: str, items: dict[str, np.ndarray], cap: int = CACHE_CAP) -> None:
        try:
            self._put(model, items, cap)
        except sqlite3.DatabaseError as exc:
            self._broken(exc)
            self._put(model, items, cap)

    def _put(self, model: str, items: dict[str, np.ndarray], cap: int) -> None:
        import numpy as np

        if self.db is None or not items:
            return
        now = time.time()
        with _transaction(self.db):
            self.db.executemany(
                "INSERT OR REPLACE INTO embed_cache VALUES (?,?,?,?)",
                [(model, h, np.asarray(v, dtype=np.float32).tobytes(), now) for h, v in items.items()],
            )
            self.db.execute("DELETE FROM embed_cache WHERE used < ?", (now - MAX_AGE_DAYS * 86400,))
            excess = self.db.execute("SELECT COUNT(*) FROM embed_cache").fetchone()[0] - cap
            if excess > 0:  # least recently used first
                self.db.execute(
                    "DELETE FROM embed_cache WHERE rowid IN (SELECT rowid FROM embed_cache ORDER BY used LIMIT ?)",
                    (excess,),
                )

    def keep_only(self, live: Iterable[str]) -> int:
        """Forget every cached vector whose text no chunk holds now: after a purge, the removed text's."""
        if self.db is None:
            return 0
        with _transaction(self.db):
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS live (h TEXT PRIMARY KEY)")
            self.db.execute("DELETE FROM live")
            self.db.executemany("INSERT OR IGNORE INTO live VALUES (?)", [(h,) for h in live])
            cur = self.db.execute("DELETE FROM embed_cache WHERE content_hash NOT IN (SELECT h FROM live)")
            self.db.execute("DELETE FROM live")
        return cur.rowcount

    def scrub(self) -> None:
        """Rewrite the file so no deleted vector survives in a free page or the WAL."""
        if self.db is not None:
            scrub(self.db)

    def size(self) -> int:
        return 0 if self.db is None else self.db.execute("SELECT COUNT(*) FROM embed_cache").fetchone()[0]

    def clear(self) -> int:
        """Forget every vector (`memvault cache clear`), and leave none in a free page: the texts are
        embedded again as they are next indexed."""
        if self.db is None:
            return 0
        with _transaction(self.db):
            gone = self.db.execute("DELETE FROM embed_cache").rowcount
        self.scrub()
        return gone

    def adopt(self, old: sqlite3.Connection) -> int:
        """Take the vectors a manifest of the first format kept in its own `embed_cache` table."""
        if self.db is None:
            return 0
        try:
            rows = old.execute("SELECT model, content_hash, vector, used FROM embed_cache").fetchall()
        except sqlite3.DatabaseError:
            return 0
        with _transaction(self.db):
            self.db.executemany("INSERT OR IGNORE INTO embed_cache VALUES (?,?,?,?)", rows)
        return len(rows)


def cache_figures(path: Path) -> dict[str, Any]:
    """What `status` says of the cache, read without opening it for writing: its vectors, its files'
    bytes, and the day its least recently used vector was last asked for."""
    files = [Path(f"{path}{suffix}") for suffix in ("", "-wal", "-shm")]
    size = sum(f.stat().st_size for f in files if f.exists())
    if not path.exists():
        return {"vectors": 0, "bytes": 0, "oldest_use": None, "max_age_days": MAX_AGE_DAYS}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            count, oldest = db.execute("SELECT COUNT(*), MIN(used) FROM embed_cache").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return {"vectors": None, "bytes": size, "oldest_use": None, "max_age_days": MAX_AGE_DAYS}
    day = time.strftime("%Y-%m-%d", time.localtime(oldest)) if oldest else None
    return {"vectors": count, "bytes": size, "oldest_use": day, "max_age_days": MAX_AGE_DAYS}


def scrub(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection):
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
