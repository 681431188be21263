"""Retrieval metrics as trec_eval and BEIR compute them: nDCG@k (linear gain, log2 discount),
Recall@k and MRR@k, averaged over queries with at least one relevant item."""

from __future__ import annotations

import math
from collections.abc import Sequence


def dcg(gains: Sequence[float], k: int) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def ndcg(gains: Sequence[float], ideal: Sequence[float], k: int) -> float:
    """`gains`: the gain at each rank of the ranking; `ideal`: every relevance grade of the query."""
    best = dcg(sorted(ideal, reverse=True), k)
    return dcg(gains, k) / best if best > 0 else 0.0


def recall(found: int, relevant: int) -> float:
    return found / relevant if relevant else 0.0


def reciprocal_rank(gains: Sequence[float], k: int) -> float:
    return next((1.0 / (i + 1) for i, g in enumerate(gains[:k]) if g > 0), 0.0)


def doc_metrics(ranked: Sequence[str], qrels: dict[str, float]) -> dict[str, float]:
    """Metrics for one query over document ids (duplicates after the first are ignored)."""
    seen: list[str] = []
    for doc in ranked:
        if doc not in seen:
            seen.append(doc)
    gains = [qrels.get(d, 0.0) for d in seen]
    relevant = [d for d, g in qrels.items() if g > 0]
    return {
        "ndcg@10": ndcg(gains, list(qrels.values()), 10),
        "recall@10": recall(len(set(seen[:10]) & set(relevant)), len(relevant)),
        "recall@100": recall(len(set(seen[:100]) & set(relevant)), len(relevant)),
        "mrr@10": reciprocal_rank(gains, 10),
    }


def span_metrics(hits: Sequence[tuple[str, int, int]], turns: Sequence[tuple[str, int]]) -> dict[str, float]:
    """Metrics for one query whose relevant items are lines (path, line); a hit (path, start, end)
    is relevant when it covers a relevant line that no earlier hit covered. `lines@10` is what an
    agent reads for them: the lines of the first ten hits."""
    covered: set[tuple[str, int]] = set()
    gains: list[float] = []
    found_at: list[int] = []
    for rank, (path, start, end) in enumerate(hits):
        new = {t for t in turns if t[0] == path and start <= t[1] <= end} - covered
        covered |= new
        gains.append(1.0 if new else 0.0)
        found_at.extend([rank] * len(new))
    n = len(set(turns))
    return {
        "ndcg@10": ndcg(gains, [1.0] * n, 10),
        "recall@10": recall(sum(r < 10 for r in found_at), n),
        "recall@100": recall(sum(r < 100 for r in found_at), n),
        "mrr@10": reciprocal_rank(gains, 10),
        "lines@10": float(sum(end - start + 1 for _, start, end in hits[:10])),
    }


def mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}
