"""The daemon: the one process that owns the stores, keeps them in step with the files, and serves
the verbs over a Unix socket (line-delimited JSON, mode 0600, no TCP).

A request line is parsed into its typed request (`memvault.protocol`) and run
by the same verb function the Python API runs (`memvault.verbs`), with the
daemon as its runtime: an index and a search engine that stay open, so the
query-vector cache and BM25 survive across requests. One lock serialises
everything that touches the index; verbs that only read files or write notes
do their file work outside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import logging
import os
import signal
import threading
import time
from typing import Any

from memvault import verbs
from memvault.daemon.embedding import BackgroundEmbedding
from memvault.daemon.events import EventBus, Usage, problem_told, publish_indexed
from memvault.daemon.files import pid_path, private_dir, socket_path
from memvault.daemon.journal import Journal
from memvault.daemon.stats import Statistics, load_events, save_events
from memvault.daemon.transport import MAX_CLIENTS, MAX_FOLLOWERS, Handler, InFlight, Server
from memvault.indexer.config import IndexConfig
from memvault.indexer.opening import open_index
from memvault.indexer.reconcile import ReconcileStats, reconcile
from memvault.indexer.status import vault_status
from memvault.indexer.verify import disagreements
from memvault.indexer.watcher import PendingPaths, Watcher
from memvault.protocol import error_json
from memvault.search.engine import Searcher
from memvault.search.hits import SearchResult
from memvault.search.options import SearchOptions
from memvault.search.recall import recalled_entries
from memvault.vault.config import DEBOUNCE_S, RESCAN_S, load_settings
from memvault.vault.errors import MemvaultError, UsageError
from memvault.vault.faults import crash_point
from memvault.vault.paths import Layout
from memvault.vault.retention import retention
from memvault.verbs.index import Indexed, Reindex, reconcile_telling

log = logging.getLogger("memvault.daemon")
RETRY_S = 2.0  # after a failed embedding step: the main loop's reconcile repairs the store meanwhile
DRAIN_MOST_S = 600.0  # a stop waits this long at most for the requests it took to be answered


class Daemon:
    """Holds the open index, the search engine, the watcher and the socket server of one vault;
    it is the `memvault.verbs.index.IndexRuntime` the socket's requests run in."""

    def __init__(
        self,
        layout: Layout,
        config: IndexConfig | None = None,
        debounce: float = DEBOUNCE_S,
        rescan_every: float = RESCAN_S,
        idle_exit: float | None = None,
    ) -> None:
        verbs.load_all()  # every op registered before the first request line is parsed
        self.layout = layout
        self.rescan_every = rescan_every
        self.idle_exit = idle_exit  # seconds with no request and no client holding it, then it stops
        self.events = EventBus(load_events(layout))  # what the daemon before it saw, still shown
        self.usage = Usage(Statistics(layout))
        self.retention_day: dt.date | None = None  # the last day retention ran to the end
        self.retention_retry = 0.0  # after a failed run: not again before this (time.monotonic())
        self.index = open_index(layout, config)  # takes the index lock: a second daemon fails here
        self.index.listener = self._indexed
        self.engine = Searcher(layout, self.index)  # long-lived: its query-vector cache serves every client
        self.journal = Journal(layout)
        self._request = threading.local()  # `written`'s notes of the identified write running in this thread
        self.lock = threading.RLock()
        self.embedding = BackgroundEmbedding(self.index, self.lock)
        self.pending = PendingPaths(debounce, on_change=lambda rel: self.events.publish("file-changed", path=rel))
        self.stopping = threading.Event()
        self.in_flight = InFlight(self.stopping)  # the requests a stop lets finish
        self.started = time.time()
        self.last_reconcile: float | None = None
        self.passing = False  # a pass over the whole vault is under way
        self.errors: list[str] = []
        self.watcher: Watcher | None = None
        self.server: Server | None = None
        self.embedder: threading.Thread | None = None

    # requests -----------------------------------------------------------
    def dispatch(self, line: bytes) -> dict[str, Any]:
        """Answer one request line; whatever goes wrong becomes an error reply, never a dead daemon."""
        self.usage.served()
        try:
            obj = json.loads(line)
            request = verbs.parse_request(obj)
            request_id = obj.get("request_id") if request.writes else None
            if isinstance(request_id, str) and 0 < len(request_id) <= 64:
                return self._once(request, request_id)
            return {"ok": True, **request.reply_json(verbs.run(self, request))}
        except ValueError as exc:  # not JSON, or not UTF-8
            return {"ok": False, "error": str(exc)}
        except MemvaultError as exc:
            return error_json(exc)
        except RecursionError:  # JSON nested thousands deep: the client's fault, not ours
            return {"ok": False, "error": "request nested too deeply to be a request"}
        except Exception as exc:
            log.exception("request failed")
            self._error(f"{type(exc).__name__}: {exc}")
            return {"ok": False, "error": f"internal error: {type(exc).__name__}: {exc}"}

    def _once(self, request: Any, request_id: str) -> dict[str, Any]:
        """A write with its id runs once (`memvault.daemon.journal`): its reply, an error's too, is noted
        before the notes it wrote are indexed, which is most of its time here."""
        earlier = self.journal.earlier(request_id)  # a client asking again after a lost reply
        if earlier is not None:
            return earlier
        self._request.written = written = list[str]()
        try:
            with self.journal.running(request_id, request.op):  # (`JournalError`: not run, said in one line)
                try:
                    reply = {"ok": True, **request.reply_json(verbs.run(self, request))}
                except MemvaultError as exc:
                    reply = error_json(exc)
                self.journal.done(request_id, reply)
        finally:
            self._request.written = None
        if written:
            crash_point("before-indexing-written")
            try:
                self.sync(list(dict.fromkeys(written)))
            except Exception as exc:  # the notes are written and the reply noted: the watcher catches up
                log.exception("indexing what a verb wrote failed")
                self._error(f"{type(exc).__name__}: {exc}")
        crash_point("before-reply")
        return reply

    def sync(self, paths: list[str] | None = None, everything_pending: bool = True) -> dict[str, Any]:
        """Index what is pending now (read-your-writes), plus `paths`; returns the stats."""
        ready, full = self.pending.take(everything=everything_pending)
        wanted = sorted(set(ready) | set(paths or ()))
        with self.lock:
            if full:
                stats = self._reconcile()
                self.last_reconcile = time.time()
            elif wanted:
                stats = self._reconcile(wanted)
            else:
                return {}
        return stats.as_dict()

    def _reconcile(self, paths: list[str] | None = None, **options: Any) -> ReconcileStats:
        """A pass of the daemon's own: the problems it meets are in the log, `status`'s errors and the events."""
        return reconcile_telling(self.index, paths, problem_told(self.events, self._error), **options)

    def _indexed(self, event: str, **data: Any) -> None:
        publish_indexed(self.events, self.layout.relative(self.layout.memory_md), event, data)

    # the runtime the verbs run in ---------------------------------------
    def written(self, paths: list[str]) -> bool:
        for rel in paths:  # a change like any other (its watcher event, if still to come, is the same change)
            self.pending.add(rel)
        noted = getattr(self._request, "written", None)
        if noted is not None:  # an identified write: indexed once its reply is noted (`_once`)
            noted.extend(paths)
        else:
            self.sync(paths)
        return True

    def events_since(self, since: int) -> list[dict[str, Any]]:
        return self.events.recent(since)

    def search(self, query: str, options: SearchOptions) -> SearchResult:
        """Paths still inside their debounce window are indexed first; each entry in the hits that
        answer the query (search.recall) is recorded as recalled now (`list --unused-since`)."""
        started = time.perf_counter()
        if self.watcher is not None:
            self.watcher.caught_up()  # a note saved just before the query is pending now
        self.sync()
        with self.lock:
            hits = self.engine.query_cache["hits"]  # a search the query cache answered counts as such
            result = self.engine.search(query, options)
            cached = self.engine.query_cache["hits"] > hits
            if self.passing and result.source != "substring":
                partial = "the daemon is still indexing the vault: this answer is from the notes indexed so far"
                result = dataclasses.replace(result, reason="; ".join(filter(None, [result.reason, partial])))
            if self.index.writable:
                self.index.recalled(recalled_entries(result, self.index.embedder.name), time.time())
        self.usage.searched(time.perf_counter() - started, options.mode, cached)
        return result

    def recalls(self) -> dict[str, tuple[float, int]]:
        with self.lock:
            return self.index.recalls()

    def reindex(self, request: Reindex) -> Indexed:
        if request.changes_setup:
            raise UsageError(
                "a daemon owns this index: stop it (memvault daemon stop) to change embedder, tokenizer or store"
            )
        problems: list[str] = []
        with self.lock:
            if request.rebuild:
                self.index.reset("rebuild")
            # the notes asked for get their vectors now; a whole pass leaves them to the background
            stats = reconcile(self.index, request.paths or None, problems=problems, embed=bool(request.paths))
            if request.rebuild:  # done: its totals (the index said when it started)
                self.events.publish("index-rebuilt", level="rebuild", done=True, **stats.as_dict())
            if not request.paths:
                self.last_reconcile = time.time()
        return Indexed(stats.as_dict(), problems)

    def purge(self, paths: list[str]) -> None:
        self.sync(paths)
        with self.lock:
            self.index.purge()
            self.index.embed_waiting()  # texts the cache did not hold (it is capped)
        self.journal.scrub()  # a reply noted there can quote the text

    def status(self) -> dict[str, Any]:
        status = vault_status(self.layout)
        status.update(
            pid=os.getpid(),
            uptime=round(time.time() - self.started, 1),
            idle_exit=self.idle_exit,  # seconds with no request and no holder before it stops itself (None: never)
            queue=len(self.pending),
            last_event=self.pending.last_event,
            last_full_reconcile=self.last_reconcile,
            watcher_alive=bool(self.watcher and self.watcher.observer.is_alive()),
            watcher_restarts=self.watcher.restarts if self.watcher else 0,
            errors=self.errors[-20:],
            vectors=self.embedding.progress(status["vectors"]),
            usage=self.usage.as_dict(query_cache=self.engine.query_cache, embed_cache=self.index.embed_cache),
        )
        return status

    def verify(self) -> list[str]:
        self.sync()
        with self.lock:
            return disagreements(self.index)

    def _error(self, message: str) -> None:
        self.errors = [*self.errors, f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}"][-100:]

    # lifecycle ----------------------------------------------------------
    def _bind(self) -> Server:
        path = socket_path(self.layout)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # we hold the index lock, so any socket file here is a dead daemon's
        old_umask = os.umask(0o177)
        try:
            server = Server(str(path), Handler)
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        server.daemon_ref = self
        server.in_flight = self.in_flight
        server.slots = threading.BoundedSemaphore(MAX_CLIENTS)
        server.followers = threading.BoundedSemaphore(MAX_FOLLOWERS)
        return server

    def run(self) -> None:
        """Serve until SIGTERM/SIGINT; the batch in flight finishes, then everything is flushed and removed."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stopping.set())
        private_dir(self.layout)  # the socket's folder, or one someone else could write in refused, first
        self.watcher = Watcher(self.layout, self.pending)  # watch first: no edit falls between scan and watch
        self.events.publish("watcher-started", root=str(self.layout.root))
        self.server = self._bind()
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
        fd = os.open(pid_path(self.layout), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.getpid()}\n")
        log.info("serving %s on %s (pid %d)", self.layout.root, socket_path(self.layout), os.getpid())
        self.embedder = threading.Thread(target=self._embed_loop, name="embedding", daemon=True)
        self.embedder.start()
        try:
            self._loop()
        finally:
            self.shutdown()

    def _loop(self) -> None:
        self._reconcile_all()
        while not self.stopping.wait(0.2):
            if self.idle_exit is not None and self.usage.idle_for() > self.idle_exit:
                log.info("no request and no client holding it for %.0fs: stopping", self.idle_exit)
                self.stopping.set()
                break
            self.usage.save()  # the day's figures, at most every minute
            try:
                if self.watcher and self.watcher.ensure_alive():
                    self.events.publish("watcher-stopped", reason="died")
                    self.events.publish("watcher-started", root=str(self.layout.root), restart=True)
                    self._error("file watcher died and was restarted; rescanning")
                    log.warning("file watcher died and was restarted")
                self._daily_retention()
                due_full = self.last_reconcile is None or time.time() - self.last_reconcile >= self.rescan_every
                ready, full = self.pending.take()
                if full or due_full:
                    self._reconcile_all()
                elif ready:
                    with self.lock:
                        stats = self._reconcile(ready, embed=False)
                    log.info("indexed %d changed paths: %s", len(ready), stats.as_dict())
            except Exception as exc:
                log.exception("reconcile failed")
                self._error(f"reconcile failed: {type(exc).__name__}: {exc}")

    def _embed_loop(self) -> None:
        """Vectors for the chunks that wait for one, a step at a time, from the first batch of the
        first pass on: a new vault answers hybrid queries seconds after BM25 does, not after the
        whole BM25 pass. Each step takes the lock only to read its batch and to store it (the pass
        lets it in between its batches, as it lets in searches)."""
        while not self.stopping.is_set():
            try:
                busy = self.embedding.step()
            except Exception as exc:  # a store damaged under us: the next reconcile repairs it
                log.exception("embedding failed")
                self._error(f"embedding failed: {type(exc).__name__}: {exc}")
                self.stopping.wait(RETRY_S)
                continue
            if not busy:
                self.stopping.wait(0.2)

    def _let_others_in(self) -> None:
        """Between two batches of a pass over the vault (held once, by this thread): a search or a
        save waiting for the lock goes first, and answers from what is indexed so far."""
        self.lock.release()
        time.sleep(0.005)
        self.lock.acquire()

    def _daily_retention(self) -> None:
        """Once a day, when the vault sets `retention_days`: old daily notes with a summary to the trash.
        The day counts as done only when a run ends well; a failed one (a bad setting, a trash that
        cannot be written) is said in `status` and tried again a full rescan interval later."""
        today = dt.date.today()
        if self.retention_day == today or time.monotonic() < self.retention_retry:
            return
        try:
            days = load_settings(self.layout.root).retention_days
            done = retention(self.layout, days, apply=True) if days else None
        except Exception as exc:
            self.retention_retry = time.monotonic() + self.rescan_every
            log.warning("retention failed, tried again in %.0f s: %s", self.rescan_every, exc)
            self._error(f"retention failed, tried again in {self.rescan_every:.0f} s: {type(exc).__name__}: {exc}")
            return
        self.retention_day = today
        if done is not None:
            for rel in done.moved:
                self.pending.add(rel)
            log.info("retention (%d days): moved %d daily notes to the trash, kept %d without a summary",
                     done.days, len(done.moved), len(done.kept))  # fmt: skip

    def _reconcile_all(self) -> None:
        with self.lock:  # BM25 for every change now, searches let in between batches; vectors follow
            self.passing = True
            try:
                stats = self._reconcile(embed=False, pause=self._let_others_in)
            finally:
                self.passing = False
            self.last_reconcile = time.time()
        log.info("reconciled the vault: %s", stats.as_dict())

    def shutdown(self) -> None:
        """No new connection or request is taken; those taken finish and are answered; then everything
        is flushed and the daemon's files removed."""
        self.in_flight.stop()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            with contextlib.suppress(FileNotFoundError):
                socket_path(self.layout).unlink()  # a client asking now runs the verb itself at once
        if left := self.in_flight.drain(DRAIN_MOST_S):
            log.warning("stopping with %d request(s) unanswered after %.0fs", left, DRAIN_MOST_S)
        if self.embedder is not None:  # a step in flight ends with its batch stored (a model run: seconds)
            self.embedder.join()
        if self.watcher is not None:
            self.watcher.stop()
            self.events.publish("watcher-stopped", reason="shutdown")
        with self.lock:
            try:
                self.index.close()
            except Exception as exc:  # a store deleted under us cannot flush; the files below must still go
                log.warning("closing the index failed: %s", exc)
            self.journal.close()
        self.usage.save(force=True)
        save_events(self.layout, self.events.recent())
        for path in (socket_path(self.layout), pid_path(self.layout)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        log.info("stopped")


def run(layout: Layout, config: IndexConfig, debounce: float, rescan: float, idle_exit: float | None = None) -> None:
    """`memvault daemon run`: serve this vault in the foreground until SIGTERM (or `idle_exit`)."""
    Daemon(layout, config, debounce=debounce, rescan_every=rescan, idle_exit=idle_exit).run()
