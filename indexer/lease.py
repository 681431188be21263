"""One writer a server collection (issue 31): a lease kept in the collection itself.

A collection is kept in step with one vault by one writer: the daemon on the machine with the notes, or a
CI job over the vault's git repository. Two at once would each delete the points the other's manifest does
not know. So a writer holds a lease: a marker point (it has no vectors, so no search finds it) naming the
writer (host and vault folder), its process, and when the lease lapses. It is taken and renewed by one
conditional upsert that Qdrant applies only where the marker is this writer's own or has lapsed
(`update_filter`, Qdrant 1.16 and later), then read back: two writers racing for it cannot both win.

A writer renews it as it writes and at the end of every pass (a daemon's rescan comes every 5 minutes, a
lease lasts 15); one that stops releases it, keeping its name on the marker; one that crashed leaves it to
lapse, or to its own next start (same host, same vault folder), which takes it back at once. While it is
live, any other writer is refused in one line that names the holder (`StoreLocked`). A writer that takes a
collection another wrote last (its lease released or lapsed, or a collection from before leases) is told
so, and first brings the collection in step with its own vault (`indexer.opening.settle_writer`).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from typing import Any

from memvault.indexer.store_errors import StoreLocked
from memvault.vault.logger import log

MARKER = str(uuid.uuid5(uuid.NAMESPACE_URL, "memvault:writer-lease"))  # the marker point's id
LEASE_S = 900.0  # how long a lease holds unrenewed
RENEW_S = 60.0  # a writer renews at most this often: a write batch every few milliseconds need not


class WriterLease:
    """This process's lease on one collection, as its writer for the vault at `vault`."""

    def __init__(self, client: Any, collection: str, description: str, vault: str) -> None:
        from qdrant_client import models as m

        self._m, self.client, self.collection, self.description = m, client, collection, description
        self.me = f"{socket.gethostname()}:{vault}"
        self.renewed = 0.0  # when this process last held it (monotonic); 0: not held

    def _marker(self) -> dict[str, Any] | None:
        found = self.client.retrieve(self.collection, [MARKER], with_payload=True, with_vectors=False)
        return dict(found[0].payload or {}) if found else None

    def take(self) -> str | None:
        """Hold the lease (again); returns the writer that held it before when that was another, or "" for a
        collection with no marker yet. Raises `StoreLocked` while another writer's lease is live."""
        m, now = self._m, time.time()
        before = self._marker()
        mine = {"writer": self.me, "pid": os.getpid(), "expires": now + LEASE_S}
        free = m.Filter(should=[m.FieldCondition(key="writer", match=m.MatchValue(value=self.me)),
                                m.FieldCondition(key="expires", range=m.Range(lt=now))])  # fmt: skip
        self.client.upsert(self.collection, [m.PointStruct(id=MARKER, vector={}, payload=mine)], update_filter=free)
        held = self._marker() or {}
        if held.get("writer") != self.me:
            until = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(held.get("expires", 0))))
            raise StoreLocked(f"{self.description}: kept in step by {held.get('writer')} (process {held.get('pid')}), "
                              f"whose lease runs to {until}; a collection has one writer: stop that one, let its lease "
                              "lapse, or give this vault a collection of its own (collection in memvault.toml, "
                              "$MEMVAULT_COLLECTION)")  # fmt: skip
        self.renewed = time.monotonic()
        if before is None:
            return ""
        return None if before.get("writer") == self.me else str(before.get("writer"))

    def keep(self) -> None:
        """Before a write: renew a lease not renewed for `RENEW_S`. A lease that lapsed meanwhile and was
        taken by another writer ends this one's writing (`StoreLocked`), before it deletes what is theirs."""
        if time.monotonic() - self.renewed < RENEW_S:
            return
        if self.take():
            self.renewed = 0.0
            raise StoreLocked(f"{self.description}: another writer wrote it while this one's lease had lapsed")

    def release(self) -> None:
        """Let the next writer take it at once; the marker keeps this writer's name, so it knows who wrote last."""
        if not self.renewed:
            return
        m = self._m
        mine = m.Filter(must=[m.FieldCondition(key="writer", match=m.MatchValue(value=self.me))])
        payload = {"writer": self.me, "pid": os.getpid(), "expires": 0.0}
        self.renewed = 0.0
        try:
            self.client.upsert(self.collection, [m.PointStruct(id=MARKER, vector={}, payload=payload)],
                               update_filter=mine)  # fmt: skip
        except Exception as exc:  # an unreachable server: the lease lapses by itself
            log.warning(f"{self.description}: the writer's lease was left to lapse ({str(exc).splitlines()[0]})")
