"""What a verb is about to change, told to whoever runs it: the daemon's request journal.

A daemon that dies after a verb's first write and before its reply leaves its client unsure whether
the verb happened. Every write and removal of a file under the vault passes `before_write` or
`before_remove` just before it takes effect; a caller that `watch`es a verb learns each one first,
so it can later tell a verb that never wrote from one that did (`memvault.daemon.journal`). With no
watcher, each call is one context-variable lookup.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

# (path, sha256 of the bytes there now, of those about to be; None: no file)
Watcher = Callable[[Path, str | None, str | None], None]
_WATCHER: ContextVar[Watcher | None] = ContextVar("memvault_effects", default=None)


@contextmanager
def watch(watcher: Watcher) -> Iterator[None]:
    """Tell `watcher` of every change the code run inside makes, before it makes it."""
    token = _WATCHER.set(watcher)
    try:
        yield
    finally:
        _WATCHER.reset(token)


def before_write(path: Path, data: bytes, now: str | None = "") -> None:
    """`data` goes in place of `path`; `now` is the sha256 of the version it replaces, if known ("")."""
    watcher = _WATCHER.get()
    if watcher is not None:
        watcher(path, file_sha(path) if now == "" else now, hashlib.sha256(data).hexdigest())


def before_remove(path: Path) -> None:
    watcher = _WATCHER.get()
    if watcher is not None and (now := file_sha(path)) is not None:
        watcher(path, now, None)


def file_sha(path: Path) -> str | None:
    """The sha256 of a file's bytes; None when there is no file (or it cannot be read)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
