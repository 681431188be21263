"""Exact BM25Okapi (as `rank-bm25` defines it) over an incremental inverted index.

`rank-bm25` rebuilds its whole model to add one document; here a file's
chunks are added or removed in time proportional to their tokens. The only
global quantity, the average idf that sets the floor for negative idfs, is
recomputed lazily (vectorised over the document-frequency array) on the
first query after a change.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

import numpy as np


class BM25Index:
    """Documents are chunk ids with token counts; scores match rank_bm25.BM25Okapi.get_scores."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._docs: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        self._postings: dict[str, dict[str, int]] = {}
        self._slot: dict[str, int] = {}
        self._df = np.zeros(1024, dtype=np.float64)
        self._total_len = 0
        self._floor: float | None = None  # epsilon * average idf; None when stale

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._docs

    def add(self, doc_id: str, counts: Mapping[str, int]) -> None:
        """Add (or replace) one document given its term counts."""
        if doc_id in self._docs:
            self.remove(doc_id)
        doc = {t: int(n) for t, n in counts.items() if n > 0}
        self._docs[doc_id] = doc
        length = sum(doc.values())
        self._lengths[doc_id] = length
        self._total_len += length
        for term, n in doc.items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = {}
                if term not in self._slot:
                    self._slot[term] = len(self._slot)
                    if len(self._slot) > len(self._df):
                        self._df = np.concatenate([self._df, np.zeros(len(self._df))])
            posting[doc_id] = n
            self._df[self._slot[term]] += 1
        self._floor = None

    def add_tokens(self, doc_id: str, tokens: Iterable[str]) -> None:
        self.add(doc_id, Counter(tokens))

    def remove(self, doc_id: str) -> None:
        doc = self._docs.pop(doc_id, None)
        if doc is None:
            return
        self._total_len -= self._lengths.pop(doc_id)
        for term in doc:
            posting = self._postings[term]
            del posting[doc_id]
            self._df[self._slot[term]] -= 1
            if not posting:
                del self._postings[term]
        self._floor = None

    def _idf(self, df: float, n: int) -> float:
        return math.log(n - df + 0.5) - math.log(df + 0.5)

    def _negative_floor(self) -> float:
        if self._floor is None:
            n = len(self._docs)
            df = self._df[: len(self._slot)]
            df = df[df > 0]
            idf_sum = float(np.sum(np.log(n - df + 0.5) - np.log(df + 0.5))) if len(df) else 0.0
            self._floor = self.epsilon * (idf_sum / len(df) if len(df) else 0.0)
        return self._floor

    def scores(self, query: list[str], allow: Callable[[str], bool] | None = None) -> dict[str, float]:
        """Scores of every document holding a query term (others score 0, as in rank-bm25)."""
        n = len(self._docs)
        if not n:
            return {}
        avgdl = self._total_len / n
        k1, b = self.k1, self.b
        out: dict[str, float] = {}
        for term in query:  # repeated query terms count again, as in rank-bm25
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = self._idf(len(posting), n)
            if idf < 0:
                idf = self._negative_floor()
            for doc_id, tf in posting.items():
                if allow is not None and not allow(doc_id):
                    continue
                norm = tf + k1 * (1 - b + b * self._lengths[doc_id] / avgdl)
                out[doc_id] = out.get(doc_id, 0.0) + idf * tf * (k1 + 1) / norm
        return out

    def top(self, query: list[str], k: int, allow: Callable[[str], bool] | None = None) -> list[tuple[str, float]]:
        """The `k` best documents, best first; ties broken by id so results are repeatable."""
        scored = self.scores(query, allow)
        return heapq.nsmallest(k, scored.items(), key=lambda item: (-item[1], item[0]))
