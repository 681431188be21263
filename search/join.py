"""Neighbouring entries that answer one query are one hit.

An entry is ranked alone (a conversation turn, a fact), but what answers a question is often two or
three lines of one exchange: the question asked and its reply, a fact and the one under it. Shown
as separate hits they take as many of the caller's slots and repeat their heading; joined, one hit
shows the run of lines (up to `JOIN_LINES`, taking in at most `JOIN_GAP` lines between them) and the
slots go to other places. A candidate joins an earlier-ranked hit when it ranks among the first
`JOIN_POOL` and answers the query itself: its own words (not its fields) hold one of the query's
words that is not a stop word, or its cosine reaches the model's relevance floor and comes within
`JOIN_COSINE` of its lead's. The floor alone is not enough: it tells whether a vault holds anything
relevant, and with the default model every entry of a small English section reaches it, so the backup
retention joined the test Redis port (issue 44); an answer stands out of that band, its unrelated
neighbours do not. A neighbour that only filled a list stays out (every chunk of a small vault is a
dense candidate, and "for" a BM25 one). Corrections and superseded entries are never joined: the newer
fact goes right above the older one, each its own hit.

Chosen on LoCoMo (`bench/results/README.md`, issue 26): ten hits of one entry each found 0.771 of
the evidence turns in 10 lines; joined, 0.874 in 32 lines (sections of 5 lines had found 0.878 in 55).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from memvault.indexer.stopwords import STOP_WORDS
from memvault.vault.entries import entries_in, entry_id

if TYPE_CHECKING:
    from memvault.indexer.rows import ChunkRow

JOIN_POOL = 50  # a neighbour joins only from the first this many candidates
JOIN_GAP = 2  # lines between two entries of one hit (read as its context)
JOIN_LINES = 8  # the longest run of lines a join makes
# how far below its lead's cosine a neighbour joining on its cosine alone may be: the default model put an
# answer 0.05-0.10 above its section's unrelated entries, which sat within 0.01 of each other (issue 44)
JOIN_COSINE = 0.03


class Place(NamedTuple):
    """Where a candidate is, and whether it may join or take in others: an entry that neither
    corrects nor is superseded."""

    path: str
    heading: tuple[str, ...]
    start_line: int
    end_line: int
    joinable: bool


def joinable(unit: str, superseded: object, corrects: object) -> bool:
    return unit == "entry" and not superseded and not corrects


def row_place(row: ChunkRow) -> Place:
    """A candidate's place as its index row gives it."""
    p = row.payload
    return Place(row.path, row.heading, row.start_line, row.end_line,
                 joinable(p.get("unit", "text"), p.get("superseded"), p.get("corrects")))  # fmt: skip


def content_words(terms: Sequence[str]) -> frozenset[str]:
    """The query's words a joiner must hold one of: its tokens less the stop words and a single Latin
    letter or digit (the 3 of "line 3" is in "Vue 3": it would join any neighbour that names a version)."""
    return frozenset(t for t in terms if len(t) > 1 or not t.isascii()) - STOP_WORDS


@dataclass
class Run:
    """One hit to be: its lead (the best-ranked candidate) and the lines its joined neighbours extend it to."""

    lead: str
    path: str
    start: int
    end: int
    members: list[str] = field(default_factory=list)  # the lead and its joiners, in rank order

    def takes(self, place: Place) -> bool:
        start, end = min(self.start, place.start_line), max(self.end, place.end_line)
        near = place.start_line - self.end - 1 <= JOIN_GAP and self.start - place.end_line - 1 <= JOIN_GAP
        return near and end - start + 1 <= JOIN_LINES

    def add(self, cid: str, place: Place) -> None:
        self.start, self.end = min(self.start, place.start_line), max(self.end, place.end_line)
        self.members.append(cid)


def answers_beside(words: Callable[[str], bool], cosines: dict[str, float], floor: float,
                   across: Callable[[str], bool] = lambda cid: False) -> Callable[[str, str], bool]:  # fmt: skip
    """Whether a candidate answers the query beside its run's lead: its own text holds a query word
    (`words`), or its cosine reaches `floor` and comes within `JOIN_COSINE` of the lead's; only by its
    words when it or the lead is `across` scripts from the query (a cosine there is a place in its half,
    `search.scripts`, alike across a section)."""

    def answers(cid: str, lead: str) -> bool:
        if words(cid):
            return True
        if across(cid) or across(lead):
            return False
        cosine, lead_cosine = cosines.get(cid), cosines.get(lead)
        if cosine is None or cosine < floor:
            return False
        return lead_cosine is None or cosine >= lead_cosine - JOIN_COSINE

    return answers


def join_runs(order: Sequence[str], places: dict[str, Place], answers: Callable[[str, str], bool]) -> list[Run]:
    """The candidates `order` (ids, best first; those without a place are left out) as runs, in their
    leads' order. A candidate joins the first run of its note's section that it lies next to, or leads
    its own; `answers` (the candidate, the run's lead) is asked only of a candidate that could join."""
    runs: list[Run] = []
    open_runs: dict[tuple[str, tuple[str, ...]], list[Run]] = {}  # (path, heading) -> its runs of entries
    for rank, cid in enumerate(order):
        place = places.get(cid)
        if place is None:
            continue
        section = (place.path, place.heading)
        if place.joinable and rank < JOIN_POOL:
            into = next((r for r in open_runs.get(section, []) if r.takes(place)), None)
            if into is not None and answers(cid, into.lead):
                into.add(cid, place)
                continue
        run = Run(cid, place.path, place.start_line, place.end_line, [cid])
        runs.append(run)
        if place.joinable:
            open_runs.setdefault(section, []).append(run)
    return runs


def run_text(lines: list[str], run: Run) -> tuple[str, list[str]] | None:
    """A joined run's text, its note's own lines (`lines`, the note now), and the ids of the entries in
    them; None when the note no longer reaches the run's last line."""
    if run.end > len(lines):
        return None
    text = "\n".join(lines[run.start - 1 : run.end])
    return text, [entry_id(e) for e in entries_in(textwrap.dedent(text))]
