"""How important an entry is (seed 003's `importance`, 1 to 5): the inline field `[importance:: N]`,
which `remember --importance N` writes and a person may type on any entry. An entry of `KEPT` or more
is in every prompt's stable block whatever its section, a search weighs it by `importance_factor`, and
the list can be narrowed to them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memvault.vault.entries import Entry, field_in
from memvault.vault.errors import UsageError

LEVELS = range(1, 6)
KEPT = 4  # from here on, an entry is in the stable block
STEP = 0.1  # a search's weight per level from 3: a nudge among near answers, never over a clearly better one


def check_importance(value: int | None) -> int | None:
    if value is not None and value not in LEVELS:
        raise UsageError(f"importance is 1 to 5 (seed 003's scale), not {value}")
    return value


def level(value: str | None) -> int | None:
    """A field's value as an importance, when it is one (another value is read as none)."""
    return int(value) if value is not None and value.strip().isdigit() and int(value) in LEVELS else None


def importance(entry: Entry) -> int | None:
    return level(field_in(entry.text, "importance"))


def importance_factor(payload: Mapping[str, Any] | None) -> float:
    """How a search weighs an entry by its importance: `STEP` more a level above 3, less below (5: 1.2)."""
    found = (payload or {}).get("importance")
    return 1.0 + STEP * (found - 3) if isinstance(found, int) and found in LEVELS else 1.0


def kept(entry: Entry) -> bool:
    found = importance(entry)
    return found is not None and found >= KEPT
