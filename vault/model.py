"""The small frozen values that cross layers: a note read from disk, and its chunks."""

from __future__ import annotations

import datetime as dt
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
    """A retrievable piece of a note: a heading section or part of one.

    `id` depends only on path, heading path and ordinal within that heading
    path, so edits elsewhere in the file leave it unchanged; `content_hash`
    keys the embedding cache, so moved text is never embedded twice.
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
