"""The manifest's rows as values: a file, a chunk (read back, or written from a `Chunk` and its
payload), and the packing of chunk texts."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.indexer import postings
from memvault.vault.model import Chunk, bm25_text, vector_text

ROW = ("id, path, heading, section, start_line, end_line, content_hash, text, kind, date, tags, superseded, script, "
       "unit, context, near, key, corrects, importance, conversation")  # fmt: skip
ROW_BARE = ROW.replace(", text,", ", NULL,")  # ranking and filters read all but the text


@dataclass(frozen=True)
class FileRow:
    path: str
    sha256: str
    size: int
    mtime_ns: int
    status: str  # indexed | failed | pending
    error: str | None
    chunks: int
    indexed_at: float


@dataclass(frozen=True)
class FileChunks:
    """A changed note, read and chunked, ready to be stored: its chunks and their filter payloads."""

    rel: str
    sha: str
    size: int
    mtime_ns: int
    chunks: list[Chunk]
    payloads: list[dict[str, Any]]


@dataclass(frozen=True)
class ChunkRow:
    """A chunk as indexed: enough to render a hit without reopening the note."""

    id: str
    path: str
    heading: tuple[str, ...]
    section: str
    start_line: int
    end_line: int
    content_hash: str
    text: str
    payload: dict[str, Any]
    context: str = ""  # an entry's heading path, ranked with it (`vault.model.Chunk`)
    near: str = ""  # the entries before an entry, which its BM25 text holds too

    @property
    def vector_text(self) -> str:
        return vector_text(self.context, self.text)

    @property
    def bm25_text(self) -> str:
        return bm25_text(self.payload["unit"], self.context, self.near, self.text)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> ChunkRow:
        cid, path, heading, section, start, end, content_hash, packed, kind, date, tags, superseded, script = row[:13]
        unit, context, near, key, corrects, importance, conversation = row[13:]
        text = zlib.decompress(packed).decode("utf-8") if packed else ""
        fields = {
            "superseded": superseded,
            "key": key,
            "corrects": corrects,
            "importance": importance,
            "conversation": conversation,
        }
        payload = {"path": path, "kind": kind, "date": date, "section": section, "tags": json.loads(tags or "[]"),
                   "start_line": start, "end_line": end, "content_hash": content_hash, "script": script, "unit": unit,
                   **{k: v for k, v in fields.items() if v}}  # fmt: skip
        return cls(cid, path, tuple(json.loads(heading)), section, start, end, content_hash, text, payload, context,
                   near or "")  # fmt: skip


def chunk_row(c: Chunk, p: dict[str, Any], doc: postings.Doc, terms: bytes, embedded: bool) -> tuple[Any, ...]:
    tags = json.dumps(p["tags"], ensure_ascii=False) if p.get("tags") else None
    heading = json.dumps(c.heading, ensure_ascii=False)
    return (doc.slot, c.id, c.path, heading, c.section, c.start_line, c.end_line, c.content_hash, p["kind"],
            p.get("date"), tags, p.get("superseded"), pack_text(c.text), terms, int(embedded),
            p["script"], c.unit, c.context, c.near, c.key, c.corrects, c.importance, c.conversation)  # fmt: skip


def pack_text(text: str) -> bytes:
    """Chunk texts are kept compressed: they are read back only for the few hits a search shows."""
    return zlib.compress(text.encode("utf-8"), 6)
