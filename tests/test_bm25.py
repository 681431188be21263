"""BM25 over SQLite postings against the oracle, rank_bm25.BM25Okapi (idf floor positive), after adds and removes:
both a long-lived reader (its cached postings kept in step by `changed`) and a fresh one."""

from __future__ import annotations

import math
import sqlite3

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi as Okapi

from memvault.indexer import bm25, postings


class BM25Okapi(Okapi):
    """The oracle: rank-bm25's BM25Okapi, its floor for idfs of 0 and below raised to Lucene's idf,
    ln(1 + (N - df + 0.5) / (df + 0.5)), where that is higher (a vault of a few notes), as ours."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        super()._calc_idf(nd)
        for word, df in nd.items():
            okapi = math.log(self.corpus_size - df + 0.5) - math.log(df + 0.5)
            if okapi <= 0:
                floor = self.epsilon * self.average_idf
                self.idf[word] = max(floor, math.log1p((self.corpus_size - df + 0.5) / (df + 0.5)))


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


class Corpus:
    """Documents by name, kept as the manifest keeps chunks: a slot and the packed term ids. Slots
    stride across postings blocks, so rows of several blocks are merged, split and read."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:", isolation_level=None)
        self.db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.db.executescript(postings.SCHEMA)
        self.reader = bm25.BM25(self.db)
        self.docs: dict[str, tuple[int, bytes]] = {}
        self.next_slot = 1

    def add(self, name: str, tokens: list[str]) -> None:
        self.remove(name)
        counts: dict[str, int] = {}
        for t in tokens:
            counts[t] = counts.get(t, 0) + 1
        doc = postings.Doc(self.next_slot, counts)
        (packed,), touched = postings.add(self.db, [doc])
        self.docs[name] = (doc.slot, packed)
        self.next_slot += 61
        self.reader.changed(touched)

    def remove(self, name: str) -> None:
        if name in self.docs:
            self.reader.changed(postings.remove(self.db, [self.docs.pop(name)]))

    def scores(self, reader: bm25.BM25, query: list[str]) -> dict[str, float]:
        by_slot = dict(zip(*(x.tolist() for x in reader.scores(query)), strict=True))
        return {name: by_slot[slot] for name, (slot, _) in self.docs.items() if slot in by_slot}


@settings(max_examples=300, deadline=None)
@given(ops_st, st.lists(st.sampled_from([*VOCAB, "zzz"]), min_size=1, max_size=5))
def test_scores_match_rank_bm25_after_adds_and_removes(ops, query):
    corpus = Corpus()
    live: dict[str, list[str]] = {}
    for op, n, tokens in ops:
        name = f"d{n}"
        if op == "add":
            corpus.add(name, tokens)
            live[name] = tokens
        else:
            corpus.remove(name)
            live.pop(name, None)
        corpus.scores(corpus.reader, query[:1])  # reads postings between writes: the cache must follow
    assert len(corpus.reader) == len(live)
    if not any(live.values()):  # rank-bm25 divides by zero on a corpus of empty documents
        assert corpus.scores(corpus.reader, query) == {}
        return
    names = sorted(live)
    oracle = BM25Okapi([live[i] for i in names]).get_scores(query)
    for reader in (corpus.reader, bm25.BM25(corpus.db)):
        ours = corpus.scores(reader, query)
        mine = np.array([ours.get(i, 0.0) for i in names])
        np.testing.assert_allclose(mine, oracle, rtol=0, atol=1e-9)
        assert set(ours) == {i for i in names if set(live[i]) & set(query)}  # only documents holding a term
        # without numpy (a cold search): the same scores to the last bit, and the same top list
        by_slot = dict(zip(*(x.tolist() for x in reader.scores(query)), strict=True))
        assert reader.scores_python(query) == by_slot
        for k in (1, 3, 20):
            assert reader.top(query, k, python=True) == reader.top(query, k, python=False)


def test_top_keeps_ties_and_respects_allowed_before_the_cut():
    corpus = Corpus()
    for i in range(20):
        corpus.add(f"d{i:02}", ["apple"] * (i + 1) + ["pad"] * 5)
    corpus.add("twin", ["apple"] * 20 + ["pad"] * 5)  # the same text as d19: the same score
    for i in range(40):  # apple must be rare for its idf to be positive
        corpus.add(f"other{i}", ["pear", "pad"])
    slot = {name: s for name, (s, _) in corpus.docs.items()}
    best = corpus.reader.top(["apple"], 1)
    assert sorted(s for s, _ in best) == sorted([slot["d19"], slot["twin"]])  # both: the caller breaks the tie
    allowed = np.array(sorted(slot[f"d{i:02}"] for i in range(5)))
    assert [s for s, _ in corpus.reader.top(["apple"], 3, allowed)] == [slot["d04"], slot["d03"], slot["d02"]]
    empty = corpus.reader.top(["apple"], 3, np.array([slot["other0"]]))
    assert empty == []
    for python in (True, False):  # numpy's reader and the plain one keep the same ties and filter the same
        best = corpus.reader.top(["apple"], 1, python=python)
        assert sorted(s for s, _ in best) == sorted([slot["d19"], slot["twin"]])
        assert corpus.reader.top(["apple", "pad"], 3, sorted(allowed.tolist()), python=python) == (
            corpus.reader.top(["apple", "pad"], 3, allowed, python=not python)
        )


def test_a_reader_past_its_memory_cap_still_scores_exactly(monkeypatch):
    monkeypatch.setattr(bm25, "CACHED_POSTINGS", 3)  # every read evicts: scores come from SQLite again
    corpus = Corpus()
    docs = {f"d{i}": [VOCAB[i % 7], VOCAB[(i * 3) % 10], "a"] * (1 + i % 3) for i in range(12)}
    for name, tokens in docs.items():
        corpus.add(name, tokens)
    names = sorted(docs)
    for query in (["a", "b"], ["向量", "c", "a"], ["b"]):
        for _ in range(2):
            ours = corpus.scores(corpus.reader, query)
            oracle = BM25Okapi([docs[n] for n in names]).get_scores(query)
            np.testing.assert_allclose([ours.get(n, 0.0) for n in names], oracle, rtol=0, atol=1e-9)
            assert corpus.reader._held <= 3 or len(corpus.reader._postings) == 1


def test_wide_term_counts_and_slots_out_of_order_match_the_oracle():
    """Term counts past one and two bytes widen a postings row; a slot below the row's last (a
    freed slot used again) is merged into its place, not appended."""
    corpus = Corpus()
    docs = {"wide": ["a"] * 300 + ["b"], "wider": ["a"] * 70_000, "plain": ["a", "b", "c"]}
    for name in ("wide", "wider", "plain"):
        corpus.add(name, docs[name])
    corpus.next_slot = corpus.docs["wide"][0] - 1  # below every slot in use, in the same block
    docs["early"] = ["a", "c", "c"]
    corpus.add("early", docs["early"])
    names = sorted(docs)
    for query in (["a"], ["b", "c"], ["a", "c"]):
        for reader in (corpus.reader, bm25.BM25(corpus.db)):
            ours = corpus.scores(reader, query)
            oracle = BM25Okapi([docs[n] for n in names]).get_scores(query)
            np.testing.assert_allclose([ours.get(n, 0.0) for n in names], oracle, rtol=0, atol=1e-9)
    corpus.remove("wider")
    docs.pop("wider")
    names = sorted(docs)
    ours = corpus.scores(bm25.BM25(corpus.db), ["a", "c"])
    np.testing.assert_allclose(
        [ours.get(n, 0.0) for n in names], BM25Okapi([docs[n] for n in names]).get_scores(["a", "c"]), rtol=0, atol=1e-9
    )
