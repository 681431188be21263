"""The entries as the panel shows and names them: each `list` row with the id a form sends back (its
version id, `PATH#@…`, which names that version of the entry alone) and its exact version (what an edit
checks), filtered by what the `list` verb does not filter (day range, text) and paged."""

from __future__ import annotations

import dataclasses
from typing import Any

from memvault.vault.edit import editable
from memvault.vault.entries import Entry, one_line, version_id
from memvault.vault.forget import entry_version

_FIELDS = [f.name for f in dataclasses.fields(Entry)]


def named(row: dict[str, Any]) -> dict[str, Any]:
    """A `list` row with `id` (`PATH#@…`), `version`, `summary` (one line) and the parts an edit form shows."""
    entry = Entry(**{name: row[name] for name in _FIELDS if name != "tags"}, tags=tuple(row["tags"]))
    text, own_tags = editable(row["text"])
    return {**row, "id": f"{row['path']}#{version_id(entry)}", "version": entry_version(row["text"]),
            "summary": one_line(row["text"]), "edit_text": text, "edit_tags": " ".join(own_tags)}  # fmt: skip


def narrowed(rows: list[dict[str, Any]], day_from: str, day_to: str, text: str) -> list[dict[str, Any]]:
    """Rows of a day range (entries with no day are outside any range) holding `text` (no case), newest first."""
    wanted = text.casefold().strip()
    out = [
        r for r in rows
        if (not day_from or (r["date"] or "") >= day_from) and (not day_to or (r["date"] or "9999") <= day_to)
        and (not wanted or wanted in r["text"].casefold() or wanted in (r["key"] or "").casefold())
    ]  # fmt: skip
    out.sort(key=lambda r: (r["date"] or "", r["path"], -r["start_line"]), reverse=True)
    return out


@dataclasses.dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    number: int
    pages: int
    total: int


def paged(rows: list[dict[str, Any]], number: int, size: int) -> Page:
    pages = max(1, -(-len(rows) // size))
    number = min(max(1, number), pages)
    return Page([named(r) for r in rows[(number - 1) * size : number * size]], number, pages, len(rows))
