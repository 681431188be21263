"""The daemon: the one process that owns the stores, keeps them in step with the files, and serves
requests over a Unix socket (line-delimited JSON, mode 0600, no TCP).

Operations it knows itself: ping, status, reindex, note, remember. Callers
add more (search) through `ops`, so this module needs nothing from `search`.
One lock serialises everything that touches the index; requests that only
read files or write notes do their file work outside it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socketserver
import threading
import time
from collections.abc import Callable
from typing import Any

from indexer.daemon_files import pid_path, socket_path
from indexer.index import Index, IndexConfig
from indexer.reconcile import reconcile
from indexer.status import vault_status
from indexer.verify import disagreements
from indexer.watcher import DEBOUNCE_S, PendingPaths, Watcher
from vault.daily import append_daily
from vault.errors import MemvaultError, UsageError
from vault.memory_file import remember
from vault.paths import Layout, is_note_rel, parse_date

RESCAN_S = 300.0
MAX_REQUEST_BYTES = 1 << 20
CLIENT_IDLE_S = 30.0
PARTIAL_LINE_S = 10.0  # a client that stops mid-request is cut off sooner than an idle one
MAX_CLIENTS = 64  # open connections; with the line limit this bounds request buffers at 64 MiB
log = logging.getLogger("memvault.daemon")
Op = Callable[["Daemon", dict[str, Any]], dict[str, Any]]


class _Handler(socketserver.StreamRequestHandler):
    """One connection: any number of request lines, each answered by one reply line."""

    server: _Server

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
            self._reply(self.server.daemon_ref.dispatch(line))

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


class _Server(socketserver.ThreadingUnixStreamServer):
    """One thread per connection, at most `MAX_CLIENTS` at once: a flood of connections gets a
    one-line "busy" refusal each instead of a thread and a buffer each, so memory stays bounded."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog: at the default 5, a burst of clients fails to connect at all
    daemon_ref: Daemon
    slots: threading.BoundedSemaphore

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
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class Daemon:
    """Holds the open index, the watcher, and the socket server of one vault."""

    def __init__(
        self,
        layout: Layout,
        config: IndexConfig | None = None,
        debounce: float = DEBOUNCE_S,
        rescan_every: float = RESCAN_S,
        ops: dict[str, Op] | None = None,
    ) -> None:
        self.layout = layout
        self.rescan_every = rescan_every
        self.index = Index(layout, config)  # takes the index lock: a second daemon fails here
        self.lock = threading.RLock()
        self.pending = PendingPaths(debounce)
        self.stopping = threading.Event()
        self.started = time.time()
        self.last_reconcile: float | None = None
        self.errors: list[str] = []
        self.ops: dict[str, Op] = {
            "ping": lambda d, r: {"pid": os.getpid()},
            "status": Daemon._op_status,
            "reindex": Daemon._op_reindex,
            "note": Daemon._op_note,
            "remember": Daemon._op_remember,
            "verify": Daemon._op_verify,
            **(ops or {}),
        }
        self.watcher: Watcher | None = None
        self.server: _Server | None = None

    # requests -----------------------------------------------------------
    def dispatch(self, line: bytes) -> dict[str, Any]:
        """Answer one request line; whatever goes wrong becomes an error reply, never a dead daemon."""
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get("op"), str):
                raise UsageError('a request is a JSON object with a string "op"')
            op = self.ops.get(request["op"])
            if op is None:
                raise UsageError(f"unknown op {request['op']!r}; known: {', '.join(sorted(self.ops))}")
            return {"ok": True, **op(self, request)}
        except (ValueError, MemvaultError) as exc:
            return {"ok": False, "error": str(exc)}
        except RecursionError:  # JSON nested thousands deep: the client's fault, not ours
            return {"ok": False, "error": "request nested too deeply to be a request"}
        except Exception as exc:
            log.exception("request failed")
            self._error(f"{type(exc).__name__}: {exc}")
            return {"ok": False, "error": f"internal error: {type(exc).__name__}: {exc}"}

    def sync(self, paths: list[str] | None = None, everything_pending: bool = True) -> dict[str, Any]:
        """Index what is pending now (read-your-writes), plus `paths`; returns the stats."""
        ready, full = self.pending.take(everything=everything_pending)
        wanted = sorted(set(ready) | set(paths or ()))
        with self.lock:
            if full:
                stats = reconcile(self.index)
                self.last_reconcile = time.time()
            elif wanted:
                stats = reconcile(self.index, wanted)
            else:
                return {}
        return stats.as_dict()

    def _op_status(self, request: dict[str, Any]) -> dict[str, Any]:
        status = vault_status(self.layout)
        status.update(
            pid=os.getpid(),
            uptime=round(time.time() - self.started, 1),
            queue=len(self.pending),
            last_event=self.pending.last_event,
            last_full_reconcile=self.last_reconcile,
            watcher_alive=bool(self.watcher and self.watcher.observer.is_alive()),
            watcher_restarts=self.watcher.restarts if self.watcher else 0,
            errors=self.errors[-20:],
        )
        return {"status": status}

    def _op_reindex(self, request: dict[str, Any]) -> dict[str, Any]:
        paths = _note_paths(request.get("paths"))
        with self.lock:
            if request.get("rebuild"):
                self.index.rebuild()
            stats = reconcile(self.index, paths if paths else None)
            if not paths:
                self.last_reconcile = time.time()
        return {"stats": stats.as_dict()}

    def _op_note(self, request: dict[str, Any]) -> dict[str, Any]:
        date = _field(request, "date")
        day = parse_date(date) if date else None
        text = _field(request, "text") or ""
        path = append_daily(self.layout, text, day=day, section=_field(request, "section") or "conversation")
        rel = self.layout.relative(path)
        self.sync([rel])
        return {"path": rel}

    def _op_remember(self, request: dict[str, Any]) -> dict[str, Any]:
        text = _field(request, "text") or ""
        saved = remember(self.layout, text, section=_field(request, "section"), kind=_field(request, "type"))
        rel = self.layout.relative(saved.path)
        self.sync([rel])
        return {"path": rel, "section": saved.section, "created_section": saved.created_section}

    def _op_verify(self, request: dict[str, Any]) -> dict[str, Any]:
        """Do stores, manifest and files agree? (after pending paths are indexed)"""
        self.sync()
        with self.lock:
            return {"disagreements": disagreements(self.index)}

    def _error(self, message: str) -> None:
        self.errors.append(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}")
        del self.errors[:-100]

    # lifecycle ----------------------------------------------------------
    def _bind(self) -> _Server:
        path = socket_path(self.layout)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # we hold the index lock, so any socket file here is a dead daemon's
        old_umask = os.umask(0o177)
        try:
            server = _Server(str(path), _Handler)
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        server.daemon_ref = self
        server.slots = threading.BoundedSemaphore(MAX_CLIENTS)
        return server

    def run(self) -> None:
        """Serve until SIGTERM/SIGINT; the batch in flight finishes, then everything is flushed and removed."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stopping.set())
        self.watcher = Watcher(self.layout, self.pending)  # watch first: no edit falls between scan and watch
        self.server = self._bind()
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
        fd = os.open(pid_path(self.layout), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.getpid()}\n")
        log.info("serving %s on %s (pid %d)", self.layout.root, socket_path(self.layout), os.getpid())
        try:
            self._loop()
        finally:
            self.shutdown()

    def _loop(self) -> None:
        self._reconcile_all()
        while not self.stopping.wait(0.2):
            try:
                if self.watcher and self.watcher.ensure_alive():
                    self._error("file watcher died and was restarted; rescanning")
                    log.warning("file watcher died and was restarted")
                due_full = self.last_reconcile is None or time.time() - self.last_reconcile >= self.rescan_every
                ready, full = self.pending.take()
                if full or due_full:
                    self._reconcile_all()
                elif ready:
                    with self.lock:
                        stats = reconcile(self.index, ready)
                    log.info("indexed %d changed paths: %s", len(ready), stats.as_dict())
            except Exception as exc:
                log.exception("reconcile failed")
                self._error(f"reconcile failed: {type(exc).__name__}: {exc}")

    def _reconcile_all(self) -> None:
        with self.lock:
            stats = reconcile(self.index)
            self.last_reconcile = time.time()
        log.info("reconciled the vault: %s", stats.as_dict())

    def shutdown(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        if self.watcher is not None:
            self.watcher.stop()
        with self.lock:
            try:
                self.index.close()
            except Exception as exc:  # a store deleted under us cannot flush; the files below must still go
                log.warning("closing the index failed: %s", exc)
        for path in (socket_path(self.layout), pid_path(self.layout)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        log.info("stopped")


def _field(request: dict[str, Any], key: str) -> str | None:
    """A request's optional string field; any other type is the client's error, said in one line."""
    value = request.get(key)
    if value is not None and not isinstance(value, str):
        raise UsageError(f'"{key}" must be a string, not {type(value).__name__}')
    return value


def _note_paths(value: Any) -> list[str] | None:
    """`reindex` paths: vault-relative note names only, so a request can neither index a file
    outside the vault nor one memvault does not treat as a note (its own state, dot-folders)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise UsageError('"paths" must be a list of vault-relative note paths')
    for rel in value:
        if not is_note_rel(rel):
            raise UsageError(f"{rel!r}: not a vault-relative note path (*.md outside dot-folders)")
    return value
