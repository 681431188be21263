"""One exception hierarchy for every error a user can cause.

The CLI turns any `MemvaultError` into a single line on stderr and the exit
code stored on its class, so messages must name the file or input at fault.
"""

from __future__ import annotations

import errno
from pathlib import Path


class MemvaultError(Exception):
    """Base of all errors memvault reports to a user."""

    exit_code = 1


class UsageError(MemvaultError):
    """Bad arguments: an unknown date, section name or note reference."""

    exit_code = 2


class PathError(MemvaultError):
    """A path that resolves outside the vault or names something that is not a note."""

    exit_code = 2


class GuardError(MemvaultError):
    """An entry refused by a write guard (looks like a credential, or too long)."""

    exit_code = 3


class NoteReadError(MemvaultError):
    """A note that cannot be read as text: binary, not UTF-8, too large, unreadable."""

    exit_code = 4


class NoteWriteError(MemvaultError):
    """A note (or the vault's own state) that cannot be written: permission, a read-only file system, a
    full disk. The code of a note that cannot be read: a file memvault needs and cannot use."""

    exit_code = 4
    strerror: str | None = None  # (also for one a daemon answered: only its message travels)

    def __init__(self, message: str, strerror: str | None = None) -> None:
        super().__init__(message)
        self.strerror = strerror  # what the system said, for a caller that words its own line


class LockError(MemvaultError):
    """The vault's write lock could not be taken in time."""

    exit_code = 5


# what the system says when a file cannot be written however often it is tried
UNWRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT)


def unwritable(exc: OSError, what: Path, root: Path | None = None) -> NoteWriteError | None:
    """The one line for an `UNWRITABLE` fault met writing the note `what` (its temp file, its folder), or,
    given the vault's `root`, its own state (its lock, its `.memvault/`): then the vault is named. None
    for any other fault."""
    if exc.errno not in UNWRITABLE:
        return None
    if root is not None:
        return NoteWriteError(f"{root}: the vault cannot be written: {what}: {exc.strerror}", exc.strerror)
    folder = " (its folder)" if exc.filename and Path(exc.filename) != what else ""
    return NoteWriteError(f"{what}: cannot be written: {exc.strerror}{folder}", exc.strerror)
