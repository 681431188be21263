"""The verbs about the index and the daemon: ping, status, reindex, verify, events."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from memvault.protocol import Message, Request
from memvault.vault.errors import UsageError
from memvault.vault.paths import is_note_rel
from memvault.verbs.runtime import EntryRuntime, SearchRuntime


@dataclass(frozen=True)
class Pong(Message):
    pid: int


@dataclass(frozen=True)
class StatusReply(Message):
    status: dict[str, Any]


@dataclass(frozen=True)
class Indexed(Message):
    """`stats` keys are `ReconcileStats`'s (a public interface); `problems` are per-file warnings."""

    stats: dict[str, Any]
    problems: list[str] = field(default_factory=list)


def reconcile_telling(index: Any, paths: list[str] | None, tell: Callable[[str], None], **options: Any) -> Any:
    """A reconcile pass (`memvault.indexer.reconcile`) whose per-file problems (broken frontmatter, a bad
    summary, a note it cannot read, a catalog edited by hand) are told as `index` prints them: a warning
    line in the log, and `tell` (the daemon's `status` errors). Once each: a file is read when it changed."""
    import logging

    from memvault.indexer.reconcile import reconcile  # (the daemon's: a client asking a verb needs none of it)

    problems: list[str] = []
    stats = reconcile(index, paths, problems=problems, **options)
    for problem in problems:
        logging.getLogger("memvault.daemon").warning("%s", problem)
        tell(problem)
    return stats


@dataclass(frozen=True)
class EventList(Message):
    events: list[dict[str, Any]]


@dataclass(frozen=True)
class Verified(Message):
    disagreements: list[str]


@dataclass(frozen=True)
class Ping(Request, op="ping", reply=Pong, timeout=2.0):
    """Is a daemon there (its pid)? Asked quickly before a connection is kept."""


@dataclass(frozen=True)
class Status(Request, op="status", reply=StatusReply, timeout=30.0):
    """Files on disk against what is indexed, failures, embedder, store, size (and the daemon's own figures)."""


@dataclass(frozen=True)
class Reindex(Request, op="reindex", reply=Indexed, timeout=24 * 3600.0):
    """`paths` limits the pass to those notes; the model, tokenizer and store can change only with no daemon."""

    rebuild: bool = False
    paths: list[str] | None = None
    embedder: str | None = None
    tokenizer: str | None = None
    qdrant_url: str | None = None

    def check(self) -> None:
        # vault-relative note names only: a request can neither index a file outside the vault nor
        # one memvault does not treat as a note (its own state, dot-folders)
        for rel in self.paths or ():
            if not is_note_rel(rel):
                raise UsageError(f"{rel!r}: not a vault-relative note path (*.md outside dot-folders)")

    @property
    def changes_setup(self) -> bool:
        return bool(self.embedder or self.tokenizer or self.qdrant_url)


@dataclass(frozen=True)
class Events(Request, op="events", reply=EventList):
    """The daemon's last events (at most 1,000) newer than `since`; `{"op": "subscribe"}` streams them."""

    since: int = 0


@dataclass(frozen=True)
class Verify(Request, op="verify", reply=Verified):
    """Do stores, manifest and files agree? (tests and diagnosis)"""


class IndexRuntime(EntryRuntime, SearchRuntime, Protocol):
    """Everything a verb may need of where it runs: `memvault.local.LocalRuntime` or the daemon."""

    def reindex(self, request: Reindex) -> Indexed: ...

    def status(self) -> dict[str, Any]: ...

    def verify(self) -> list[str]: ...

    def events_since(self, since: int) -> list[dict[str, Any]]:
        """The daemon's recent events newer than `since` (a seq); there are none without a daemon."""
        ...


def ping(rt: IndexRuntime, request: Ping) -> Pong:
    return Pong(os.getpid())


def status(rt: IndexRuntime, request: Status) -> StatusReply:
    return StatusReply(rt.status())


def reindex(rt: IndexRuntime, request: Reindex) -> Indexed:
    return rt.reindex(request)


def events(rt: IndexRuntime, request: Events) -> EventList:
    return EventList(rt.events_since(request.since))


def verify(rt: IndexRuntime, request: Verify) -> Verified:
    return Verified(rt.verify())
