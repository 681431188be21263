"""The SQLite manifest: what is indexed, from which file version: the files, their chunks (the
fields a hit shows and the filters read, each once, as columns) and BM25's postings.

It is written last in every reconcile step, so after a crash it describes a
state no newer than the stores; the next reconcile redoes whatever is newer.
A manifest with another schema version is recreated, never misread (the
embedding cache has its own file, `indexer.embed_cache`, and survives that).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from memvault.indexer import bm25, postings
from memvault.indexer.embed_cache import EmbedCache
from memvault.indexer.embed_cache import scrub as scrub_db
from memvault.indexer.filters import FilterSpec
from memvault.indexer.rows import ROW, ROW_BARE, ChunkRow, FileRow, chunk_row
from memvault.indexer.vectors import StoreError
from memvault.vault.logger import log
from memvault.vault.model import Chunk, bm25_text

SCHEMA_VERSION = "7"
# rebuilt from the notes with their cached vectors: "2" had no chunk script (issue 18), "3" kept a
# row per posting, "5" no entry's importance, "6" no conversation
OLDER = ("1", "2", "3", "4", "5", "6")
REBUILDING = "rebuilding"  # meta: a server collection's points are being deleted (`Index.reset("rebuild")`)
PAGE_SIZE = 16384  # rows of a kilobyte or so: four to a 4 KiB page wasted a sixth of the file

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    status TEXT NOT NULL, error TEXT, chunks INTEGER NOT NULL DEFAULT 0, indexed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    slot INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL, heading TEXT NOT NULL,
    section TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, content_hash TEXT NOT NULL,
    kind TEXT NOT NULL, date TEXT, tags TEXT, superseded TEXT, text BLOB NOT NULL,
    terms BLOB NOT NULL, embedded INTEGER NOT NULL, script TEXT NOT NULL, unit TEXT NOT NULL,
    context TEXT NOT NULL, near TEXT NOT NULL, key TEXT, corrects TEXT, importance INTEGER, conversation TEXT);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_waiting ON chunks(slot) WHERE embedded = 0;
CREATE INDEX IF NOT EXISTS chunks_date ON chunks(kind, date);
CREATE INDEX IF NOT EXISTS chunks_script ON chunks(script, embedded);
"""
_SCHEMA = _TABLES + postings.SCHEMA
# SQLite's planner counts through the covering (script, embedded) index, every chunk (30 ms at 100k
# chunks, in every hybrid search); the partial index holds only the waiting ones
WAITING_COUNT = "SELECT COUNT(*) FROM chunks INDEXED BY chunks_waiting WHERE embedded = 0"
# when an entry was last in a search's hits, by `vault.entries.entry_key`: usage, never written into the notes
_RECALLS = "CREATE TABLE IF NOT EXISTS recalls (entry TEXT PRIMARY KEY, last REAL NOT NULL, count INTEGER NOT NULL)"


class IndexUnavailable(StoreError):
    """The index cannot answer (missing, corrupt, other schema); readers fall back, writers rebuild."""


class Manifest:
    """One open SQLite database in WAL mode; `created` says it was created or recreated by this process."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = path
        self.created = False
        self.damaged = False  # it was unreadable and has been recreated (and said so)
        self.upgraded = False  # it was in an older format and has been recreated (and said so)
        self._ino: tuple[int, int] | None = None
        self.depth = 0  # transactions open (see `transaction`)
        if not create and not path.exists():
            raise IndexUnavailable(f"{path.parent}: no index yet; run `memvault index`")
        try:
            self._open(create)
            schema = self.get_meta("schema")
            if schema in OLDER and create:  # an older format: keep the vectors, rebuild the rest from the notes
                cache = EmbedCache(cache_path(path))
                cache.adopt(self.db)  # the first format kept them in the manifest
                kept = cache.size()
                log.warning(
                    f"{path}: the index format changed; rebuilding it from the notes ({kept} cached vectors kept)"
                )
                cache.close()
                self.recreate()
                self.upgraded = True
            elif schema in OLDER:  # a reader: the next writer rebuilds it
                raise IndexUnavailable(f"{path.parent}: the index format changed; run `memvault index`")
            elif schema != SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"schema {schema!r}, expected {SCHEMA_VERSION!r}")
            elif create and not self.created:
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
        if fresh:
            self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before the file has its first page
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if fresh:
            self.db.executescript(_SCHEMA)
            self.set_meta("schema", SCHEMA_VERSION)
            self.created = True
        if create:  # added after schema 1: a writer adds it to an older manifest, readers do without
            self.db.execute(_RECALLS)
        self._ino = self._inode()
        self.bm25 = bm25.BM25(self.db)

    def _check(self) -> None:
        """A writer reads every page once at open: a garbled page in a table it would not touch
        (chunk texts, postings) must be found now, not by the next search."""
        found = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]
        if found != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {' '.join(found.split())[:200]}")
        bad = self.db.execute(
            "SELECT COUNT(*) FROM chunks WHERE NOT json_valid(heading) OR (tags IS NOT NULL AND NOT json_valid(tags))"
            " OR typeof(terms) != 'blob' OR length(terms) = 0"
        )
        count = bad.fetchone()[0]
        if count:
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

    def file_versions(self, paths: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(size, mtime_ns) of these notes as indexed (a search's hit notes: a few, never the vault's)."""
        sql = "SELECT path, size, mtime_ns FROM files WHERE status = 'indexed' AND path IN ({marks})"
        return {path: (size, mtime) for path, size, mtime in postings.select_in(self.db, sql, paths)}

    def chunk_ids(self, path: str | None = None) -> list[str]:
        if path is None:
            return [r[0] for r in self.db.execute("SELECT id FROM chunks")]
        return [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE path=? ORDER BY slot", (path,))]

    def record_file(
        self,
        path: str,
        sha: str,
        size: int,
        mtime_ns: int,
        chunks: Sequence[Chunk],
        payloads: Sequence[dict[str, Any]],
        tokens: Sequence[dict[str, int]],
        embedded: Sequence[bool],
    ) -> None:
        """Replace a file's chunks and their postings and mark it indexed, in one transaction;
        `embedded` says which chunks have their vector in the store already."""
        touched: set[int] = set()
        try:
            with self.transaction():
                touched |= self._drop_chunks(path)
                base = self.db.execute("SELECT COALESCE(MAX(slot), 0) + 1 FROM chunks").fetchone()[0]
                docs = [postings.Doc(base + i, counts) for i, counts in enumerate(tokens)]
                packed, added = postings.add(self.db, docs)
                touched |= added
                rows = [chunk_row(*row) for row in zip(chunks, payloads, docs, packed, embedded, strict=True)]
                self.db.executemany("INSERT INTO chunks VALUES (" + ",".join("?" * 23) + ")", rows)
                self.db.execute(
                    "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
                    (path, sha, size, mtime_ns, "indexed", None, len(chunks), time.time()),
                )
        finally:
            self.bm25.changed(touched)

    def _drop_chunks(self, path: str | None) -> set[int]:
        """Remove a file's chunks (every chunk: None) and their postings, inside a transaction."""
        if path is None:
            postings.clear(self.db)
            self.db.execute("DELETE FROM chunks")
            return set()
        rows = self.db.execute("SELECT slot, terms FROM chunks WHERE path=?", (path,)).fetchall()
        touched = postings.remove(self.db, rows) if rows else set()
        self.db.execute("DELETE FROM chunks WHERE path=?", (path,))
        return touched

    def record_failure(self, path: str, size: int, mtime_ns: int, sha: str, error: str) -> None:
        """A file that cannot be indexed keeps no chunks; its reason is kept for `status`."""
        touched: set[int] = set()
        try:
            with self.transaction():
                touched = self._drop_chunks(path)
                self.db.execute(
                    "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
                    (path, sha, size, mtime_ns, "failed", error, 0, time.time()),
                )
        finally:
            self.bm25.changed(touched)

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Same content, new mtime (a `touch`, a checkout): remember the stat so the hash is not redone."""
        self.db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (size, mtime_ns, path))

    def forget_file(self, path: str) -> None:
        touched: set[int] = set()
        try:
            with self.transaction():
                touched = self._drop_chunks(path)
                self.db.execute("DELETE FROM files WHERE path=?", (path,))
        finally:
            self.bm25.changed(touched)

    def invalidate(self, paths: Iterable[str]) -> None:
        """Force these files to be re-read by the next reconcile (their stores disagreed with us)."""
        self.db.executemany("UPDATE files SET sha256='', mtime_ns=-1 WHERE path=?", [(p,) for p in paths])

    def clear(self) -> None:
        """Forget every file and chunk (a rebuild), and with them the mark of a rebuild under way; the
        embedding cache, a file of its own, stays."""
        try:
            with self.transaction():
                self._drop_chunks(None)
                self.db.execute("DELETE FROM files")
                self.db.execute("DELETE FROM meta WHERE key = ?", (REBUILDING,))
                self.db.execute("DROP TABLE IF EXISTS unstored")  # (`indexer.deferred`) the store goes too
        finally:
            self.bm25.changed()

    def retokenize(self, tokenize: Any) -> None:
        """Cut every stored chunk text again with another tokenizer and rebuild the postings."""
        try:
            with self.transaction():
                rows = self.db.execute("SELECT slot, unit, context, near, text FROM chunks").fetchall()
                postings.clear(self.db)
                texts = ((slot, bm25_text(unit, context, near, zlib.decompress(text).decode("utf-8")))
                         for slot, unit, context, near, text in rows)  # fmt: skip
                docs = [postings.Doc(slot, Counter(tokenize(text))) for slot, text in texts]
                for start in range(0, len(docs), 1000):
                    part = docs[start : start + 1000]
                    packed, _ = postings.add(self.db, part)
                    self.db.executemany("UPDATE chunks SET terms=? WHERE slot=?",
                                        [(t, d.slot) for d, t in zip(part, packed, strict=True)])  # fmt: skip
        finally:
            self.bm25.changed()

    # vectors ------------------------------------------------------------
    def waiting(self, paths: Sequence[str] | None = None, limit: int | None = None) -> list[ChunkRow]:
        """Chunks whose vector is not in the store yet (of these notes), oldest slot first."""
        where, params = "embedded = 0", []
        if paths is not None:
            where += f" AND path IN ({','.join('?' * len(paths))})"
            params = list(paths)
        query = f"SELECT {ROW} FROM chunks WHERE {where} ORDER BY slot" + (f" LIMIT {int(limit)}" if limit else "")
        return [self._chunk(row) for row in self.db.execute(query, params)]

    def waiting_count(self) -> int:
        return int(self.db.execute(WAITING_COUNT).fetchone()[0])

    def mark_waiting(self, ids: Sequence[str]) -> None:
        """These chunks' vectors are not (or no longer) in the store."""
        with self.transaction():
            self.db.executemany("UPDATE chunks SET embedded=0 WHERE id=?", [(cid,) for cid in ids])

    def embedded_ids(self, path: str | None = None) -> set[str]:
        where, params = ("embedded = 1", ()) if path is None else ("path = ? AND embedded = 1", (path,))
        return {cid for (cid,) in self.db.execute(f"SELECT id FROM chunks WHERE {where}", params)}

    def mark_embedded(self, pairs: Iterable[tuple[str, str]], embedded: bool = True) -> list[str]:
        """Mark chunks, given as (id, content hash), as having (or not) their vector in the store;
        a chunk changed meanwhile (another hash) is left alone. Returns the ids marked."""
        query = "UPDATE chunks SET embedded=? WHERE id=? AND content_hash=?"
        with self.transaction():
            return [cid for cid, h in pairs if self.db.execute(query, (int(embedded), cid, h)).rowcount]

    # chunks -------------------------------------------------------------
    def chunk_paths(self) -> dict[str, str]:
        """Every chunk id and the note it is in."""
        return dict(self.db.execute("SELECT id, path FROM chunks"))

    def get_chunks(self, ids: Sequence[str], text: bool = True) -> dict[str, ChunkRow]:
        """Rows by id; `text=False` leaves the text out (filters and ranking only read the rest)."""
        columns = ROW if text else ROW_BARE
        rows = postings.select_in(self.db, f"SELECT {columns} FROM chunks WHERE id IN ({{marks}})", list(ids))
        return {row[0]: self._chunk(row) for row in rows}

    def all_chunks(self) -> Iterator[ChunkRow]:
        """Every chunk without its text (a purge rebuilding the vector store reads them all)."""
        for row in self.db.execute(f"SELECT {ROW_BARE} FROM chunks"):
            yield self._chunk(row)

    def _chunk(self, row: Sequence[Any]) -> ChunkRow:
        try:
            return ChunkRow.from_row(row)
        except ValueError:  # a garbled row: readers fall back, a writer rebuilds
            raise sqlite3.DatabaseError(f"{self.path}: chunk {row[0]} holds unreadable JSON") from None

    def ids_of_slots(self, slots: Sequence[int]) -> dict[int, str]:
        return dict(postings.select_in(self.db, "SELECT slot, id FROM chunks WHERE slot IN ({marks})", list(slots)))

    def slots_matching(self, flt: FilterSpec) -> list[int]:
        """The slots of every chunk the filter admits, sorted: BM25 filters before its cut."""
        where, params = flt.to_sql()
        return [r[0] for r in self.db.execute(f"SELECT slot FROM chunks WHERE {where} ORDER BY slot", params)]

    def newest_date(self, kind: str) -> str | None:
        return self.db.execute("SELECT MAX(date) FROM chunks WHERE kind=?", (kind,)).fetchone()[0]

    def any_dated(self, low: str, high: str) -> bool:
        """Whether a chunk is dated inside [low, high] (ISO strings as the payloads hold them)."""
        query = "SELECT 1 FROM chunks WHERE kind IN ('daily', 'memory', 'other') AND date BETWEEN ? AND ? LIMIT 1"
        return self.db.execute(query, (low, high)).fetchone() is not None

    def has_script(self, script: str) -> bool:
        """Whether any chunk with a vector is in this script (an index lookup, whatever the vault's size)."""
        query = "SELECT 1 FROM chunks WHERE script = ? AND embedded = 1 LIMIT 1"
        return self.db.execute(query, (script,)).fetchone() is not None

    def content_hashes(self) -> set[str]:
        return {h for (h,) in self.db.execute("SELECT content_hash FROM chunks")}

    def chunk_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def record_recalls(self, entries: Iterable[str], when: float) -> None:
        rows = [(e, when) for e in dict.fromkeys(entries)]
        if rows:
            with self.transaction():
                self.db.executemany("INSERT INTO recalls VALUES (?, ?, 1) ON CONFLICT(entry) DO UPDATE SET "
                                    "last=excluded.last, count=count+1", rows)  # fmt: skip

    def recalls(self) -> dict[str, tuple[float, int]]:
        """Entry key -> (last recalled, times), {} for a manifest no writer has opened since recalls began."""
        try:
            return {e: (last, n) for e, last, n in self.db.execute("SELECT entry, last, count FROM recalls")}
        except sqlite3.OperationalError:
            return {}

    def scrub(self) -> None:
        """Rewrite the database so no deleted row survives in a free page, the WAL or its tail: the
        last step of removing a text for good."""
        scrub_db(self.db)

    def transaction(self) -> _Transaction:
        """One transaction around several writes (a batch of notes commits once); writes inside
        it join it instead of committing each on its own."""
        return _Transaction(self)


def cache_path(manifest: Path) -> Path:
    return manifest.with_name("embeddings.sqlite")


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an exception); nested, only the outermost counts."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest

    def __enter__(self) -> None:
        if not self.manifest.depth:
            self.manifest.db.execute("BEGIN IMMEDIATE")
        self.manifest.depth += 1

    def __exit__(self, exc_type, exc, tb) -> None:
        self.manifest.depth -= 1
        if not self.manifest.depth:
            self.manifest.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
