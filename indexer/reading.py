"""What a search reads of an open index, as methods: the rows and payloads of its candidates, each
retriever's ranked list, and the few facts of the whole index its stages ask (a date range held, a script
present, the newest day, how many chunks still wait for their vector).

`Reads` answers them from the manifest and the vector store (`indexer.index.Index` is one);
`indexer.remote.RemoteIndex` answers the same from a server collection alone, for a reader with no
local index. `Reader` is what `memvault.search` takes: either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from memvault.indexer import deferred
from memvault.indexer.filters import FilterSpec
from memvault.indexer.rows import ChunkRow, FileRow

if TYPE_CHECKING:
    import numpy as np

    from memvault.indexer.embed_cache import EmbedCache
    from memvault.indexer.embedders.base import Embedder
    from memvault.indexer.manifest import Manifest
    from memvault.indexer.tokenizer import Tokenizer
    from memvault.indexer.vectors import VectorStore


class Reader(Protocol):
    """An open index as a search reads it."""

    embedder: Embedder
    tokenizer: Tokenizer | None

    def vector_store(self) -> VectorStore: ...
    def chunk_ids(self, rel: str | None = None) -> list[str]: ...
    def chunk_rows(self, ids: Sequence[str]) -> dict[str, ChunkRow]: ...
    def payloads(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...
    def bm25_top(self, tokens: list[str], k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]: ...
    def unheard(self, words: Sequence[str]) -> list[str]: ...
    def vector_top(self, vector: np.ndarray, k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]: ...
    def any_dated(self, low: str, high: str) -> bool: ...
    def has_script(self, script: str) -> bool: ...
    def script_counts(self) -> dict[str, int]: ...
    def newest_date(self, kind: str) -> str | None: ...
    def waiting_share(self) -> tuple[int, int]: ...
    def chunk_vectors(self, payloads: Mapping[str, Mapping[str, Any]], ids: list[str]) -> dict[str, np.ndarray]: ...
    def close(self) -> None: ...


class Reads:
    """The reads of `Reader` over a manifest and a vector store (the attributes `indexer.index.Index` sets)."""

    manifest: Manifest
    embedder: Embedder
    cache: EmbedCache
    writable: bool
    tokenizer: Tokenizer | None
    _unstored: set[str] | None
    _script_counts: tuple[tuple[int, int], dict[str, int]] | None = None  # (the manifest's stamp, counts)

    def vector_store(self) -> VectorStore:
        raise NotImplementedError

    def files(self) -> dict[str, FileRow]:
        return self.manifest.files()

    def chunk_ids(self, rel: str | None = None) -> list[str]:
        return self.manifest.chunk_ids(rel)

    def chunk_rows(self, ids: Sequence[str]) -> dict[str, ChunkRow]:
        return self.manifest.get_chunks(ids)

    def payloads(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The filter payloads of these chunks (those still indexed)."""
        return {cid: row.payload for cid, row in self.manifest.get_chunks(ids, text=False).items()}

    def unheard(self, words: Sequence[str]) -> list[str]:
        """The words of a query no chunk holds (as BM25 reads them: each of its tokens held nowhere)."""
        if self.tokenizer is None:
            return []
        tokens = {w: self.tokenizer(w) for w in words}
        held = self.manifest.bm25.held([t for ts in tokens.values() for t in ts])
        return [w for w, ts in tokens.items() if ts and held.isdisjoint(ts)]

    def bm25_top(self, tokens: list[str], k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        """The best `k` by BM25 among chunks the filter admits (filtered before the cut), ties by id."""
        allowed = None if flt is None else self.manifest.slots_matching(flt)
        best = self.manifest.bm25.top(tokens, k, allowed)
        ids = self.manifest.ids_of_slots([slot for slot, _ in best])
        lost = [slot for slot, _ in best if slot not in ids]
        if lost:  # only a damaged manifest: postings and chunk rows are written in one transaction
            raise sqlite3.DatabaseError(f"BM25 postings name chunk slot {lost[0]}, which has no chunk row")
        return sorted(((ids[slot], score) for slot, score in best), key=lambda item: (-item[1], item[0]))[:k]

    def vector_top(self, vector: np.ndarray, k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        """The dense top `k`, less any point an edit left unstored (`indexer.deferred`): the index lock
        keeps writers out while this reader is open, so the list is read once."""
        if self._unstored is None:
            self._unstored = set() if self.writable else deferred.unstored(self.manifest.db)
        found = self.vector_store().search(vector, k + len(self._unstored), flt)
        return [hit for hit in found if hit[0] not in self._unstored][:k] if self._unstored else found

    def any_dated(self, low: str, high: str) -> bool:
        return self.manifest.any_dated(low, high)

    def has_script(self, script: str) -> bool:
        return self.manifest.has_script(script)

    def script_counts(self) -> dict[str, int]:
        """Chunks with a vector, by script. Counted again only when the manifest changed (by this
        connection or another): the count walks the script index, 30 ms at 100k chunks."""
        db = self.manifest.db
        stamp = (db.execute("PRAGMA data_version").fetchone()[0], db.total_changes)
        known = self._script_counts
        if known is None or known[0] != stamp:
            rows = db.execute("SELECT script, COUNT(*) FROM chunks WHERE embedded = 1 GROUP BY script")
            known = self._script_counts = (stamp, {script: int(n) for script, n in rows})
        return dict(known[1])

    def newest_date(self, kind: str) -> str | None:
        return self.manifest.newest_date(kind)

    def waiting_share(self) -> tuple[int, int]:
        """(chunks still without a vector, all chunks): the dense list covers the rest."""
        waiting = self.manifest.waiting_count()
        return waiting, len(self.manifest.bm25) if waiting else 0

    def chunk_vectors(self, payloads: Mapping[str, Mapping[str, Any]], ids: list[str]) -> dict[str, np.ndarray]:
        """The cached vector of each chunk (by its content hash), for those the cache holds; the cache is
        read without touching it."""
        hashes = {cid: p["content_hash"] for cid in ids if (p := payloads.get(cid)) and p.get("content_hash")}
        cached = self.cache.get(self.embedder.name, list(set(hashes.values())), touch=False)
        return {cid: cached[h] for cid, h in hashes.items() if h in cached}

    def recalls(self) -> dict[str, tuple[float, int]]:
        """When each entry (by `vault.entries.entry_key`) was last among a search's hits, and how often."""
        return self.manifest.recalls()

    def recalled(self, entries: Sequence[str], when: float) -> None:
        self.manifest.record_recalls(entries, when)


def own_words_top(reader: Reader, tokens: list[str], k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
    """BM25's best `k` among the units that hold one of the query's tokens in their own words: an entry's
    heading path and text, not the entries before it, which BM25 reads with it (`vault.model.bm25_text`)
    to rank a turn of a conversation by what was said around it. Those lift an entry that says a word of
    the query; one that says none matched only through its neighbours, and is no BM25 hit."""
    wanted = set(tokens)
    asked = k
    while True:
        ranked = reader.bm25_top(tokens, asked, flt)
        rows = reader.chunk_rows([cid for cid, _ in ranked if cid])
        own = [(cid, score) for cid, score in ranked if cid in rows and _says_one(reader, rows[cid], wanted)]
        if len(own) >= k or len(ranked) < asked:
            return own[:k]
        asked *= 4  # many matched through their neighbours alone: look further down


def _says_one(reader: Reader, row: ChunkRow, wanted: set[str]) -> bool:
    if row.payload.get("unit") != "entry" or reader.tokenizer is None:
        return True  # a unit of text is read as it is: what matched is its own
    return not wanted.isdisjoint(reader.tokenizer(f"{row.context}\n{row.text}" if row.context else row.text))
