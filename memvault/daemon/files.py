"""The daemon's files in `<vault>/.memvault/` and the test for a live daemon: stdlib only, so a
client can find and judge the daemon without importing the indexer."""

from __future__ import annotations

import os
from pathlib import Path

from memvault.daemon.connection import not_private, socket_file
from memvault.vault.errors import MemvaultError
from memvault.vault.locks import lock_is_free
from memvault.vault.paths import Layout


class SocketPlaceError(MemvaultError):
    """The folder the daemon's socket would go in is not this user's alone: the daemon does not start."""

    exit_code = 8  # (`memvault.daemon.client.DaemonError`'s: what the daemon commands fail with)


def socket_path(layout: Layout) -> Path:
    """`.memvault/daemon.sock`, or a short path in this user's private folder when that is too long for AF_UNIX."""
    return Path(socket_file(str(layout.root)))


def private_dir(layout: Layout) -> Path:
    """The folder of the daemon's socket, ready to bind in: `.memvault/`, or the private folder of the
    sockets too long for their vault (`connection.runtime_dir`), made 0700 when missing and refused when
    it is a link, not this user's, or open to others (someone else made it first, or widened it: a
    socket there could be replaced by theirs, and their queries' answers printed as this user's memory)."""
    folder = socket_path(layout).parent
    if folder == layout.state_dir:
        return folder
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise SocketPlaceError(f"{folder}: cannot make the daemon's socket folder ({exc.strerror or exc})") from None
    problem = not_private(str(folder))
    if problem:
        raise SocketPlaceError(f"{folder}: {problem}, not a folder of uid {os.geteuid()} alone: the daemon's socket "
                               "does not go there (remove it, or set XDG_RUNTIME_DIR to a private folder)")  # fmt: skip
    return folder


def pid_path(layout: Layout) -> Path:
    return layout.state_dir / "daemon.pid"


def log_path(layout: Layout) -> Path:
    return layout.state_dir / "daemon.log"


def _index_lock_free(layout: Layout) -> bool:
    """True when no process holds the index lock: then no daemon can be serving this vault."""
    return lock_is_free(layout.state_dir / "index.lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie answers kill(0) but serves nothing
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def read_pid(layout: Layout) -> int | None:
    """The daemon's pid, if its pid file names a live process that holds the index lock.

    Anything else is a dead daemon's leftovers (SIGKILL, a crash, a reboot):
    the stale pid and socket files are removed, never trusted.
    """
    path = pid_path(layout)
    try:
        pid = int(path.read_text().strip())
    except (FileNotFoundError, NotADirectoryError, ValueError):  # none, or no state folder to hold one
        return None
    if _alive(pid) and not _index_lock_free(layout):
        return pid
    path.unlink(missing_ok=True)
    socket_path(layout).unlink(missing_ok=True)
    return None
