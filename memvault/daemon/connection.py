"""The wire to a vault's daemon: where its socket is, and one connection speaking JSON lines.

Plain strings and the stdlib's socket and json only (no pathlib, no dataclass), so a search a running
daemon answers (`memvault.cli.via_daemon`) reaches it before anything else is imported;
`memvault.daemon.client` builds the verb layer's policy (ping first, retry, fall back) on it.

A connection trusts only a daemon of this user: whoever listens on the socket is asked who they are
(`peer_uid`) before a byte is sent, and one of another user is refused (`NotOurs`, an `OSError`, so
every caller treats it as no daemon and the verb runs in its own process).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import time
from collections.abc import Callable
from typing import Any

from memvault.vault.places import STATE_DIR, env

MAX_REPLY_BYTES = 1 << 26
# the longest request line the daemon reads (`memvault.daemon.transport`): with `MAX_CLIENTS` it bounds the
# daemon's request buffers; a longer request (a long conversation to `extract`) runs in the client (`TooLarge`)
MAX_REQUEST_BYTES = 1 << 20
PING_TIMEOUT_S = 2.0
REPLY_TIMEOUT_S = 120.0  # how long a client waits for a verb's reply: `memvault.protocol.Request.timeout`
SUN_PATH_MOST = 100  # bytes of a socket path AF_UNIX takes everywhere (108 on Linux, 104 on macOS)


class NotOurs(ConnectionRefusedError):
    """The socket is served by a process of another user: nothing is sent to it."""


class TooLarge(ValueError):
    """A request longer than the daemon reads: nothing is sent, the caller runs the verb itself."""


def socket_file(root: str) -> str:
    """`.memvault/daemon.sock`, or, when that is too long for AF_UNIX, a socket named by the vault's
    digest in this user's private folder (`runtime_dir`)."""
    path = os.path.join(root, STATE_DIR, "daemon.sock")
    if len(os.fsencode(path)) < SUN_PATH_MOST:
        return path
    import hashlib

    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return os.path.join(runtime_dir(), f"{digest}.sock")


def runtime_dir() -> str:
    """The folder of the sockets too long for their vault: `$XDG_RUNTIME_DIR/memvault` when that is this
    user's own folder (as the XDG spec has it), else `memvault-UID` in the temp folder. Only the daemon
    makes it, and only as a private folder (`memvault.daemon.files.private_dir`): a socket at a name in a
    shared folder could be made first by another user, who would then be sent the owner's queries."""
    base = env("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base) and not_private(base) is None:
        return os.path.join(base, "memvault")
    import tempfile  # (and with it shutil, random, ...) only for a vault this deep

    return os.path.join(tempfile.gettempdir(), f"memvault-{os.geteuid()}")


def not_private(path: str) -> str | None:
    """None when `path` is a folder (not a link to one) of this user that no one else may enter; else why not."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "not a folder"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o077:
        return f"mode {stat.S_IMODE(st.st_mode):04o}, open to others"
    return None


def peer_uid(sock: socket.socket, path: str) -> int:
    """The uid of the process that listens on `sock`'s other end: the kernel's record of it (Linux's
    SO_PEERCRED, the BSDs' and macOS's LOCAL_PEERCRED), else the owner of the socket file."""
    if hasattr(socket, "SO_PEERCRED"):
        pid_uid_gid = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("iII"))
        return int(struct.unpack("iII", pid_uid_gid)[1])
    if hasattr(socket, "LOCAL_PEERCRED"):  # struct xucred: version, uid, ngroups, groups[16]
        xucred = sock.getsockopt(0, socket.LOCAL_PEERCRED, struct.calcsize("IIh2x16I"))
        return int(struct.unpack_from("II", xucred)[1])
    return os.lstat(path).st_uid


def encode(request: dict[str, Any]) -> bytes:
    """A request's line on the wire; `TooLarge` when the daemon would refuse it for its length."""
    line = json.dumps(request, ensure_ascii=False).encode() + b"\n"
    if len(line) > MAX_REQUEST_BYTES:
        raise TooLarge(f"a request of {len(line):,} bytes is over the daemon's {MAX_REQUEST_BYTES:,}")
    return line


class Connection:
    """A client connection to the daemon's socket at `path`; many requests may share it."""

    def __init__(self, path: str, timeout: float = 2.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.stalled = False  # the last call's reply did not come in time (`call`)
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(path)
                break
            except BlockingIOError:  # a Unix socket's backlog is full: unlike TCP it does not wait, so we do
                if time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                self.sock.close()
                raise
            except OSError:
                self.sock.close()
                raise
        self._trust(path)
        self.reader = self.sock.makefile("rb")

    def _trust(self, path: str) -> None:
        """Refuse (`NotOurs`) a listener of another user before anything is sent: root included, a user's
        queries and notes go to that user's own daemon only."""
        try:
            uid = peer_uid(self.sock, path)
        except OSError:
            self.sock.close()
            raise
        if uid != os.geteuid():
            self.sock.close()
            raise NotOurs(f"{path}: the process listening there is uid {uid}'s, not this user's (uid "
                          f"{os.geteuid()}): nothing sent to it; working without the daemon")  # fmt: skip

    def call(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        """Send one request and wait up to `timeout` for its reply; None if the daemon hangs up or stalls
        (`stalled` then says which: a daemon that hung up is gone, one that stalled may still answer).
        A request too long for the daemon raises `TooLarge` before anything is sent."""
        line = encode(request)
        self.stalled = False
        if timeout is not None:
            self.sock.settimeout(timeout)
        try:
            self.sock.sendall(line)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused at the door ("busy") and closed before we wrote: the refusal is still there to read
        except (OSError, TimeoutError):
            return None
        try:
            reply = self.reader.readline(MAX_REPLY_BYTES)
        except TimeoutError:
            self.stalled = True
            return None
        except OSError:
            return None
        return json.loads(reply) if reply else None

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def answering(path: str, refused: Callable[[str], None]) -> Connection | None:
    """A connection to the daemon at `path` once it answered a ping on it (the same connection then takes
    the request: one per call), so a hung daemon is skipped fast; None when none answers (no socket, a
    dead daemon's, hung, or busy at the door). One served by another user's process is refused before any
    request is sent, and `refused` told why in one line."""
    try:
        conn = Connection(path, PING_TIMEOUT_S)
    except NotOurs as exc:
        refused(str(exc))
        return None
    except OSError:
        return None
    reply = conn.call({"op": "ping"}, timeout=PING_TIMEOUT_S)
    if not isinstance(reply, dict) or not reply.get("ok"):
        conn.close()
        return None
    return conn
