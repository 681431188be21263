"""Maximal Marginal Relevance over the fused candidates, so ten hits are not ten copies of one day.

Each step takes the candidate with the best `lam * relevance - (1 - lam) * redundancy`, where
relevance is the fused score over the best one's (so it does not depend on how many candidates
there are) and redundancy the highest cosine to a chunk already taken. The chunk vectors are the
index's (`Reader.chunk_vectors`: the embedding cache, or a server collection's points); a chunk whose
vector is not there counts as redundant with nothing. `lam` 1 is the fused order
itself. Hits keep their fused score: with MMR the list is not sorted by it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from memvault.search.fusion import Fused


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
