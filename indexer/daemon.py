"""The daemon: the one process that owns the stores, keeps them in step with the files, and serves
requests over a Unix socket (line-delimited JSON, mode 0600, no TCP).

Operations it knows itself: ping, status, reindex, note, remember. Callers
add more (search) through `ops`, so this module needs nothing from `search`.
One lock serialises everything that touches the index; requests that only
read files or write notes do their file work outside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import signal
import socket
import socketserver
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from indexer.index import Index, IndexConfig
from indexer.reconcile import reconcile
from indexer.status import vault_status
from indexer.watcher import DEBOUNCE_S, PendingPaths, Watcher
from vault.daily import append_daily
from vault.errors import MemvaultError, UsageError
from vault.memory_file import remember
from vault.paths import Layout, parse_date

RESCAN_S = 300.0
MAX_REQUEST_BYTES = 1 << 20
CLIENT_IDLE_S = 30.0
log = logging.getLogger("memvault.daemon")
Op = Callable[["Daemon", dict[str, Any]], dict[str, Any]]


def socket_path(layout: Layout) -> Path:
    """`.memvault/daemon.sock`, or a short path under the temp folder when that is too long for AF_UNIX."""
    path = layout.state_dir / "daemon.sock"
    if len(os.fsencode(path)) < 100:
        return path
    digest = hashlib.sha256(os.fsencode(layout.root)).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"memvault-{os.getuid()}-{digest}.sock"


def pid_path(layout: Layout) -> Path:
    return layout.state_dir / "daemon.pid"


def log_path(layout: Layout) -> Path:
    return layout.state_dir / "daemon.log"


class _Handler(socketserver.StreamRequestHandler):
    """One connection: any number of request lines, each answered by one reply line."""

    server: _Server

    def handle(self) -> None:
        self.connection.settimeout(CLIENT_IDLE_S)  # a client that stops mid-line cannot pin a thread
        while True:
            try:
                line = self.rfile.readline(MAX_REQUEST_BYTES + 1)
            except (TimeoutError, OSError):
                return
            if not line:
                return
            if len(line) > MAX_REQUEST_BYTES:
                self._reply({"ok": False, "error": f"request over {MAX_REQUEST_BYTES} bytes"})
                return
            if not line.strip():
                continue
            self._reply(self.server.daemon_ref.dispatch(line))

    def _reply(self, reply: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.wfile.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
            self.wfile.flush()


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    daemon_ref: Daemon


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
        paths = request.get("paths")
        with self.lock:
            if request.get("rebuild"):
                self.index.rebuild()
            stats = reconcile(self.index, paths if paths else None)
            if not paths:
                self.last_reconcile = time.time()
        return {"stats": stats.as_dict()}

    def _op_note(self, request: dict[str, Any]) -> dict[str, Any]:
        day = parse_date(request["date"]) if request.get("date") else None
        path = append_daily(
            self.layout, str(request.get("text", "")), day=day, section=request.get("section") or "conversation"
        )
        rel = self.layout.relative(path)
        self.sync([rel])
        return {"path": rel}

    def _op_remember(self, request: dict[str, Any]) -> dict[str, Any]:
        saved = remember(
            self.layout, str(request.get("text", "")), section=request.get("section"), kind=request.get("type")
        )
        rel = self.layout.relative(saved.path)
        self.sync([rel])
        return {"path": rel, "section": saved.section, "created_section": saved.created_section}

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
        return server

    def run(self) -> None:
        """Serve until SIGTERM/SIGINT; the batch in flight finishes, then everything is flushed and removed."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stopping.set())
        self.watcher = Watcher(self.layout, self.pending)  # watch first: no edit falls between scan and watch
        self.server = self._bind()
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
        pid_path(self.layout).write_text(f"{os.getpid()}\n")
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
            self.index.close()
        for path in (socket_path(self.layout), pid_path(self.layout)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        log.info("stopped")


def _index_lock_free(layout: Layout) -> bool:
    """True when no process holds the index lock: then no daemon can be serving this vault."""
    try:
        fd = os.open(layout.state_dir / "index.lock", os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing drops the lock if we took it
    return True


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
    except (FileNotFoundError, ValueError):
        return None
    if _alive(pid) and not _index_lock_free(layout):
        return pid
    path.unlink(missing_ok=True)
    socket_path(layout).unlink(missing_ok=True)
    return None


class Connection:
    """A client connection to the daemon; many requests may share it (batch mode does)."""

    def __init__(self, layout: Layout, timeout: float = 2.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(str(socket_path(layout)))
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
            reply = self.reader.readline()
        except (OSError, TimeoutError):
            return None
        return json.loads(reply) if reply else None

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def ask(layout: Layout, request: dict[str, Any], timeout: float = 2.0) -> dict[str, Any] | None:
    """One request to the vault's daemon; None when no daemon answers (not running, stale, hung)."""
    if not socket_path(layout).exists():
        return None
    try:
        conn = Connection(layout, timeout)
    except OSError:
        return None
    try:
        return conn.call(request)
    finally:
        conn.close()
