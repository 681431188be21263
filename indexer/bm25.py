"""Exact BM25Okapi (as `rank-bm25` defines it, with a positive idf floor) over postings kept in the
manifest's SQLite file.

A document is a chunk, numbered by its `slot`. Postings are packed by block of `BLOCK` slots: one
row per term and block holds the documents of that block that have the term (one byte each, the
slot's offset) and their term counts (one, two or four bytes each, the narrowest that fits), and
the documents' lengths sit in one row per block. A query reads the rows of its own terms and
nothing else, so a search costs the postings of its terms, not the size of the vault, and opening
the index reads nothing at all; a posting costs about 3 bytes on disk instead of a 16-byte row.
Scores are computed over numpy arrays, never per posting in Python. Writes happen inside the
manifest's transactions (a chunk and its postings commit together); `BM25` keeps the arrays of
the terms it has read until a write in this process touches them.

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
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

BLOCK = 256  # slots per postings row: an offset in the block fits in one byte
SCHEMA = """
CREATE TABLE IF NOT EXISTS terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS postings (
    term INTEGER NOT NULL, block INTEGER NOT NULL, slots BLOB NOT NULL, tfs BLOB NOT NULL,
    PRIMARY KEY (term, block)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lengths (block INTEGER PRIMARY KEY, lengths BLOB NOT NULL);
"""
_DOCS, _LENGTH = "bm25_docs", "bm25_length"  # meta keys: documents and their total length
_LENGTHS = np.dtype("<u4")
CACHED_POSTINGS = 4_000_000  # postings a process keeps in memory (20 bytes each), least recently read dropped first
_Key = tuple[int, int]  # (term id, block)


@dataclass(frozen=True)
class Doc:
    """One document to add: its slot, and its term counts (a term repeated in a query counts again,
    in a document once per occurrence)."""

    slot: int
    counts: Mapping[str, int]

    @property
    def length(self) -> int:
        return sum(self.counts.values())


def _narrow(values: np.ndarray) -> bytes:
    """Non-negative integers in the narrowest of 1, 2 or 4 bytes each (the reader knows the count)."""
    top = int(values.max()) if len(values) else 0
    return values.astype("<u1" if top < 1 << 8 else "<u2" if top < 1 << 16 else "<u4").tobytes()


def _widen(blob: bytes, count: int) -> np.ndarray:
    width = len(blob) // count if count else 0
    if width not in (1, 2, 4) or width * count != len(blob):
        raise sqlite3.DatabaseError(f"a BM25 postings row holds {len(blob)} bytes for {count} documents")
    return np.frombuffer(blob, dtype=f"<u{width}").astype(np.int64)


def pack_ids(ids: Sequence[int]) -> bytes:
    """A document's sorted term ids, kept with it to remove it later: gaps, in the narrowest width
    (the first byte)."""
    gaps = [b - a for a, b in pairwise([0, *ids])]  # per chunk, on every write: plain ints beat numpy here
    top = max(gaps, default=0)
    width = 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4
    return bytes([width]) + b"".join(g.to_bytes(width, "little") for g in gaps)


def unpack_ids(packed: bytes) -> list[int]:
    if not packed:
        raise sqlite3.DatabaseError("a chunk's packed term ids are empty")
    width, body = packed[0], packed[1:]
    if width not in (1, 2, 4) or len(body) % width:
        raise sqlite3.DatabaseError("a chunk's packed term ids are garbled")
    return np.cumsum(np.frombuffer(body, dtype=f"<u{width}").astype(np.int64)).tolist()


def add(db: sqlite3.Connection, docs: Sequence[Doc]) -> tuple[list[bytes], set[int]]:
    """Add documents (inside the caller's transaction) in slots that hold none; returns each one's
    term ids, packed, which the caller keeps with the document to remove it later, and the term ids
    touched."""
    ids = _term_ids(db, {t for d in docs for t, n in d.counts.items() if n > 0})
    new: defaultdict[_Key, list[tuple[int, int]]] = defaultdict(list)
    df, packed = Counter[int](), []
    for doc in docs:
        held = {ids[t]: n for t, n in doc.counts.items() if n > 0}
        for term, n in held.items():
            new[(term, doc.slot // BLOCK)].append((doc.slot % BLOCK, n))
        df.update(held.keys())
        packed.append(pack_ids(sorted(held)))
    rows = []
    for key, (slots, tfs) in _rows(db, new).items():
        extra = sorted(new[key])
        rows.append((*key, *(_append(slots, tfs, extra) or _merge(slots, tfs, extra))))
    db.executemany("INSERT OR REPLACE INTO postings VALUES (?,?,?,?)", rows)
    db.executemany("UPDATE terms SET df = df + ? WHERE id = ?", [(n, i) for i, n in df.items()])
    _set_lengths(db, {d.slot: d.length for d in docs})
    _count(db, len(docs), sum(d.length for d in docs))
    return packed, set(df)


def remove(db: sqlite3.Connection, docs: Sequence[tuple[int, bytes]]) -> set[int]:
    """Remove documents given as (slot, packed term ids); returns the term ids touched."""
    gone: defaultdict[_Key, set[int]] = defaultdict(set)
    df = Counter[int]()
    for slot, packed in docs:
        terms = unpack_ids(packed)
        df.update(terms)
        for term in terms:
            gone[(term, slot // BLOCK)].add(slot % BLOCK)
    keep, drop = [], []
    for key, (slots, counts) in _rows(db, gone).items():
        offsets, tfs = np.frombuffer(slots, dtype=np.uint8), _widen(counts, len(slots))
        stay = ~np.isin(offsets, list(gone[key]))
        if stay.any():
            keep.append((*key, offsets[stay].astype(np.uint8).tobytes(), _narrow(tfs[stay])))
        else:
            drop.append(key)
    db.executemany("INSERT OR REPLACE INTO postings VALUES (?,?,?,?)", keep)
    db.executemany("DELETE FROM postings WHERE term = ? AND block = ?", drop)
    db.executemany("UPDATE terms SET df = df - ? WHERE id = ?", [(n, i) for i, n in df.items()])
    db.executemany("DELETE FROM terms WHERE id = ? AND df <= 0", [(i,) for i in df])
    gone_length = _set_lengths(db, dict.fromkeys((slot for slot, _ in docs), 0))
    _count(db, -len(docs), -gone_length)
    return set(df)


def clear(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM postings")
    db.execute("DELETE FROM lengths")
    db.execute("DELETE FROM terms")
    db.execute("DELETE FROM meta WHERE key IN (?, ?)", (_DOCS, _LENGTH))


def _append(slots: bytes, tfs: bytes, extra: list[tuple[int, int]]) -> tuple[bytes, bytes] | None:
    """A row with new documents after all of its own, in its own width, by joining bytes (the usual
    case: new chunks take the highest slots); None when that does not fit."""
    top = max(n for _, n in extra)
    width = len(tfs) // len(slots) if slots else 1 if top < 1 << 8 else 2
    if (slots and slots[-1] >= extra[0][0]) or top >= 1 << (8 * width):
        return None
    if width not in (1, 2) or width * len(slots) != len(tfs):
        return None  # a four-byte row, or a garbled one (`_widen` says which)
    return slots + bytes(o for o, _ in extra), tfs + b"".join(n.to_bytes(width, "little") for _, n in extra)


def _merge(slots: bytes, tfs: bytes, extra: list[tuple[int, int]]) -> tuple[bytes, bytes]:
    new = np.array(extra, dtype=np.int64).reshape(-1, 2)
    offsets = np.concatenate([np.frombuffer(slots, dtype=np.uint8), new[:, 0]])
    counts = np.concatenate([_widen(tfs, len(slots)) if slots else new[:0, 1], new[:, 1]])
    order = np.argsort(offsets, kind="stable")
    return offsets[order].astype(np.uint8).tobytes(), _narrow(counts[order])


def _rows(db: sqlite3.Connection, keys: Iterable[_Key]) -> dict[_Key, tuple[bytes, bytes]]:
    """The postings rows of these (term, block) keys, as (slots, tfs) blobs; a key without a row
    gets empty ones."""
    by_block: defaultdict[int, list[int]] = defaultdict(list)
    for term, block in keys:
        by_block[block].append(term)
    out: dict[_Key, tuple[bytes, bytes]] = {}
    for block, terms in by_block.items():
        out.update({(t, block): (b"", b"") for t in terms})
        query = "SELECT term, slots, tfs FROM postings WHERE block = ? AND term IN ({marks})"
        out.update(((term, block), (slots, tfs)) for term, slots, tfs in select_in(db, query, terms, block))
    return out


def _length_block(blob: bytes | None) -> np.ndarray:
    if blob is None:
        return np.zeros(BLOCK, dtype=_LENGTHS)
    if len(blob) != BLOCK * _LENGTHS.itemsize:
        raise sqlite3.DatabaseError(f"a BM25 lengths row holds {len(blob)} bytes")
    return np.frombuffer(blob, dtype=_LENGTHS).copy()


def _length_rows(db: sqlite3.Connection, blocks: Iterable[int]) -> list[tuple[int, bytes]]:
    return list(select_in(db, "SELECT block, lengths FROM lengths WHERE block IN ({marks})", sorted(blocks)))


def _set_lengths(db: sqlite3.Connection, lengths: Mapping[int, int]) -> int:
    """Set these slots' lengths; returns the sum of the lengths they replace."""
    found = dict(_length_rows(db, {s // BLOCK for s in lengths}))
    blocks = {b: _length_block(found.get(b)) for b in {s // BLOCK for s in lengths}}
    replaced = 0
    for slot, length in lengths.items():
        replaced += int(blocks[slot // BLOCK][slot % BLOCK])
        blocks[slot // BLOCK][slot % BLOCK] = length
    db.executemany("DELETE FROM lengths WHERE block = ?", [(b,) for b, a in blocks.items() if not a.any()])
    db.executemany("INSERT OR REPLACE INTO lengths VALUES (?, ?)",
                   [(b, a.tobytes()) for b, a in blocks.items() if a.any()])  # fmt: skip
    return replaced


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
    return dict(select_in(db, "SELECT term, id FROM terms WHERE term IN ({marks})", terms))


def select_in(db: sqlite3.Connection, query: str, values: Sequence[Any], *first: Any) -> Iterator[Any]:
    """The rows of `query`, its `IN ({marks})` list bound to `values` 500 at a time (SQLite caps the
    parameters of one statement), after the parameters `first`."""
    for start in range(0, len(values), 500):
        part = values[start : start + 500]
        yield from db.execute(query.format(marks=",".join("?" * len(part))), [*first, *part])


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
            rows = self.db.execute("SELECT block, slots, tfs FROM postings WHERE term = ?", row).fetchall()
            if rows:
                lengths = self._lengths({block for block, _, _ in rows})
                offsets = [np.frombuffer(slots, dtype=np.uint8).astype(np.int64) for _, slots, _ in rows]
                if any(block not in lengths for block, _, _ in rows):
                    raise sqlite3.DatabaseError(f"BM25 postings of {term!r} name slots without a length")
                found = _Postings(
                    row[0],
                    np.concatenate([block * BLOCK + o for (block, _, _), o in zip(rows, offsets, strict=True)]),
                    np.concatenate([_widen(tfs, len(slots)) for _, slots, tfs in rows]),
                    np.concatenate([lengths[block][o] for (block, _, _), o in zip(rows, offsets, strict=True)]),
                )
        self._postings[term] = found
        self._held += len(found.slots) if found is not None else 0
        while self._held > CACHED_POSTINGS and len(self._postings) > 1:
            self._drop(next(iter(self._postings)))
        return found

    def _lengths(self, blocks: set[int]) -> dict[int, np.ndarray]:
        """The documents' lengths in these blocks (read once after each write, then kept: 4 bytes a slot)."""
        missing = blocks - self._length_blocks.keys()
        self._length_blocks.update((b, _length_block(blob)) for b, blob in _length_rows(self.db, missing))
        return self._length_blocks

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
            if idf <= 0:  # a word in half the documents or more
                idf = max(self._negative_floor(n), math.log1p((n - df + 0.5) / (df + 0.5)))
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
