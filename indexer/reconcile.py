"""Bring the index in line with the files: the one code path behind `index`, the watcher and the daemon.

Per batch of changed files: embed what the cache lacks, write the vector
store, then commit the manifest; BM25 (in memory, restored from the
manifest) follows the commit. A `dirty` mark brackets the store writes so a
crash between them is repaired when the index is next opened.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from indexer.faults import crash_point
from indexer.filters import payload_for
from indexer.index import Index
from indexer.vectors import StoreError, StoreLocked
from vault.chunking import chunk_note
from vault.errors import NoteReadError
from vault.fileio import read_note
from vault.model import Chunk
from vault.notes import parse_note
from vault.scan import FileEntry, scan_vault, stat_entry

BATCH_CHUNKS = 256


@dataclass
class ReconcileStats:
    """The `index --json` summary; these keys are a public interface."""

    files_scanned: int = 0
    files_changed: int = 0
    files_failed: int = 0
    chunks_embedded: int = 0
    chunks_deleted: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        return out


@dataclass
class _Parsed:
    entry: FileEntry
    sha: str
    chunks: list[Chunk]
    payloads: list[dict[str, Any]]


def _read(entry: FileEntry) -> tuple[str, str]:
    """(sha256, text) of one note; raises NoteReadError naming it."""
    note = read_note(entry.path, entry.rel, size=entry.size, missing="vanished before it could be read")
    return note.sha256, note.text


class Reconciler:
    """One reconcile pass over an open `Index`."""

    def __init__(self, index: Index, progress: bool = False) -> None:
        self.index = index
        self.manifest = index.manifest
        self.stats = ReconcileStats()
        self.progress = progress
        self.problems: list[str] = []

    def run(self, paths: Iterable[str] | None = None) -> ReconcileStats:
        """Reconcile the whole vault, or only the given vault-relative paths (the watcher's case)."""
        started = time.perf_counter()
        if self.manifest.replaced():  # deleted under a running daemon: writes would go to a file no one sees
            raise sqlite3.DatabaseError(f"{self.manifest.path}: deleted or replaced while open")
        known = self.manifest.files()
        if paths is None:
            entries = list(scan_vault(self.index.layout))
            vanished = sorted(known.keys() - {e.rel for e in entries})
        else:
            wanted = sorted(set(paths))
            entries = [e for e in (stat_entry(self.index.layout, p) for p in wanted) if e is not None]
            present = {e.rel for e in entries}
            vanished = [p for p in wanted if p in known and p not in present]
        self.stats.files_scanned = len(entries)
        for rel in vanished:
            self._remove(rel)
        batch: list[_Parsed] = []
        for entry in self._progress(entries):
            parsed = self._check(entry, known.get(entry.rel))
            if parsed is None:
                continue
            batch.append(parsed)
            if sum(len(p.chunks) for p in batch) >= BATCH_CHUNKS:
                self._apply(batch)
                batch = []
        if batch:
            self._apply(batch)
        self.index.vectors.flush()
        self.manifest.set_meta("dirty", "0")  # every store write above is matched in the manifest now
        self.manifest.set_meta("last_reconcile", str(time.time()))
        self.stats.seconds = time.perf_counter() - started
        return self.stats

    def _progress(self, entries: list[FileEntry]) -> Iterable[FileEntry]:
        if not self.progress or not sys.stderr.isatty():
            return entries
        from tqdm import tqdm

        return tqdm(entries, desc="indexing", unit="file", file=sys.stderr, leave=False)

    def _check(self, entry: FileEntry, row) -> _Parsed | None:
        """Decide what a file needs, reading it only when its size or mtime moved."""
        if entry.error:
            if row is None or row.status != "failed" or row.error != entry.error:
                self._fail(entry, "", entry.error)
            self.stats.files_failed += 1
            return None
        if row is not None and (row.size, row.mtime_ns) == (entry.size, entry.mtime_ns):
            self.stats.files_failed += row.status == "failed"
            return None
        try:
            sha, text = _read(entry)
        except NoteReadError as exc:
            self._fail(entry, "", str(exc))
            self.stats.files_failed += 1
            return None
        if row is not None and row.sha256 == sha:
            if row.status == "failed":
                self.stats.files_failed += 1
            self.manifest.touch_file(entry.rel, entry.size, entry.mtime_ns)
            return None
        note = parse_note(entry.rel, text)
        if note.problem:
            self.problems.append(note.problem)
        chunks = chunk_note(note)
        return _Parsed(entry, sha, chunks, [payload_for(note, c) for c in chunks])

    def _fail(self, entry: FileEntry, sha: str, error: str) -> None:
        old = self.manifest.chunk_ids(entry.rel)
        self._delete_points(old)
        self.manifest.record_failure(entry.rel, entry.size, entry.mtime_ns, sha, error)
        self._drop_from_memory(old)
        self.problems.append(error)

    def _remove(self, rel: str) -> None:
        old = self.manifest.chunk_ids(rel)
        self._delete_points(old)
        self.manifest.forget_file(rel)
        self._drop_from_memory(old)

    def _delete_points(self, ids: list[str]) -> None:
        if ids:
            self.manifest.set_meta("dirty", "1")
            self.index.vectors.delete(ids)
            self.stats.chunks_deleted += len(ids)

    def _drop_from_memory(self, ids: Iterable[str]) -> None:
        for chunk_id in ids:
            self.index.bm25.remove(chunk_id)
            self.index.payloads.pop(chunk_id, None)

    def _vectors_for(self, chunks: list[Chunk]) -> np.ndarray:
        """Vectors for every chunk: cached by (model, content hash), the rest embedded once each."""
        model = self.index.embedder.name
        hashes = list(dict.fromkeys(c.content_hash for c in chunks))
        cached = self.manifest.cached_vectors(model, hashes)
        todo = [h for h in hashes if h not in cached]
        if todo:
            text_of = {c.content_hash: c.text for c in chunks}
            fresh = self.index.embedder.embed_passages([text_of[h] for h in todo])
            new = dict(zip(todo, fresh, strict=True))
            self.manifest.cache_vectors(model, new)
            cached.update(new)
            self.stats.chunks_embedded += len(todo)
        crash_point("after-embed")
        return np.stack([cached[c.content_hash] for c in chunks]) if chunks else np.zeros((0, 1))

    def _apply(self, batch: list[_Parsed]) -> None:
        chunks = [c for p in batch for c in p.chunks]
        vectors = self._vectors_for(chunks)
        self.manifest.set_meta("dirty", "1")
        if chunks:
            self.index.vectors.upsert([c.id for c in chunks], vectors, [pl for p in batch for pl in p.payloads])
        crash_point("after-upsert")
        for parsed in batch:
            old = set(self.manifest.chunk_ids(parsed.entry.rel))
            stale = sorted(old - {c.id for c in parsed.chunks})
            self._delete_points(stale)
        crash_point("after-delete")
        self.index.vectors.flush()
        for parsed in batch:
            rel = parsed.entry.rel
            old = self.manifest.chunk_ids(rel)
            tokens = [dict(Counter(self.index.tokenizer(c.text))) for c in parsed.chunks]
            self.manifest.record_file(
                rel, parsed.sha, parsed.entry.size, parsed.entry.mtime_ns, parsed.chunks, parsed.payloads, tokens
            )
            crash_point("mid-manifest")
            self._drop_from_memory(old)
            for chunk, payload, counts in zip(parsed.chunks, parsed.payloads, tokens, strict=True):
                self.index.bm25.add(chunk.id, counts)
                self.index.payloads[chunk.id] = payload
            self.stats.files_changed += 1
        self.manifest.set_meta("dirty", "0")


def reconcile(
    index: Index, paths: Iterable[str] | None = None, progress: bool = False, problems: list[str] | None = None
) -> ReconcileStats:
    """One reconcile pass; `problems` collects the per-file warnings.

    If the manifest or the embedded store breaks under it (deleted or garbled while open),
    the derived data is dropped and the whole vault reconciled again from the notes, so a
    daemon heals itself instead of failing every batch until it is restarted."""
    reconciler = Reconciler(index, progress)
    try:
        stats = reconciler.run(paths)
    except (sqlite3.DatabaseError, StoreError) as exc:
        if isinstance(exc, StoreLocked) or index.config.qdrant_url or not index.writable:
            raise
        index.recover(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        reconciler = Reconciler(index, progress)
        stats = reconciler.run()
    if problems is not None:
        problems.extend(reconciler.problems)
    return stats
