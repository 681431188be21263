"""How important an entry is (seed 003's `importance`, 1 to 5): the inline field `[importance:: N]`,
which `remember --importance N` writes and a person may type on any entry. An entry of `KEPT` or more
is in every prompt's stable block whatever its section, and the list can be narrowed to them."""

from __future__ import annotations

from memvault.vault.entries import Entry, field_in
from memvault.vault.errors import UsageError

LEVELS = range(1, 6)
KEPT = 4  # from here on, an entry is in the stable block


def check_importance(value: int | None) -> int | None:
    if value is not None and value not in LEVELS:
        raise UsageError(f"importance is 1 to 5 (seed 003's scale), not {value}")
    return value


def importance(entry: Entry) -> int | None:
    """The entry's importance, when it has a readable one (another value is read as none)."""
    value = field_in(entry.text, "importance")
    return int(value) if value is not None and value.strip().isdigit() and int(value) in LEVELS else None


def kept(entry: Entry) -> bool:
    found = importance(entry)
    return found is not None and found >= KEPT
