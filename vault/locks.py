"""Non-blocking advisory locks on lock files: the vault's write lock, the index lock, and the test
for a live daemon all take them the same way.

A lock is held by an open file descriptor (`flock`), so it dies with its process: a crashed
writer or daemon never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def try_lock(path: Path, create: bool = True) -> int | None:
    """Open `path` and take an exclusive lock on it without waiting.

    Returns the file descriptor that holds the lock (close it to release), or None when another
    process holds it. With `create=False` a missing file raises `FileNotFoundError`."""
    fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


_HELD: dict[int, str] = {}  # the locks this process took with `hold`, by descriptor


def hold(path: Path) -> int | None:
    """`try_lock`, remembered until `release`: a second open in this process is told apart from
    another process's (`held_here`)."""
    fd = try_lock(path)
    if fd is not None:
        _HELD[fd] = str(path)
    return fd


def release(fd: int) -> None:
    _HELD.pop(fd, None)
    os.close(fd)


def held_here(path: Path) -> bool:
    return str(path) in _HELD.values()


def lock_is_free(path: Path) -> bool:
    """True when no process holds the lock on `path` (a missing file is free); creates nothing."""
    try:
        fd = try_lock(path, create=False)
    except FileNotFoundError:
        return True
    if fd is None:
        return False
    os.close(fd)  # closing drops the lock we just took
    return True
