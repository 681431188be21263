"""BM25 as a sparse vector (`indexer.sparse`): through a real Qdrant collection (qdrant-client's local mode,
the client API a server speaks) with `Modifier.IDF`, the vectors score every unit as BM25 with Lucene's idf,
computed here from the token lists alone; indices agree across processes; colliding tokens count as one."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from collections import Counter

import pytest

from memvault.indexer.sparse import query_vector, term_index, unit_vector
from memvault.indexer.tokenizer import DEFAULT

TEXTS = [
    "The kayak trip to the lake was moved to Saturday because of the storm.",
    "Saturday: kayak rental at the north shore, two kayaks, paddles included.",
    "Storm warning for the lake district; the ferry does not run on Saturday.",
    "Ada prefers green tea in the morning and black coffee after lunch.",
    "周六去湖边划皮划艇，因为暴风雨推迟了。",
    "我们在北岸租了两艘皮划艇。",
    "The release of memvault 0.2 is planned for the first week of December.",
    "Green tea, not coffee: Ada said so twice in the standup.",
]
QUERIES = ["kayak trip Saturday", "storm lake ferry", "Ada green tea coffee", "皮划艇 周六", "release December week"]


def _lucene_bm25(docs: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25 over token lists with Lucene's idf, ln(1 + (N - n + 0.5) / (n + 0.5)); a repeated query token
    counts again."""
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    df = Counter(t for doc in docs for t in set(doc))
    out = []
    for doc in docs:
        tf = Counter(doc)
        score = 0.0
        for t in query:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(score)
    return out


def test_a_collection_with_idf_scores_as_bm25(tmp_path):
    from qdrant_client import QdrantClient
    from qdrant_client import models as m

    docs = [DEFAULT(text) for text in TEXTS]
    avgdl = sum(map(len, docs)) / len(docs)
    client = QdrantClient(path=str(tmp_path / "qdrant"))
    try:
        client.create_collection(
            "units", vectors_config={}, sparse_vectors_config={"bm25": m.SparseVectorParams(modifier=m.Modifier.IDF)}
        )
        points = []
        for i, tokens in enumerate(docs):
            indices, values = unit_vector(tokens, avgdl)
            points.append(m.PointStruct(id=i, vector={"bm25": m.SparseVector(indices=indices, values=values)}))
        client.upsert("units", points)
        for query in QUERIES:
            tokens = DEFAULT(query)
            indices, values = query_vector(tokens)
            found = client.query_points("units", query=m.SparseVector(indices=indices, values=values), using="bm25",
                                        limit=len(docs)).points  # fmt: skip
            expected = _lucene_bm25(docs, tokens)
            assert found and {p.id for p in found} == {i for i, s in enumerate(expected) if s > 0}, query
            for p in found:
                assert p.score == pytest.approx(expected[p.id], rel=1e-5), (query, p.id)
            assert [p.score for p in found] == sorted((p.score for p in found), reverse=True), query
    finally:
        client.close()


def test_indices_are_the_same_in_every_process():
    tokens = ["kayak", "皮划艇", "memvault", "2026"]
    code = "import sys; from memvault.indexer.sparse import term_index; print([term_index(t) for t in sys.argv[1:]])"
    run = [sys.executable, "-c", code, *tokens]
    envs = [{**os.environ, "PYTHONHASHSEED": seed} for seed in ("1", "2")]
    seen = {subprocess.run(run, capture_output=True, text=True, check=True, env=env).stdout for env in envs}
    assert seen == {f"{[term_index(t) for t in tokens]}\n"}
    assert all(0 <= term_index(t) < 2**32 for t in tokens) and len({term_index(t) for t in tokens}) == len(tokens)


def test_tokens_on_one_index_count_as_one_token():
    first: dict[int, str] = {}
    for n in itertools.count():  # a birthday search: about 2^16 tokens before two share 32 bits
        token = f"t{n}"
        if (index := term_index(token)) in first:
            pair = (first[index], token)
            break
        first[index] = token
    indices, values = unit_vector([*pair, "other"], avgdl=3.0)
    assert len(indices) == 2
    both = values[indices.index(term_index(pair[0]))]
    assert both == pytest.approx(2 * 2.5 / (2 + 1.5))  # tf 2 in a unit of average length
    assert query_vector([pair[0], pair[1], pair[0]]) == ([term_index(pair[0])], [3.0])
