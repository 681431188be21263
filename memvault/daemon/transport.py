"""The daemon's socket: a Unix stream server, one thread per connection, JSON lines in and out.

A request line goes to the daemon's `dispatch`; a `subscribe` line turns the connection into a
stream of events, a `hold` line into a mark that a client still uses the daemon. Limits keep a
hostile or broken client from pinning threads or memory: the line size, an idle and a partial-line
timeout, and the number of connections open at once.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socketserver
import threading
from typing import Any

from memvault.daemon.connection import MAX_REQUEST_BYTES

CLIENT_IDLE_S = 30.0
PARTIAL_LINE_S = 10.0  # a client that stops mid-request is cut off sooner than an idle one
MAX_CLIENTS = 64  # open connections; with the line limit this bounds request buffers at 64 MiB
# subscribers (`events --follow`) hold a slot of their own kind: idle followers never take the slots
# requests need (before, 64 of them made every CLI answer without the daemon)
MAX_FOLLOWERS = 16


class Handler(socketserver.StreamRequestHandler):
    """One connection: any number of request lines, each answered by one reply line."""

    server: Server

    def handle(self) -> None:
        self.connection.settimeout(CLIENT_IDLE_S)  # a client that stops mid-line cannot pin a thread
        while True:
            try:
                line = self._read_line()
            except (TimeoutError, OSError):
                return
            if line is None:
                self._reply({"ok": False, "error": f"incomplete request: no end of line within {PARTIAL_LINE_S:.0f}s"})
                return
            if not line:
                return
            if len(line) > MAX_REQUEST_BYTES:
                self._reply({"ok": False, "error": f"request over {MAX_REQUEST_BYTES} bytes"})
                return
            if not line.strip():
                continue
            if b'"subscribe"' in line and _op(line) == "subscribe":
                self._stream(line)
                return
            if b'"hold"' in line and _op(line) == "hold":
                self._hold()
                return
            self._answer(line)

    def _answer(self, line: bytes) -> None:
        """One request, answered before a stop lets the daemon exit (`InFlight`); refused as busy once a
        stop began (its client runs it itself)."""
        if not self.server.in_flight.admit():
            self._reply({"ok": False, "busy": True, "error": "busy: the daemon is stopping"})
            return
        try:
            self._reply(self.server.daemon_ref.dispatch(line))
        finally:
            self.server.in_flight.answered()

    def _stream(self, line: bytes) -> None:
        """A subscriber: its backlog (events newer than `since`), then each event as it happens."""
        try:
            since = int(json.loads(line).get("since") or 0)
        except (ValueError, TypeError):
            self._reply({"ok": False, "error": 'a subscription is {"op": "subscribe", "since": SEQ}'})
            return
        daemon = self.server.daemon_ref
        if not self.server.followers.acquire(blocking=False):
            self._reply({"ok": False, "error": f"busy: {MAX_FOLLOWERS} followers already subscribed; retry later"})
            return
        self.server.give_back_slot()  # from now on this connection counts as a follower, not a request
        sub = daemon.events.subscribe()
        daemon.usage.held(+1)  # a follower uses the daemon too: an idle exit waits for it
        try:
            self._reply({"ok": True, "subscribed": True})
            sent = since  # subscribed before the backlog is read: what both hold is sent once
            for event in daemon.events.recent(since) if since else ():
                self._reply(event)
                sent = event["seq"]
            while not daemon.stopping.is_set():
                try:
                    event = sub.get(timeout=0.5)
                except queue.Empty:
                    continue
                if event["seq"] <= sent and event["event"] != "overflow":
                    continue
                self.wfile.write(json.dumps(event, ensure_ascii=False).encode() + b"\n")
                self.wfile.flush()
                if event["event"] == "overflow":
                    return
        except OSError:
            return  # the subscriber left
        finally:
            daemon.usage.held(-1)
            daemon.events.unsubscribe(sub)
            self.server.followers.release()

    def _hold(self) -> None:
        """A client keeping the daemon in use while this connection is open (an MCP session): it sends
        nothing more, and its end, a close or its process's death, lets a daemon with an idle exit go."""
        daemon = self.server.daemon_ref
        if not self.server.followers.acquire(blocking=False):
            self._reply({"ok": False, "error": f"busy: {MAX_FOLLOWERS} clients already follow or hold; retry later"})
            return
        self.server.give_back_slot()
        daemon.usage.held(+1)
        try:
            self._reply({"ok": True, "held": True})
            self.connection.settimeout(0.5)  # the socket itself: its file object refuses reads after a timeout
            while not daemon.stopping.is_set():
                try:
                    if not self.connection.recv(1):
                        return  # the holder left
                except TimeoutError:
                    continue
                except OSError:
                    return
        finally:
            daemon.usage.held(-1)
            self.server.followers.release()

    def _read_line(self) -> bytes | None:
        """One request line, None if the client stalled inside it: the wait for its first byte is
        the idle timeout, the wait for each later byte the shorter partial-line one."""
        first = self.rfile.read(1)
        if not first or first == b"\n":
            return first
        self.connection.settimeout(PARTIAL_LINE_S)
        try:
            return first + self.rfile.readline(MAX_REQUEST_BYTES)
        except TimeoutError:
            return None
        finally:
            self.connection.settimeout(CLIENT_IDLE_S)

    def _reply(self, reply: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.wfile.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
            self.wfile.flush()


def _op(line: bytes) -> Any:
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return request.get("op") if isinstance(request, dict) else None


class InFlight:
    """The requests being answered, and the stop that waits for them: a stop takes no new request (its
    client, refused as busy, runs it itself) and lets every one it took finish and be answered. A write
    cut off in its middle would leave its client unsure whether it happened (exit 9) and its trash
    copies of entries still in their note."""

    def __init__(self, stopping: threading.Event) -> None:
        self.stopping = stopping
        self._taken = 0
        self._changed = threading.Condition()

    def admit(self) -> bool:
        with self._changed:  # (with `stop`: no request is taken once a stop has begun to wait)
            if self.stopping.is_set():
                return False
            self._taken += 1
            return True

    def answered(self) -> None:
        with self._changed:
            self._taken -= 1
            self._changed.notify_all()

    def stop(self) -> None:
        with self._changed:
            self.stopping.set()

    def drain(self, most: float) -> int:
        """Wait (at most `most` seconds) until every request taken is answered; how many are not."""
        with self._changed:
            self._changed.wait_for(lambda: self._taken == 0, timeout=most)
            return self._taken


class Server(socketserver.ThreadingUnixStreamServer):
    """One thread per connection, at most `MAX_CLIENTS` at once: a flood of connections gets a
    one-line "busy" refusal each instead of a thread and a buffer each, so memory stays bounded."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog: at the default 5, a burst of clients fails to connect at all
    daemon_ref: Any  # the `Daemon`: its `dispatch`, `events` and `stopping`
    in_flight: InFlight
    slots: threading.BoundedSemaphore
    followers: threading.BoundedSemaphore
    _held = threading.local()  # does this connection's thread still hold its request slot?

    def give_back_slot(self) -> None:
        if getattr(self._held, "slot", False):
            self._held.slot = False
            self.slots.release()

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            refusal = {"ok": False, "busy": True, "error": f"busy: {MAX_CLIENTS} connections already open; retry"}
            with contextlib.suppress(OSError):
                request.sendall(json.dumps(refusal).encode() + b"\n")
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        self._held.slot = True
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.give_back_slot()
