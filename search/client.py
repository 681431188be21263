"""The daemon client: a Unix-socket connection speaking JSON lines. Stdlib only, so `memvault
search` through a running daemon never loads the model, Qdrant or jieba in the client process."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any

from indexer.daemon_files import read_pid, socket_path
from vault.errors import MemvaultError
from vault.paths import Layout

MAX_REPLY_BYTES = 1 << 26
SEARCH_TIMEOUT_S = 120.0


class DaemonError(MemvaultError):
    exit_code = 8


class Connection:
    """A client connection to the daemon; many requests may share it (batch mode does)."""

    def __init__(self, layout: Layout, timeout: float = 2.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(str(socket_path(layout)))
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
        """Send one request and wait up to `timeout` for its reply; None if the daemon hangs up or stalls."""
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
        except (OSError, TimeoutError):
            return None
        return json.loads(reply) if reply else None

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ask(layout: Layout, request: dict[str, Any], timeout: float = 2.0) -> dict[str, Any] | None:
    """One request to the vault's daemon; None when no daemon answers (not running, stale, hung)."""
    if not socket_path(layout).exists():
        return None
    try:
        conn = Connection(layout, timeout)
    except OSError:
        return None
    try:
        reply = conn.call(request)
    finally:
        conn.close()
    return None if reply is not None and reply.get("busy") else reply  # a refusal at the door: as if none answered


def request(layout: Layout, body: dict[str, Any], timeout: float = SEARCH_TIMEOUT_S) -> dict[str, Any] | None:
    """Send one request if a daemon is alive (a quick ping first, so a hung one is skipped fast)."""
    if read_pid(layout) is None or ask(layout, {"op": "ping"}, timeout=2.0) is None:
        return None
    reply = ask(layout, body, timeout=timeout)
    if reply is not None and not reply.get("ok"):
        raise DaemonError(reply.get("error", "the daemon refused the request"))
    return reply


def remote_answer(layout: Layout) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """A batch answerer that sends each line to the daemon over one connection, or None if none answers."""
    if read_pid(layout) is None or ask(layout, {"op": "ping"}) is None:
        return None
    conn = Connection(layout)

    def answer(item: dict[str, Any]) -> dict[str, Any]:
        reply = conn.call({**item, "op": "search"}, timeout=SEARCH_TIMEOUT_S)
        if reply is None:
            raise DaemonError("the daemon stopped answering")
        if not reply.pop("ok"):
            raise DaemonError(reply.get("error", "refused"))
        reply.pop("terms", None)
        return reply

    return answer
