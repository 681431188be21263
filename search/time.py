"""Ranking that knows dates: daily-note hits decay with age, and a query's date words boost the
hits dated inside the range they name (or, as a filter, keep only those).

Both act on the fused score and re-sort. Only daily notes decay: MEMORY.md and other notes hold
lasting facts. Ages count back from the newest daily note in the vault (not after today), so a
vault left alone for a while does not sink its daily notes below MEMORY.md; among daily notes the
order is the same as counting from today, since every daily hit's factor differs by the same ratio.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

from memvault.search.fusion import Fused

# an in-range hit's fused score is doubled: it passes every out-of-range hit that a retriever did
# not rank about 35 places higher (RRF with k 60)
DATE_BOOST = 2.0


def _day(payload: Mapping[str, Any] | None) -> dt.date | None:
    day = payload.get("date") if payload else None
    return dt.date.fromisoformat(day[:10]) if day else None


def newest_daily(newest: str | None, today: dt.date | None = None) -> dt.date:
    """The day ages count from: the newest daily note's date (`newest`, as payloads hold it), or
    today when that is earlier."""
    today = today or dt.date.today()
    return min(today, dt.date.fromisoformat(newest[:10])) if newest else today


def decay_factor(payload: Mapping[str, Any] | None, half_life: float, reference: dt.date) -> float:
    """0.5 ** (age in days / half-life) for a daily note's chunk, 1 for any other."""
    day = _day(payload) if payload and payload.get("kind") == "daily" else None
    return 1.0 if day is None else 0.5 ** (max(0, (reference - day).days) / half_life)


def boost_factor(payload: Mapping[str, Any] | None, start: dt.date, end: dt.date) -> float:
    day = _day(payload)
    return DATE_BOOST if day is not None and start <= day <= end else 1.0


def reweigh(fused: list[Fused], factor: Callable[[str], float]) -> list[Fused]:
    """Each fused score times `factor(id)`, best first again (ties keep their order)."""
    scaled = [f._replace(score=f.score * factor(f.chunk_id)) for f in fused]
    order = sorted(range(len(scaled)), key=lambda i: (-scaled[i].score, i))
    return [scaled[i] for i in order]
