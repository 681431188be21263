"""Opening a vault's index: the lock, the choices it was built with, and the migrations a writer owes.

Opening takes `<vault>/.memvault/index.lock`, so a second owner fails fast
with `StoreLocked` instead of queueing behind the first. A writer settles
every reason to rebuild (new schema, another model, another store, another
tokenizer or chunker, a crash mid-write) before anyone reads; a reader never
changes anything and raises `IndexUnavailable` instead, so search can fall
back to the files.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memvault.indexer import deferred
from memvault.indexer.config import IndexConfig
from memvault.indexer.embedders import DEFAULT_EMBEDDER, load_embedder
from memvault.indexer.embedders.base import Embedder
from memvault.indexer.index import Index
from memvault.indexer.manifest import REBUILDING, IndexUnavailable, Manifest
from memvault.indexer.quickcheck import settled
from memvault.indexer.tokenizer import DEFAULT as DEFAULT_TOKENIZER
from memvault.indexer.tokenizer import Tokenizer
from memvault.indexer.vectors import ClientStore, StoreLocked
from memvault.vault.chunking import VERSION as CHUNKER_VERSION
from memvault.vault.errors import unwritable
from memvault.vault.locks import held_here, hold, release
from memvault.vault.logger import log
from memvault.vault.paths import Layout, make_state_dir, state_problem


def open_index(
    layout: Layout,
    config: IndexConfig | None = None,
    embedder: Embedder | None = None,
    writable: bool = True,
    defer: bool = False,
) -> Index:
    """Open (and, for a writer, migrate) the index; nothing per chunk is read here. `defer`: a
    writer whose index owes nothing leaves the vector store closed until a write needs it
    (`indexer.deferred`: a small pass then does not open it at all)."""
    manifest_path = layout.state_dir / "manifest.sqlite"
    problem = state_problem(layout)
    if problem and not writable:
        raise IndexUnavailable(problem)
    if not writable and not manifest_path.exists():
        raise IndexUnavailable(f"{layout.state_dir}: no index yet; run `memvault index`")
    make_state_dir(layout)
    lock_fd = _take_lock(layout.state_dir / "index.lock")
    try:
        manifest = Manifest(manifest_path, create=writable)
        config = _settle_config(manifest, config or IndexConfig())
        recorded = manifest.get_meta("embedder")
        if not writable and recorded is None:
            raise IndexUnavailable(f"{layout.state_dir}: the index is empty; run `memvault index`")
        chosen = recorded if not writable else config.embedder or recorded or DEFAULT_EMBEDDER
        index = Index(layout, lock_fd, manifest, config, embedder or load_embedder(chosen), writable)
        if writable:
            settle_writer(index, recorded, defer)
        # a reader opens the vector store when it is first asked (`Index.vector_store`): a BM25 search never
        # pays for it (the embedded store's load is 40-50 ms)
        index.tokenizer = _settle_tokenizer(index)
        return index
    except BaseException:
        release(lock_fd)
        raise


def recover(index: Index, reason: str) -> None:
    """The manifest or the embedded store broke while open (deleted or garbled under a daemon): say
    so in one line, drop all derived data and open it again, empty; the caller's next reconcile
    rebuilds everything from the notes."""
    log.warning(f"{reason}: rebuilding the index from the notes")
    index.reset("drop")
    settle_writer(index, None)
    assert index.tokenizer is not None
    index.manifest.set_meta("tokenizer", index.tokenizer.version)


def settle_writer(index: Index, recorded: str | None, defer: bool = False) -> None:
    """A writer's migrations, in order: a new manifest, another model, another store, a crash mid-write;
    with `defer`, none of them owed, the store waits (opened, and settled, by `Index.vector_store`)."""
    manifest, config = index.manifest, index.config
    if defer and _owes_nothing(index, recorded):
        index.store_waits = True
        return
    if manifest.created:
        manifest.set_meta("dirty", "1")  # a store may hold points this new manifest never saw
        if not (manifest.damaged or manifest.upgraded) and not config.qdrant_url and index.edge_path.exists():
            log.warning(f"{manifest.path}: missing while a vector store exists; rebuilding the index")
    if manifest.upgraded and not config.qdrant_url:  # the embedded store's layout may have changed too
        index.reset("drop")  # (issue 17: vectors kept in their files, not in RAM); the cache refills it
    if recorded is not None and recorded != index.embedder.name:
        log.warning(f"embedder changed from {recorded} to {index.embedder.name}: rebuilding the index")
        index.reset("drop")
    if (manifest.get_meta("qdrant_url") or None) != config.qdrant_url and manifest.get_meta("store"):
        log.warning(f"vector store moved to {config.qdrant_url or 'the embedded store'}: reindexing into it")
        index.reset("drop")
    index.open_vectors()
    assert index.vectors is not None
    taken = getattr(index.vectors, "taken_from", None)
    if taken is not None:
        log.warning(f"{index.vectors.description}: last written by {taken or 'a memvault before writer leases'}: "
                    "bringing it in step with this vault")  # fmt: skip
        manifest.set_meta("dirty", "1")
    for key, value in (
        ("embedder", index.embedder.name),
        ("dim", str(index.embedder.dim)),
        ("store", index.vectors.description),
        ("qdrant_url", config.qdrant_url or ""),
        ("collection", config.collection),
    ):
        manifest.set_meta(key, value)
    if manifest.get_meta(REBUILDING) == "1":  # killed between clearing a collection and forgetting its rows
        log.warning(f"{index.vectors.description}: a rebuild was cut short; rebuilding it")
        index.reset("rebuild")
    deferred.settle(manifest, index.vectors)  # the points an edit left unstored, before any other store write
    if manifest.get_meta("dirty") == "1":
        index.reset("repair")
    elif getattr(index.vectors, "created", False) and manifest.chunk_count():
        log.warning(f"{index.vectors.description}: the vector store was missing; re-adding every note to it")
        index.reset("repair")
    elif isinstance(index.vectors, ClientStore) and (held := index.vectors.count()) != (
        listed := manifest.chunk_count() - manifest.waiting_count()
    ):  # points gone behind the manifest's back (or killed mid-way in a way no mark records)
        log.warning(f"{index.vectors.description}: holds {held} points where this vault's index lists {listed}; "
                    "bringing it in step")  # fmt: skip
        index.reset("repair")
    if manifest.get_meta("chunker") != CHUNKER_VERSION:
        manifest.invalidate(manifest.files())  # re-chunk all; unchanged text stays cached
        manifest.set_meta("chunker", CHUNKER_VERSION)


def _owes_nothing(index: Index, recorded: str | None) -> bool:
    """Every check of `settle_writer` would pass without changing anything, and few chunks wait: the
    embedded store of this model, where the manifest says, its files as memvault last left them (a
    store damaged or changed since is found by opening it), no write cut short, this chunker."""
    manifest, edge = index.manifest, index.edge_path
    return (
        not (manifest.created or manifest.upgraded or index.config.qdrant_url)
        and settled(index.layout)
        and recorded == index.embedder.name
        and manifest.get_meta("store") == f"qdrant-edge:{edge}"
        and (edge / "edge_config.json").is_file()
        and manifest.get_meta("dirty") == "0"
        and manifest.get_meta("chunker") == CHUNKER_VERSION
        and manifest.waiting_count() < deferred.DEFER_CHUNKS
    )


def _settle_config(manifest: Manifest, config: IndexConfig) -> IndexConfig:
    """The Qdrant location is sticky: once indexed into a server, later opens use it too.
    `--qdrant-url embedded` goes back to the embedded store."""
    recorded = manifest.get_meta("qdrant_url") or None
    url = config.qdrant_url if config.qdrant_url is not None else recorded
    url = None if url in ("", "embedded") else url
    collection = manifest.get_meta("collection") if config.qdrant_url is None else None
    return dataclasses.replace(config, qdrant_url=url, collection=collection or config.collection)


def _settle_tokenizer(index: Index) -> Tokenizer:
    """A reader uses the variant the index recorded (stored counts only match queries cut the same
    way); a writer given another variant re-tokenises the stored text, without re-embedding."""
    manifest = index.manifest
    recorded = Tokenizer.from_version(manifest.get_meta("tokenizer"))
    if not index.writable:
        if recorded is None:
            raise IndexUnavailable("the index was built with an older tokenizer; run `memvault index`")
        return recorded
    wanted = Tokenizer.named(index.config.tokenizer) if index.config.tokenizer else None
    chosen = wanted or recorded or DEFAULT_TOKENIZER
    if chosen != recorded:
        manifest.retokenize(chosen)
        manifest.set_meta("tokenizer", chosen.version)
    _tell_collection(index, chosen)
    return chosen


def _tell_collection(index: Index, tokenizer: Tokenizer) -> None:
    """A server collection's BM25 vectors are cut by its writer's tokenizer, and a reader with no local index
    cuts its queries as the collection records (`indexer.remote`). Vectors cut another way are made again:
    every chunk waits, and the embedding cache, not the model, gives its dense vector back."""
    store = index.vectors
    if not isinstance(store, ClientStore) or store.meta.get("tokenizer") == tokenizer.version:
        return
    if store.meta.get("tokenizer") is not None or not store.created:
        index.manifest.mark_waiting(sorted(index.manifest.embedded_ids()))
    store.record(tokenizer=tokenizer.version)


def _take_lock(path: Path) -> int:
    try:
        fd = hold(path)
    except OSError as exc:  # a vault that cannot be written: one line naming it (`vault.errors.unwritable`)
        raise unwritable(exc, path, path.parent.parent) or exc from None
    if fd is None and held_here(path):  # (a Vault of the Python API left open, then another opened)
        raise StoreLocked(f"{path.parent}: the index is open in this process already; close the Vault that "
                          "opened it first (`with Vault(...) as vault:`)")  # fmt: skip
    if fd is None:
        raise StoreLocked(f"{path.parent}: the index is open in another memvault process")
    return fd
