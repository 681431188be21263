"""The open index of one vault: manifest, vector store, BM25 and embedder, owned by one process.

Opening takes `<vault>/.memvault/index.lock`, so a second owner fails fast
with `StoreLocked` instead of queueing behind the first. Opening also
settles every reason to rebuild (new schema, other embedder, other
tokenizer, a crash mid-write) before anyone reads from the index.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.bm25 import BM25Index
from indexer.embedder import DEFAULT_EMBEDDER, Embedder, load_embedder
from indexer.manifest import Manifest
from indexer.tokenizer import VERSION as TOKENIZER_VERSION
from indexer.tokenizer import tokenize
from indexer.vectors import ClientStore, EdgeStore, StoreError, StoreLocked, StoreMismatch, VectorStore
from vault.paths import Layout


@dataclass(frozen=True)
class IndexConfig:
    """Choices that shape the derived data; `None` means keep what the index was built with."""

    embedder: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    collection: str = "memvault"

    @classmethod
    def from_env(cls, embedder: str | None = None, qdrant_url: str | None = None) -> IndexConfig:
        return cls(
            embedder=embedder or os.environ.get("MEMVAULT_EMBEDDER") or None,
            qdrant_url=qdrant_url or os.environ.get("MEMVAULT_QDRANT_URL") or None,
            qdrant_api_key=os.environ.get("QDRANT_API_KEY") or None,
            collection=os.environ.get("MEMVAULT_COLLECTION") or "memvault",
        )


def _warn(message: str) -> None:
    print(f"memvault: {message}", file=sys.stderr)


class Index:
    """State kept while the stores are open; use as a context manager or call `close()`."""

    def __init__(self, layout: Layout, config: IndexConfig | None = None, embedder: Embedder | None = None) -> None:
        self.layout = layout
        self.config = config or IndexConfig()
        layout.state_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = self._take_lock(layout.state_dir / "index.lock")
        try:
            self.manifest = Manifest(layout.state_dir / "manifest.sqlite")
            recorded = self.manifest.get_meta("embedder")
            self.embedder = embedder or load_embedder(self.config.embedder or recorded or DEFAULT_EMBEDDER)
            self.rebuilt = self.manifest.reset
            if self.manifest.reset:
                self.manifest.set_meta("dirty", "1")  # a store may hold points this new manifest never saw
            if recorded is not None and recorded != self.embedder.name:
                _warn(f"embedder changed from {recorded} to {self.embedder.name}: rebuilding the index")
                self._drop_derived()
            self.vectors = self._open_vectors()
            self.manifest.set_meta("embedder", self.embedder.name)
            self.manifest.set_meta("dim", str(self.embedder.dim))
            self.manifest.set_meta("store", self.vectors.description)
            if self.manifest.get_meta("dirty") == "1":
                self.repair()
            self.bm25 = BM25Index()
            self.payloads: dict[str, dict[str, Any]] = {}
            self._load_bm25()
        except BaseException:
            os.close(self._lock_fd)
            raise

    @staticmethod
    def _take_lock(path: Path) -> int:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreLocked(f"{path.parent}: the index is open in another memvault process") from None
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
                return EdgeStore(self._edge_path(), name, dim)
            except StoreMismatch as exc:
                if attempt or cfg.qdrant_url:
                    raise
                _warn(f"{exc}: rebuilding the vector store")
            except StoreLocked:
                raise
            except StoreError as exc:
                if attempt or cfg.qdrant_url:
                    raise
                _warn(f"{exc}: the vector store is corrupt, rebuilding it from the notes")
            self._drop_derived()
        raise AssertionError("unreachable")

    def _drop_derived(self) -> None:
        """Forget every indexed file and remove the embedded vector store; notes are untouched."""
        vectors = getattr(self, "vectors", None)
        if vectors is not None:
            vectors.close()
            del self.vectors
        if not self.config.qdrant_url:
            shutil.rmtree(self._edge_path(), ignore_errors=True)
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
        if self.manifest.get_meta("tokenizer") != TOKENIZER_VERSION:
            self.manifest.set_tokens((cid, dict(Counter(tokenize(text)))) for cid, text in self.manifest.iter_texts())
            self.manifest.set_meta("tokenizer", TOKENIZER_VERSION)
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
