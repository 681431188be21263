"""The benchmark's metric code on hand-made rankings with known values."""

from __future__ import annotations

import math

import pytest

from bench.metrics import doc_metrics, mean, ndcg, span_metrics


def test_ndcg_known_values():
    assert ndcg([1, 0, 1], [1, 1], 10) == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3)))
    assert ndcg([0, 1], [1], 10) == pytest.approx(1 / math.log2(3))
    assert ndcg([1, 1], [1, 1], 10) == 1.0
    assert ndcg([0] * 10 + [1], [1], 10) == 0.0  # beyond the cut
    assert ndcg([2, 1], [1, 2], 10) == 1.0  # graded: ideal order is by grade


def test_doc_metrics_ignore_duplicate_documents():
    got = doc_metrics(["a", "x", "a", "b"], {"a": 1, "b": 1, "c": 1})
    assert got["mrr@10"] == 1.0
    assert got["recall@10"] == pytest.approx(2 / 3)
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert got["ndcg@10"] == pytest.approx(expected)
    assert doc_metrics(["x", "y"], {"a": 1})["mrr@10"] == 0.0
    assert doc_metrics(["x", "a"], {"a": 1})["mrr@10"] == 0.5


def test_span_metrics_judge_by_line_range():
    turns = [("d/1.md", 5), ("d/2.md", 9)]
    hits = [("d/1.md", 1, 4), ("d/1.md", 3, 7), ("d/1.md", 5, 6), ("d/2.md", 9, 9)]
    got = span_metrics(hits, turns)
    # rank 2 covers line 5, rank 3 covers it again (no new gain), rank 4 covers line 9
    assert got["mrr@10"] == 0.5
    assert got["recall@10"] == 1.0
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    assert got["ndcg@10"] == pytest.approx(dcg / (1 + 1 / math.log2(3)))
    assert span_metrics([("d/3.md", 1, 100)], turns)["recall@100"] == 0.0
    assert got["lines@10"] == 4 + 5 + 2 + 1  # what an agent reads for the ten (here four) hits
    assert span_metrics([("d/1.md", 1, 1)] * 12, turns)["lines@10"] == 10


def test_mean():
    assert mean([{"a": 1.0}, {"a": 0.0}]) == {"a": 0.5}


def test_the_fusion_rule_picks_the_best_worst_margin_and_scores_it_on_the_set_left_out():
    from bench.fusion import leave_one_out

    def row(ndcg: float) -> dict[str, float]:
        return {"ndcg@10": ndcg}

    # the better single retriever: a 0.5, b 0.7, c 0.6
    scores = {
        "a": {"bm25": row(0.5), "vector": row(0.4), "steady": row(0.52), "spiky": row(0.60)},
        "b": {"bm25": row(0.6), "vector": row(0.7), "steady": row(0.72), "spiky": row(0.65)},
        "c": {"bm25": row(0.6), "vector": row(0.5), "steady": row(0.61), "spiky": row(0.70)},
    }
    out = leave_one_out(scores, ["steady", "spiky"])
    # steady's worst margin +0.01 beats spiky's -0.05, although spiky wins two sets by more
    assert out["chosen"] == "steady"
    assert out["margins"] == pytest.approx({"a": 0.02, "b": 0.02, "c": 0.01})
    # left out b, the rule sees only a and c, where spiky never falls below: it picks spiky and pays on b
    assert out["folds"]["b"]["chosen"] == "spiky" and out["folds"]["b"]["margin"] == pytest.approx(-0.05)
    assert out["folds"]["a"]["chosen"] == "steady"
