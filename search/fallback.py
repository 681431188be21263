"""Substring search over the note files themselves: the answer of last resort.

It needs no index, no model and no lock, so `search` can always answer. A
chunk holding the whole query (case-insensitive) ranks above one holding
some of its words (the query's tokens, so Chinese works without spaces);
then MEMORY.md over daily notes (0.7 against 0.5), then newer notes first. Neighbouring entries
that hold the query's words are one hit, as in an indexed search (`search.join`).
"""

from __future__ import annotations

import datetime as dt

from memvault.indexer.filters import FilterSpec, payload_for
from memvault.indexer.tokenizer import tokenize
from memvault.search.fusion import cap_per_doc
from memvault.search.hits import Hit, about_unit
from memvault.search.join import Place, Run, content_words, join_runs, joinable, run_text
from memvault.search.snippet import SNIPPET_LINES, make_snippet, match_terms
from memvault.vault.chunking import chunk_note
from memvault.vault.entries import one_line
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
    words = content_words(tokenize(phrase))
    terms = match_terms([t for t in tokenize(phrase) if t in words] or tokenize(phrase)) or [phrase]
    if not phrase:
        return []
    found: list[tuple[tuple, Chunk, float]] = []
    parsed_notes: dict[str, Note] = {}
    lowers: dict[str, str] = {}  # a matching chunk's folded text, and how many of the terms it holds
    counts: dict[str, int] = {}
    for entry in scan_vault(layout):
        if entry.error:
            continue
        parsed = _parsed(entry)
        if parsed is None:
            continue
        note, chunks = parsed
        parsed_notes[note.path] = note
        day = note.date or dt.date.fromtimestamp(entry.mtime_ns / 1e9)
        base = MEMORY_SCORE if note.kind == "memory" else NOTE_SCORE
        for chunk, lower in chunks:
            if flt is not None and not flt.matches(payload_for(note, chunk)):
                continue
            holding = sum(t in lower for t in terms)
            matched = len(terms) + 1 if phrase in lower else holding
            if matched:
                key = (-matched, -base, -day.toordinal(), note.path, chunk.start_line)
                found.append((key, chunk, base * min(1.0, matched / len(terms))))
                lowers[chunk.id], counts[chunk.id] = lower, holding
    found.sort(key=lambda item: item[0])
    by_id = {chunk.id: (chunk, score) for _, chunk, score in found}
    order = [chunk.id for _, chunk, _ in found]
    places = {cid: Place(c.path, c.heading, c.start_line, c.end_line, joinable(c.unit, c.superseded, c.corrects))
              for cid, (c, _) in by_id.items()}  # fmt: skip
    runs = join_runs(order, places, lambda cid, _: not words.isdisjoint(tokenize(one_line(by_id[cid][0].text))))

    def held(run: Run) -> int:  # the query's words a run holds, in any of its entries
        if len(run.members) == 1:
            return counts[run.lead]
        return sum(any(t in lowers[m] for m in run.members) for t in terms)

    runs.sort(key=lambda run: -held(run))  # stable: ties keep the lead's order
    keep = cap_per_doc(((i, run.path) for i, run in enumerate(runs)), per_doc, limit)
    hits = []
    for rank, run in enumerate((runs[i] for i in keep), start=1):  # snippets only for what is returned
        chunk, score = by_id[run.lead]
        note = parsed_notes[chunk.path]
        text, unit, about = chunk.text, chunk.unit, about_unit(payload_for(note, chunk), chunk.text)
        joined = None
        if len(run.members) > 1:  # the file's lines, by number (the body starts at `body_line`)
            joined = run_text([""] * (note.body_line - 1) + note.body.split("\n"), run)
        if joined is not None:
            (text, about["entries"]), unit = joined, "entries"
        else:
            run.start, run.end = chunk.start_line, chunk.end_line
        snippet = make_snippet(text, terms, max(SNIPPET_LINES, run.end - run.start + 1))
        hits.append(
            Hit(chunk.path, run.start, run.end, chunk.heading, text, score, snippet,
                {"substring": rank}, {"substring": score}, chunk.id, None, unit, about)
        )  # fmt: skip
    return hits
