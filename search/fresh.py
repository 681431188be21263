"""No hit shows text its note no longer holds.

The index lags the files: a note saved with no daemon running waits for the next `index`, and a
daemon sees a save only after its watcher's debounce. Before a hit is shown, its note is compared
with the version the manifest recorded, by `stat` alone (size and mtime, the reconcile's own first
test). A note that is gone drops its hits; a note that changed is read and chunked again as the
indexer would, and a hit stays only if a chunk of the same text is still there, with the lines
where that text is now. What a hit shows is then always in the file, though the ranking may be a
version behind until the index catches up. A reader with no vault files (a server collection's, with no
local index) shows hits as indexed, and says so (`AsIndexed`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from memvault.indexer.manifest import Manifest
from memvault.indexer.remote import RemoteIndex
from memvault.indexer.rows import ChunkRow
from memvault.vault.chunking import chunk_note
from memvault.vault.errors import NoteReadError
from memvault.vault.fileio import read_note
from memvault.vault.model import Chunk
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout


@dataclass
class Freshness:
    """One search's view of its hits' notes: each note looked at once, however many hits it has."""

    layout: Layout
    manifest: Manifest
    changed: set[str] = field(default_factory=set)  # notes that are not the version indexed
    _now: dict[str, dict[str, Chunk] | None] = field(default_factory=dict)  # rel -> current chunks by hash
    _texts: dict[str, str | None] = field(default_factory=dict)  # rel -> its text now, read once a search

    def check(self, rows: dict[str, ChunkRow]) -> dict[str, ChunkRow]:
        """`rows` (by chunk id) as their notes hold them now: rows whose text is gone are left out, the
        others carry the lines where their text is (a line inserted above moves them)."""
        self._look(sorted({r.path for r in rows.values()} - self._now.keys()))
        out: dict[str, ChunkRow] = {}
        for cid, row in rows.items():
            now = self._now[row.path]
            if now is None:  # the note is the version indexed
                out[cid] = row
            elif (chunk := now.get(row.content_hash)) is not None:
                out[cid] = replace(row, start_line=chunk.start_line, end_line=chunk.end_line, heading=chunk.heading)
        return out

    def _look(self, paths: list[str]) -> None:
        recorded = self.manifest.file_versions(paths)
        for rel in paths:
            try:
                st = os.stat(self.layout.root / rel)
            except OSError:
                st = None
            if st is not None and recorded.get(rel) == (st.st_size, st.st_mtime_ns):
                self._now[rel] = None
                continue
            self.changed.add(rel)
            text = None if st is None else self._text(rel)
            self._now[rel] = {} if text is None else {c.content_hash: c for c in chunk_note(parse_note(rel, text))}

    def lines(self, rel: str) -> list[str] | None:
        """The note's lines as it is now, for a hit that spans more than one chunk (`search.join`);
        None when it cannot be read."""
        text = self._text(rel)
        return None if text is None else [line.rstrip("\r") for line in text.split("\n")]

    def _text(self, rel: str) -> str | None:
        """The note's text now (a changed note is chunked, a joined hit shows its lines: one read)."""
        if rel not in self._texts:
            try:
                self._texts[rel] = read_note(self.layout.root / rel, rel, layout=self.layout).text
            except NoteReadError:
                self._texts[rel] = None
        return self._texts[rel]

    def reason(self) -> str | None:
        """For the answer: how many of the hits' notes changed since they were indexed."""
        if not self.changed:
            return None
        n = len(self.changed)
        notes = "note has" if n == 1 else "notes have"
        return f"{n} {notes} changed since the last index: hits were checked against the files"


@dataclass
class AsIndexed:
    """`Freshness` for a reader with no vault files (`indexer.remote.RemoteIndex`): hits are as the collection
    holds them, and the answer says so. A joined hit's lines are its note's chunks as indexed, line by line."""

    index: RemoteIndex
    _lines: dict[str, list[str]] = field(default_factory=dict)

    def check(self, rows: dict[str, ChunkRow]) -> dict[str, ChunkRow]:
        return rows

    def lines(self, rel: str) -> list[str] | None:
        if rel not in self._lines:
            out: list[str] = []
            for row in sorted(self.index.chunk_rows(self.index.chunk_ids(rel)).values(), key=lambda r: r.start_line):
                for n, line in enumerate(row.text.split("\n"), start=row.start_line - 1):
                    out += [""] * (n + 1 - len(out))
                    out[n] = out[n] or line
            self._lines[rel] = out
        return self._lines[rel]

    def reason(self) -> str:
        return f"no local index: {self.index.description} answered, hits as its writer last indexed them"
