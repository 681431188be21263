"""Substring search over the note files themselves: the answer of last resort.

It needs no index, no model and no lock, so `search` can always answer. A
chunk holding the whole query (case-insensitive) ranks above one holding
some of its words (the query's tokens, so Chinese works without spaces);
then MEMORY.md over daily notes (0.7 against 0.5), then newer notes first.
"""

from __future__ import annotations

import datetime as dt

from memvault.indexer.filters import FilterSpec, payload_for
from memvault.indexer.tokenizer import tokenize
from memvault.search.fusion import cap_per_doc
from memvault.search.hits import Hit
from memvault.search.snippet import make_snippet, match_terms
from memvault.vault.chunking import chunk_note
from memvault.vault.errors import NoteReadError
from memvault.vault.fileio import read_note
from memvault.vault.model import Chunk, Note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout
from memvault.vault.scan import FileEntry, scan_vault

MEMORY_SCORE, NOTE_SCORE = 0.7, 0.5


_cache: dict[str, tuple[tuple[int, int], tuple[Note, list[tuple[Chunk, str]]] | None]] = {}


def _parsed(entry: FileEntry) -> tuple[Note, list[tuple[Chunk, str]]] | None:
    """A note's chunks with their folded text, re-read only when its size or mtime moved
    (batch mode and the daemon ask many queries of the same files)."""
    stamp = (entry.size, entry.mtime_ns)
    cached = _cache.get(entry.rel)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        note = parse_note(entry.rel, read_note(entry.path, entry.rel).text)
    except NoteReadError:
        value = None
    else:
        value = (note, [(c, " ".join(c.text.lower().split())) for c in chunk_note(note)])
    _cache[entry.rel] = (stamp, value)
    return value


def substring_search(layout: Layout, query: str, limit: int, flt: FilterSpec | None, per_doc: int) -> list[Hit]:
    phrase = " ".join(query.lower().split())
    # words for Latin text, jieba words for CJK: a Chinese question has no spaces to split on
    terms = match_terms(tokenize(phrase)) or [phrase]
    if not phrase:
        return []
    found: list[tuple[tuple, Chunk, float]] = []
    for entry in scan_vault(layout):
        if entry.error:
            continue
        parsed = _parsed(entry)
        if parsed is None:
            continue
        note, chunks = parsed
        day = note.date or dt.date.fromtimestamp(entry.mtime_ns / 1e9)
        base = MEMORY_SCORE if note.kind == "memory" else NOTE_SCORE
        for chunk, lower in chunks:
            if flt is not None and not flt.matches(payload_for(note, chunk)):
                continue
            matched = len(terms) + 1 if phrase in lower else sum(t in lower for t in terms)
            if matched:
                key = (-matched, -base, -day.toordinal(), note.path, chunk.start_line)
                found.append((key, chunk, base * min(1.0, matched / len(terms))))
    found.sort(key=lambda item: item[0])
    by_id = {chunk.id: (chunk, score) for _, chunk, score in found}
    keep = cap_per_doc(((chunk.id, chunk.path) for _, chunk, _ in found), per_doc, limit)
    hits = []
    for rank, chunk_id in enumerate(keep, start=1):  # snippets only for what is returned
        chunk, score = by_id[chunk_id]
        snippet = make_snippet(chunk.text, terms)
        hits.append(
            Hit(chunk.path, chunk.start_line, chunk.end_line, chunk.heading, chunk.text, score, snippet,
                {"substring": rank}, {"substring": score}, chunk.id)
        )  # fmt: skip
    return hits
