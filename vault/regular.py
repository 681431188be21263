"""Reading files that must be regular files (notes, `.gitignore`, `memvault.toml`): a FIFO, a device or a
socket is refused before it is opened, and the open itself never waits (O_NONBLOCK), so a FIFO put in
place between the check and the open is refused too instead of hanging the reader and any lock it holds."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISREG, "a regular file"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISDIR, "a directory"),
    (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)  # fmt: skip


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in a few words."""
    return next((what for test, what in _KINDS if test(mode)), "a special file")


class NotRegular(OSError):
    """The file is not a regular file; `strerror` says what it is."""

    def __init__(self, path: Path | str, mode: int) -> None:
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        super().__init__(code, f"is {file_kind(mode)}, not a regular file", str(path))


def open_regular(path: Path | str) -> int:
    """A file descriptor, blocking, on a regular file; `NotRegular` (an OSError) for anything else,
    checked before it is opened and again on what was opened, which is opened without blocking."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegular(path, mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str) -> bytes:
    """The bytes of a regular file (`open_regular`). A file a program has open for writing (an editor
    saving in place: truncate, then write) is read once it is closed, where the system can tell
    (`vault.swap.read_whole`), so a reader never takes an empty or half-written save for the note."""
    from memvault.vault.swap import read_whole

    fd = open_regular(path)
    try:
        return read_whole(fd)
    finally:
        os.close(fd)
