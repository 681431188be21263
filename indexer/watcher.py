"""Watching the vault: watchdog events become a debounced queue of vault-relative note paths.

Editors save in bursts (temp file, rename, chmod), and `git checkout` can
touch a thousand notes at once: each path waits until it has been quiet for
the debounce window, and everything due is handed over as one batch.

A search asks first that the watcher has caught up (`Watcher.caught_up`): a note saved a moment
before the query may still sit in the kernel's queue while the observer thread waits for its
turn, and a client that answers in 90 ms asks before it is read. The kernel hands the watcher its
events in the order they happened, so a marker file written now in `.memvault/` arrives after
every save made before it: once the handler sees the marker, those saves are pending.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from memvault.vault.config import DEBOUNCE_S
from memvault.vault.paths import Layout, is_note_rel
from memvault.vault.scan import GitIgnore


class PendingPaths:
    """Paths waiting for their debounce window to pass; thread-safe."""

    def __init__(self, debounce: float = DEBOUNCE_S, on_change: Callable[[str], None] | None = None) -> None:
        self.debounce = debounce
        self._due: dict[str, float] = {}
        self._full_scan = False
        self._lock = threading.Lock()
        self.last_event: float | None = None
        self.on_change = on_change  # told once per path as it starts waiting (a burst of saves is one change)

    def add(self, rel: str) -> None:
        with self._lock:
            new = rel not in self._due
            self._due[rel] = time.monotonic() + self.debounce
            self.last_event = time.time()
        if new and self.on_change is not None:
            self.on_change(rel)

    def want_full_scan(self) -> None:
        """A folder moved or vanished: which notes went with it is easiest found by a scan."""
        with self._lock:
            self._full_scan = True
            self.last_event = time.time()

    def take(self, everything: bool = False) -> tuple[list[str], bool]:
        """Paths whose window has passed (all of them if `everything`), and whether a scan is owed."""
        now = time.monotonic()
        with self._lock:
            ready = sorted(p for p, due in self._due.items() if everything or due <= now)
            for path in ready:
                del self._due[path]
            full, self._full_scan = self._full_scan, False
            return ready, full

    def __len__(self) -> int:
        with self._lock:
            return len(self._due) + self._full_scan


CATCH_UP_WAIT = 0.5  # seconds a search waits at most for the watcher (a dead or stalled one costs no more)


class _Handler(FileSystemEventHandler):
    def __init__(self, layout: Layout, pending: PendingPaths, markers: dict[str, threading.Event]) -> None:
        self.layout = layout
        self.pending = pending
        self.markers = markers
        self.ignore = GitIgnore.load(layout.root)

    def _rel(self, raw: str | bytes) -> str | None:
        path = Path(raw.decode() if isinstance(raw, bytes) else raw)
        try:
            return path.relative_to(self.layout.root).as_posix()
        except ValueError:
            return None

    def _note(self, raw: str | bytes) -> None:
        rel = self._rel(raw)
        if rel is not None and is_note_rel(rel) and not self.ignore.ignored(rel):
            self.pending.add(rel)

    def on_any_event(self, event: FileSystemEvent) -> None:
        if self.markers:
            seen = self.markers.get(self._rel(event.src_path) or "")
            if seen is not None:
                seen.set()
                return
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory:
            if event.event_type in ("moved", "deleted", "created"):
                rel = self._rel(event.src_path)
                if rel and not any(part.startswith(".") for part in rel.split("/")):
                    self.pending.want_full_scan()
            return
        if Path(str(event.src_path)).name == ".gitignore":
            self.ignore = GitIgnore.load(self.layout.root)
            self.pending.want_full_scan()
            return
        self._note(event.src_path)
        if event.event_type == "moved":  # an atomic save renames a temp file over the note
            self._note(event.dest_path)


class Watcher:
    """A watchdog observer on the vault that can be checked and restarted if its thread dies."""

    def __init__(self, layout: Layout, pending: PendingPaths) -> None:
        self.layout = layout
        self.pending = pending
        self.restarts = 0
        self._markers: dict[str, threading.Event] = {}
        self._numbers = itertools.count()
        self.observer = self._start()

    def _start(self):
        observer = Observer()
        handler = _Handler(self.layout, self.pending, self._markers)
        observer.schedule(handler, str(self.layout.root), recursive=True)
        observer.daemon = True
        observer.start()
        return observer

    def ensure_alive(self) -> bool:
        """Restart a dead observer; True if it had to (events may have been lost: scan)."""
        if self.observer.is_alive():
            return False
        self.restarts += 1
        self.observer = self._start()
        self.pending.want_full_scan()
        return True

    def caught_up(self, wait: float = CATCH_UP_WAIT) -> bool:
        """Wait until the handler has seen every event of a change made before this call (see the
        module's docstring); False when it did not within `wait` (then the search answers anyway)."""
        rel = f"{self.layout.relative(self.layout.state_dir)}/watch-{os.getpid()}-{next(self._numbers)}"
        seen = self._markers[rel] = threading.Event()
        marker = self.layout.root / rel
        try:
            marker.write_bytes(b"")
            return seen.wait(wait)
        except OSError:
            return False
        finally:
            self._markers.pop(rel, None)
            marker.unlink(missing_ok=True)

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=5)
