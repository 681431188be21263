"""A no-change `memvault index` at the cost of the directory walk, before anything heavy is imported.

The full pass (`indexer.opening.open_index`, then `indexer.reconcile`) opens the whole index (numpy,
the vector store, the tokenizer, the embedder) and only then learns that no note changed. `unchanged`
answers that question first, with the standard library: the walk `vault.scan.scan_vault` does (only
`stat`), the manifest's `files` and `meta` tables through a read-only connection, and the catalog's
state. When every note is the version the manifest recorded, the index was built as this run would
open it, and nothing else is owed, it returns the stats the full pass would have printed, having
written nothing. Anything else, or anything it cannot judge, gives None: the full pass runs, and it
stays the authority.

What only opening the stores would find (a garbled manifest page or vector WAL) is found by their
files' `stat` instead: `record` notes them whenever memvault closes stores it opened and found sound
(after a full pass, after a search that found them as recorded), and stores whose files differ from
that record (damaged, or written by some other process) take the full pass.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from memvault.vault.catalog import in_sync as catalog_in_sync
from memvault.vault.config import Settings, load_settings
from memvault.vault.errors import MemvaultError
from memvault.vault.fileio import atomic_write
from memvault.vault.locks import try_lock
from memvault.vault.paths import Layout
from memvault.vault.scan import scan_vault

# What an index must have been built with for the full pass to keep it as it is, copied because
# importing the originals costs numpy, frontmatter or the CJK regexes (tests/test_quickcheck.py keeps
# the copies equal): `indexer.manifest.SCHEMA_VERSION`, `vault.chunking.VERSION`, the versions of
# `indexer.tokenizer.VARIANTS`, and the embedded store's files as `indexer.vectors.EdgeStore` writes them.
MANIFEST_SCHEMA = "7"
CHUNKER_VERSION = "c9"
DEFER_CHUNKS = 32  # `indexer.deferred.DEFER_CHUNKS`
TOKENIZERS = tuple(
    f"t2:{cjk}{stop}{stem}" for cjk in ("search", "lcut") for stop in ("", "+stop") for stem in ("", "+stem")
)
EDGE_META = "memvault-collection.json"
EDGE_CONFIG = "edge_config.json"
SETTLED = "settled.json"  # in the state folder: the stores' files as memvault last left them (`record`)


def unchanged(
    layout: Layout, embedder: str | None = None, tokenizer: str | None = None, qdrant_url: str | None = None
) -> dict[str, Any] | None:
    """The `index --json` stats of a pass that would change nothing, or None when the full pass must
    run. The arguments are `index`'s own; `--rebuild` always takes the full pass (the caller's part)."""
    started = time.perf_counter()
    manifest = layout.state_dir / "manifest.sqlite"
    if not manifest.is_file():
        return None
    try:
        settings = load_settings(layout.root, embedder=embedder, tokenizer=tokenizer, qdrant_url=qdrant_url)
        lock = try_lock(layout.state_dir / "index.lock")
    except (MemvaultError, OSError):
        return None  # the full pass says what is wrong
    if lock is None:
        return None  # a daemon owns the index (the full pass asks it), or another process writes to it
    try:  # the index lock held, as the full pass holds it: no writer changes the manifest meanwhile
        failed = _unchanged(layout, manifest, settings)
    except (MemvaultError, OSError, ValueError, sqlite3.Error):
        return None
    finally:
        os.close(lock)
    if failed is None:
        return None
    walked, failed_notes, waiting = failed
    return {"files_scanned": walked, "files_changed": 0, "files_failed": failed_notes, "chunks_embedded": 0,
            "chunks_deleted": 0, "chunks_waiting": waiting,
            "seconds": round(time.perf_counter() - started, 3)}  # fmt: skip


def record(layout: Layout) -> None:
    """Note the stores' files as they are now: called once memvault has closed stores it found sound."""
    lock = try_lock(layout.state_dir / "index.lock")
    if lock is None:
        return  # another process has the index open already: the next `index` takes the full pass
    try:
        if not settled(layout):
            atomic_write(layout.state_dir / SETTLED, json.dumps(_store_files(layout), sort_keys=True).encode())
    except OSError:
        (layout.state_dir / SETTLED).unlink(missing_ok=True)
    finally:
        os.close(lock)


def settled(layout: Layout) -> bool:
    """The stores' files are as `record` last noted them."""
    try:
        return json.loads((layout.state_dir / SETTLED).read_text()) == _store_files(layout)
    except (OSError, ValueError):
        return False


def _store_files(layout: Layout) -> dict[str, list[int]]:
    """The size and mtime of the manifest, the embedding cache and every file of the embedded store;
    of the databases' WALs only their size (0 when missing: readers create it empty, the last
    connection removes it)."""
    files: dict[str, list[int]] = {}
    for name in ("manifest.sqlite", "embeddings.sqlite"):
        db, wal = layout.state_dir / name, layout.state_dir / f"{name}-wal"
        if db.exists() or name == "manifest.sqlite":
            st = db.stat()
            files[db.name] = [st.st_size, st.st_mtime_ns]
            files[wal.name] = [wal.stat().st_size if wal.exists() else 0]
    state = f"{layout.state_dir}{os.sep}"
    for dirpath, _, names in os.walk(f"{state}vectors", onerror=_raise):  # relpath cost a search 2 ms here
        for name in names:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            files[path.removeprefix(state)] = [st.st_size, st.st_mtime_ns]
    return files


def _raise(exc: OSError) -> None:
    raise exc


def _unchanged(layout: Layout, manifest: Path, settings: Settings) -> tuple[int, int, int] | None:
    """(notes walked, notes failed, chunks waiting) when nothing changed, else None."""
    if not settled(layout):
        return None
    db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=10)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        waiting = nothing_owed(db, meta) if built_as_asked(layout, meta, settings) else None
        if waiting is None:
            return None
        known = {r[0]: r[1:] for r in db.execute("SELECT path, size, mtime_ns, status, error FROM files")}
    finally:
        db.close()
    failed = _same_notes(layout, known)
    if failed is None or not catalog_in_sync(layout):  # a catalog file missing or edited: the full pass repairs it
        return None
    return len(known), failed, waiting


def built_as_asked(layout: Layout, meta: dict[str, str], settings: Settings) -> bool:
    """The index was built as this run would open it: the same embedder and tokenizer (another one
    re-embeds or re-tokenises), in the embedded store at this place, whose files are there. An index
    in a Qdrant server always takes the full pass."""
    if settings.qdrant_url or meta.get("qdrant_url") != "" or not meta.get("collection"):
        return False
    recorded = meta.get("embedder")
    if not recorded or (settings.embedder and settings.embedder != recorded) or not meta.get("dim"):
        return False
    built_with = meta.get("tokenizer")  # a tokenizer asked for by another spelling of its name: the full pass
    if built_with not in TOKENIZERS or (settings.tokenizer and f"t2:{settings.tokenizer}" != built_with):
        return False
    edge = layout.state_dir / "vectors"
    if meta.get("store") != f"qdrant-edge:{edge}" or not (edge / EDGE_CONFIG).is_file():
        return False
    store = json.loads((edge / EDGE_META).read_text())
    return isinstance(store, dict) and (store.get("embedder"), store.get("dim")) == (recorded, int(meta["dim"]))


def nothing_owed(db: sqlite3.Connection, meta: dict[str, str]) -> int | None:
    """How many chunks wait for their vectors, when the manifest owes no work of its own: its schema
    and chunker are this version's, no write was cut short (`dirty`) and fewer chunks wait than a
    full pass would embed (`indexer.deferred`; a daemon stopped before it was through leaves more).
    Else None. `db` is open read-only."""
    waiting = "SELECT COUNT(*) FROM chunks INDEXED BY chunks_waiting WHERE embedded = 0"  # (manifest.WAITING_COUNT)
    if not _settled_format(meta):
        return None
    count = int(db.execute(waiting).fetchone()[0])
    return count if count < DEFER_CHUNKS else None


def _settled_format(meta: dict[str, str]) -> bool:
    """The manifest is this version's (schema and chunker) and no write to it was cut short."""
    return (meta.get("schema"), meta.get("chunker"), meta.get("dirty")) == (MANIFEST_SCHEMA, CHUNKER_VERSION, "0")


def _same_notes(layout: Layout, known: dict[str, tuple[Any, ...]]) -> int | None:
    """How many notes are recorded as failed, when every note on disk is the version the manifest
    recorded and none is new or gone; else None."""
    changed, failed = _differences(layout, known)
    return None if changed else failed


def changed_notes(layout: Layout, most: int | None = None) -> list[str] | None:
    """The notes that are not the version the manifest recorded (new, edited, gone), by the walk alone
    and with no lock: what a search with no daemon brings in first. Every note when there is no index
    yet; None when the index owes more than its notes (another format or chunker, a write cut short),
    which is `memvault index`'s to settle, or when it records more than `most` notes (not walked)."""
    manifest = layout.state_dir / "manifest.sqlite"
    if not manifest.is_file():
        return [entry.rel for entry in scan_vault(layout)]
    db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=10)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        if not _settled_format(meta):
            return None
        if most is not None and db.execute("SELECT COUNT(*) FROM files").fetchone()[0] > most:
            return None
        known = {r[0]: r[1:] for r in db.execute("SELECT path, size, mtime_ns, status, error FROM files")}
    finally:
        db.close()
    return _differences(layout, known)[0]


def waiting_chunks(layout: Layout) -> int:
    """How many chunks wait for their vectors, when fewer than a full pass would embed (what edits
    left to the next search that ranks by meaning, `indexer.deferred`); else, or with no index, 0."""
    manifest = layout.state_dir / "manifest.sqlite"
    if not manifest.is_file():
        return 0
    db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=10)
    try:
        return nothing_owed(db, dict(db.execute("SELECT key, value FROM meta"))) or 0
    finally:
        db.close()


def _differences(layout: Layout, known: dict[str, tuple[Any, ...]]) -> tuple[list[str], int]:
    """The notes on disk that are not the version recorded (a new size or mtime, or another failure),
    then those recorded that are gone; and how many notes are recorded as failed. The test per note is
    `indexer.reconcile.Reconciler._check`'s first one: what passes it is neither read nor reported there."""
    changed: list[str] = []
    failed = 0
    seen: set[str] = set()
    for entry in scan_vault(layout):
        seen.add(entry.rel)
        row = known.get(entry.rel)
        if row is None:
            changed.append(entry.rel)
            continue
        size, mtime_ns, status, error = row
        if entry.error is not None:
            same = status == "failed" and error == entry.error
        else:
            same = (size, mtime_ns) == (entry.size, entry.mtime_ns) and status in ("indexed", "failed")
        if not same:
            changed.append(entry.rel)
        failed += status == "failed"
    return changed + sorted(known.keys() - seen), failed
