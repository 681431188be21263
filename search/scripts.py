"""Dense retrieval across scripts.

A multilingual model scores a note in the other script than the query's lower than the same fact in
the query's own (e5-small-q4: by 0.054 for an English question, 0.120 for a Chinese one; `python -m
bench crosslingual`). An English question then ranks the Chinese note that answers it below a
hundred English near-misses (XQuAD-R: the Chinese answer was in the dense top 10 for 24% of the
questions). So when the vault holds both scripts, the dense retriever is asked once per script and
the other script's cosines are raised by the model's bias before the two lists merge: the best
Chinese note competes with the best English ones on a corrected cosine. A vault in one script, or a
model with no measured bias, is asked once, as before.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from memvault.indexer.embedders import script_bias
from memvault.indexer.filters import FilterSpec
from memvault.indexer.reading import Reader
from memvault.vault.cjk import SCRIPTS, script_of


def dense_top(
    index: Reader, vector: np.ndarray, query: str, depth: int, flt: FilterSpec | None
) -> list[tuple[str, float]]:
    """The dense top `depth` for a query, across scripts when the vault and the model call for it."""
    own = script_of(query)
    other = next(s for s in SCRIPTS if s != own)
    bias = script_bias(index.embedder.name, own)
    if bias is None or not index.has_script(other):
        return index.vector_top(vector, depth, flt)
    base = flt or FilterSpec()
    mine = index.vector_top(vector, depth, dataclasses.replace(base, script=own))
    theirs = index.vector_top(vector, depth, dataclasses.replace(base, script=other))
    merged = mine + [(cid, score + bias) for cid, score in theirs]
    return sorted(merged, key=lambda item: (-item[1], item[0]))[:depth]
