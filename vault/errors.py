"""One exception hierarchy for every error a user can cause.

The CLI turns any `MemvaultError` into a single line on stderr and the exit
code stored on its class, so messages must name the file or input at fault.
"""

from __future__ import annotations


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


class LockError(MemvaultError):
    """The vault's write lock could not be taken in time."""

    exit_code = 5
