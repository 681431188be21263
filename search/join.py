"""Neighbouring entries that answer one query are one hit.

An entry is ranked alone (a conversation turn, a fact), but what answers a question is often two or
three lines of one exchange: the question asked and its reply, a fact and the one under it. Shown
as separate hits they take as many of the caller's slots and repeat their heading; joined, one hit
shows the run of lines (up to `JOIN_LINES`, taking in at most `JOIN_GAP` lines between them) and the
slots go to other places. A candidate joins an earlier-ranked hit when it ranks among the first
`JOIN_POOL` and answers the query itself: it holds one of the query's words that is not a stop word,
or its cosine reaches the model's relevance floor. A neighbour that only filled a list stays out
(every chunk of a small vault is a dense candidate, and "for" a BM25 one). Corrections and superseded
entries are never joined: the newer fact goes right above the older one, each its own hit.

Chosen on LoCoMo (`bench/results/README.md`, issue 26): ten hits of one entry each found 0.771 of
the evidence turns in 10 lines; joined, 0.874 in 32 lines (sections of 5 lines had found 0.876 in 55).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memvault.indexer.rows import ChunkRow

JOIN_POOL = 50  # a neighbour joins only from the first this many candidates
JOIN_GAP = 2  # lines between two entries of one hit (read as its context)
JOIN_LINES = 8  # the longest run of lines a join makes


@dataclass
class Run:
    """One hit to be: its lead (the best-ranked chunk) and the lines its joined neighbours extend it to."""

    lead: str
    path: str
    start: int
    end: int
    members: list[str] = field(default_factory=list)  # the lead and its joiners, in rank order

    def takes(self, row: ChunkRow) -> bool:
        start, end = min(self.start, row.start_line), max(self.end, row.end_line)
        near = row.start_line - self.end - 1 <= JOIN_GAP and self.start - row.end_line - 1 <= JOIN_GAP
        return near and end - start + 1 <= JOIN_LINES

    def add(self, cid: str, row: ChunkRow) -> None:
        self.start, self.end = min(self.start, row.start_line), max(self.end, row.end_line)
        self.members.append(cid)


def joinable(row: ChunkRow) -> bool:
    p = row.payload
    return p.get("unit") == "entry" and not p.get("superseded") and not p.get("corrects")


def join_runs(order: Sequence[str], rows: dict[str, ChunkRow], answers: Callable[[str, ChunkRow], bool]) -> list[Run]:
    """The candidates `order` (ids, best first; those with a row, fresh) as runs, in their leads' order.
    A candidate joins the first run of its note's section that it lies next to, or leads its own."""
    runs: list[Run] = []
    open_runs: dict[tuple[str, tuple[str, ...]], list[Run]] = {}  # (path, heading) -> its runs of entries
    for rank, cid in enumerate(order):
        row = rows.get(cid)
        if row is None:
            continue
        place = (row.path, row.heading)
        if joinable(row) and rank < JOIN_POOL:
            into = next((r for r in open_runs.get(place, []) if r.takes(row)), None)
            if into is not None and answers(cid, row):
                into.add(cid, row)
                continue
        run = Run(cid, row.path, row.start_line, row.end_line, [cid])
        runs.append(run)
        if joinable(row):
            open_runs.setdefault(place, []).append(run)
    return runs
