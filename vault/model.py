"""The small frozen values that cross layers: a note read from disk, and its chunks."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

MAX_TAGS = 100
MAX_TAG_CHARS = 200


@dataclass(frozen=True)
class Note:
    """One Markdown file, split into frontmatter and body.

    `body_line` is the 1-based file line where the body starts, so chunk line
    ranges point into the file as the user sees it, frontmatter included.
    `problem` carries a non-fatal reading problem (broken frontmatter) that
    callers report once.
    """

    path: str
    kind: str
    date: dt.date | None
    frontmatter: dict[str, Any]
    body: str
    body_line: int = 1
    problem: str | None = None

    @property
    def tags(self) -> tuple[str, ...]:
        """Scalar tags only, at most `MAX_TAGS` of `MAX_TAG_CHARS` each: YAML aliases can make a
        400-byte frontmatter a list of millions of nested items, which must not reach the index."""
        raw = self.frontmatter.get("tags") or ()
        items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else ()
        scalars = (str(t).strip().lstrip("#") for t in items[:MAX_TAGS] if isinstance(t, str | int | float))
        return tuple(t for t in scalars if t and len(t) <= MAX_TAG_CHARS)


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit of a note: one entry (`unit` "entry": a list item with what is indented
    under it), the free text of a section or part of it ("text"), or a day's summary ("summary").

    `id` depends only on path, heading path and ordinal within that heading
    path, so edits elsewhere in the file leave it unchanged; `content_hash`
    keys the embedding cache (it is the hash of `vector_text`, what is
    embedded), so moved text is never embedded twice. An entry is ranked with
    its heading path as `context` ("2023-05-25 > Session 2: Caroline and
    Melanie"), since a turn of a conversation alone rarely says who spoke when
    (the dense model reads it without its dates: `dense_context`), and BM25
    reads the entries just before it (`near`) too; what a hit shows and acts
    on is the entry's own `text`.
    """

    id: str
    path: str
    heading: tuple[str, ...]
    start_line: int
    end_line: int
    text: str
    content_hash: str
    section: str = ""  # the enclosing `##` heading (else the `#` one): what filters and MEMORY.md call a section
    superseded: str | None = None  # a superseded entry (a chunk of its own): the day it was corrected
    unit: str = "text"  # entry | text | summary
    context: str = ""  # an entry's heading path, ranked with it
    near: str = ""  # the entries before an entry in its section, which BM25 reads with it
    key: str | None = None  # an entry's `[key:: …]`
    corrects: str | None = None  # a correction's `[corrects:: …]` pointer
    tags: tuple[str, ...] = ()  # an entry's own #tags
    importance: int | None = None  # an entry's `[importance:: N]`, 1-5 (`vault.importance`)
    conversation: str | None = None  # the conversation it came from: its `[conversation:: ID]`, or its history note's

    @property
    def vector_text(self) -> str:
        return vector_text(self.context, self.text)

    @property
    def bm25_text(self) -> str:
        return bm25_text(self.unit, self.context, self.near, self.text)


# an ISO date in a heading, and what separates it from the heading's other words
_DATE = re.compile(r"\s*\b\d{4}-\d{2}-\d{2}\b[\s:,-]*")


def dense_context(context: str) -> str:
    """An entry's heading path as the dense model reads it: without its dates. A daily note's title is
    its day ("2023-05-08 > Session 1: ..."), which the note's date and the query's date words already
    answer; to the model it is a run of tokens every entry of the day shares, and a short turn's vector
    leans on them (LoCoMo, the dense list alone, nDCG@10 0.674 -> 0.699, recall@10 0.796 -> 0.825;
    hybrid recall@10 0.876 -> 0.884 in 31.7 lines). Times of day were tried too: the dense list gained
    a little more and hybrid lost (recall@10 0.879), so they stay (bench/results/README.md, issue 28)."""
    if not context:
        return ""
    parts = (_DATE.sub(" ", part).strip() for part in context.split(" > "))
    return " > ".join(part for part in parts if part)


def _with_context(context: str, text: str) -> str:
    return f"{context}\n{text}" if context else text


def vector_text(context: str, text: str) -> str:
    """What a unit is embedded as: its context (`dense_context`), then its text."""
    return _with_context(dense_context(context), text)


def bm25_text(unit: str, context: str, near: str, text: str) -> str:
    """What BM25 reads of a unit: an entry's context, the entries before it, and its own words twice,
    so a neighbour that shares the query's words ranks below the entry that says them (LoCoMo, BM25
    alone: MRR@10 0.432 -> 0.513, recall@10 0.730 -> 0.741; three and four times gained less recall)."""
    if unit != "entry":
        return _with_context(context, text)
    return "\n".join(part for part in (context, near, text, text) if part)
