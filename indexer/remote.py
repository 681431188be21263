"""A reader with no local index: a search answered from a server collection alone (issue 31).

The collection's writer (`indexer.index.Index` over a `vectors.ClientStore`) keeps in each point what a
hit needs beside its dense and BM25 vectors: the unit's text, heading and context with its filter
payload; and in the collection's metadata the model, the tokenizer and the unit length. So a reader on
another machine, with no vault and no manifest, ranks as the writer's own search does: the query cut by
the same tokenizer into a BM25 vector (`indexer.sparse`), embedded by the same model, each list asked of
Qdrant with the filter pushed down, and the facts a search's stages ask (a dated range, a script, the
newest day) answered by counts and an ordered scroll. Nothing is held per point.

What it cannot do without the files: check a hit against its note (`search.fresh.AsIndexed` says so in
the answer), and see what the writer has not indexed yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memvault.indexer.config import IndexConfig
from memvault.indexer.filters import FilterSpec
from memvault.indexer.rows import ChunkRow
from memvault.indexer.sparse import query_vector
from memvault.indexer.store_errors import from_server
from memvault.indexer.tokenizer import Tokenizer
from memvault.indexer.vectors import ClientStore, StoreMismatch
from memvault.vault.cjk import SCRIPTS

if TYPE_CHECKING:
    import numpy as np

    from memvault.indexer.embedders.base import Embedder

HIT_FIELDS = ("text", "heading", "context")  # what a point keeps for a hit beyond its filter payload


class RemoteIndex:
    """A server collection as a search reads it (`indexer.reading.Reader`); read-only."""

    writable = False

    def __init__(self, store: ClientStore, embedder: Embedder, tokenizer: Tokenizer) -> None:
        self.store = store
        self.embedder = embedder
        self.tokenizer: Tokenizer | None = tokenizer
        self._m = store._m
        self.description = store.description

    @classmethod
    def open(cls, config: IndexConfig, embedder: Embedder | None = None) -> RemoteIndex:
        """The collection `config` names, with the model and tokenizer it was built with; StoreError
        (StoreMismatch for a collection no memvault of this version wrote) says why not."""
        from memvault.indexer.embedders import load_embedder

        assert config.qdrant_url
        store = ClientStore.connect(config.qdrant_url, config.qdrant_api_key, config.collection, None, None, False)
        try:
            tokenizer = Tokenizer.from_version(store.meta.get("tokenizer"))
            if tokenizer is None or not store.meta.get("embedder"):
                raise StoreMismatch(f"{store.description}: no tokenizer recorded; its writer's next `memvault index` "
                                    "records it")  # fmt: skip
            model = embedder or load_embedder(store.meta["embedder"])
            if model.name != store.meta["embedder"] or model.dim != store.meta.get("dim"):
                raise StoreMismatch(f"{store.description}: built with {store.meta['embedder']}, not {model.name}")
        except BaseException:
            store.close()
            raise
        return cls(store, model, tokenizer)

    def vector_store(self) -> ClientStore:
        return self.store

    # each retriever's list ----------------------------------------------------
    def bm25_top(self, tokens: list[str], k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        """The best `k` by BM25 (Qdrant's idf over the collection), ties by id as the embedded BM25's."""
        if not tokens:
            return []
        found = self.store.bm25(query_vector(tokens), k, flt)
        return sorted(found, key=lambda item: (-item[1], item[0]))

    def vector_top(self, vector: np.ndarray, k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        return self.store.search(vector, k, flt)

    def unheard(self, words: Sequence[str]) -> list[str]:
        """None known: a server collection's term counts are not read here, so no word counts as unheard."""
        return []

    # rows --------------------------------------------------------------------
    @from_server
    def _points(self, ids: Sequence[str], payload: Any = True) -> list[Any]:
        if not ids:
            return []
        return self.store.client.retrieve(self.store.collection, list(dict.fromkeys(ids)), with_payload=payload,
                                          with_vectors=False)  # fmt: skip

    def chunk_rows(self, ids: Sequence[str]) -> dict[str, ChunkRow]:
        return {row.id: row for row in map(_row, self._points(ids)) if row is not None}

    def payloads(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The filter payloads of these chunks, without their texts."""
        leave = self._m.PayloadSelectorExclude(exclude=list(HIT_FIELDS))
        return {str(p.id): dict(p.payload) for p in self._points(ids, leave) if p.payload and "path" in p.payload}

    @from_server
    def chunk_ids(self, rel: str | None = None) -> list[str]:
        """The note's chunks in line order (a correction's note, `search.corrections`; a joined hit's lines)."""
        m = self._m
        flt = None if rel is None else m.Filter(must=[m.FieldCondition(key="path", match=m.MatchValue(value=rel))])
        found: list[tuple[int, str]] = []
        offset = None
        while True:
            points, offset = self.store.client.scroll(self.store.collection, scroll_filter=flt, limit=1024,
                                                      offset=offset, with_payload=["start_line"])  # fmt: skip
            found += [(int((p.payload or {}).get("start_line", 0)), str(p.id)) for p in points if p.payload]
            if offset is None:
                return [cid for _, cid in sorted(found)]

    def chunk_vectors(self, payloads: Mapping[str, Mapping[str, Any]], ids: list[str]) -> dict[str, np.ndarray]:
        """The stored dense vector of each chunk."""
        return self.store.vectors(ids)

    # facts of the whole collection ------------------------------------------------
    @from_server
    def _count(self, *conditions: Any) -> int:
        flt = self._m.Filter(must=list(conditions))
        return self.store.client.count(self.store.collection, count_filter=flt, exact=False).count

    def any_dated(self, low: str, high: str) -> bool:
        m = self._m
        return self._count(m.FieldCondition(key="date", range=m.DatetimeRange(gte=low, lte=high))) > 0

    def has_script(self, script: str) -> bool:
        m = self._m
        return self._count(m.FieldCondition(key="script", match=m.MatchValue(value=script))) > 0

    def script_counts(self) -> dict[str, int]:
        m = self._m
        return {s: self._count(m.FieldCondition(key="script", match=m.MatchValue(value=s))) for s in SCRIPTS}

    @from_server
    def newest_date(self, kind: str) -> str | None:
        m = self._m
        points, _ = self.store.client.scroll(
            self.store.collection,
            scroll_filter=m.Filter(must=[m.FieldCondition(key="kind", match=m.MatchValue(value=kind))]),
            limit=1,
            order_by=m.OrderBy(key="date", direction=m.Direction.DESC),
            with_payload=["date"],
        )
        return (points[0].payload or {}).get("date") if points else None

    def waiting_share(self) -> tuple[int, int]:
        return 0, 0  # every point holds both vectors: the writer stores them together

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> RemoteIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row(point: Any) -> ChunkRow | None:
    """A point as the row a hit is made from; None for a point that is not a unit (no payload)."""
    payload = dict(point.payload or {})
    if "path" not in payload:
        return None
    text, heading, context = (payload.pop(f, d) for f, d in zip(HIT_FIELDS, ("", [], ""), strict=True))
    return ChunkRow(str(point.id), payload["path"], tuple(heading), payload["section"], payload["start_line"],
                    payload["end_line"], payload["content_hash"], text, payload, context)  # fmt: skip
