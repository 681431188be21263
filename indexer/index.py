"""The open index of one vault: the manifest (with BM25's postings and the chunks' payloads), the
vector store and the embedding cache, and the rule they keep together: every chunk the manifest
lists is in the vector store, and nothing else is.

Every change goes through this class, in the order that keeps the rule recoverable: vector writes
first, bracketed by the manifest's `dirty` mark; the manifest commit (chunks and postings in one
transaction) last. After a crash the manifest is never newer than the store, and `reset("repair")`
settles the difference. Nothing is held in memory per chunk: a search reads the postings of its
terms and the rows of its hits. `indexer.opening.open_index` opens one: the
lock, the choice of model and tokenizer, the migrations.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from indexer.embed_cache import EmbedCache
from indexer.embedder import Embedder
from indexer.filters import FilterSpec
from indexer.manifest import ChunkRow, FileRow, Manifest, cache_path
from indexer.tokenizer import Tokenizer
from indexer.vectors import ClientStore, EdgeStore, StoreError, StoreLocked, StoreMismatch, VectorStore
from vault.config import Settings, load_settings
from vault.faults import crash_point
from vault.model import Chunk
from vault.paths import Layout

log = logging.getLogger("memvault")
Reset = Literal["repair", "drop", "rebuild"]


@dataclass(frozen=True)
class IndexConfig:
    """Choices that shape the derived data; `None` means keep what the index was built with."""

    embedder: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    collection: str = "memvault"
    tokenizer: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> IndexConfig:
        return cls(settings.embedder, settings.qdrant_url, settings.qdrant_api_key, settings.collection,
                   settings.tokenizer)  # fmt: skip

    @classmethod
    def from_env(
        cls,
        embedder: str | None = None,
        qdrant_url: str | None = None,
        tokenizer: str | None = None,
        root: Path | None = None,
    ) -> IndexConfig:
        """The arguments, else the environment, else `<root>/memvault.toml` (see `vault.config`)."""
        return cls.from_settings(load_settings(root, embedder=embedder, qdrant_url=qdrant_url, tokenizer=tokenizer))


@dataclass(frozen=True)
class FileChunks:
    """A changed note, read and chunked, ready to be stored: its chunks and their filter payloads."""

    rel: str
    sha: str
    size: int
    mtime_ns: int
    chunks: list[Chunk]
    payloads: list[dict[str, Any]]


class Index:
    """The stores of one vault while they are open; use as a context manager or call `close()`.

    A reader (`writable=False`, as search is) never changes anything."""

    def __init__(
        self,
        layout: Layout,
        lock_fd: int,
        manifest: Manifest,
        config: IndexConfig,
        embedder: Embedder,
        writable: bool,
    ) -> None:
        self.layout = layout
        self.writable = writable
        self.manifest = manifest
        self.config = config
        self.embedder = embedder
        self.tokenizer: Tokenizer | None = None  # settled by the opener
        self.vectors: VectorStore | None = None
        self.cache = EmbedCache(cache_path(manifest.path), create=writable)
        self.rebuilt = manifest.created  # derived data started from nothing in this process
        self._lock_fd = lock_fd
        self.listener: Callable[..., None] | None = None  # told of each note indexed, dropped or failed
        self.embed_cache = {"hits": 0, "misses": 0}  # chunk texts found in the embedding cache, or embedded

    def _emit(self, event: str, **data: Any) -> None:
        if self.listener is not None:
            self.listener(event, **data)

    # the vector store ---------------------------------------------------
    @property
    def edge_path(self) -> Path:
        return self.layout.state_dir / "vectors"

    def open_vectors(self) -> None:
        """Open the vector store; a writer that finds the embedded one built for another model, or
        corrupt, drops the derived data once and starts it afresh."""
        name, dim = self.embedder.name, self.embedder.dim
        cfg = self.config
        for attempt in range(2):
            try:
                if cfg.qdrant_url:
                    self.vectors = ClientStore.connect(cfg.qdrant_url, cfg.qdrant_api_key, cfg.collection, name, dim)
                else:
                    self.vectors = EdgeStore(self.edge_path, name, dim, create=self.writable)
                return
            except StoreLocked:
                raise
            except StoreError as exc:
                if attempt or cfg.qdrant_url or not self.writable:
                    raise
                what = "rebuilding the vector store" if isinstance(exc, StoreMismatch) else (
                    "the vector store is corrupt, rebuilding it from the notes"
                )
                log.warning(f"{exc}: {what}")
            self.reset("drop")

    def _store(self) -> VectorStore:
        if self.vectors is None:
            raise StoreError(f"{self.layout.state_dir}: the vector store is not open")
        return self.vectors

    # reading --------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        return self.manifest.files()

    def chunk_ids(self, rel: str | None = None) -> list[str]:
        return self.manifest.chunk_ids(rel)

    def chunk_rows(self, ids: Sequence[str]) -> dict[str, ChunkRow]:
        return self.manifest.get_chunks(ids)

    def payloads(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The filter payloads of these chunks (those still indexed)."""
        return {cid: row.payload for cid, row in self.manifest.get_chunks(ids, text=False).items()}

    def bm25_top(self, tokens: list[str], k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        """The best `k` by BM25 among chunks the filter admits (filtered before the cut), ties by id."""
        allowed = None if flt is None else self.manifest.slots_matching(flt)
        best = self.manifest.bm25.top(tokens, k, allowed)
        ids = self.manifest.ids_of_slots([slot for slot, _ in best])
        return sorted(((ids[slot], score) for slot, score in best), key=lambda item: (-item[1], item[0]))[:k]

    def vector_top(self, vector: np.ndarray, k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        return self._store().search(vector, k, flt)

    def recalls(self) -> dict[str, tuple[float, int]]:
        """When each entry (by `vault.entries.entry_key`) was last among a search's hits, and how often."""
        return self.manifest.recalls()

    def recalled(self, entries: Sequence[str], when: float) -> None:
        self.manifest.record_recalls(entries, when)

    def store_disagreements(self) -> list[str]:
        """How the vector store and BM25 differ from the manifest's chunks (empty when they agree)."""
        problems = []
        listed = set(self.manifest.chunk_ids())
        stored = self._store().ids()
        if stored != listed:
            problems.append(f"vector store has {len(stored - listed)} unknown and lacks {len(listed - stored)} points")
        if len(self.manifest.bm25) != len(listed):
            problems.append(f"BM25 holds {len(self.manifest.bm25)} chunks, the manifest {len(listed)}")
        return problems

    # changing -------------------------------------------------------------
    def check_alive(self) -> None:
        """A manifest deleted under a running daemon would take writes no one ever reads: say so."""
        if self.manifest.replaced():
            raise sqlite3.DatabaseError(f"{self.manifest.path}: deleted or replaced while open")

    def touch(self, rel: str, size: int, mtime_ns: int) -> None:
        """Same content, new stat (a `touch`, a checkout): remember it so the file is not read again."""
        self.manifest.touch_file(rel, size, mtime_ns)

    def fail(self, rel: str, size: int, mtime_ns: int, error: str) -> int:
        """A note that cannot be indexed keeps no chunks, and its reason; returns the chunks dropped."""
        old = self.manifest.chunk_ids(rel)
        self._delete_points(old)
        self.manifest.record_failure(rel, size, mtime_ns, "", error)
        self._emit("index-error", path=rel, error=error)
        return len(old)

    def forget(self, rel: str) -> int:
        """A note gone from disk; returns the chunks dropped."""
        old = self.manifest.chunk_ids(rel)
        self._delete_points(old)
        self.manifest.forget_file(rel)
        self._emit("file-unindexed", path=rel)
        return len(old)

    def embed(self, chunks: Sequence[Chunk]) -> tuple[np.ndarray, int]:
        """Vectors for every chunk, cached by (model, content hash): each text is embedded once, ever.
        Returns the vectors and how many were embedded now."""
        model = self.embedder.name
        hashes = list(dict.fromkeys(c.content_hash for c in chunks))
        cached = self.cache.get(model, hashes)
        todo = [h for h in hashes if h not in cached]
        self.embed_cache["hits"] += len(hashes) - len(todo)
        self.embed_cache["misses"] += len(todo)
        if todo:
            text_of = {c.content_hash: c.text for c in chunks}
            fresh = dict(zip(todo, self.embedder.embed_passages([text_of[h] for h in todo]), strict=True))
            self.cache.put(model, fresh)
            cached.update(fresh)
        crash_point("after-embed")
        vectors = np.stack([cached[c.content_hash] for c in chunks]) if chunks else np.zeros((0, 1))
        return vectors, len(todo)

    def apply(self, batch: Sequence[FileChunks], vectors: np.ndarray) -> int:
        """Store a batch of changed notes (`vectors` from `embed` of all their chunks, in order);
        returns how many stale chunks were dropped."""
        store = self._store()
        chunks = [c for f in batch for c in f.chunks]
        self.manifest.set_meta("dirty", "1")
        if chunks:
            store.upsert([c.id for c in chunks], vectors, [p for f in batch for p in f.payloads])
        crash_point("after-upsert")
        dropped = 0
        for f in batch:
            stale = sorted(set(self.manifest.chunk_ids(f.rel)) - {c.id for c in f.chunks})
            self._delete_points(stale)
            dropped += len(stale)
        crash_point("after-delete")
        store.flush()
        assert self.tokenizer is not None
        for f in batch:
            tokens = [dict(Counter(self.tokenizer(c.text))) for c in f.chunks]
            self.manifest.record_file(f.rel, f.sha, f.size, f.mtime_ns, f.chunks, f.payloads, tokens)
            crash_point("mid-manifest")
        self.manifest.set_meta("dirty", "0")
        for f in batch:
            self._emit("file-indexed", path=f.rel, chunks=len(f.chunks))
        return dropped

    def settle(self, when: float) -> None:
        """End of a reconcile pass: every store write is matched in the manifest now."""
        self._store().flush()
        self.manifest.set_meta("dirty", "0")
        self.manifest.set_meta("last_reconcile", str(when))

    def purge(self) -> list[str]:
        """After a text was removed for good and its notes reindexed: drop the cached vectors no chunk
        uses, rewrite the manifest so no deleted row survives in a free page or the WAL, and write the
        embedded store afresh from the cached vectors (it keeps deleted points in its segments and WAL
        until a vacuum it may never run; a server's optimizers do that themselves). Returns the notes
        whose vectors were not cached: the next reconcile embeds them again."""
        self.cache.keep_only(self.manifest.content_hashes())
        self.cache.scrub()
        self.manifest.scrub()
        if self.config.qdrant_url:
            return []
        rows = [(row.id, row.payload) for row in self.manifest.all_chunks()]
        cached = self.cache.get(self.embedder.name, [p["content_hash"] for _, p in rows])
        kept = [(cid, p) for cid, p in rows if p["content_hash"] in cached]
        self.manifest.set_meta("dirty", "1")
        self._close_vectors()
        _remove_tree(self.edge_path)
        self.open_vectors()
        if kept:
            vectors = np.stack([cached[p["content_hash"]] for _, p in kept])
            self._store().upsert([cid for cid, _ in kept], vectors, [p for _, p in kept])
        missing = sorted({p["path"] for _, p in rows if p["content_hash"] not in cached})
        self.manifest.invalidate(missing)
        self._store().flush()
        self.manifest.set_meta("dirty", "0")
        return missing

    def _delete_points(self, ids: list[str]) -> None:
        if ids:
            self.manifest.set_meta("dirty", "1")
            self._store().delete(ids)

    # resets: the one vocabulary ---------------------------------------------
    def reset(self, level: Reset) -> None:
        """Bring the stores back into agreement; notes are never touched.

        - `repair`: after a crash mid-write: points the manifest does not know are deleted, and
          notes whose points are missing are read again by the next reconcile;
        - `drop`: all derived data is dropped (the embedded store removed, a manifest that cannot be
          read recreated; the embedding cache stays) and the vector store is left closed;
        - `rebuild` (`index --rebuild`): a server collection's points are deleted too, then `drop`,
          and the store is opened again, empty.
        """
        if level == "repair":
            known = self.manifest.chunk_paths()
            store = self._store()
            stored = store.ids()
            orphans = stored - known.keys()
            if orphans:
                store.delete(sorted(orphans))
            self.manifest.invalidate(sorted({known[cid] for cid in known.keys() - stored}))
            store.flush()
            self.manifest.set_meta("dirty", "0")
            return
        if level == "rebuild" and self.config.qdrant_url:
            store = self._store()
            store.delete(sorted(store.ids()))
        self._close_vectors()
        if not self.config.qdrant_url:
            _remove_tree(self.edge_path)
        try:
            if self.manifest.replaced():
                raise sqlite3.DatabaseError("replaced")
            self.manifest.clear()
        except sqlite3.DatabaseError:  # garbled or deleted under us: start the manifest over
            self.manifest.recreate()
            _remove_tree(self.edge_path)
        self.manifest.set_meta("dirty", "0")
        self.rebuilt = True
        if level == "rebuild":
            self.open_vectors()
        self._emit("index-rebuilt", level=level)

    def _close_vectors(self) -> None:
        if self.vectors is not None:
            with contextlib.suppress(StoreError):  # a broken store is being thrown away anyway
                self.vectors.close()
            self.vectors = None

    def close(self) -> None:
        try:
            if self.vectors is not None:
                self.vectors.close()
            self.manifest.close()
            self.cache.close()
        finally:
            os.close(self._lock_fd)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_tree(path: Path) -> None:
    """Remove derived data even when it was made unreadable (`chmod 000`): it is ours, so make it
    accessible first; if even that is refused, move it aside so a fresh store can take its place."""
    shutil.rmtree(path, ignore_errors=True)
    if not path.exists():
        return
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
        for dirpath, dirnames, _ in os.walk(path):
            for name in dirnames:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(dirpath, name), 0o700)
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        aside = path.with_name(f"{path.name}.unreadable-{os.getpid()}")
        os.replace(path, aside)
        log.warning(f"{path}: could not be removed; moved aside to {aside}")
