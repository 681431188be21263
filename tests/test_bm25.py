"""The incremental index against the oracle, rank_bm25.BM25Okapi, after random adds and removes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from indexer.bm25 import BM25Index

VOCAB = ["a", "b", "c", "d", "e", "f", "g", "向量", "存储", "引擎"]
docs_st = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=12)
ops_st = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 15), docs_st),
        st.tuples(st.just("remove"), st.integers(0, 15), st.just([])),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(ops_st, st.lists(st.sampled_from([*VOCAB, "zzz"]), min_size=1, max_size=5))
def test_scores_match_rank_bm25_after_adds_and_removes(ops, query):
    index = BM25Index()
    live: dict[str, list[str]] = {}
    for op, n, tokens in ops:
        doc_id = f"d{n}"
        if op == "add":
            index.add_tokens(doc_id, tokens)
            live[doc_id] = tokens
        else:
            index.remove(doc_id)
            live.pop(doc_id, None)
    assert len(index) == len(live)
    if not any(live.values()):  # rank-bm25 divides by zero on a corpus of empty documents
        assert index.scores(query) == {}
        return
    ids = sorted(live)
    oracle = BM25Okapi([live[i] for i in ids]).get_scores(query)
    ours = index.scores(query)
    mine = np.array([ours.get(i, 0.0) for i in ids])
    np.testing.assert_allclose(mine, oracle, rtol=0, atol=1e-9)


def test_top_respects_allow_before_the_cut():
    index = BM25Index()
    for i in range(20):
        index.add_tokens(f"d{i:02}", ["apple"] * (i + 1) + ["pad"] * 5)
    for i in range(40):  # apple must be rare for its idf to be positive
        index.add_tokens(f"other{i}", ["pear", "pad"])
    best = index.top(["apple"], 3)
    assert [d for d, _ in best] == ["d19", "d18", "d17"]
    allowed = index.top(["apple"], 3, allow=lambda d: int(d[1:]) < 5)
    assert [d for d, _ in allowed] == ["d04", "d03", "d02"]
