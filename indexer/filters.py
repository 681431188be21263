"""One filter, three readings: a Qdrant Edge filter, a qdrant-client filter, and a payload predicate;
and `payload_for`, the payload of a chunk that all three read.

Filters are pushed into each retriever before its top-k cut, so a date range
returns the best hits inside the range, not what is left of the global best.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memvault.vault.cjk import written_in
from memvault.vault.entries import one_line
from memvault.vault.model import Chunk, Note


def iso_day(day: dt.date) -> str:
    """Dates are stored as midnight UTC ISO strings; Qdrant Edge has no date type of its own."""
    return f"{day.isoformat()}T00:00:00Z"


def payload_for(note: Note, chunk: Chunk) -> dict[str, Any]:
    """What the vector store filters on, and what BM25's pushed-down filter reads."""
    return {
        "path": chunk.path,
        "kind": note.kind,
        "date": iso_day(note.date) if note.date else None,
        "section": chunk.section,
        "tags": list(dict.fromkeys([*note.tags, *chunk.tags])),  # an entry's own #tags with its note's
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "content_hash": chunk.content_hash,
        "script": written_in(one_line(chunk.text)),  # the sentence's script, not its fields' or its URLs' letters
        "unit": chunk.unit,
        **{k: v for k, v in _marks(chunk) if v},
    }


def _marks(chunk: Chunk) -> tuple[tuple[str, Any], ...]:
    """What an entry says of itself that a search reads (kept only when it says it)."""
    return (("superseded", chunk.superseded), ("key", chunk.key), ("corrects", chunk.corrects),
            ("importance", chunk.importance), ("conversation", chunk.conversation))  # fmt: skip


@dataclass(frozen=True)
class FilterSpec:
    """What a search may be restricted to; every field set must hold (AND)."""

    path_prefix: str | None = None
    kinds: tuple[str, ...] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    section: str | None = None
    tag: str | None = None
    script: str | None = None  # not a public option: search asks the other script's notes with it
    conversation: str | None = None  # seed 000's "this conversation": its entries and what it said

    def is_empty(self) -> bool:
        return self == FilterSpec()

    def matches(self, payload: Mapping[str, Any]) -> bool:
        """The same predicate as the store filters, for BM25 postings and the substring fallback."""
        if self.path_prefix and not str(payload.get("path", "")).startswith(self.path_prefix):
            return False
        if self.kinds and payload.get("kind") not in self.kinds:
            return False
        if self.date_from or self.date_to:
            day = payload.get("date")
            if not day:
                return False
            if self.date_from and day < iso_day(self.date_from):
                return False
            if self.date_to and day > iso_day(self.date_to):
                return False
        if self.section and payload.get("section") != self.section:
            return False
        if self.script and payload.get("script") != self.script:
            return False
        if self.conversation and payload.get("conversation") != self.conversation:
            return False
        return not (self.tag and self.tag not in (payload.get("tags") or ()))

    def to_sql(self) -> tuple[str, list[Any]]:
        """The same predicate over the manifest's chunk columns (a WHERE clause and its parameters)."""
        where, params = ["1"], []
        if self.path_prefix:
            where.append("substr(path, 1, ?) = ?")
            params += [len(self.path_prefix), self.path_prefix]
        if self.kinds:
            where.append(f"kind IN ({','.join('?' * len(self.kinds))})")
            params += list(self.kinds)
        if self.date_from:
            where.append("date >= ?")
            params.append(iso_day(self.date_from))
        if self.date_to:
            where.append("date <= ?")
            params.append(iso_day(self.date_to))
        if self.section:
            where.append("section = ?")
            params.append(self.section)
        if self.tag:
            where.append("EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)")
            params.append(self.tag)
        if self.script:
            where.append("script = ?")
            params.append(self.script)
        if self.conversation:
            where.append("conversation = ?")
            params.append(self.conversation)
        return " AND ".join(where), params

    def _conditions(self, m: Any, date_range: Any, prefix: Any) -> list[Any]:
        out = []
        if self.path_prefix:
            out.append(m.FieldCondition(key="path", match=prefix(self.path_prefix)))
        if self.kinds:
            out.append(m.FieldCondition(key="kind", match=m.MatchAny(any=list(self.kinds))))
        if self.date_from or self.date_to:
            out.append(
                m.FieldCondition(
                    key="date",
                    range=date_range(
                        gte=iso_day(self.date_from) if self.date_from else None,
                        lte=iso_day(self.date_to) if self.date_to else None,
                    ),
                )
            )
        if self.section:
            out.append(m.FieldCondition(key="section", match=m.MatchValue(value=self.section)))
        if self.tag:
            out.append(m.FieldCondition(key="tags", match=m.MatchValue(value=self.tag)))
        if self.script:
            out.append(m.FieldCondition(key="script", match=m.MatchValue(value=self.script)))
        if self.conversation:
            out.append(m.FieldCondition(key="conversation", match=m.MatchValue(value=self.conversation)))
        return out

    def to_edge(self) -> Any:
        import qdrant_edge as e

        if self.is_empty():
            return None
        return e.Filter(must=self._conditions(e, e.RangeDateTime, e.MatchPrefix))

    def to_client(self) -> Any:
        from qdrant_client import models as m

        if self.is_empty():
            return None
        return m.Filter(must=self._conditions(m, m.DatetimeRange, lambda p: m.MatchPrefix(prefix=p)))
