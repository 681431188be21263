"""Exact BM25Okapi (as `rank-bm25` defines it) over postings kept in the manifest's SQLite file.

Each document (a chunk, numbered by its `slot`) adds one row per distinct term to `postings`,
clustered by term, so a query reads the rows of its own terms and nothing else: a search costs
the postings of its terms, not the size of the vault, and opening the index reads nothing at
all. Scores are computed over numpy arrays, never per posting in Python. Writes happen inside
the manifest's transactions (a chunk and its postings commit together); `BM25` keeps the arrays
of the terms it has read until a write in this process touches them.

rank-bm25's one global quantity, the floor for negative idfs (epsilon times the average idf of
the whole vocabulary), is read only when a query term is in more than half the documents.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

SCHEMA = """
CREATE TABLE IF NOT EXISTS terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS postings (
    term INTEGER NOT NULL, slot INTEGER NOT NULL, tf INTEGER NOT NULL, length INTEGER NOT NULL,
    PRIMARY KEY (term, slot)) WITHOUT ROWID;
"""
_DOCS, _LENGTH = "bm25_docs", "bm25_length"  # meta keys: documents and their total length
_TERM_ID = np.dtype("<i4")
CACHED_POSTINGS = 4_000_000  # postings a process keeps in memory (12 bytes each), least recently read dropped first


@dataclass(frozen=True)
class Doc:
    """One document to add: its slot, and its term counts (a term repeated in a query counts again,
    in a document once per occurrence)."""

    slot: int
    counts: Mapping[str, int]

    @property
    def length(self) -> int:
        return sum(self.counts.values())


def add(db: sqlite3.Connection, docs: Sequence[Doc]) -> tuple[list[bytes], set[int]]:
    """Add documents (inside the caller's transaction); returns each one's term ids, packed, which
    the caller keeps with the document to remove it later, and the term ids touched."""
    ids = _term_ids(db, {t for d in docs for t, n in d.counts.items() if n > 0})
    rows, df, packed = [], Counter[int](), []
    for doc in docs:
        terms = sorted(ids[t] for t, n in doc.counts.items() if n > 0)
        length = doc.length
        rows.extend((ids[t], doc.slot, int(n), length) for t, n in doc.counts.items() if n > 0)
        df.update(terms)
        packed.append(np.asarray(terms, dtype=_TERM_ID).tobytes())
    db.executemany("INSERT INTO postings VALUES (?,?,?,?)", rows)
    db.executemany("UPDATE terms SET df = df + ? WHERE id = ?", [(n, i) for i, n in df.items()])
    _count(db, len(docs), sum(d.length for d in docs))
    return packed, set(df)


def remove(db: sqlite3.Connection, docs: Sequence[tuple[int, bytes, int]]) -> set[int]:
    """Remove documents given as (slot, packed term ids, length); returns the term ids touched."""
    df = Counter[int]()
    pairs = []
    for slot, packed, _ in docs:
        terms = np.frombuffer(packed, dtype=_TERM_ID).tolist()
        df.update(terms)
        pairs.extend((t, slot) for t in terms)
    db.executemany("DELETE FROM postings WHERE term = ? AND slot = ?", pairs)
    db.executemany("UPDATE terms SET df = df - ? WHERE id = ?", [(n, i) for i, n in df.items()])
    db.executemany("DELETE FROM terms WHERE id = ? AND df <= 0", [(i,) for i in df])
    _count(db, -len(docs), -sum(length for _, _, length in docs))
    return set(df)


def clear(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM postings")
    db.execute("DELETE FROM terms")
    db.execute("DELETE FROM meta WHERE key IN (?, ?)", (_DOCS, _LENGTH))


def _count(db: sqlite3.Connection, docs: int, length: int) -> None:
    for key, delta in ((_DOCS, docs), (_LENGTH, length)):
        db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + ?",
                   (key, str(delta), delta))  # fmt: skip


def _term_ids(db: sqlite3.Connection, terms: Iterable[str]) -> dict[str, int]:
    """Ids of these terms, adding the new ones."""
    wanted = sorted(terms)
    found = _lookup(db, wanted)
    missing = [t for t in wanted if t not in found]
    if missing:
        db.executemany("INSERT INTO terms (term, df) VALUES (?, 0)", [(t,) for t in missing])
        found.update(_lookup(db, missing))
    return found


def _lookup(db: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for start in range(0, len(terms), 500):
        part = terms[start : start + 500]
        marks = ",".join("?" * len(part))
        found.update(db.execute(f"SELECT term, id FROM terms WHERE term IN ({marks})", part).fetchall())
    return found


@dataclass(frozen=True)
class _Postings:
    term_id: int
    slots: np.ndarray
    tfs: np.ndarray
    lengths: np.ndarray


class BM25:
    """Scores that match rank_bm25.BM25Okapi.get_scores, read from the postings of the query's terms."""

    def __init__(self, db: sqlite3.Connection, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.db = db
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._postings: OrderedDict[str, _Postings | None] = OrderedDict()
        self._held = 0  # postings in `_postings`
        self._corpus: tuple[int, int] | None = None
        self._floor: float | None = None

    def changed(self, term_ids: set[int] | None = None) -> None:
        """A write in this process added or removed documents holding these terms (None: any)."""
        self._corpus = self._floor = None
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
            rows = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (_DOCS, _LENGTH)))
            self._corpus = int(rows.get(_DOCS, 0)), int(rows.get(_LENGTH, 0))
        return self._corpus

    def _read(self, term: str) -> _Postings | None:
        if term in self._postings:
            self._postings.move_to_end(term)
            return self._postings[term]
        row = self.db.execute("SELECT id FROM terms WHERE term = ?", (term,)).fetchone()
        found = None
        if row is not None:
            data = self.db.execute("SELECT slot, tf, length FROM postings WHERE term = ?", row).fetchall()
            if data:
                array = np.array(data, dtype=np.int32).reshape(-1, 3)
                found = _Postings(row[0], array[:, 0].copy(), array[:, 1].copy(), array[:, 2].copy())
        self._postings[term] = found
        self._held += len(found.slots) if found is not None else 0
        while self._held > CACHED_POSTINGS and len(self._postings) > 1:
            self._drop(next(iter(self._postings)))
        return found

    def _negative_floor(self, n: int) -> float:
        if self._floor is None:
            df = np.array([r[0] for r in self.db.execute("SELECT df FROM terms WHERE df > 0")], dtype=np.float64)
            idf = np.log(n - df + 0.5) - np.log(df + 0.5)
            self._floor = self.epsilon * (float(idf.sum()) / len(df) if len(df) else 0.0)
        return self._floor

    def scores(self, query: list[str], allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of every document holding a query term (others score 0, as in rank-bm25),
        among `allowed` slots (sorted) when given."""
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
            df = len(found.slots)
            idf = math.log(n - df + 0.5) - math.log(df + 0.5)
            if idf < 0:
                idf = self._negative_floor(n)
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

    def top(self, query: list[str], k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The `k` best (slot, score), best first, and any tied with the k-th: the caller breaks ties by
        chunk id (see `Index.bm25_top`)."""
        slots, scores = self.scores(query, allowed)
        if len(slots) > k:
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth  # every document tied with the k-th stays: ties are broken by id
            slots, scores = slots[keep], scores[keep]
        order = np.lexsort((slots, -scores))
        return list(zip(slots[order].tolist(), scores[order].tolist(), strict=True))
