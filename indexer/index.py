"""The open index of one vault: the manifest (with BM25's postings and the chunks' payloads), the
vector store and the embedding cache, and the rule they keep together: every chunk the manifest marks
embedded is in the vector store, and no other point counts (those a deferred edit left `unstored`
are dropped by readers and deleted by the next writer, `indexer.deferred`).

Every change goes through this class, in the order that keeps the rule recoverable: vector writes
first, bracketed by the manifest's `dirty` mark; the manifest commit (chunks and postings in one
transaction) last. After a crash the manifest is never newer than the store, and `reset("repair")`
settles the difference. Nothing is held in memory per chunk: a search reads the postings of its
terms and the rows of its hits. `indexer.opening.open_index` opens one (the lock, the choices, the migrations).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

from memvault.indexer import deferred
from memvault.indexer.config import IndexConfig
from memvault.indexer.embed_cache import EmbedCache
from memvault.indexer.embedders.base import Embedder, EmbedderError
from memvault.indexer.manifest import REBUILDING, Manifest, cache_path
from memvault.indexer.reading import Reads
from memvault.indexer.rows import ChunkRow, FileChunks
from memvault.indexer.store_files import remove_store_files
from memvault.indexer.tokenizer import Tokenizer
from memvault.indexer.vectors import ClientStore, EdgeStore, StoreError, StoreLocked, StoreMismatch, VectorStore
from memvault.vault.faults import crash_point
from memvault.vault.locks import release
from memvault.vault.logger import log
from memvault.vault.model import Chunk
from memvault.vault.paths import Layout

Reset = Literal["repair", "drop", "rebuild"]
EMBED_BATCH = 64  # chunks per round of the model: big enough to batch, small enough to interleave edits


class Index(Reads):
    """The stores of one vault while they are open; use as a context manager or call `close()`. What a
    search reads of it is `indexer.reading.Reads`; every change is here.

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
        self.store_waits = False  # a writer's store stays closed until a write needs it (`indexer.deferred`)
        self._unstored: set[str] | None = None  # a reader's: points its dense list drops
        self.cache = EmbedCache(cache_path(manifest.path), create=writable, enabled=config.embedding_cache)
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
                    self.vectors = ClientStore.connect(cfg.qdrant_url, cfg.qdrant_api_key, cfg.collection, name, dim,
                                                       self.writable, str(self.layout.root))  # fmt: skip
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
                )  # fmt: skip
                log.warning(f"{exc}: {what}")
            self.reset("drop")

    def vector_store(self) -> VectorStore:
        """The vector store; a reader's is opened when first asked (`open_index`), and so is the store
        of a writer that let it wait, which first deletes the points left unstored. StoreError says why not."""
        if self.vectors is None and (self.store_waits or not self.writable):
            self.open_vectors()
            if self.store_waits:
                self.store_waits = False
                deferred.settle(self.manifest, self.vectors)
        if self.vectors is None:
            raise StoreError(f"{self.layout.state_dir}: the vector store is not open")
        return self.vectors

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
        self._emit("file-unindexed", path=rel, chunks=len(old))
        return len(old)

    def apply(self, batch: Sequence[FileChunks], embed: bool = False) -> int:
        """Store a batch of changed notes: chunks, postings and the vectors the cache holds; the rest
        wait for `embed_waiting` (BM25 finds them meanwhile), or all of them when the store waits
        (`indexer.deferred`). With `embed` the model embeds the rest first, so an edit flushes the
        store once, not for its text and again for its vectors. Returns the stale chunks dropped."""
        if self.store_waits:  # one transaction: the points kept, the ids unstored and the rows
            with self.manifest.transaction():
                dropped = sum(len(set(self.chunk_ids(f.rel)) - {c.id for c in f.chunks}) for f in batch)
                self._record(batch, [deferred.kept_points(self.manifest, f) for f in batch])
            return dropped
        store = self.vector_store()
        chunks = [c for f in batch for c in f.chunks]
        have = self.cache.get(self.embedder.name, list(dict.fromkeys(c.content_hash for c in chunks)))
        self.embed_cache["hits"] += len(have)
        if embed:  # the model failing leaves them waiting: `embed_waiting` meets it as it would have
            with contextlib.suppress(EmbedderError):
                fresh = self.embed_texts(chunks, have)
                self.cache.put(self.embedder.name, fresh)
                self.embed_cache["misses"] += len(fresh)
                crash_point("after-embed")
                have.update(fresh)
        ready = [(c, p) for f in batch for c, p in zip(f.chunks, f.payloads, strict=True) if c.content_hash in have]
        self.manifest.set_meta("dirty", "1")
        if ready:
            store.upsert([c.id for c, _ in ready], [have[c.content_hash] for c, _ in ready],
                         *self._stored(store, [c for c, _ in ready], [p for _, p in ready]))  # fmt: skip
        crash_point("after-upsert")
        dropped = 0
        stored = {c.id for c, _ in ready}
        for f in batch:
            old = set(self.manifest.chunk_ids(f.rel))
            self._delete_points(sorted(old - stored))  # gone, or changed and not embedded yet
            dropped += len(old - {c.id for c in f.chunks})
        crash_point("after-delete")
        store.flush()
        self._record(batch, [[c.content_hash in have for c in f.chunks] for f in batch])
        self.manifest.set_meta("dirty", "0")
        return dropped

    def _record(self, batch: Sequence[FileChunks], embedded: Sequence[list[bool]]) -> None:
        """The batch's rows and postings, `embedded` saying which chunks have their point in the store."""
        assert self.tokenizer is not None
        sections: dict[str, list[str]] = {}  # per note, the sections whose entries changed (for its event)
        with self.manifest.transaction():  # the batch commits once: a commit per note cost a third of the pass
            for f, flags in zip(batch, embedded, strict=True):
                if self.listener is not None:
                    sections[f.rel] = self._changed_sections(f)
                tokens = [dict(Counter(self.tokenizer(c.bm25_text))) for c in f.chunks]
                self.manifest.record_file(f.rel, f.sha, f.size, f.mtime_ns, f.chunks, f.payloads, tokens, flags)
                crash_point("mid-manifest")
        for f in batch:
            self._emit("file-indexed", path=f.rel, chunks=len(f.chunks), sections=sections.get(f.rel, []))

    def _changed_sections(self, f: FileChunks) -> list[str]:
        """The sections of a note whose chunks are new, changed or gone, against the rows indexed before."""
        rows = self.manifest.get_chunks(self.manifest.chunk_ids(f.rel), text=False).values()
        before, now = {r.content_hash: r.section for r in rows}, {c.content_hash: c.section for c in f.chunks}
        return sorted({s for h, s in (*before.items(), *now.items()) if s and (h not in before or h not in now)})

    def _stored(self, store: VectorStore, units: Sequence[Chunk | ChunkRow], payloads: Sequence[dict[str, Any]]
                ) -> tuple[list[dict[str, Any]], list[list[str]] | None]:  # fmt: skip
        """What the store keeps of each unit beside its vector: its filter payload; a server collection, which
        readers with no local index answer from (`indexer.remote`), its text, heading and BM25 tokens too."""
        assert self.tokenizer is not None
        if not store.holds_bm25:
            return list(payloads), None
        texts = [{"text": u.text, "heading": list(u.heading), "context": u.context} for u in units]
        return [{**p, **t} for p, t in zip(payloads, texts, strict=True)], [self.tokenizer(u.bm25_text) for u in units]

    def waiting(self, paths: Sequence[str] | None = None, limit: int | None = None) -> list[ChunkRow]:
        """Chunks still without a vector in the store (of these notes)."""
        return self.manifest.waiting(paths, limit)

    def cached_vectors(self, rows: Sequence[ChunkRow]) -> dict[str, np.ndarray]:
        return self.cache.get(self.embedder.name, list(dict.fromkeys(r.content_hash for r in rows)))

    def embed_texts(
        self, rows: Sequence[ChunkRow] | Sequence[Chunk], have: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """The model's vectors for the rows `have` lacks, by content hash. It touches no store, so a
        daemon runs it without holding its lock."""
        text_of = {r.content_hash: r.vector_text for r in rows if r.content_hash not in have}
        if not text_of:
            return {}
        return dict(zip(text_of, self.embedder.embed_passages(list(text_of.values())), strict=True))

    def store_vectors(
        self, rows: Sequence[ChunkRow], have: Mapping[str, np.ndarray], fresh: dict[str, np.ndarray]
    ) -> int:
        """Put the vectors of these chunks into the store and mark them embedded, skipping any that
        changed or went since they were read; returns how many were stored. Only the kept chunks'
        vectors enter the cache: a text purged while the model ran (the daemon runs it without its
        lock) leaves no vector behind."""
        live = self.manifest.get_chunks([r.id for r in rows], text=False)
        keep = [r for r in rows if r.id in live and live[r.id].content_hash == r.content_hash]
        kept = {r.content_hash for r in keep}
        self.cache.put(self.embedder.name, {h: v for h, v in fresh.items() if h in kept})
        self.embed_cache["misses"] += len(fresh)
        crash_point("after-embed")
        vectors = {**have, **fresh}
        if keep:
            self.manifest.set_meta("dirty", "1")
            store = self.vector_store()
            store.upsert([r.id for r in keep], [vectors[r.content_hash] for r in keep],
                         *self._stored(store, keep, [live[r.id].payload for r in keep]))  # fmt: skip
            crash_point("after-upsert")
            self.vector_store().flush()
            self.manifest.mark_embedded((r.id, r.content_hash) for r in keep)
            self.manifest.set_meta("dirty", "0")
        return len(keep)

    def embed_waiting(
        self,
        paths: Sequence[str] | None = None,
        batch: int = EMBED_BATCH,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed every chunk still waiting (of these notes), a batch at a time; returns how many
        texts the model embedded (the rest came from the cache)."""
        embedded = 0
        while rows := self.waiting(paths, batch):
            have = self.cached_vectors(rows)
            fresh = self.embed_texts(rows, have)
            if not self.store_vectors(rows, have, fresh):
                break
            embedded += len(fresh)
            if progress is not None:
                progress(len(rows))
        return embedded

    def settle(self, when: float) -> None:
        """End of a reconcile pass: every store write is matched in the manifest now."""
        if not self.store_waits:
            self.vector_store().flush()
        self.manifest.set_meta("dirty", "0")
        self.manifest.set_meta("last_reconcile", str(when))

    def purge(self) -> None:
        """After a text was removed for good and its notes reindexed: drop the cached vectors no chunk
        uses, rewrite the manifest so no deleted row survives in a free page or the WAL, and write the
        embedded store afresh from the cached vectors (it keeps deleted points in its segments and WAL
        until a vacuum it may never run; a server's optimizers do that themselves). Chunks whose
        vectors were not cached wait for `embed_waiting`."""
        self.cache.keep_only(self.manifest.content_hashes())
        self.cache.scrub()
        self.manifest.scrub()
        if self.config.qdrant_url:
            return
        rows = list(self.manifest.all_chunks())
        self.manifest.set_meta("dirty", "1")
        self._close_vectors()
        remove_store_files(self.edge_path)
        self.open_vectors()
        self.manifest.mark_waiting([r.id for r in rows])
        self.store_vectors(rows, self.cached_vectors(rows), {})
        self.manifest.set_meta("dirty", "0")

    def _delete_points(self, ids: list[str]) -> None:
        if ids and self.store_waits:
            with self.manifest.transaction():
                deferred.add_unstored(self.manifest.db, ids)
        elif ids:
            self.manifest.set_meta("dirty", "1")
            self.vector_store().delete(ids)

    # resets: the one vocabulary ---------------------------------------------
    def reset(self, level: Reset) -> None:
        """Bring the stores back into agreement; notes are never touched.

        - `repair`: after a crash mid-write: points the manifest does not know as embedded are
          deleted, and chunks whose points are missing wait for their vectors again;
        - `drop`: all derived data is dropped (the embedded store removed, a manifest that cannot be
          read recreated; the embedding cache stays) and the vector store is left closed;
        - `rebuild` (`index --rebuild`): a server collection's points are deleted too, then `drop`,
          and the store is opened again, empty. The manifest is marked `rebuilding` before the points
          go and loses the mark with its rows, in one transaction: a writer killed in between left
          the manifest listing points no longer there (a collection short for good, `index` saying
          nothing changed); the next writer to open it finds the mark and rebuilds again
          (`indexer.opening.settle_writer`). Once the rows are gone, the notes are new to it.
        """
        if level == "repair":
            known = self.manifest.embedded_ids()
            store = self.vector_store()
            stored = store.ids()
            orphans = stored - known
            if orphans:
                store.delete(sorted(orphans))
            self.manifest.mark_waiting(sorted(known - stored))
            store.flush()
            self.manifest.set_meta("dirty", "0")
            return
        if level == "rebuild" and self.config.qdrant_url:
            with self.manifest.transaction():
                self.manifest.set_meta(REBUILDING, "1")
                self.manifest.set_meta("dirty", "1")
            crash_point("rebuild-marked")
            self.vector_store().clear()
            crash_point("rebuild-cleared")
        self._close_vectors()
        if not self.config.qdrant_url:
            remove_store_files(self.edge_path)
        try:
            if self.manifest.replaced():
                raise sqlite3.DatabaseError("replaced")
            self.manifest.clear()
        except sqlite3.DatabaseError:  # garbled or deleted under us: start the manifest over
            self.manifest.recreate()
            remove_store_files(self.edge_path)
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
            release(self._lock_fd)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
