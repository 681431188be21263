"""Statistics kept over time (seed 003's): per day, the searches the daemon served by mode, their latency
(sum and worst, in ms) and how many its query cache answered; kept in `.memvault/statistics.json`
across restarts (written at most every `SAVE_EVERY` seconds while it serves, and when it stops), the
last `DAYS_KEPT` days. The daemon's recent events are kept beside them (`events.json`), so `memvault
events` and the panel still show what happened before a restart. Both files are derived: one that is
gone or unreadable starts the figures afresh, never an error."""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from typing import Any

from memvault.vault.errors import MemvaultError
from memvault.vault.paths import Layout
from memvault.vault.state import read_state, write_state

FILE = "statistics.json"
EVENTS_FILE = "events.json"
DAYS_KEPT = 90
SAVE_EVERY = 60.0


class Statistics:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        found = read_state(layout, FILE).get("days")
        self.days: dict[str, dict[str, Any]] = found if isinstance(found, dict) else {}
        self._lock = threading.Lock()
        self._changed = False
        self._saved = time.monotonic()

    def searched(self, mode: str, seconds: float, cached: bool) -> None:
        day = dt.date.today().isoformat()
        with self._lock:
            figures = self.days.setdefault(day, {"searches": {}, "ms_sum": 0.0, "ms_max": 0.0, "cache_hits": 0})
            by_mode = figures.setdefault("searches", {})
            by_mode[mode] = int(by_mode.get(mode, 0)) + 1
            ms = 1000 * seconds
            figures["ms_sum"] = round(float(figures.get("ms_sum", 0.0)) + ms, 3)
            figures["ms_max"] = round(max(float(figures.get("ms_max", 0.0)), ms), 3)
            figures["cache_hits"] = int(figures.get("cache_hits", 0)) + int(cached)
            self._changed = True

    def save(self, force: bool = False) -> None:
        """Write the figures when they changed (and, unless `force`, not more than every `SAVE_EVERY` s)."""
        with self._lock:
            if not self._changed or (not force and time.monotonic() - self._saved < SAVE_EVERY):
                return
            kept = dict(sorted(self.days.items())[-DAYS_KEPT:])
            self.days, self._changed, self._saved = kept, False, time.monotonic()
        try:
            write_state(self.layout, FILE, {"days": kept})
        except (OSError, ValueError, MemvaultError):  # a vault that cannot be written keeps them in memory
            with self._lock:
                self._changed = True

    def as_dict(self) -> dict[str, Any]:
        """Per day, newest first: searches by mode and in all, latency mean and worst, query-cache hits."""
        with self._lock:
            days = sorted(self.days.items(), reverse=True)
        out = {}
        for day, f in days:
            total = sum(int(n) for n in f.get("searches", {}).values())
            mean = round(float(f.get("ms_sum", 0.0)) / total, 2) if total else None
            out[day] = {"searches": total, "by_mode": dict(f.get("searches", {})), "ms_mean": mean,
                        "ms_max": f.get("ms_max"), "cache_hits": f.get("cache_hits", 0)}  # fmt: skip
        return out


def load_events(layout: Layout) -> list[dict[str, Any]]:
    """The events the last daemon kept when it stopped, oldest first."""
    found = read_state(layout, EVENTS_FILE).get("events")
    if not isinstance(found, list):
        return []
    return [e for e in found if isinstance(e, dict) and isinstance(e.get("seq"), int)]


def save_events(layout: Layout, events: list[dict[str, Any]]) -> None:
    with contextlib.suppress(OSError, ValueError, MemvaultError):  # a vault that cannot be written: lost at stop
        write_state(layout, EVENTS_FILE, {"events": events})
