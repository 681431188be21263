"""The small frozen values that cross layers: a note read from disk, and its chunks."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any


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
        raw = self.frontmatter.get("tags") or ()
        items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else ()
        return tuple(str(t).strip().lstrip("#") for t in items if str(t).strip())


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
