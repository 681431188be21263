"""The wire to a vault's daemon: where its socket is, and one connection speaking JSON lines.

Plain strings and the stdlib's socket and json only (no pathlib, no dataclass), so a search a running
daemon answers (`memvault.cli.via_daemon`) reaches it before anything else is imported;
`memvault.daemon.client` builds the verb layer's policy (ping first, retry, fall back) on it.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any

from memvault.vault.places import STATE_DIR

MAX_REPLY_BYTES = 1 << 26
PING_TIMEOUT_S = 2.0
REPLY_TIMEOUT_S = 120.0  # how long a client waits for a verb's reply: `memvault.protocol.Request.timeout`


def socket_file(root: str) -> str:
    """`.memvault/daemon.sock`, or a short path under the temp folder when that is too long for AF_UNIX."""
    path = os.path.join(root, STATE_DIR, "daemon.sock")
    if len(os.fsencode(path)) < 100:
        return path
    import hashlib
    import tempfile  # (and with it shutil, random, ...) only for a vault this deep

    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"memvault-{os.getuid()}-{digest}.sock")


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
        self.reader = self.sock.makefile("rb")

    def call(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        """Send one request and wait up to `timeout` for its reply; None if the daemon hangs up or stalls
        (`stalled` then says which: a daemon that hung up is gone, one that stalled may still answer)."""
        self.stalled = False
        if timeout is not None:
            self.sock.settimeout(timeout)
        try:
            self.sock.sendall(json.dumps(request, ensure_ascii=False).encode() + b"\n")
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
