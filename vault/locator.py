"""How an entry is named, as every verb accepts it: a key, its id (`@…`), a place in a note, `PATH:LINE`
(the entries' own `[corrects:: …]` pointers) or `PATH#L5-L7` / `PATH#L5` (what a search hit and MCP
print as its source), or a piece of its text (`--match`)."""

from __future__ import annotations

import re

from memvault.vault.errors import UsageError

_PLACE = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+)|#L(?P<start>\d+)(?:-L?(?P<end>\d+))?)$")

Place = tuple[str, int, int]  # a note's vault-relative path and a line range in it (1-based, inclusive)


def check_selector(key: str | None, match: str | None) -> None:
    """Refuse, in one line, a name that names no entry: an empty or blank KEY (or place), or a `--match`
    with nothing to look for, which as a piece of every entry's text would match them all (a `forget
    --purge --match ""` took a vault's only entry for good). Every door builds its request or calls the
    library through here, before anything is looked up."""
    from memvault.vault.entries import match_form  # (entries reads the vault: imported where a match is)

    if key is not None and not key.strip():
        raise UsageError("the KEY is empty; give the entry's key, its id (@…), PATH:LINE or PATH#L5-L7")
    if match is not None and not match_form(match):
        raise UsageError("the --match text is empty: it would match every entry; give a piece of the entry's text")


def parse_place(ref: str) -> Place | None:
    """The note and lines `ref` names, or None when it names no place (a key, a bare path)."""
    found = _PLACE.match(ref)
    if found is None:
        return None
    start = int(found["line"] or found["start"])
    return found["path"].removeprefix("./"), start, max(start, int(found["end"] or start))
