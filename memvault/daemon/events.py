"""What the daemon saw and did, as events: kept in a ring for `memvault events`, and streamed as JSON
lines to socket subscribers (`{"op": "subscribe"}`); and what it served, as usage figures for `status`.

Each event is `{"seq", "time", "event", ...}`; `event` is one of `EVENTS`. A subscriber that falls
1,000 events behind is cut off with an `overflow` event rather than letting the daemon's memory grow.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memvault.daemon.stats import Statistics

EVENTS = (
    "file-changed", "file-indexed", "file-unindexed", "index-error", "index-rebuilt",
    "daily-note-updated", "memory-updated", "watcher-started", "watcher-stopped",
)  # fmt: skip
KEEP = 1000
BEHIND = 1000


class EventBus:
    def __init__(self, kept: list[dict[str, Any]] | None = None) -> None:
        """`kept`: the events a daemon before this one kept (`stats.load_events`): shown again, numbered on."""
        self._recent: deque[dict[str, Any]] = deque(kept or (), maxlen=KEEP)
        self._seq = itertools.count(max((e["seq"] for e in self._recent), default=0) + 1)
        self._subscribers: list[queue.Queue[dict[str, Any]]] = []
        self._lock = threading.Lock()

    def publish(self, event: str, **data: Any) -> None:
        with self._lock:
            item = {"seq": next(self._seq), "time": round(time.time(), 3), "event": event, **data}
            self._recent.append(item)
            for sub in list(self._subscribers):
                try:
                    sub.put_nowait(item)
                except queue.Full:
                    self._subscribers.remove(sub)
                    sub.queue.clear()
                    sub.put_nowait({"seq": item["seq"], "time": item["time"], "event": "overflow"})

    def recent(self, since: int = 0) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self._recent if e["seq"] > since]

    def subscribe(self) -> queue.Queue[dict[str, Any]]:
        sub: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=BEHIND)
        with self._lock:
            self._subscribers.append(sub)
        return sub

    def unsubscribe(self, sub: queue.Queue[dict[str, Any]]) -> None:
        with self._lock:
            if sub in self._subscribers:
                self._subscribers.remove(sub)


def publish_indexed(events: EventBus, memory: str, event: str, data: dict[str, Any]) -> None:
    """One of the index's events, and what it means for MEMORY.md (`memory`, its vault path: the sections
    whose entries changed) or a daily note (its date)."""
    events.publish(event, **data)
    path = str(data.get("path", ""))
    if event == "file-indexed" and path == memory:
        events.publish("memory-updated", path=path, sections=data.get("sections", []))
    elif event == "file-indexed" and path.startswith("daily/"):
        events.publish("daily-note-updated", path=path, date=path.removeprefix("daily/").removesuffix(".md"))


def problem_told(events: EventBus, error: Callable[[str], None]) -> Callable[[str], None]:
    """How a pass tells a note's problem (`PATH:LINE: what`: read as plain text, a bad summary): in
    `status`'s errors (`error`), and as an `index-error` event for the note, `indexed` all the same."""

    def told(said: str) -> None:
        error(said)
        events.publish("index-error", path=said.split(":", 1)[0], error=said, indexed=True)

    return told


class Usage:
    """Searches served since the daemon started and their latency (the last 10,000, for percentiles), and
    per day across restarts (`stats.Statistics`); the clients that hold it (`hold`) and when it last
    served one, for a daemon with an idle exit."""

    def __init__(self, statistics: Statistics | None = None) -> None:
        self.statistics = statistics
        self.searches = 0
        self.holders = 0
        self._seconds: deque[float] = deque(maxlen=10_000)
        self._active = time.monotonic()
        self._lock = threading.Lock()

    def held(self, change: int) -> None:
        with self._lock:
            self.holders += change
            self._active = time.monotonic()

    def served(self) -> None:
        self._active = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last request or the last holder left; 0 while a client holds the daemon."""
        with self._lock:
            return 0.0 if self.holders else time.monotonic() - self._active

    def save(self, force: bool = False) -> None:
        if self.statistics is not None:
            self.statistics.save(force)

    def searched(self, seconds: float, mode: str = "hybrid", cached: bool = False) -> None:
        with self._lock:
            self.searches += 1
            self._seconds.append(seconds)
        if self.statistics is not None:
            self.statistics.searched(mode, seconds, cached)

    def as_dict(self, **caches: dict[str, int]) -> dict[str, Any]:
        with self._lock:
            ordered = sorted(self._seconds)

        def at(q: float) -> float | None:
            return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else None

        latency = {"p50": at(0.5), "p95": at(0.95), "p99": at(0.99), "max": at(1.0)}
        days = self.statistics.as_dict() if self.statistics is not None else {}
        return {"searches": self.searches, "search_ms": latency, "holders": self.holders,
                **{k: dict(v) for k, v in caches.items()}, "days": days}  # fmt: skip
