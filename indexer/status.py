"""`memvault status`: what is on disk against what is indexed, read without taking the index lock."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memvault.vault.days import figures, read_day
from memvault.vault.logger import log
from memvault.vault.paths import Layout, state_problem
from memvault.vault.scan import scan_vault


def _dir_bytes(path: os.PathLike[str] | str) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def vault_status(layout: Layout) -> dict[str, Any]:
    """The `status --json` object; its keys are a public interface."""
    on_disk = {e.rel: e for e in scan_vault(layout)}
    problem = state_problem(layout)
    if problem:  # what the files say still holds; nothing is indexed
        log.warning(problem)
    manifest = layout.state_dir / "manifest.sqlite"
    files: dict[str, tuple[int, int, str, str | None]] = {}
    meta: dict[str, str] = {}
    chunks, waiting = 0, 0
    if manifest.exists():
        db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=10)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta"))
            files = {
                r[0]: (r[1], r[2], r[3], r[4])
                for r in db.execute("SELECT path, size, mtime_ns, status, error FROM files")
            }
            chunks = int(db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
            waiting = int(db.execute("SELECT COUNT(*) FROM chunks WHERE embedded = 0").fetchone()[0])
            if meta.get("rebuilding") == "1":  # (`manifest.REBUILDING`) a rebuild cut short: every point goes in again
                waiting = chunks
        except sqlite3.DatabaseError:  # also a manifest of an older format, until the next `index`
            meta, files, chunks, waiting = {"store": "unreadable manifest"}, {}, 0, 0
        finally:
            db.close()
    failures = [
        {"path": rel, "reason": row[3] or "unknown"}
        for rel, row in sorted(files.items())
        if row[2] == "failed" and rel in on_disk
    ]
    pending = [
        rel
        for rel, entry in on_disk.items()
        if rel not in files or (files[rel][0], files[rel][1]) != (entry.size, entry.mtime_ns)
    ]
    indexed = [rel for rel, row in files.items() if row[2] == "indexed" and rel in on_disk and rel not in pending]
    last = meta.get("last_reconcile")
    return {
        "vault": str(layout.root),
        "files_on_disk": len(on_disk),
        "files_indexed": len(indexed),
        "files_pending": len(pending),
        "files_failed": len(failures),
        "failures": failures,
        "chunks": chunks,
        "vectors": {"embedded": chunks - waiting, "total": chunks, "waiting": waiting},
        "embedder": meta.get("embedder"),
        "store": meta.get("store"),
        "index_bytes": _dir_bytes(layout.state_dir) if layout.state_dir.exists() else 0,
        "last_reconcile": dt.datetime.fromtimestamp(float(last), dt.UTC).isoformat(timespec="seconds")
        if last
        else None,
        "today": _today(layout),
        "embedding_cache": _cache(manifest),
    }


def _cache(manifest: Path) -> dict[str, Any]:
    from memvault.indexer.embed_cache import cache_figures  # (sqlite alone, when status reads it)

    return cache_figures(manifest.with_name("embeddings.sqlite"))  # `manifest.cache_path`


def _today(layout: Layout) -> dict[str, Any] | None:
    """Today's daily note in figures (as `memvault recent` gives them), or None before its first entry."""
    path = layout.daily_note(dt.date.today())
    note = read_day(layout, path) if path.is_file() else None
    return asdict(figures(note)) if note is not None else None
