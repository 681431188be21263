"""Substring search over the note files themselves: the answer of last resort.

It needs no index, no model and no lock, so `search` can always answer. A
chunk matching the whole query ranks above one matching some of its words;
MEMORY.md outranks daily notes (0.7 against 0.5), and newer notes come first.
"""

from __future__ import annotations

import datetime as dt

from indexer.filters import FilterSpec
from indexer.reconcile import payload_for
from search.hits import Hit
from search.snippet import make_snippet
from vault.chunking import chunk_note
from vault.errors import NoteReadError
from vault.fileio import read_note
from vault.notes import parse_note
from vault.paths import Layout
from vault.scan import scan_vault

MEMORY_SCORE, NOTE_SCORE = 0.7, 0.5


def substring_search(
    layout: Layout, query: str, limit: int = 10, flt: FilterSpec | None = None, per_doc: int = 3
) -> list[Hit]:
    phrase = " ".join(query.lower().split())
    terms = list(dict.fromkeys(phrase.split()))
    if not phrase:
        return []
    found: list[tuple[tuple, Hit]] = []
    for entry in scan_vault(layout):
        if entry.error:
            continue
        try:
            note = parse_note(entry.rel, read_note(entry.path, entry.rel).text)
        except NoteReadError:
            continue
        day = note.date or dt.date.fromtimestamp(entry.mtime_ns / 1e9)
        base = MEMORY_SCORE if note.kind == "memory" else NOTE_SCORE
        per_path = 0
        for chunk in chunk_note(note):
            if flt is not None and not flt.matches(payload_for(note, chunk)):
                continue
            lower = " ".join(chunk.text.lower().split())
            matched = len(terms) + 1 if phrase in lower else sum(t in lower for t in terms)
            if not matched or per_path >= per_doc:
                continue
            per_path += 1
            score = base * min(1.0, matched / len(terms))
            snippet, _ = make_snippet(chunk.text, query)
            hit = Hit(
                note.path,
                chunk.start_line,
                chunk.end_line,
                chunk.heading,
                chunk.text,
                score,
                snippet,
                chunk_id=chunk.id,
            )
            found.append(((-matched, -base, -day.toordinal(), note.path, chunk.start_line), hit))
    found.sort(key=lambda item: item[0])
    ranked = [hit for _, hit in found[:limit]]
    return [
        Hit(
            h.path,
            h.start_line,
            h.end_line,
            h.heading,
            h.text,
            h.score,
            h.snippet,
            {"substring": r},
            {"substring": h.score},
            h.chunk_id,
        )
        for r, h in enumerate(ranked, start=1)
    ]
