"""Maximal Marginal Relevance over the fused candidates, so ten hits are not ten copies of one day.

Each step takes the candidate with the best `lam * relevance - (1 - lam) * redundancy`, where
relevance is the fused score over the best one's (so it does not depend on how many candidates
there are) and redundancy the highest cosine to a chunk already taken. The chunk vectors come
from the embedding cache in the manifest (keyed by content hash), read without touching it; a
chunk whose vector is not cached counts as redundant with nothing. `lam` 1 is the fused order
itself. Hits keep their fused score: with MMR the list is not sorted by it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memvault.indexer.index import Index
from memvault.search.fusion import Fused


def chunk_vectors(index: Index, payloads: Mapping[str, Mapping[str, Any]], ids: list[str]) -> dict[str, np.ndarray]:
    """The cached vector of each chunk (by its content hash), for those the cache holds."""
    hashes = {cid: p["content_hash"] for cid in ids if (p := payloads.get(cid)) and p.get("content_hash")}
    cached = index.cache.get(index.embedder.name, list(set(hashes.values())), touch=False)
    return {cid: cached[h] for cid, h in hashes.items() if h in cached}


def mmr(fused: list[Fused], vectors: Mapping[str, np.ndarray], lam: float) -> list[Fused]:
    """`fused` (best first) in MMR order."""
    n = len(fused)
    if n < 3:
        return list(fused)
    scores = np.array([f.score for f in fused], dtype=np.float64)
    relevance = scores / scores.max() if scores.max() > 0 else np.ones(n)
    dim = next((len(v) for v in vectors.values()), 1)
    unit = np.zeros((n, dim))
    for i, f in enumerate(fused):
        vector = vectors.get(f.chunk_id)
        if vector is not None and (norm := float(np.linalg.norm(vector))) > 0:
            unit[i] = vector / norm
    similarity = unit @ unit.T
    redundancy = np.zeros(n)
    left = np.ones(n, dtype=bool)
    order = []
    for _ in range(n):
        gain = np.where(left, lam * relevance - (1 - lam) * redundancy, -np.inf)
        pick = int(np.argmax(gain))  # the first best: ties keep the fused order
        order.append(pick)
        left[pick] = False
        redundancy = np.maximum(redundancy, similarity[pick])
    return [fused[i] for i in order]
