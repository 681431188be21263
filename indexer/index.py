"""The open index of one vault: manifest, vector store, BM25 and embedder, owned by one process.

Opening takes `<vault>/.memvault/index.lock`, so a second owner fails fast
with `StoreLocked` instead of queueing behind the first. Opening also
settles every reason to rebuild (new schema, other embedder, other
tokenizer, a crash mid-write) before anyone reads from the index.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.bm25 import BM25Index
from indexer.embedder import Embedder
from indexer.embedders import DEFAULT_EMBEDDER, load_embedder
from indexer.manifest import IndexUnavailable, Manifest
from indexer.tokenizer import DEFAULT as DEFAULT_TOKENIZER
from indexer.tokenizer import Tokenizer
from indexer.vectors import ClientStore, EdgeStore, StoreError, StoreLocked, StoreMismatch, VectorStore
from vault.chunking import VERSION as CHUNKER_VERSION
from vault.config import load_settings
from vault.locks import try_lock
from vault.paths import Layout


@dataclass(frozen=True)
class IndexConfig:
    """Choices that shape the derived data; `None` means keep what the index was built with."""

    embedder: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    collection: str = "memvault"
    tokenizer: str | None = None

    @classmethod
    def from_env(
        cls,
        embedder: str | None = None,
        qdrant_url: str | None = None,
        tokenizer: str | None = None,
        root: Path | None = None,
    ) -> IndexConfig:
        """The arguments, else the environment, else `<root>/memvault.toml` (see `vault.config`)."""
        s = load_settings(root, embedder=embedder, qdrant_url=qdrant_url, tokenizer=tokenizer)
        return cls(s.embedder, s.qdrant_url, s.qdrant_api_key, s.collection, s.tokenizer)


def _warn(message: str) -> None:
    print(f"memvault: {message}", file=sys.stderr)


class Index:
    """State kept while the stores are open; use as a context manager or call `close()`."""

    def __init__(
        self,
        layout: Layout,
        config: IndexConfig | None = None,
        embedder: Embedder | None = None,
        writable: bool = True,
        load_bm25: bool = True,
    ) -> None:
        """Open the index; a reader (`writable=False`, as search is) never repairs or rebuilds
        anything and raises `IndexUnavailable` instead, so the caller can fall back.

        `load_bm25=False` is for writers that never search (`memvault index`): the
        postings are not read back from the manifest, which is most of the cost of
        opening a large index; `bm25` then holds only what this process adds."""
        self.layout = layout
        self.writable = writable
        if not writable and not (layout.state_dir / "manifest.sqlite").exists():
            raise IndexUnavailable(f"{layout.state_dir}: no index yet; run `memvault index`")
        layout.state_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = self._take_lock(layout.state_dir / "index.lock")
        try:
            self.manifest = Manifest(layout.state_dir / "manifest.sqlite", create=writable)
            self.config = self._settle_config(config or IndexConfig())
            recorded = self.manifest.get_meta("embedder")
            if not writable and recorded is None:
                raise IndexUnavailable(f"{layout.state_dir}: the index is empty; run `memvault index`")
            chosen = recorded if not writable else self.config.embedder or recorded or DEFAULT_EMBEDDER
            self.embedder = embedder or load_embedder(chosen)
            self.rebuilt = self.manifest.reset
            if writable:
                self._settle_writer(recorded)
            else:
                self.vectors = self._open_vectors()
            self.bm25 = BM25Index()
            self.payloads: dict[str, dict[str, Any]] = {}
            self.bm25_loaded = load_bm25
            self._load_bm25()
        except BaseException:
            os.close(self._lock_fd)
            raise

    def _settle_config(self, config: IndexConfig) -> IndexConfig:
        """The Qdrant location is sticky: once indexed into a server, later opens use it too.
        `--qdrant-url embedded` goes back to the embedded store."""
        recorded = self.manifest.get_meta("qdrant_url") or None
        url = config.qdrant_url if config.qdrant_url is not None else recorded
        url = None if url in ("", "embedded") else url
        collection = self.manifest.get_meta("collection") if config.qdrant_url is None else None
        return IndexConfig(
            config.embedder, url, config.qdrant_api_key, collection or config.collection, config.tokenizer
        )

    def _settle_writer(self, recorded: str | None) -> None:
        if self.manifest.reset:
            self.manifest.set_meta("dirty", "1")  # a store may hold points this new manifest never saw
            if not self.manifest.damaged and not self.config.qdrant_url and self._edge_path().exists():
                _warn(f"{self.manifest.path}: missing while a vector store exists; rebuilding the index")
        if recorded is not None and recorded != self.embedder.name:
            _warn(f"embedder changed from {recorded} to {self.embedder.name}: rebuilding the index")
            self._drop_derived()
        previous_url = self.manifest.get_meta("qdrant_url") or None
        if previous_url != self.config.qdrant_url and self.manifest.get_meta("store"):
            _warn(f"vector store moved to {self.config.qdrant_url or 'the embedded store'}: reindexing into it")
            self._drop_derived()
        self.vectors = self._open_vectors()
        for key, value in (
            ("embedder", self.embedder.name),
            ("dim", str(self.embedder.dim)),
            ("store", self.vectors.description),
            ("qdrant_url", self.config.qdrant_url or ""),
            ("collection", self.config.collection),
        ):
            self.manifest.set_meta(key, value)
        if self.manifest.get_meta("dirty") == "1":
            self.repair()
        elif getattr(self.vectors, "created", False) and self.manifest.chunk_count():
            _warn(f"{self.vectors.description}: the vector store was missing; re-adding every note to it")
            self.repair()
        if self.manifest.get_meta("chunker") != CHUNKER_VERSION:
            self.manifest.invalidate(self.manifest.files())  # re-chunk all; unchanged text stays cached
            self.manifest.set_meta("chunker", CHUNKER_VERSION)

    @staticmethod
    def _take_lock(path: Path) -> int:
        fd = try_lock(path)
        if fd is None:
            raise StoreLocked(f"{path.parent}: the index is open in another memvault process")
        return fd

    def _edge_path(self) -> Path:
        return self.layout.state_dir / "vectors"

    def _open_vectors(self) -> VectorStore:
        name, dim = self.embedder.name, self.embedder.dim
        cfg = self.config
        for attempt in range(2):
            try:
                if cfg.qdrant_url:
                    return ClientStore.connect(cfg.qdrant_url, cfg.qdrant_api_key, cfg.collection, name, dim)
                return EdgeStore(self._edge_path(), name, dim, create=self.writable)
            except StoreMismatch as exc:
                if attempt or cfg.qdrant_url or not self.writable:
                    raise
                _warn(f"{exc}: rebuilding the vector store")
            except StoreLocked:
                raise
            except StoreError as exc:
                if attempt or cfg.qdrant_url or not self.writable:
                    raise
                _warn(f"{exc}: the vector store is corrupt, rebuilding it from the notes")
            self._drop_derived()
        raise AssertionError("unreachable")

    def _drop_derived(self) -> None:
        """Forget every indexed file and remove the embedded vector store; notes are untouched."""
        vectors = getattr(self, "vectors", None)
        if vectors is not None:
            with contextlib.suppress(StoreError):  # a broken store is being thrown away anyway
                vectors.close()
            del self.vectors
        if not self.config.qdrant_url:
            _remove_tree(self._edge_path())
        self.manifest.clear_index()
        self.manifest.set_meta("dirty", "0")
        self.rebuilt = True

    def rebuild(self) -> None:
        """`index --rebuild`: drop all derived data (a server collection's points too) and start empty."""
        if self.config.qdrant_url:
            ids = self.vectors.ids()
            self.vectors.delete(sorted(ids))
        self._drop_derived()
        self.vectors = self._open_vectors()
        self.bm25 = BM25Index()
        self.payloads = {}

    def recover(self, reason: str) -> None:
        """The manifest or the embedded store broke while open (deleted or garbled under us):
        say so in one line, drop all derived data and reopen empty; notes are untouched, and
        the caller's next reconcile rebuilds everything from them."""
        _warn(f"{reason}: rebuilding the index from the notes")
        try:
            if self.manifest.replaced():
                raise sqlite3.DatabaseError("replaced")
            self._drop_derived()
        except sqlite3.DatabaseError:
            vectors = getattr(self, "vectors", None)
            if vectors is not None:
                with contextlib.suppress(StoreError):
                    vectors.close()
                del self.vectors
            self.manifest.recreate()
            _remove_tree(self._edge_path())
        self._settle_writer(None)
        self.manifest.set_meta("tokenizer", self.tokenizer.version)
        self.bm25 = BM25Index()
        self.payloads = {}

    def repair(self) -> None:
        """After a crash mid-write: delete points the manifest does not know, re-read files whose points are missing."""
        known = {cid: payload["path"] for cid, payload, _ in self.manifest.iter_chunks(with_tokens=False)}
        stored = self.vectors.ids()
        orphans = stored - known.keys()
        if orphans:
            self.vectors.delete(sorted(orphans))
        missing = {known[cid] for cid in known.keys() - stored}
        self.manifest.invalidate(sorted(missing))
        self.vectors.flush()
        self.manifest.set_meta("dirty", "0")

    def _load_bm25(self) -> None:
        """Restore BM25 from stored token counts; re-tokenise stored text only if the tokenizer changed."""
        recorded = Tokenizer.from_version(self.manifest.get_meta("tokenizer"))
        if not self.writable:
            if recorded is None:
                raise IndexUnavailable("the index was built with an older tokenizer; run `memvault index`")
            self.tokenizer = recorded
        else:
            wanted = Tokenizer.named(self.config.tokenizer) if self.config.tokenizer else None
            self.tokenizer = wanted or recorded or DEFAULT_TOKENIZER
            if self.tokenizer != recorded:
                cut = self.tokenizer
                self.manifest.set_tokens((cid, dict(Counter(cut(text)))) for cid, text in self.manifest.iter_texts())
                self.manifest.set_meta("tokenizer", self.tokenizer.version)
        if not self.bm25_loaded:
            return
        for chunk_id, payload, counts in self.manifest.iter_chunks():
            self.bm25.add(chunk_id, counts or {})
            self.payloads[chunk_id] = payload

    def close(self) -> None:
        try:
            vectors = getattr(self, "vectors", None)
            if vectors is not None:
                vectors.close()
            self.manifest.close()
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
        _warn(f"{path}: could not be removed; moved aside to {aside}")
