"""The SQLite manifest: what is indexed, from which file version, plus the embedding cache.

It is written last in every reconcile step, so after a crash it describes a
state no newer than the stores; the next reconcile redoes whatever is newer.
A manifest with another schema version is recreated, never misread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from indexer.vectors import StoreError
from vault.model import Chunk

log = logging.getLogger("memvault")
SCHEMA_VERSION = "1"
CACHE_CAP = 200_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    status TEXT NOT NULL, error TEXT, chunks INTEGER NOT NULL DEFAULT 0, indexed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, heading TEXT NOT NULL, section TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, content_hash TEXT NOT NULL, text TEXT NOT NULL,
    payload TEXT NOT NULL, tokens TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS embed_cache (
    model TEXT NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL, used REAL NOT NULL,
    PRIMARY KEY (model, content_hash));
CREATE INDEX IF NOT EXISTS embed_cache_used ON embed_cache(used);
"""
# when an entry was last in a search's hits, by `vault.entries.entry_key`: usage, never written into the notes
_RECALLS = "CREATE TABLE IF NOT EXISTS recalls (entry TEXT PRIMARY KEY, last REAL NOT NULL, count INTEGER NOT NULL)"


@dataclass(frozen=True)
class FileRow:
    path: str
    sha256: str
    size: int
    mtime_ns: int
    status: str  # indexed | failed | pending
    error: str | None
    chunks: int
    indexed_at: float


@dataclass(frozen=True)
class ChunkRow:
    """A chunk as indexed: enough to render a hit without reopening the note."""

    id: str
    path: str
    heading: tuple[str, ...]
    section: str
    start_line: int
    end_line: int
    content_hash: str
    text: str
    payload: dict[str, Any]


class IndexUnavailable(StoreError):
    """The index cannot answer (missing, corrupt, other schema); readers fall back, writers rebuild."""


class Manifest:
    """One open SQLite database in WAL mode; `created` says it was created or recreated by this process."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = path
        self.created = False
        self.damaged = False  # it was unreadable and has been recreated (and said so)
        self._ino: tuple[int, int] | None = None
        if not create and not path.exists():
            raise IndexUnavailable(f"{path.parent}: no index yet; run `memvault index`")
        try:
            self._open(create)
            if self.get_meta("schema") != SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"schema {self.get_meta('schema')!r}, expected {SCHEMA_VERSION!r}")
            if create and not self.created:
                self._check()
        except sqlite3.DatabaseError as exc:
            if not create:
                raise IndexUnavailable(f"{path}: unreadable manifest ({exc}); run `memvault index`") from None
            log.warning(f"{path}: unreadable manifest ({exc}); rebuilding the index")
            self.damaged = True
            self.recreate()

    def _open(self, create: bool = True) -> None:
        fresh = create and not self.path.exists()
        uri = f"file:{self.path}" + ("" if create else "?mode=rw")
        self.db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if fresh:
            self.db.executescript(_SCHEMA)
            self.set_meta("schema", SCHEMA_VERSION)
            self.created = True
        if create:  # added after schema 1: a writer adds it to an older manifest, readers do without
            self.db.execute(_RECALLS)
        self._ino = self._inode()

    def _check(self) -> None:
        """A writer reads every page once at open: a garbled page in a table it would not touch
        (chunk texts, the embedding cache) must be found now, not by the next search."""
        found = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]
        if found != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {' '.join(found.split())[:200]}")
        bad = self.db.execute("SELECT COUNT(*) FROM chunks WHERE NOT json_valid(tokens) OR NOT json_valid(payload)")
        count = bad.fetchone()[0]
        if count:  # the token counts BM25 is rebuilt from, or the filter payloads
            raise sqlite3.DatabaseError(f"{count} chunk rows hold unreadable JSON")

    def _inode(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return st.st_dev, st.st_ino

    def replaced(self) -> bool:
        """True when the file at `path` is no longer the one this connection writes to (it was
        deleted or swapped under a long-running daemon, whose writes would then go nowhere)."""
        return self._inode() != self._ino

    def recreate(self) -> None:
        """Start over with an empty manifest (it broke); `created` says so."""
        with contextlib.suppress(AttributeError, sqlite3.Error):
            self.db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self._open()

    def close(self) -> None:
        self.db.close()

    # meta ---------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # files --------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        return {r[0]: FileRow(*r) for r in self.db.execute("SELECT * FROM files")}

    def chunk_ids(self, path: str | None = None) -> list[str]:
        if path is None:
            return [r[0] for r in self.db.execute("SELECT id FROM chunks")]
        return [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE path=?", (path,))]

    def record_file(
        self,
        path: str,
        sha: str,
        size: int,
        mtime_ns: int,
        chunks: Sequence[Chunk],
        payloads: Sequence[dict[str, Any]],
        tokens: Sequence[dict[str, int]],
    ) -> None:
        """Replace a file's chunks and mark it indexed, in one transaction."""
        with self._transaction():
            self.db.execute("DELETE FROM chunks WHERE path=?", (path,))
            self.db.executemany(
                "INSERT OR REPLACE INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        c.id,
                        c.path,
                        json.dumps(c.heading, ensure_ascii=False),
                        c.section,
                        c.start_line,
                        c.end_line,
                        c.content_hash,
                        c.text,
                        json.dumps(p, ensure_ascii=False),
                        json.dumps(t, ensure_ascii=False),
                    )
                    for c, p, t in zip(chunks, payloads, tokens, strict=True)
                ],
            )
            self.db.execute(
                "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
                (path, sha, size, mtime_ns, "indexed", None, len(chunks), time.time()),
            )

    def record_failure(self, path: str, size: int, mtime_ns: int, sha: str, error: str) -> None:
        """A file that cannot be indexed keeps no chunks; its reason is kept for `status`."""
        with self._transaction():
            self.db.execute("DELETE FROM chunks WHERE path=?", (path,))
            self.db.execute(
                "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
                (path, sha, size, mtime_ns, "failed", error, 0, time.time()),
            )

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Same content, new mtime (a `touch`, a checkout): remember the stat so the hash is not redone."""
        self.db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (size, mtime_ns, path))

    def forget_file(self, path: str) -> None:
        with self._transaction():
            self.db.execute("DELETE FROM chunks WHERE path=?", (path,))
            self.db.execute("DELETE FROM files WHERE path=?", (path,))

    def invalidate(self, paths: Iterable[str]) -> None:
        """Force these files to be re-read by the next reconcile (their stores disagreed with us)."""
        self.db.executemany("UPDATE files SET sha256='', mtime_ns=-1 WHERE path=?", [(p,) for p in paths])

    def clear(self) -> None:
        """Forget every file and chunk (a rebuild); the embedding cache stays, keyed by model."""
        with self._transaction():
            self.db.execute("DELETE FROM chunks")
            self.db.execute("DELETE FROM files")

    # chunks -------------------------------------------------------------
    def iter_chunks(self, with_tokens: bool = True) -> Iterator[tuple[str, dict[str, Any], dict[str, int] | None]]:
        """(id, payload, token counts) for every chunk: what BM25 and filters need at start."""
        query = "SELECT id, payload, tokens FROM chunks" if with_tokens else "SELECT id, payload, NULL FROM chunks"
        for chunk_id, payload, tokens in self.db.execute(query):
            try:
                yield chunk_id, json.loads(payload), json.loads(tokens) if tokens is not None else None
            except ValueError:
                raise sqlite3.DatabaseError(f"{self.path}: chunk {chunk_id} holds unreadable JSON") from None

    def iter_texts(self) -> Iterator[tuple[str, str]]:
        yield from self.db.execute("SELECT id, text FROM chunks")

    def set_tokens(self, rows: Iterable[tuple[str, dict[str, int]]]) -> None:
        with self._transaction():
            self.db.executemany(
                "UPDATE chunks SET tokens=? WHERE id=?", [(json.dumps(t, ensure_ascii=False), i) for i, t in rows]
            )

    def get_chunks(self, ids: Sequence[str]) -> dict[str, ChunkRow]:
        out: dict[str, ChunkRow] = {}
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            for row in self.db.execute(
                "SELECT id, path, heading, section, start_line, end_line, content_hash, text, payload "
                f"FROM chunks WHERE id IN ({marks})",
                part,
            ):
                out[row[0]] = ChunkRow(
                    row[0],
                    row[1],
                    tuple(json.loads(row[2])),
                    row[3],
                    row[4],
                    row[5],
                    row[6],
                    row[7],
                    json.loads(row[8]),
                )
        return out

    def chunk_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    # embedding cache ----------------------------------------------------
    def cached_vectors(self, model: str, hashes: Sequence[str], touch: bool = True) -> dict[str, np.ndarray]:
        """Cached vectors by content hash; `touch` marks them used (a reader ranking hits does not)."""
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), 500):
            part = list(hashes[start : start + 500])
            marks = ",".join("?" * len(part))
            for content_hash, blob in self.db.execute(
                f"SELECT content_hash, vector FROM embed_cache WHERE model=? AND content_hash IN ({marks})",
                [model, *part],
            ):
                out[content_hash] = np.frombuffer(blob, dtype=np.float32)
        if out and touch:
            now = time.time()
            with self._transaction():
                self.db.executemany(
                    "UPDATE embed_cache SET used=? WHERE model=? AND content_hash=?", [(now, model, h) for h in out]
                )
        return out

    def cache_vectors(self, model: str, items: dict[str, np.ndarray], cap: int = CACHE_CAP) -> None:
        now = time.time()
        with self._transaction():
            self.db.executemany(
                "INSERT OR REPLACE INTO embed_cache VALUES (?,?,?,?)",
                [(model, h, np.asarray(v, dtype=np.float32).tobytes(), now) for h, v in items.items()],
            )
            excess = self.db.execute("SELECT COUNT(*) FROM embed_cache").fetchone()[0] - cap
            if excess > 0:  # least recently used first
                self.db.execute(
                    "DELETE FROM embed_cache WHERE rowid IN (SELECT rowid FROM embed_cache ORDER BY used LIMIT ?)",
                    (excess,),
                )

    def record_recalls(self, entries: Iterable[str], when: float) -> None:
        rows = [(e, when) for e in dict.fromkeys(entries)]
        if rows:
            with self._transaction():
                self.db.executemany("INSERT INTO recalls VALUES (?, ?, 1) ON CONFLICT(entry) DO UPDATE SET "
                                    "last=excluded.last, count=count+1", rows)  # fmt: skip

    def recalls(self) -> dict[str, tuple[float, int]]:
        """Entry key -> (last recalled, times), {} for a manifest no writer has opened since recalls began."""
        try:
            return {e: (last, n) for e, last, n in self.db.execute("SELECT entry, last, count FROM recalls")}
        except sqlite3.OperationalError:
            return {}

    def drop_unused_cache(self) -> int:
        """Forget every cached vector no chunk uses now: after a purge, the removed text's vector."""
        with self._transaction():
            cur = self.db.execute("DELETE FROM embed_cache WHERE content_hash NOT IN (SELECT content_hash FROM chunks)")
        return cur.rowcount

    def scrub(self) -> None:
        """Rewrite the database so no deleted row survives in a free page, the WAL or its tail: the
        last step of removing a text for good."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.execute("VACUUM")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _transaction(self):
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
