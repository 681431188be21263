"""A server collection holds both retrievers (issue 31): each point its dense vector and its BM25 vector
(`indexer.sparse`), kept in step with the notes by the one writer; tested through qdrant-client's local
mode, the client API a Qdrant server speaks."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from memvault.indexer.config import IndexConfig
from memvault.indexer.embedders import load_embedder
from memvault.indexer.opening import open_index
from memvault.indexer.reconcile import reconcile
from memvault.indexer.sparse import query_vector
from memvault.indexer.vectors import ClientStore, StoreError, StoreMismatch
from memvault.indexer.verify import disagreements
from memvault.search.engine import Searcher
from memvault.search.options import build_options
from tests.conftest import write_notes

NOTES = {
    "MEMORY.md": "# Memory\n\n## Preferences\n\n- Ada drinks green tea in the morning.\n\n"
    "## Setup\n\n- The default vault lives in ./memory.\n",
    "daily/2026-11-01.md": "# 2026-11-01\n\n## Notes\n\nThe kayak trip to the lake moved to Saturday.\n\n"
    "Qdrant Edge opens in a fraction of a second.\n",
    "projects/alpha.md": "# Alpha\n\nAlpha ships on Friday.\n\n## Risks\n\nThe build server is slow.\n",
}


@pytest.fixture(scope="module")
def model():
    return load_embedder("hash-384")


@pytest.fixture
def vault(layout):
    write_notes(layout, NOTES)
    return layout


def _open(layout, model, url, writable=True):
    return open_index(layout, IndexConfig(qdrant_url=url), embedder=model, writable=writable)


def _bm25(index, query, k=10):
    """The collection's BM25 top `k` (chunk id, score)."""
    return index.vector_store().bm25(query_vector(index.tokenizer(query)), k)


def _text(index, cid):
    return index.manifest.get_chunks([cid])[cid].text


def test_the_collection_ranks_by_bm25_as_the_manifest_does(vault, model, tmp_path):
    url = f"local:{tmp_path / 'qdrant'}"
    with _open(vault, model, url) as index:
        reconcile(index)
        assert disagreements(index) == []
        for query in ("kayak trip Saturday", "green tea", "build server slow", "Qdrant Edge"):
            mine = index.bm25_top(index.tokenizer(query), 10)
            theirs = _bm25(index, query)
            assert theirs and {c for c, _ in theirs} == {c for c, _ in mine}, query  # the chunks holding a term
            assert theirs[0][0] == mine[0][0], query
        avgdl = index.vector_store().avgdl
        assert avgdl and avgdl > 1
    (vault.root / "daily" / "2026-11-01.md").write_text("# 2026-11-01\n\n## Notes\n\nThe canoe trip is on Sunday.\n")
    (vault.root / "projects" / "alpha.md").unlink()
    with _open(vault, model, url) as index:
        reconcile(index)
        assert disagreements(index) == []
        assert "canoe" in _text(index, _bm25(index, "canoe Sunday")[0][0])
        assert _bm25(index, "kayak") == [] and _bm25(index, "Alpha Friday") == []  # edited and deleted: gone there too
        assert index.vector_store().avgdl == avgdl  # every point weighed by the collection's own length
        index.reset("rebuild")  # `index --rebuild`: the points go, and the length with them
        assert index.vector_store().avgdl is None and index.vector_store().ids() == set()
        reconcile(index)
        assert disagreements(index) == [] and index.vector_store().avgdl not in (None, avgdl)
        assert "canoe" in _text(index, _bm25(index, "canoe Sunday")[0][0])
    with _open(vault, model, url, writable=False) as reader:  # a reader sees the same collection
        assert "green tea" in _text(reader, _bm25(reader, "green tea")[0][0])


def test_an_older_collection_is_rebuilt_by_its_writer_and_refused_to_a_reader(vault, model, tmp_path, caplog):
    from qdrant_client import QdrantClient
    from qdrant_client import models as m

    path = tmp_path / "qdrant"
    old = QdrantClient(path=str(path))  # the first layout: one unnamed dense vector, no BM25
    old.create_collection("memvault", vectors_config=m.VectorParams(size=model.dim, distance=m.Distance.COSINE),
                          metadata={"embedder": model.name, "dim": model.dim})  # fmt: skip
    old.close()
    url = f"local:{path}"
    with pytest.raises(StoreMismatch, match="older memvault"):
        ClientStore.connect(url, None, "memvault", model.name, model.dim, writable=False)
    with caplog.at_level(logging.WARNING, logger="memvault"), _open(vault, model, url) as index:
        reconcile(index)
        assert "rebuilding it with BM25" in caplog.text
        assert disagreements(index) == []
        assert "kayak" in _text(index, _bm25(index, "kayak")[0][0])


def _unreachable(*args, **kwargs):
    """The fault a Qdrant server gone away raises in qdrant-client (local mode has no connection to lose)."""
    from qdrant_client.http.exceptions import ResponseHandlingException

    raise ResponseHandlingException(ConnectionRefusedError(111, "Connection refused"))


def test_with_the_server_out_of_reach_the_vaults_own_bm25_and_files_still_answer(vault, model, tmp_path):
    with _open(vault, model, f"local:{tmp_path / 'qdrant'}") as index:
        reconcile(index)
    db = sqlite3.connect(vault.state_dir / "manifest.sqlite")  # the fault: the server this vault wrote to is gone
    with db:
        db.execute("UPDATE meta SET value = 'http://127.0.0.1:9' WHERE key = 'qdrant_url'")
    db.close()
    with Searcher.open(vault, IndexConfig()) as searcher:
        hybrid = searcher.search("kayak trip", build_options(mode="hybrid"))
        vector = searcher.search("kayak trip", build_options(mode="vector"))
    assert hybrid.source == "bm25" and "vector store unavailable, BM25 only" in hybrid.reason
    assert "cannot reach Qdrant" in hybrid.reason and "kayak" in hybrid.hits[0].text
    assert vector.source == "substring" and "cannot reach Qdrant" in vector.reason and "kayak" in vector.hits[0].text


def test_a_server_that_goes_away_under_an_open_search_leaves_bm25_and_the_files(vault, model, tmp_path, monkeypatch):
    config = IndexConfig(qdrant_url=f"local:{tmp_path / 'qdrant'}")
    with _open(vault, model, config.qdrant_url) as index:
        reconcile(index)
    with Searcher(vault, open_index(vault, config, embedder=model, writable=False)) as searcher:
        assert searcher.search("kayak trip", build_options(mode="hybrid")).source == "hybrid"
        monkeypatch.setattr(searcher.index.vector_store().client, "query_points", _unreachable)
        hybrid = searcher.search("kayak trip", build_options(mode="hybrid"))
        vector = searcher.search("kayak trip", build_options(mode="vector"))
    assert hybrid.source == "bm25" and "vector store unavailable, BM25 only" in hybrid.reason
    assert "cannot reach Qdrant ([Errno 111] Connection refused)" in hybrid.reason and "kayak" in hybrid.hits[0].text
    assert vector.source == "substring" and "cannot reach Qdrant" in vector.reason and "kayak" in vector.hits[0].text


class _WrongKey(BaseHTTPRequestHandler):
    """What a Qdrant server with an API key answers a client holding another: 403 and its JSON status."""

    def do_GET(self) -> None:
        body = json.dumps({"status": {"error": "Invalid API key or JWT"}, "time": 0.0}).encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_server_that_refuses_the_key_at_open_says_so_in_one_line(model):
    server = HTTPServer(("127.0.0.1", 0), _WrongKey)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        with pytest.raises(StoreError, match=rf"^{url}: Qdrant refused the request \(.*403.*\)$"):
            ClientStore.connect(url, "not-the-key", "memvault", model.name, model.dim, writable=False)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("how", ["rrf", "dbsf"])
def test_qdrants_own_fusion_is_the_engines_rrf_k1_and_dbsf_over_the_same_lists(vault, model, tmp_path, how):
    """What a fusion query over two prefetches returns (Qdrant fusing on the server) is what memvault's
    `rrf` and `dbsf` options make of the same two lists (Qdrant's RRF k 2 counts ranks from 0: memvault's
    `rrf_k` 1): so the bench measures Qdrant's fusion through the engine's options."""
    from qdrant_client import models as m

    from memvault.indexer.vectors import BM25, DENSE
    from memvault.search.fusion import convex, rrf

    write_notes(
        vault,
        {
            "projects/beta.md": "# Beta\n\n- Beta's server runs green tea tastings.\n\n"
            "- The kayak club meets on Saturday morning.\n\n- The trip budget covers the server.\n"
        },
    )
    with _open(vault, model, f"local:{tmp_path / 'qdrant'}") as index:
        reconcile(index)
        store = index.vector_store()
        for query in ("kayak trip Saturday", "green tea morning", "build server"):
            vector, sparse = model.embed_query(query), query_vector(index.tokenizer(query))
            lists = {"bm25": store.bm25(sparse, 4), "vector": store.search(vector, 4)}
            ours = rrf(lists, k=1) if how == "rrf" else convex(lists, how="dbsf")
            theirs = store.client.query_points(
                store.collection,
                prefetch=[m.Prefetch(query=m.SparseVector(indices=sparse[0], values=sparse[1]), using=BM25, limit=4),
                          m.Prefetch(query=vector.tolist(), using=DENSE, limit=4)],
                query=m.FusionQuery(fusion=m.Fusion.RRF if how == "rrf" else m.Fusion.DBSF),
                limit=8,
            ).points  # fmt: skip
            assert len(lists["bm25"]) >= 2 and len(ours) > 2, query
            assert [c for c, _ in lists["bm25"]] != [c for c, _ in lists["vector"][:3]], query  # two orders to fuse
            doubled = {f.chunk_id: f.score * 2 for f in ours}  # memvault weighs each list 0.5, Qdrant 1
            assert {str(p.id): pytest.approx(p.score) for p in theirs} == doubled, query
