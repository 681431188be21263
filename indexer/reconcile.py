"""Bring the index in line with the files: the one code path behind `index`, the watcher and the daemon.

This module decides what each note needs (nothing, a stat update, a failure
with its reason, new chunks) by reading it only when its size or mtime moved;
`Index` stores the changes in batches, in the order that keeps its stores
recoverable after a crash. A pass has two steps: every changed note is chunked
and put into BM25 first (searchable within seconds), then the chunks whose
vectors the cache lacks are embedded, which the daemon does in the background.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from memvault.indexer.deferred import DEFER_FILES
from memvault.indexer.filters import payload_for
from memvault.indexer.index import Index
from memvault.indexer.opening import recover
from memvault.indexer.rows import FileChunks
from memvault.indexer.vectors import StoreError, StoreLocked
from memvault.vault.catalog import sync as sync_catalog
from memvault.vault.chunking import chunk_note
from memvault.vault.days import summary_problem
from memvault.vault.errors import NoteReadError
from memvault.vault.fileio import read_note
from memvault.vault.notes import parse_note
from memvault.vault.scan import FileEntry, scan_vault, stat_entry

BATCH_CHUNKS = 256
_DAY = re.compile(r"^daily/\d{4}-\d{2}-\d{2}\.md$")


@dataclass
class ReconcileStats:
    """The `index --json` summary; these keys are a public interface."""

    files_scanned: int = 0
    files_changed: int = 0
    files_failed: int = 0
    chunks_embedded: int = 0
    chunks_deleted: int = 0
    chunks_waiting: int = 0  # still without a vector after this pass (the daemon embeds them in the background)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        return out


def _read(entry: FileEntry) -> tuple[str, str]:
    """(sha256, text) of one note; raises NoteReadError naming it."""
    note = read_note(entry.path, entry.rel, size=entry.size, missing="vanished before it could be read")
    return note.sha256, note.text


class Reconciler:
    """One reconcile pass over an open `Index`."""

    def __init__(
        self, index: Index, progress: bool = False, embed: bool = True, pause: Callable[[], None] | None = None
    ) -> None:
        self.index = index
        self.embed = embed
        self.pause = pause  # called between batches: a daemon lets searches in there
        self.stats = ReconcileStats()
        self.progress = progress
        self.problems: list[str] = []
        self.changed: set[str] = set()  # notes re-chunked or gone in this pass

    def run(self, paths: Iterable[str] | None = None) -> ReconcileStats:
        """Reconcile the whole vault, or only the given vault-relative paths (the watcher's case)."""
        started = time.perf_counter()
        self.index.check_alive()
        known = self.index.files()
        if paths is None:
            entries = list(scan_vault(self.index.layout))
            vanished = sorted(known.keys() - {e.rel for e in entries})
        else:
            wanted = sorted(set(paths))
            entries = [e for e in (stat_entry(self.index.layout, p) for p in wanted) if e is not None]
            present = {e.rel for e in entries}
            vanished = [p for p in wanted if p in known and p not in present]
        self.stats.files_scanned = len(entries)
        self._store_needed(len(vanished))
        for rel in vanished:
            self.stats.chunks_deleted += self.index.forget(rel)
        self.changed.update(vanished)
        batch: list[FileChunks] = []
        for entry in self._progress(entries):
            parsed = self._check(entry, known.get(entry.rel))
            if parsed is None:
                continue
            batch.append(parsed)
            if sum(len(p.chunks) for p in batch) >= BATCH_CHUNKS:
                self._apply(batch)
                batch = []
        if batch:  # a pass this small (an edit) embeds its new chunks with their text: one store flush
            self._apply(batch, embed=self.embed and not self.stats.files_changed)
        if self.embed and not self.index.store_waits:  # the whole vault's waiting chunks, or the paths'
            self.stats.chunks_embedded += self._embed(None if paths is None else sorted(set(paths)))
        self.stats.chunks_waiting = self.index.manifest.waiting_count()
        self.index.settle(time.time())
        if self.index.writable:  # the derived catalog follows the days' summaries (it reads what changed)
            self.problems += sync_catalog(self.index.layout, self.changed_years, self.changed_days)
        self.stats.seconds = time.perf_counter() - started
        return self.stats

    def _progress(self, entries: list[FileEntry]) -> Iterable[FileEntry]:
        if not self.progress or not sys.stderr.isatty():
            return entries
        from tqdm import tqdm

        return tqdm(entries, desc="indexing", unit="file", file=sys.stderr, leave=False)

    def _embed(self, paths: list[str] | None) -> int:
        """Embed what waits, with a bar on a terminal: chunks done of all, rate and time left."""
        if not self.progress or not sys.stderr.isatty():
            return self.index.embed_waiting(paths)
        from tqdm import tqdm

        total = len(self.index.waiting(paths)) if paths is not None else self.index.manifest.waiting_count()
        with tqdm(total=total, desc="embedding", unit="chunk", file=sys.stderr, leave=False) as bar:
            return self.index.embed_waiting(paths, progress=bar.update)

    def _check(self, entry: FileEntry, row) -> FileChunks | None:
        """Decide what a file needs, reading it only when its size or mtime moved."""
        if entry.error:
            if row is None or row.status != "failed" or row.error != entry.error:
                self._fail(entry, entry.error)
            self.stats.files_failed += 1
            return None
        if row is not None and (row.size, row.mtime_ns) == (entry.size, entry.mtime_ns):
            self.stats.files_failed += row.status == "failed"
            return None
        try:
            sha, text = _read(entry)
        except NoteReadError as exc:
            self._fail(entry, str(exc))
            self.stats.files_failed += 1
            return None
        if row is not None and row.sha256 == sha:
            if row.status == "failed":
                self.stats.files_failed += 1
            self.index.touch(entry.rel, entry.size, entry.mtime_ns)
            return None
        note = parse_note(entry.rel, text)
        for problem in (note.problem, summary_problem(note)):
            if problem:
                self.problems.append(problem)
        chunks = chunk_note(note)
        return FileChunks(entry.rel, sha, entry.size, entry.mtime_ns, chunks, [payload_for(note, c) for c in chunks])

    def _fail(self, entry: FileEntry, error: str) -> None:
        self.stats.chunks_deleted += self.index.fail(entry.rel, entry.size, entry.mtime_ns, error)
        self.problems.append(error)

    @property
    def changed_days(self) -> set[dt.date]:
        out = set()
        for rel in self.changed:
            if _DAY.match(rel):
                with contextlib.suppress(ValueError):  # daily/2026-02-30.md: a note, not a day
                    out.add(dt.date.fromisoformat(rel[6:16]))
        return out

    @property
    def changed_years(self) -> set[int]:
        return {int(rel[6:10]) for rel in self.changed if _DAY.match(rel)}

    def _store_needed(self, notes: int) -> None:
        """A pass that changes more than an edit's few notes opens the store its writer let wait."""
        if self.index.store_waits and len(self.changed) + notes > DEFER_FILES:
            self.index.vector_store()

    def _apply(self, batch: list[FileChunks], embed: bool = False) -> None:
        self._store_needed(len(batch))
        self.changed.update(f.rel for f in batch)
        embedded = self.index.embed_cache["misses"]
        self.stats.chunks_deleted += self.index.apply(batch, embed)
        self.stats.chunks_embedded += self.index.embed_cache["misses"] - embedded
        self.stats.files_changed += len(batch)
        if self.pause is not None:
            self.pause()


def reconcile(
    index: Index,
    paths: Iterable[str] | None = None,
    progress: bool = False,
    problems: list[str] | None = None,
    embed: bool = True,
    pause: Callable[[], None] | None = None,
) -> ReconcileStats:
    """One reconcile pass; `problems` collects the per-file warnings. `embed=False` leaves the
    chunks that wait for vectors to the caller (the daemon embeds them in the background).

    If the manifest or the embedded store breaks under it (deleted or garbled while open),
    the derived data is dropped and the whole vault reconciled again from the notes, so a
    daemon heals itself instead of failing every batch until it is restarted."""
    paths = None if paths is None else list(paths)
    reconciler = Reconciler(index, progress, embed, pause)
    try:
        stats = reconciler.run(paths)
    except (sqlite3.DatabaseError, StoreError) as exc:
        if isinstance(exc, StoreLocked) or index.config.qdrant_url or not index.writable:
            raise
        recover(index, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        reconciler = Reconciler(index, progress, embed, pause)
        stats = reconciler.run()
    if problems is not None:
        problems.extend(reconciler.problems)
    return stats
