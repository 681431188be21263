"""BM25 as a sparse vector for a Qdrant collection (issue 31): memvault weighs term frequency, Qdrant
weighs rarity, so the BM25 half can live in Qdrant beside the dense one.

A unit's vector has one entry per distinct token of its jieba/Latin tokens (`indexer.tokenizer`, the same
tokens the embedded BM25 counts): at index `term_index(token)`, the token's term-frequency part of BM25,
tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)). A collection whose sparse field has `Modifier.IDF` multiplies
each query entry by the token's idf over the collection, ln(1 + (N - n + 0.5) / (n + 0.5)), so a query's
vector is each token's count (a repeated token counts again, as in the embedded BM25), and a point's score is
BM25 with Lucene's idf where the embedded one has rank-bm25's (floored to be positive). Measured with
qdrant-client's local mode against the embedded BM25, on the same indexes of the four shared sets:
nDCG@10 SciFact 0.685 / 0.686, LoCoMo 1-4 0.740 / 0.741 (bench/results/README.md, issue 31).

Indices are hashed, not numbered from a vocabulary: writers and readers on many machines agree on a token's
index with no table to keep in step, and a reader needs no local index to build a query. The hash is the first
4 bytes of BLAKE2b, little-endian (Qdrant's sparse indices are u32), never Python's `hash()` (salted per
process). Two tokens on one index count as one token (their frequencies summed in a unit, their document
frequencies merged in the idf): with V distinct tokens about V^2 / 2^33 pairs collide, none of the 90,339 of the
four shared sets, about 116 among a million.

`avgdl` is the mean unit length BM25 weighs by. A collection takes it from its first write and keeps it
(`vectors.ClientStore`), so every unit is weighed alike; as a vault grows the true mean drifts from it, which
moves the length normalisation's pivot a little, until `index --rebuild` sets it afresh. The embedded BM25
has none of that: it reads the lengths at query time.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

K1 = 1.5  # as `indexer.bm25.BM25`
B = 0.75


def term_index(token: str) -> int:
    """The token's index in every sparse vector, on every machine and in every process."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "little")


def unit_vector(tokens: Iterable[str], avgdl: float, k1: float = K1, b: float = B) -> tuple[list[int], list[float]]:
    """(indices, values), indices ascending: each distinct index's BM25 term-frequency part, the unit's
    length being its number of tokens (as the embedded BM25 counts it)."""
    counts = Counter(term_index(t) for t in tokens)
    length = sum(counts.values())
    norm = k1 * (1 - b + b * length / avgdl) if avgdl > 0 else k1
    indices = sorted(counts)
    return indices, [counts[i] * (k1 + 1) / (counts[i] + norm) for i in indices]


def query_vector(tokens: Iterable[str]) -> tuple[list[int], list[float]]:
    """(indices, values), indices ascending: each index's count among the query's tokens."""
    counts = Counter(term_index(t) for t in tokens)
    indices = sorted(counts)
    return indices, [float(counts[i]) for i in indices]
