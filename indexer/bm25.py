"""Exact BM25Okapi (as `rank-bm25` defines it, with a positive idf floor) over the postings of
`indexer.postings`.

A query reads the rows of its own terms and nothing else, so a search costs the postings of its
terms, not the size of the vault, and opening the index reads nothing at all. Scores are computed
over numpy arrays; a process that has not imported numpy (a cold CLI search) scores a query of few
postings in plain Python instead, to the same bits (`BM25.top`). `BM25` keeps the arrays of the
terms it has read until a write in this process touches them.

rank-bm25's one global quantity, the floor for negative idfs (epsilon times the average idf of
the whole vocabulary), is read only when a query term is in half the documents or more. In a new
vault of a few notes that floor is itself 0 or below (most words are in half the chunks), and a
word in exactly half has idf 0: the note holding "kayak trip" scored -0.03 and ranked below one
that did not (issue 27, case 7). There the floor is raised to Lucene's idf, ln(1 + (N - df + 0.5)
/ (df + 0.5)), positive for every word; wherever rank-bm25's floor is positive (every vault of
some size) the scores are rank-bm25's. (Lucene's idf throughout cost LoCoMo 0.007 BM25 nDCG@10.)
"""

from __future__ import annotations

import math
import sqlite3
import struct
import sys
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.indexer.postings import (
    BLOCK,
    DOCS,
    LENGTH,
    length_blob,
    length_block,
    length_rows,
    select_in,
    widen,
    widen_python,
)

if TYPE_CHECKING:
    import numpy as np

CACHED_POSTINGS = 4_000_000  # postings a process keeps in memory (20 bytes each), least recently read dropped first
# postings a query scores in plain Python in a process that has not imported numpy (a cold CLI search):
# numpy's import costs about 50 ms, and the loop about half a microsecond a posting here (SciFact's index:
# 6,693 postings in 3.3 ms, 755 in 1.5 ms), so up to this many the loop is the faster
PYTHON_MOST = 60_000


@dataclass(frozen=True)
class _Postings:
    term_id: int
    slots: np.ndarray
    tfs: np.ndarray
    lengths: np.ndarray


class BM25:
    """Scores that match rank_bm25.BM25Okapi.get_scores (its idf floor raised to be positive), read from
    the postings of the query's terms."""

    def __init__(self, db: sqlite3.Connection, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.db = db
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._postings: OrderedDict[str, _Postings | None] = OrderedDict()
        self._held = 0  # postings in `_postings`
        self._corpus: tuple[int, int] | None = None
        self._floor: float | None = None
        self._length_blocks: dict[int, np.ndarray] = {}

    def changed(self, term_ids: set[int] | None = None) -> None:
        """A write in this process added or removed documents holding these terms (None: any)."""
        self._corpus = self._floor = None
        self._length_blocks = {}
        if term_ids is None:
            self._postings.clear()
            self._held = 0
        else:
            for term in [t for t, p in self._postings.items() if p is None or p.term_id in term_ids]:
                self._drop(term)

    def _drop(self, term: str) -> None:
        found = self._postings.pop(term)
        self._held -= len(found.slots) if found is not None else 0

    def __len__(self) -> int:
        return self._stats()[0]

    def _stats(self) -> tuple[int, int]:
        if self._corpus is None:
            rows = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (DOCS, LENGTH)))
            self._corpus = int(rows.get(DOCS, 0)), int(rows.get(LENGTH, 0))
        return self._corpus

    def _read(self, term: str) -> _Postings | None:
        if term in self._postings:
            self._postings.move_to_end(term)
            return self._postings[term]
        found = None
        rows = self._rows_of(term)
        if rows:
            import numpy as np

            lengths = self._lengths({block for block, *_ in rows})
            if any(block not in lengths for block, *_ in rows):
                raise sqlite3.DatabaseError(f"BM25 postings of {term!r} name slots without a length")
            offsets = [np.frombuffer(slots, dtype=np.uint8).astype(np.int64) for _, slots, _, _ in rows]
            found = _Postings(
                rows[0][3],
                np.concatenate([block * BLOCK + o for (block, *_), o in zip(rows, offsets, strict=True)]),
                np.concatenate([widen(tfs, len(slots)) for _, slots, tfs, _ in rows]),
                np.concatenate([lengths[block][o] for (block, *_), o in zip(rows, offsets, strict=True)]),
            )
        self._postings[term] = found
        self._held += len(found.slots) if found is not None else 0
        while self._held > CACHED_POSTINGS and len(self._postings) > 1:
            self._drop(next(iter(self._postings)))
        return found

    def _rows_of(self, term: str) -> list[tuple[int, bytes, bytes, int]]:
        """A term's postings rows (block, slots, tfs, term id), by block: the order both readers sum in."""
        row = self.db.execute("SELECT id FROM terms WHERE term = ?", (term,)).fetchone()
        if row is None:
            return []
        return self.db.execute("SELECT block, slots, tfs, term FROM postings WHERE term = ?", row).fetchall()

    def _lengths(self, blocks: set[int]) -> dict[int, np.ndarray]:
        """The documents' lengths in these blocks (read once after each write, then kept: 4 bytes a slot)."""
        missing = blocks - self._length_blocks.keys()
        self._length_blocks.update((b, length_block(blob)) for b, blob in length_rows(self.db, missing))
        return self._length_blocks

    def _negative_floor(self, n: int) -> float:
        """rank-bm25's floor, epsilon times the mean idf, summed as it sums (one term after another), so
        both readers share it exactly."""
        if self._floor is None:
            summed, terms = 0.0, 0
            for (df,) in self.db.execute("SELECT df FROM terms WHERE df > 0"):
                summed += math.log(n - df + 0.5) - math.log(df + 0.5)
                terms += 1
            self._floor = self.epsilon * (summed / terms if terms else 0.0)
        return self._floor

    def _idf(self, n: int, df: int) -> float:
        idf = math.log(n - df + 0.5) - math.log(df + 0.5)
        if idf <= 0:  # a word in half the documents or more
            idf = max(self._negative_floor(n), math.log1p((n - df + 0.5) / (df + 0.5)))
        return idf

    def scores(self, query: list[str], allowed: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of every document holding a query term (others score 0, as in rank-bm25),
        among `allowed` slots (sorted) when given."""
        import numpy as np

        n, total = self._stats()
        empty = np.zeros(0, dtype=np.int64), np.zeros(0)
        if not n:
            return empty
        avgdl = total / n
        k1, b = self.k1, self.b
        slots, parts = [], []
        for term in query:  # repeated query terms count again, as in rank-bm25
            found = self._read(term)
            if found is None:
                continue
            idf = self._idf(n, len(found.slots))
            tf = found.tfs.astype(np.float64)
            parts.append(idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * found.lengths / avgdl)))
            slots.append(found.slots)
        if not slots:
            return empty
        every = np.concatenate(slots)
        if allowed is not None:
            keep = np.isin(every, allowed)
            every, parts = every[keep], [np.concatenate(parts)[keep]]
        if not len(every):
            return empty
        summed = np.bincount(every, weights=np.concatenate(parts))
        held = np.flatnonzero(np.bincount(every))
        return held, summed[held]

    def scores_python(self, query: list[str], allowed: Sequence[int] | None = None) -> dict[int, float]:
        """`scores` in plain Python, to the last bit: each posting's score is the same float operations
        in the same order, and each slot's sum adds the terms in the same order as `np.bincount`."""
        n, total = self._stats()
        if not n:
            return {}
        avgdl = total / n
        k1, b = self.k1, self.b
        keep = None if allowed is None else set(allowed)
        summed: dict[int, float] = {}
        for term in query:
            rows = self._rows_of(term)
            if not rows:
                continue
            lengths = {block: struct.unpack(f"<{BLOCK}I", length_blob(blob))
                       for block, blob in length_rows(self.db, {block for block, *_ in rows})}  # fmt: skip
            idf = self._idf(n, sum(len(slots) for _, slots, _, _ in rows))
            for block, slots, counts, _ in rows:
                if block not in lengths:
                    raise sqlite3.DatabaseError(f"BM25 postings of {term!r} name slots without a length")
                base, block_lengths = block * BLOCK, lengths[block]
                for offset, tf in zip(slots, widen_python(counts, len(slots)), strict=True):
                    slot = base + offset
                    if keep is None or slot in keep:
                        score = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * block_lengths[offset] / avgdl))
                        summed[slot] = summed.get(slot, 0.0) + score
        return summed

    def held(self, terms: Sequence[str]) -> set[str]:
        """Of these terms, the ones some document holds."""
        return {t for t, df in self._dfs(terms).items() if df}

    def _dfs(self, terms: Sequence[str]) -> dict[str, int]:
        """How many documents hold each of these terms (a term no document holds is absent)."""
        return dict(select_in(self.db, "SELECT term, df FROM terms WHERE term IN ({marks})", sorted(set(terms))))

    def _postings_of(self, query: list[str]) -> int:
        found = self._dfs(query)
        return sum(found.get(t, 0) for t in query)

    def top(
        self, query: list[str], k: int, allowed: Sequence[int] | None = None, python: bool | None = None
    ) -> list[tuple[int, float]]:
        """The `k` best (slot, score), best first, and any tied with the k-th: the caller breaks ties by
        chunk id (see `Index.bm25_top`). Scored in plain Python (`python`, by default when numpy is not
        loaded yet and the query reads few postings, `PYTHON_MOST`), else with numpy: the same answer."""
        if python is None:
            python = "numpy" not in sys.modules and self._postings_of(query) <= PYTHON_MOST
        if python:
            items = list(self.scores_python(query, allowed).items())
            if len(items) > k:
                kth = sorted((score for _, score in items), reverse=True)[k - 1]
                items = [(slot, score) for slot, score in items if score >= kth]  # ties stay, as below
            return sorted(items, key=lambda item: (-item[1], item[0]))
        import numpy as np

        slots, scores = self.scores(query, allowed)
        if len(slots) > k:
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth  # every document tied with the k-th stays: ties are broken by id
            slots, scores = slots[keep], scores[keep]
        order = np.lexsort((slots, -scores))
        return list(zip(slots[order].tolist(), scores[order].tolist(), strict=True))
