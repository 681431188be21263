"""Do the stores, the manifest and the files agree? Used by tests and `memvault index --verify`."""

from __future__ import annotations

import hashlib

from memvault.indexer.index import Index
from memvault.vault.chunking import chunk_note
from memvault.vault.fileio import decode_note
from memvault.vault.notes import parse_note
from memvault.vault.scan import scan_vault


def store_disagreements(index: Index) -> list[str]:
    """How the vector store and BM25 differ from the manifest's chunks (empty when they agree)."""
    problems = []
    listed = index.manifest.embedded_ids()  # chunks still waiting for their vector are not in the store
    stored = index.vector_store().ids()
    if stored != listed:
        problems.append(f"vector store has {len(stored - listed)} unknown and lacks {len(listed - stored)} points")
    count = index.manifest.chunk_count()
    if len(index.manifest.bm25) != count:
        problems.append(f"BM25 holds {len(index.manifest.bm25)} chunks, the manifest {count}")
    return problems


def disagreements(index: Index) -> list[str]:
    """Every way the index differs from the notes on disk; empty when they agree exactly."""
    problems = store_disagreements(index)
    files = index.files()
    on_disk = {e.rel: e for e in scan_vault(index.layout)}
    for rel in sorted(files.keys() - on_disk.keys()):
        problems.append(f"{rel}: indexed but not on disk")
    for rel, entry in sorted(on_disk.items()):
        row = files.get(rel)
        if row is None:
            problems.append(f"{rel}: on disk but not indexed")
            continue
        if entry.error:
            if row.status != "failed":
                problems.append(f"{rel}: should be failed ({entry.error})")
            continue
        data = entry.path.read_bytes()
        if row.status == "failed":
            continue
        if hashlib.sha256(data).hexdigest() != row.sha256:
            problems.append(f"{rel}: manifest hash is stale")
            continue
        expected = {c.id: c for c in chunk_note(parse_note(rel, decode_note(data, rel).text))}
        have = index.chunk_rows(index.chunk_ids(rel))
        if expected.keys() != have.keys():
            problems.append(f"{rel}: chunk ids differ from the file")
        elif any(
            (c.content_hash, c.start_line, c.end_line) != (have[i].content_hash, have[i].start_line, have[i].end_line)
            for i, c in expected.items()
        ):
            problems.append(f"{rel}: chunk contents or lines differ from the file")
    return problems
