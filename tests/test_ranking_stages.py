"""The ranking stages' parts that need no vault: fusion hands on `Fused` candidates read by name, and
which hits of an answer count as recalled (search.recall)."""

from __future__ import annotations

from memvault.indexer.embedders import relevance_floor
from memvault.search.fusion import Fused, above_floor, first_near, rrf
from memvault.search.hits import Hit, SearchResult
from memvault.search.recall import recalled_entries
from memvault.vault.entries import entry_key


def _hit(text: str, ranks: dict[str, int], scores: dict[str, float]) -> Hit:
    return Hit("MEMORY.md", 3, 3, ("Long-term Memory", "Tools"), text, 1.0, ranks=ranks, scores=scores)


def test_fusion_hands_on_named_candidates():
    fused = rrf({"bm25": [("a", 3.0), ("b", 1.0)], "vector": [("b", 0.9)]}, {"bm25": 0.5, "vector": 0.5}, 60)
    assert all(isinstance(f, Fused) for f in fused) and [f.chunk_id for f in fused] == ["b", "a"]
    b = fused[0]
    assert b.ranks == {"bm25": 2, "vector": 1} and b.scores == {"bm25": 1.0, "vector": 0.9}
    assert b.score == 0.5 / 62 + 0.5 / 61
    assert [f.chunk_id for f in above_floor(fused, [("b", 0.9)], 20, 0.5)] == ["b"]  # "a" has no cosine


def test_a_hit_is_recalled_when_it_answers_the_query():
    floor = relevance_floor("hash-384")
    keyword = _hit("- Green tea in the morning\n", {"bm25": 3}, {"bm25": 1.2})
    close = _hit("- Helix for quick edits\n", {"vector": 1}, {"vector": floor})
    filler = _hit("- Rust for small tools\n", {"vector": 2}, {"vector": floor - 0.01})  # only filled the list
    result = SearchResult("q", "hybrid", None, [keyword, close, filler])
    keys = [entry_key("Green tea in the morning"), entry_key("Helix for quick edits")]
    assert recalled_entries(result, "hash-384") == keys
    assert recalled_entries(SearchResult("q", "substring", None, [keyword]), "hash-384") == []


def test_what_neither_retriever_ranked_near_the_top_is_not_ranked_first():
    """Issue 28: a candidate crowned by the fused scores alone (here the other script's note, which the
    cross-script dense list lifted) gives the first place to the best one a retriever ranked near the top."""
    fused = [Fused(cid, 1.0 - n / 10, {}, {}) for n, cid in enumerate(["lifted", "answer", "third"])]

    def near(*ids: str):
        return lambda f: f.chunk_id in ids

    assert [f.chunk_id for f in first_near(fused, near("answer", "third"))] == ["answer", "lifted", "third"]
    assert first_near(fused, near("lifted")) == fused and first_near(fused, near()) == fused
