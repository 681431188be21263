"""The BM25 postings as the manifest's SQLite file keeps them: written inside the manifest's
transactions (a chunk and its postings commit together), read by `indexer.bm25`.

A document is a chunk, numbered by its `slot`. Postings are packed by block of `BLOCK` slots: one
row per term and block holds the documents of that block that have the term (one byte each, the
slot's offset) and their term counts (one, two or four bytes each, the narrowest that fits), and
the documents' lengths sit in one row per block. A posting costs about 3 bytes on disk instead of
a 16-byte row. Writes merge rows in plain Python (a row holds at most `BLOCK` documents, and an edit
then never pays numpy's 35-50 ms import); the reader decodes them with numpy or `struct`.
"""

from __future__ import annotations

import sqlite3
import struct
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

BLOCK = 256  # slots per postings row: an offset in the block fits in one byte
SCHEMA = """
CREATE TABLE IF NOT EXISTS terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS postings (
    term INTEGER NOT NULL, block INTEGER NOT NULL, slots BLOB NOT NULL, tfs BLOB NOT NULL,
    PRIMARY KEY (term, block)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lengths (block INTEGER PRIMARY KEY, lengths BLOB NOT NULL);
"""
DOCS, LENGTH = "bm25_docs", "bm25_length"  # meta keys: documents and their total length
_LENGTHS = "<u4"  # a slot's length, in a block's row: 4 bytes, little-endian
_LENGTH_ROW = f"<{BLOCK}I"  # the same row, for `struct`
_WIDTHS = {1: "B", 2: "H", 4: "I"}
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


def _narrow(values: Sequence[int]) -> bytes:
    """Non-negative integers in the narrowest of 1, 2 or 4 bytes each (the reader knows the count)."""
    top = max(values, default=0)
    return struct.pack(f"<{len(values)}{'B' if top < 1 << 8 else 'H' if top < 1 << 16 else 'I'}", *values)


def _width(blob: bytes, count: int) -> int:
    width = len(blob) // count if count else 0
    if width not in (1, 2, 4) or width * count != len(blob):
        raise sqlite3.DatabaseError(f"a BM25 postings row holds {len(blob)} bytes for {count} documents")
    return width


def widen(blob: bytes, count: int) -> np.ndarray:
    import numpy as np

    return np.frombuffer(blob, dtype=f"<u{_width(blob, count)}").astype(np.int64)


def widen_python(blob: bytes, count: int) -> tuple[int, ...]:
    return struct.unpack(f"<{count}{_WIDTHS[_width(blob, count)]}", blob)


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
    return list(accumulate(struct.unpack(f"<{len(body) // width}{_WIDTHS[width]}", body)))


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
        out = gone[key]
        stay = [(o, n) for o, n in zip(slots, widen_python(counts, len(slots)), strict=True) if o not in out]
        if stay:
            keep.append((*key, bytes(o for o, _ in stay), _narrow([n for _, n in stay])))
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
    db.execute("DELETE FROM meta WHERE key IN (?, ?)", (DOCS, LENGTH))


def _append(slots: bytes, tfs: bytes, extra: list[tuple[int, int]]) -> tuple[bytes, bytes] | None:
    """A row with new documents after all of its own, in its own width, by joining bytes (the usual
    case: new chunks take the highest slots); None when that does not fit."""
    top = max(n for _, n in extra)
    width = len(tfs) // len(slots) if slots else 1 if top < 1 << 8 else 2
    if (slots and slots[-1] >= extra[0][0]) or top >= 1 << (8 * width):
        return None
    if width not in (1, 2) or width * len(slots) != len(tfs):
        return None  # a four-byte row, or a garbled one (`widen` says which)
    return slots + bytes(o for o, _ in extra), tfs + b"".join(n.to_bytes(width, "little") for _, n in extra)


def _merge(slots: bytes, tfs: bytes, extra: list[tuple[int, int]]) -> tuple[bytes, bytes]:
    held = sorted([*zip(slots, widen_python(tfs, len(slots)) if slots else (), strict=True), *extra],
                  key=lambda pair: pair[0])  # fmt: skip  # stable: an offset already held comes first, as before
    return bytes(o for o, _ in held), _narrow([n for _, n in held])


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


def length_block(blob: bytes | None) -> np.ndarray:
    import numpy as np

    if blob is None:
        return np.zeros(BLOCK, dtype=_LENGTHS)
    return np.frombuffer(length_blob(blob), dtype=_LENGTHS).copy()


def length_blob(blob: bytes) -> bytes:
    if len(blob) != BLOCK * 4:
        raise sqlite3.DatabaseError(f"a BM25 lengths row holds {len(blob)} bytes")
    return blob


def length_rows(db: sqlite3.Connection, blocks: Iterable[int]) -> list[tuple[int, bytes]]:
    return list(select_in(db, "SELECT block, lengths FROM lengths WHERE block IN ({marks})", sorted(blocks)))


def _set_lengths(db: sqlite3.Connection, lengths: Mapping[int, int]) -> int:
    """Set these slots' lengths; returns the sum of the lengths they replace."""
    found = dict(length_rows(db, {s // BLOCK for s in lengths}))
    blocks = {b: list(struct.unpack(_LENGTH_ROW, length_blob(found[b]))) if b in found else [0] * BLOCK
              for b in {s // BLOCK for s in lengths}}  # fmt: skip
    replaced = 0
    for slot, length in lengths.items():
        replaced += blocks[slot // BLOCK][slot % BLOCK]
        blocks[slot // BLOCK][slot % BLOCK] = length
    db.executemany("DELETE FROM lengths WHERE block = ?", [(b,) for b, a in blocks.items() if not any(a)])
    db.executemany("INSERT OR REPLACE INTO lengths VALUES (?, ?)",
                   [(b, struct.pack(_LENGTH_ROW, *a)) for b, a in blocks.items() if any(a)])  # fmt: skip
    return replaced


def _count(db: sqlite3.Connection, docs: int, length: int) -> None:
    for key, delta in ((DOCS, docs), (LENGTH, length)):
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
