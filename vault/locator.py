"""A place in a note, as every verb accepts it: `PATH:LINE` (the entries' own `[corrects:: …]`
pointers) or `PATH#L5-L7` / `PATH#L5` (what a search hit and MCP print as its source)."""

from __future__ import annotations

import re

_PLACE = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+)|#L(?P<start>\d+)(?:-L?(?P<end>\d+))?)$")

Place = tuple[str, int, int]  # a note's vault-relative path and a line range in it (1-based, inclusive)


def parse_place(ref: str) -> Place | None:
    """The note and lines `ref` names, or None when it names no place (a key, a bare path)."""
    found = _PLACE.match(ref)
    if found is None:
        return None
    start = int(found["line"] or found["start"])
    return found["path"].removeprefix("./"), start, max(start, int(found["end"] or start))
