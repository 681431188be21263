"""An edit's vectors follow it: a small `memvault index` with no daemon leaves the vector store alone.

A writer that opens the embedded store pays about 45 ms before it writes a point (the store's load,
and the fsyncs of the config it rewrites at every open and of its flush), and the vectors themselves
need numpy or the model (seconds). An edit changes a handful of chunks. So a pass with no daemon
that changes at most `DEFER_FILES` notes, while fewer than `DEFER_CHUNKS` chunks wait already,
stores their text and postings only: the chunks wait for their vectors as they do behind a daemon
(BM25 finds them at once), and the points the store still holds under the notes' old chunk ids are
listed as `unstored`. A point counts only while the manifest vouches for it: a reader drops the
unstored ones from its dense list, and the next process that opens the store to write (the daemon,
a search that ranks by meaning, an `index` with more to do) deletes them before anything else. Its
`embed_waiting` then stores the waiting chunks, from the cache where their text did not change, so
the model embeds only the new text, in a process that had loaded it anyway.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvault.indexer.manifest import Manifest
    from memvault.indexer.rows import FileChunks
    from memvault.indexer.vectors import VectorStore

DEFER_FILES = 4  # notes a pass may change and still leave the store alone: an edit, a save, a move
DEFER_CHUNKS = 32  # chunks that may wait for their vectors before `index` embeds them itself
_TABLE = "CREATE TABLE IF NOT EXISTS unstored (id TEXT PRIMARY KEY) WITHOUT ROWID"


def unstored(db: sqlite3.Connection) -> set[str]:
    """The ids whose points in the store no chunk vouches for (until a writer deletes them)."""
    try:
        return {cid for (cid,) in db.execute("SELECT id FROM unstored")}
    except sqlite3.OperationalError:  # a manifest no deferred pass has written to
        return set()


def add_unstored(db: sqlite3.Connection, ids: Sequence[str]) -> None:
    """Inside the caller's transaction, with the chunk rows it changes."""
    if ids:
        db.execute(_TABLE)
        db.executemany("INSERT OR IGNORE INTO unstored VALUES (?)", [(cid,) for cid in ids])


def kept_points(manifest: Manifest, f: FileChunks) -> list[bool]:
    """Inside the caller's transaction, before the note's new rows: which of its chunks keep their
    point (same id, text and payload as stored); every other old id of the note is unstored."""
    stored = manifest.get_chunks(sorted(manifest.embedded_ids(f.rel)), text=False)
    kept = [c.id in stored and stored[c.id].payload == p for c, p in zip(f.chunks, f.payloads, strict=True)]
    keeping = {c.id for c, k in zip(f.chunks, kept, strict=True) if k}
    add_unstored(manifest.db, sorted(set(manifest.chunk_ids(f.rel)) - keeping))
    return kept


def settle(manifest: Manifest, store: VectorStore | None) -> None:
    """A writer has just opened the store: delete the unstored points, and let any chunk still
    listed under one of those ids (a pass cut short between its two commits) wait for its vector
    again. The `dirty` mark brackets it, as every store write is bracketed."""
    ids = sorted(unstored(manifest.db))
    if not ids:
        return
    assert store is not None
    manifest.set_meta("dirty", "1")
    store.delete(ids)
    store.flush()
    with manifest.transaction():
        manifest.mark_waiting(ids)
        manifest.db.execute("DELETE FROM unstored")
    manifest.set_meta("dirty", "0")
