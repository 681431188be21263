"""Vector stores behind one protocol: Qdrant Edge in-process (default) and a Qdrant server via qdrant-client.

Each store records the embedder name and dimension it was built with; a
store opened with a different embedder is reported as a mismatch, so the
caller rebuilds instead of mixing vectors from two models.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

from memvault.indexer.filters import FilterSpec
from memvault.indexer.lease import MARKER, WriterLease
from memvault.indexer.store_errors import StoreError, StoreLocked, StoreMismatch, from_server, open_fault
from memvault.indexer.store_files import remove_store_files
from memvault.vault.logger import log

# the payload fields a vector search filters on (`FilterSpec`); each index costs memory per point
KEYWORD_FIELDS = ("path", "kind", "section", "tags", "script")
_EDGE_META = "memvault-collection.json"
# a server collection's layout: 2 holds a named dense vector and BM25 as a sparse one (`indexer.sparse`)
LAYOUT, DENSE, BM25 = 2, "dense", "bm25"
Sparse = tuple[list[int], list[float]]  # a sparse vector: indices ascending, values


class VectorStore(Protocol):
    description: str
    holds_bm25: bool  # the store keeps each point's BM25 vector too: `upsert` takes the units' tokens

    def upsert(self, ids: Sequence[str], vectors: Sequence[np.ndarray], payloads: Sequence[dict[str, Any]],
               tokens: Sequence[list[str]] | None = None) -> None: ...  # fmt: skip

    def delete(self, ids: Sequence[str]) -> None: ...

    def search(self, vector: np.ndarray, limit: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]: ...

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    def ids(self) -> set[str]: ...

    def clear(self) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def _check_meta(found: dict[str, Any] | None, embedder: str, dim: int, where: str) -> None:
    if found is not None and (found.get("embedder"), found.get("dim")) != (embedder, dim):
        raise StoreMismatch(
            f"{where}: built with {found.get('embedder')} ({found.get('dim')} dims), not {embedder} ({dim} dims)"
        )


class EdgeStore:
    """Qdrant Edge shard in `<vault>/.memvault/vectors/`: exact search, WAL, payload indexes."""

    holds_bm25 = False  # the manifest's BM25 answers beside it

    def __init__(self, path: Path, embedder: str, dim: int, create: bool = True) -> None:
        """`create=False` (readers): a missing store is an error, never an empty store made on the spot,
        which would hide from the next writer that every point is gone."""
        import qdrant_edge as e

        self._e = e
        self.path = path
        self.description = f"qdrant-edge:{path}"
        meta_file = path / _EDGE_META
        try:
            found = json.loads(meta_file.read_text()) if meta_file.exists() else None
        except (OSError, ValueError) as exc:
            raise StoreError(f"{meta_file}: unreadable store metadata ({exc})") from None
        _check_meta(found, embedder, dim, str(path))
        self.created = False  # True: a new, empty store; whatever the manifest says was indexed is not in it
        self.writable = create
        self._unflushed = False  # a write since the last flush: a flush with none would only cost its fsyncs
        try:
            if found is not None and (path / "edge_config.json").exists():
                self.shard = e.EdgeShard.load(str(path))
            elif not create:
                raise StoreError(f"{path}: no vector store; run `memvault index`")
            else:
                self.created = True
                if path.exists():
                    remove_store_files(path)  # half-created: nothing of value in it
                path.mkdir(parents=True)
                self.shard = self._create(path, dim)
                self._unflushed = True
                meta_file.write_text(json.dumps({"embedder": embedder, "dim": dim}))
        except StoreError:
            raise
        except Exception as exc:  # Edge raises bare Exception with a message
            message = str(exc)
            if "WouldBlock" in message:
                raise StoreLocked(f"{path}: vector store is open in another process") from None
            raise StoreError(f"{path}: cannot open vector store ({message.splitlines()[0]})") from None

    def _create(self, path: Path, dim: int) -> Any:
        e = self._e
        shard = e.EdgeShard.create(
            str(path),
            e.EdgeConfig(
                # vectors and payloads stay in their files, mapped: an exact search reads every vector
                # anyway, and kept in RAM too they doubled a daemon's memory (100k chunks: 575 -> 350 MiB)
                vectors=e.EdgeVectorParams(size=dim, distance=e.Distance.Cosine, memory=e.Memory.Cold),
                payload_memory=e.Memory.Cold,
                optimizers=e.EdgeOptimizersConfig(indexing_threshold=0),  # exact search: no HNSW at vault scale
            ),
        )
        for field in KEYWORD_FIELDS:
            shard.update(e.UpdateOperation.create_field_index(field, e.PayloadSchemaType.Keyword))
        shard.update(e.UpdateOperation.create_field_index("date", e.PayloadSchemaType.Datetime))
        return shard

    def _write(self, what: str, operation: Any) -> None:
        """Every write goes through here: Edge raises bare Exception when its files were deleted or
        damaged under it, and callers rebuild on `StoreError`."""
        self._unflushed = True
        try:
            self.shard.update(operation)
        except Exception as exc:
            raise StoreError(f"{self.path}: vector store {what} failed ({str(exc).splitlines()[0]})") from None

    def upsert(self, ids: Sequence[str], vectors: Sequence[np.ndarray], payloads: Sequence[dict[str, Any]],
               tokens: Sequence[list[str]] | None = None) -> None:  # fmt: skip
        points = [self._e.Point(i, v.tolist(), p) for i, v, p in zip(ids, vectors, payloads, strict=True)]
        for start in range(0, len(points), 512):
            self._write("upsert", self._e.UpdateOperation.upsert_points(points[start : start + 512]))

    def delete(self, ids: Sequence[str]) -> None:
        gone: list[Any] = list(ids)  # (its stub takes ints, UUIDs and strings alike)
        for start in range(0, len(gone), 1024):
            self._write("delete", self._e.UpdateOperation.delete_points(gone[start : start + 1024]))

    def search(self, vector: np.ndarray, limit: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        e = self._e
        request = e.QueryRequest(
            limit=limit,
            query=e.Query.Nearest(vector.tolist()),
            filter=flt.to_edge() if flt else None,
            with_payload=False,
            params=e.SearchParams(exact=True),
        )
        try:
            points = self.shard.query(request)
        except Exception as exc:  # Edge raises bare Exception; callers fall back on StoreError
            raise StoreError(f"{self.path}: vector search failed ({str(exc).splitlines()[0]})") from None
        return [(str(p.id), float(p.score)) for p in points]

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vector of each of these points that the store holds."""
        import numpy as np

        try:
            records = self.shard.retrieve(list(ids), with_payload=False, with_vector=True)
        except Exception as exc:  # as `search`
            raise StoreError(f"{self.path}: vector read failed ({str(exc).splitlines()[0]})") from None
        return {str(r.id): np.asarray(r.vector, dtype=np.float32) for r in records if isinstance(r.vector, list)}

    def ids(self) -> set[str]:
        out: set[str] = set()
        offset = None
        while True:
            records, offset = self.shard.scroll(
                self._e.ScrollRequest(offset=offset, limit=2048, with_payload=False, with_vector=False)
            )
            out.update(str(r.id) for r in records)
            if offset is None:
                return out

    def clear(self) -> None:
        self.delete(sorted(self.ids()))

    def flush(self) -> None:
        if not self._unflushed:
            return
        try:
            self.shard.flush()
            self._unflushed = False
        except Exception as exc:
            raise StoreError(f"{self.path}: vector store flush failed ({str(exc).splitlines()[0]})") from None

    def close(self) -> None:
        try:
            if self.writable:  # a reader has nothing to write back
                self.flush()
        finally:
            self.shard.close()


class ClientStore:
    """A collection on a Qdrant server or cluster (or qdrant-client's local mode, which tests use): each
    point its dense vector and its BM25 vector (`indexer.sparse`, the idf Qdrant's), so the collection holds
    both retrievers. `avgdl`, the unit length BM25 weighs by, is the collection's own, set by its first
    write and kept, so every point is weighed alike."""

    holds_bm25 = True

    def __init__(self, client: Any, collection: str, embedder: str | None, dim: int | None, description: str,
                 writable: bool = True, vault: str | None = None) -> None:  # fmt: skip
        """`embedder` None (a reader with no local index, `indexer.remote`): whatever model the collection
        was built with, read from its metadata. `vault`: the folder of the vault this writer keeps it in
        step with, which takes the collection's writer lease (`indexer.lease`)."""
        from qdrant_client import models as m

        self._m = m
        self.client = client
        self.collection = collection
        self.description = description
        # a server's collection grows past what an exact search serves in milliseconds (10 M units: bench/
        # results, issue 31), so it searches its HNSW graph at ef 128 (at 100k units in Edge: recall@20 1.000
        # against exact); below Qdrant's full_scan_threshold it searches exactly anyway. Local mode is always
        # exact and warns about search params
        self._params = m.SearchParams(hnsw_ef=128) if description.startswith("qdrant:http") else None
        self.created = not client.collection_exists(collection)
        self.meta: dict[str, Any] = {}  # embedder, dim, layout, avgdl and the writer's tokenizer (`record`)
        if self.created and not writable:
            raise StoreError(f"{description}: no such collection; a writer makes it (`memvault index --qdrant-url`)")
        if not self.created:
            self.meta = dict(client.get_collection(collection).config.metadata or {"embedder": None, "dim": None})
            if embedder is not None:
                _check_meta(self.meta, embedder, dim or 0, description)
            if self.meta.get("layout") != LAYOUT:
                if not writable:
                    raise StoreMismatch(f"{description}: made by an older memvault, without BM25; `index` rebuilds it")
                log.warning(f"{description}: made by an older memvault (dense vectors only): rebuilding it with BM25")
                client.delete_collection(collection)
                self.created = True
        if self.created:
            assert embedder is not None and dim is not None
            self._create(embedder, dim)
            self.meta = {"embedder": embedder, "dim": dim, "layout": LAYOUT}
        self.lease = WriterLease(client, collection, description, vault) if writable and vault else None
        # another writer's, or a collection from before leases: the caller brings it in step with its vault
        self.taken_from = self.lease.take() if self.lease is not None else None
        if self.created:
            self.taken_from = None

    def _create(self, embedder: str, dim: int) -> None:
        m, client, collection = self._m, self.client, self.collection
        client.create_collection(
            collection,
            vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.COSINE)},
            sparse_vectors_config={BM25: m.SparseVectorParams(modifier=m.Modifier.IDF)},
            metadata={"embedder": embedder, "dim": dim, "layout": LAYOUT},
        )
        for field in KEYWORD_FIELDS:
            client.create_payload_index(collection, field, m.PayloadSchemaType.KEYWORD)
        client.create_payload_index(collection, "date", m.PayloadSchemaType.DATETIME)

    @property
    def avgdl(self) -> float | None:
        """The unit length BM25 weighs by: the collection's own, set by its first write (`indexer.sparse`)."""
        return self.meta.get("avgdl")

    @from_server
    def record(self, **fields: Any) -> None:
        """Fields of the collection's metadata (the others are kept), which every reader of it reads."""
        self.client.update_collection(self.collection, metadata=fields)
        self.meta.update(fields)

    def _writing(self) -> None:
        if self.lease is not None:
            self.lease.keep()

    @classmethod
    def connect(cls, url: str, api_key: str | None, collection: str, embedder: str | None, dim: int | None,
                writable: bool = True, vault: str | None = None) -> ClientStore:  # fmt: skip
        import warnings

        from qdrant_client import QdrantClient

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # local mode warns that payload indexes do nothing there
                if url.startswith(("http://", "https://")):
                    client = QdrantClient(url=url, api_key=api_key, timeout=30, check_compatibility=False)
                else:
                    client = QdrantClient(path=url.removeprefix("local:"))
                return cls(client, collection, embedder, dim, f"qdrant:{url}/{collection}", writable, vault)
        except StoreError:
            raise
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise StoreLocked(f"{url}: vector store is open in another process") from None
            raise StoreError(f"{url}: cannot open Qdrant ({exc})") from None
        except Exception as exc:
            raise open_fault(url, exc) from None

    @from_server
    def upsert(self, ids: Sequence[str], vectors: Sequence[np.ndarray], payloads: Sequence[dict[str, Any]],
               tokens: Sequence[list[str]] | None = None) -> None:  # fmt: skip
        from memvault.indexer.sparse import unit_vector

        m = self._m
        if not ids:
            return
        self._writing()
        if tokens is None:
            raise StoreError(f"{self.description}: a point needs its BM25 tokens too")
        if self.avgdl is None:  # the first write: its units' mean length weighs every later one
            self.record(avgdl=round(sum(map(len, tokens)) / len(tokens), 3) if tokens and any(tokens) else 1.0)
        avgdl = self.avgdl
        assert avgdl is not None
        sparse = [unit_vector(t, avgdl) for t in tokens]
        points = [
            m.PointStruct(id=i, vector={DENSE: v.tolist(), BM25: m.SparseVector(indices=s[0], values=s[1])}, payload=p)
            for i, v, p, s in zip(ids, vectors, payloads, sparse, strict=True)
        ]
        for start in range(0, len(points), 256):
            self.client.upsert(self.collection, points=points[start : start + 256])

    @from_server
    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._writing()
            self.client.delete(self.collection, points_selector=self._m.PointIdsList(points=list(ids)))

    @from_server
    def search(self, vector: np.ndarray, limit: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        result = self.client.query_points(
            self.collection,
            query=vector.tolist(),
            using=DENSE,
            query_filter=flt.to_client() if flt else None,
            limit=limit,
            with_payload=False,
            search_params=self._params,
        )
        return [(str(p.id), float(p.score)) for p in result.points]

    @from_server
    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        import numpy as np

        if not ids:
            return {}
        found = self.client.retrieve(self.collection, list(ids), with_payload=False, with_vectors=[DENSE])
        pairs = ((str(p.id), p.vector.get(DENSE) if isinstance(p.vector, dict) else p.vector) for p in found)
        return {pid: np.asarray(vector, dtype=np.float32) for pid, vector in pairs if vector is not None}

    @from_server
    def bm25(self, query: Sparse, limit: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        """The best `limit` points by BM25 (`indexer.sparse.query_vector`), best first."""
        result = self.client.query_points(
            self.collection,
            query=self._m.SparseVector(indices=query[0], values=query[1]),
            using=BM25,
            query_filter=flt.to_client() if flt else None,
            limit=limit,
            with_payload=False,
        )
        return [(str(p.id), float(p.score)) for p in result.points]

    @from_server
    def ids(self) -> set[str]:
        out: set[str] = set()
        offset = None
        while True:
            records, offset = self.client.scroll(
                self.collection, limit=2048, offset=offset, with_payload=False, with_vectors=False
            )
            out.update(str(r.id) for r in records)
            if offset is None:
                return out - {MARKER}

    @from_server
    def count(self) -> int:
        """How many points the collection holds, the lease's marker aside (the server counts them)."""
        units = self._m.Filter(must_not=[self._m.HasIdCondition(has_id=[MARKER])])
        return int(self.client.count(self.collection, count_filter=units, exact=True).count)

    @from_server
    def clear(self) -> None:
        """Every point gone (one request, however many: the server deletes them), and the unit length with
        them: the next write sets it afresh (`index --rebuild`). The lease's marker stays."""
        self._writing()
        units = self._m.Filter(must_not=[self._m.HasIdCondition(has_id=[MARKER])])
        self.client.delete(self.collection, points_selector=self._m.FilterSelector(filter=units))
        self.record(avgdl=None)

    def flush(self) -> None:
        self._writing()  # the end of a pass: a daemon renews its lease at each rescan, writing or not
        # (the server persists each acknowledged write)

    def close(self) -> None:
        try:
            if self.lease is not None:
                self.lease.release()
        finally:
            self.client.close()
