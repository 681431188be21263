"""The daemon client: the verb layer's line to a vault's daemon over its socket (`memvault.daemon.connection`).
It imports no model, Qdrant or jieba, so a verb answered by a running daemon costs the client process
almost nothing. A socket served by another user's process is refused with one line, and a request
too long for the socket runs here: both as when no daemon runs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from memvault.daemon.connection import PING_TIMEOUT_S, Connection, NotOurs, TooLarge, answering, encode
from memvault.daemon.files import read_pid, socket_path
from memvault.protocol import Request, error_from_json
from memvault.vault.errors import MemvaultError
from memvault.vault.logger import log
from memvault.vault.paths import Layout

RECHECK_S = 5.0  # after no daemon answered, how long verbs run here before asking again


class DaemonError(MemvaultError):
    """The daemon answered with an error; it carries the exit code the verb would have had here."""

    exit_code = 8

    def __init__(self, message: str, exit_code: Any = None) -> None:
        super().__init__(message)
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            self.exit_code = exit_code


def connect(layout: Layout, timeout: float = 2.0) -> Connection:
    """A connection to the vault's daemon (`OSError` when none listens, or when another user's process
    does: said in one line, `NotOurs`)."""
    try:
        return Connection(str(socket_path(layout)), timeout)
    except NotOurs as exc:
        log.warning("%s", exc)
        raise


def follow(layout: Layout, since: int = 0) -> Iterator[dict[str, Any]]:
    """The daemon's events as they happen (after those newer than `since` it still keeps), until
    the caller stops iterating or the daemon goes away."""
    try:
        conn = connect(layout)
    except OSError:
        raise DaemonError(f"no daemon serves {layout.root}: start one (memvault daemon start)") from None
    with conn:
        first = conn.call({"op": "subscribe", "since": since}, timeout=PING_TIMEOUT_S)
        if not first or not first.get("ok"):
            raise DaemonError(str((first or {}).get("error") or "the daemon refused the subscription"))
        conn.sock.settimeout(None)
        for line in conn.reader:
            yield json.loads(line)


def hold(layout: Layout) -> Connection | None:
    """A connection that tells the vault's daemon a client still uses it, until it is closed (the kernel
    closes it if this process dies): a daemon started with an idle exit stays while one is open. None
    when no daemon answers."""
    try:
        conn = connect(layout)
    except OSError:
        return None
    reply = conn.call({"op": "hold"}, timeout=PING_TIMEOUT_S)
    if not reply or not reply.get("ok"):
        conn.close()
        return None
    return conn


def holders(layout: Layout) -> int:
    """How many clients hold the vault's daemon now (0 when none answers)."""
    status = ask(layout, {"op": "status"}, timeout=30.0) or {}
    return int(status.get("status", {}).get("usage", {}).get("holders", 0))


def ask(layout: Layout, request: dict[str, Any], timeout: float = 2.0) -> dict[str, Any] | None:
    """One raw request to the vault's daemon; None when no daemon answers (not running, stale, hung, busy)."""
    if not socket_path(layout).exists():
        return None
    try:
        conn = connect(layout, timeout)
    except OSError:
        return None
    try:
        reply = conn.call(request)
    finally:
        conn.close()
    return None if reply is not None and reply.get("busy") else reply  # a refusal at the door: as if none answered


class DaemonClient:
    """The verb layer's line to the vault's daemon: one connection, kept while the daemon answers.

    `call` returns None whenever no daemon answers (none running, a stale pid file, hung, busy), so
    the caller runs the verb itself; an error the daemon reports is raised with its exit code."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._conn: Connection | None = None
        self._quiet_until = 0.0

    def _connect(self) -> Connection | None:
        """A new connection, once the daemon answered a quick ping on it (`answering`: a hung daemon is
        skipped fast); after a failed attempt, none for `RECHECK_S` (a batch must not wait out a hung
        daemon's ping per line)."""
        if time.monotonic() < self._quiet_until:
            return None
        conn = None
        if read_pid(self.layout) is not None:
            conn = answering(str(socket_path(self.layout)), lambda why: log.warning("%s", why))
        if conn is None:
            self._quiet_until = time.monotonic() + RECHECK_S
        return conn

    def call(self, request: Request, request_id: str | None = None) -> Any | None:
        """`request_id` goes with a write: a daemon that dies before its reply noted whether the
        verb took effect (`memvault.daemon.journal`), and that decides what this client does."""
        wire = request.to_json() if request_id is None else {**request.to_json(), "request_id": request_id}
        try:
            encode(wire)
        except TooLarge:  # (a long conversation to `extract`) the daemon would refuse it: it runs here, where
            return None  # notes are written under the vault lock as in the daemon, whose watcher indexes them
        reused = self._conn is not None
        if self._conn is None:
            self._conn = self._connect()
            if self._conn is None:
                return None
        reply = self._conn.call(wire, timeout=request.timeout)
        if reply is None and request_id is not None:
            from memvault.daemon.journal import earlier

            # its noted reply, None if it never took effect, or raises (also while a stalled daemon may finish it)
            reply = earlier(self.layout, request_id, stalled=self._conn.stalled)
        if reply is None or reply.get("busy"):
            self.close()
            # a kept connection the daemon closed while idle: the request never reached it, so ask again
            return self.call(request, request_id) if reused and reply is None else None
        if not reply.pop("ok", False):
            raise error_from_json(reply, DaemonError)  # of the class it was raised as in the daemon
        return request.reply.from_json(reply)

    def close(self) -> None:
        """Drop the connection and what was learnt: the next call looks for a daemon afresh."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._quiet_until = 0.0
