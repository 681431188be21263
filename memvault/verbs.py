"""The verbs: each is a request type, a reply type and one function, written once for every front door.

A verb's function takes a `Runtime` (where the index lives: in this process,
or in the daemon that owns it) and its request, and returns its reply. The
daemon calls these functions for socket requests; `memvault.api.Vault` calls
them when no daemon answers. To add a verb: a request and reply here, a
method on `Vault`, and its rendering in the CLI.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Protocol

from memvault.protocol import Message, Request
from search.hits import SearchResult
from search.options import SearchOptions, options_from
from vault.daily import append_daily
from vault.entries import collect
from vault.errors import UsageError
from vault.forget import Moved as MovedEntry
from vault.forget import clear as clear_entries
from vault.forget import forget as forget_entry
from vault.forget import restore as restore_entry
from vault.memory_file import remember as remember_in_file
from vault.paths import Layout, is_note_rel, parse_date
from vault.trash import list_trashed


class Runtime(Protocol):
    """What a verb needs of the index: `memvault.local.LocalRuntime` or the daemon."""

    layout: Layout

    def written(self, paths: list[str]) -> bool:
        """Notes a verb just wrote: the daemon indexes them before replying (True); locally nothing happens."""
        ...

    def search(self, query: str, options: SearchOptions) -> SearchResult: ...

    def reindex(self, request: Reindex) -> Indexed: ...

    def status(self) -> dict[str, Any]: ...

    def verify(self) -> list[str]: ...

    def purge(self, paths: list[str]) -> None:
        """Text was removed from these notes for good: index them now and leave no copy in the index."""
        ...


# replies ------------------------------------------------------------------
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


@dataclass(frozen=True)
class Noted(Message):
    path: str  # vault-relative
    indexed: bool = False  # True when the daemon indexed it before replying
    status: str = "added"  # added | updated (by key) | unchanged (already there)
    trashed: str | None = None  # the trash id of the entry an update replaced


@dataclass(frozen=True)
class Remembered(Message):
    path: str
    section: str  # the MEMORY.md section, or "daily"
    created_section: bool
    indexed: bool = False
    status: str = "added"
    trashed: str | None = None


@dataclass(frozen=True)
class Verified(Message):
    disagreements: list[str]


@dataclass(frozen=True)
class Moved(Message):
    """An entry moved to the trash (`forget`) or back (`restore`): its note, line and trash id;
    `exact` is False when a restore could not use the old line (the note changed) and appended it
    to its section instead."""

    path: str
    line: int
    id: str
    exact: bool = True
    indexed: bool = False
    count: int = 1  # a restored `clear` batch: how many entries went back (`path`, `line`: the first)
    scrubbed: int = 0  # forget --purge: copies removed from the trash (`id` is then "": none kept)
    elsewhere: list[str] = field(default_factory=list)  # forget --purge: entries still holding the text


@dataclass(frozen=True)
class Cleared(Message):
    """What `clear` moved to the trash (or, with `dry_run`, would move): `count` entries of `paths`,
    restored together by `restore BATCH`."""

    batch: str
    count: int
    paths: list[str]
    dry_run: bool = False
    indexed: bool = False


@dataclass(frozen=True)
class TrashList(Message):
    items: list[dict[str, Any]]


@dataclass(frozen=True)
class Listed(Message):
    """Entries as `vault.entries.Entry` fields, and how many entries carry each tag."""

    entries: list[dict[str, Any]]
    tags: dict[str, int]


# requests -----------------------------------------------------------------
@dataclass(frozen=True)
class Ping(Request):
    op: ClassVar[str] = "ping"
    reply: ClassVar[type] = Pong
    timeout: ClassVar[float] = 2.0


@dataclass(frozen=True)
class Status(Request):
    op: ClassVar[str] = "status"
    reply: ClassVar[type] = StatusReply
    timeout: ClassVar[float] = 30.0


@dataclass(frozen=True)
class Reindex(Request):
    """`paths` limits the pass to those notes; the model, tokenizer and store can change only with no daemon."""

    op: ClassVar[str] = "reindex"
    reply: ClassVar[type] = Indexed
    timeout: ClassVar[float] = 24 * 3600.0
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
class Note(Request):
    op: ClassVar[str] = "note"
    reply: ClassVar[type] = Noted
    text: str
    date: str | None = None
    section: str = "conversation"
    key: str | None = None
    tags: list[str] | None = None


@dataclass(frozen=True)
class Remember(Request):
    op: ClassVar[str] = "remember"
    reply: ClassVar[type] = Remembered
    text: str
    section: str | None = None
    type: str | None = None
    key: str | None = None
    tags: list[str] | None = None


@dataclass(frozen=True)
class Verify(Request):
    """Do stores, manifest and files agree? (tests and diagnosis)"""

    op: ClassVar[str] = "verify"
    reply: ClassVar[type] = Verified


@dataclass(frozen=True)
class ListEntries(Request):
    """The entries of the vault's notes, narrowed by section, tag and key."""

    op: ClassVar[str] = "list"
    reply: ClassVar[type] = Listed
    section: str | None = None
    tag: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class Forget(Request):
    """One entry by `key` (or a `PATH:LINE` in its place) or by a piece of its text (`match`);
    `purge` keeps no copy in the trash or the index."""

    op: ClassVar[str] = "forget"
    reply: ClassVar[type] = Moved
    key: str | None = None
    match: str | None = None
    purge: bool = False


@dataclass(frozen=True)
class Restore(Request):
    op: ClassVar[str] = "restore"
    reply: ClassVar[type] = Moved
    id: str


@dataclass(frozen=True)
class Clear(Request):
    """Every entry of one MEMORY.md `section`, or of every note (`all`), to the trash. Nothing moves
    without `yes`: the request is refused with what it would move, unless it is a `dry_run`."""

    op: ClassVar[str] = "clear"
    reply: ClassVar[type] = Cleared
    section: str | None = None
    all: bool = False
    yes: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Trash(Request):
    op: ClassVar[str] = "trash"
    reply: ClassVar[type] = TrashList


@dataclass(frozen=True)
class Search(Request):
    """A query and its options; on the socket the options are flat public keys beside `query` (and `id`)."""

    op: ClassVar[str] = "search"
    reply: ClassVar[type] = SearchResult  # its JSON is the published `RESULT_SCHEMA`
    query: str
    options: SearchOptions = field(default_factory=SearchOptions)
    id: Any = None
    has_id: bool = False  # a socket request that sent an "id" (even null) gets it back

    def check(self) -> None:
        if not self.query.strip():
            raise UsageError("empty query")

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Search:  # type: ignore[override]
        if not isinstance(obj.get("query"), str):
            raise UsageError('a search request needs a string "query"')
        options = options_from(obj, ignore=frozenset({"query", "id", "op"}))
        return cls(obj["query"], options, obj.get("id"), "id" in obj)

    def to_json(self) -> dict[str, Any]:
        extra = {"id": self.id} if self.has_id else {}
        return {"op": self.op, "query": self.query, **self.options.to_public(), **extra}

    def reply_json(self, reply: Any) -> dict[str, Any]:
        return {**({"id": self.id} if self.has_id else {}), **reply.to_json()}


# the verbs ----------------------------------------------------------------
def ping(rt: Runtime, request: Ping) -> Pong:
    return Pong(os.getpid())


def status(rt: Runtime, request: Status) -> StatusReply:
    return StatusReply(rt.status())


def reindex(rt: Runtime, request: Reindex) -> Indexed:
    return rt.reindex(request)


def note(rt: Runtime, request: Note) -> Noted:
    day = parse_date(request.date) if request.date else None
    saved = append_daily(rt.layout, request.text, day=day, section=request.section, key=request.key,
                         tags=tuple(request.tags or ()))  # fmt: skip
    rel = rt.layout.relative(saved.path)
    return Noted(rel, rt.written([rel]), saved.status, saved.trashed)


def remember(rt: Runtime, request: Remember) -> Remembered:
    saved = remember_in_file(rt.layout, request.text, section=request.section, kind=request.type,
                             key=request.key, tags=tuple(request.tags or ()))  # fmt: skip
    rel = rt.layout.relative(saved.path)
    return Remembered(rel, saved.section, saved.created_section, rt.written([rel]), saved.status, saved.trashed)


def verify(rt: Runtime, request: Verify) -> Verified:
    return Verified(rt.verify())


def list_entries(rt: Runtime, request: ListEntries) -> Listed:
    found = collect(rt.layout, request.section, request.tag, request.key)
    counts = Counter(t for e in found for t in e.tags)
    return Listed([asdict(e) for e in found], dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))))


def forget(rt: Runtime, request: Forget) -> Moved:
    moved = forget_entry(rt.layout, request.key, request.match, purge=request.purge)
    if not request.purge:
        return _moved(rt, moved)
    rel = rt.layout.relative(moved.path)
    rt.purge([rel])
    return Moved(rel, moved.line, "", indexed=True, scrubbed=moved.scrubbed, elsewhere=list(moved.elsewhere))


def restore(rt: Runtime, request: Restore) -> Moved:
    moved = restore_entry(rt.layout, request.id)
    if len(moved) == 1:
        return _moved(rt, moved[0])
    paths = list(dict.fromkeys(rt.layout.relative(m.path) for m in moved))
    return Moved(paths[0], moved[0].line, request.id, all(m.exact for m in moved), rt.written(paths), len(moved))


def _moved(rt: Runtime, moved: MovedEntry) -> Moved:
    rel = rt.layout.relative(moved.path)
    return Moved(rel, moved.line, moved.id, moved.exact, rt.written([rel]))


def clear(rt: Runtime, request: Clear) -> Cleared:
    dry = request.dry_run or not request.yes
    found = clear_entries(rt.layout, request.section, request.all, dry_run=dry)
    paths = [rt.layout.relative(p) for p in found.paths]
    if dry and not request.dry_run:
        scope = f"section {request.section!r} of MEMORY.md" if request.section is not None else "every note"
        raise UsageError(f"clear would move {found.count} entries of {scope} to the trash; add --yes to do it")
    return Cleared(found.batch, found.count, paths, dry, False if dry else rt.written(paths))


def trash(rt: Runtime, request: Trash) -> TrashList:
    return TrashList([{"id": t.id, **t.meta, "text": t.body} for t in list_trashed(rt.layout)])


def search(rt: Runtime, request: Search) -> SearchResult:
    return rt.search(request.query, request.options)


HANDLERS: dict[type[Request], Any] = {
    Ping: ping, Status: status, Reindex: reindex, Note: note, Remember: remember, Verify: verify,
    ListEntries: list_entries, Forget: forget, Restore: restore, Clear: clear, Trash: trash, Search: search,
}  # fmt: skip


def run(rt: Runtime, request: Request) -> Any:
    """Run a verb here, in `rt`."""
    return HANDLERS[type(request)](rt, request)
