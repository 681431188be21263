"""The verbs: each is a request type, a reply type and one function, written once for every front door.

A verb's function takes a `Runtime` (where the index lives: in this process,
or in the daemon that owns it) and its request, and returns its reply. The
daemon calls these functions for socket requests; `memvault.api.Vault` calls
them when no daemon answers. To add a verb: a request and reply here (or, for
an entry verb, in `memvault.entry_verbs`, named in `REEXPORTED`), a method on
`Vault`, and its rendering in the CLI.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any, ClassVar, Protocol

from memvault.protocol import EntryRuntime, Message, Request
from search.hits import SearchResult
from search.options import SearchOptions, options_from
from vault.errors import UsageError
from vault.fileio import read_note
from vault.paths import is_note_rel, note_path, parse_date
from vault.sections import find_sections

# the other verb modules' requests and replies, reachable here as `verbs.Forget` and so on; those
# modules are imported on first use, so a front door that runs only the verbs of this module (a
# no-change `memvault index`) does not import what they need (frontmatter, an HTTP client, ...)
REEXPORTED = {
    "context": ("Context", "Contexted"),
    "day_verbs": ("Catalog", "Recent", "Retention", "Summary"),
    "entry_verbs": ("Clear", "Cleared", "Correct", "Corrected", "Forget", "Listed", "ListEntries", "Moved",
                    "Restore", "Trash", "TrashList"),
    "exchange_verbs": ("Export", "Exported", "Import", "Imported"),
    "extract_verbs": ("Approve", "Extract", "Reject", "Review"),
}  # fmt: skip


def verb_modules() -> dict[str, ModuleType]:
    """Every verb module, imported: each request type registers its op (`memvault.protocol.REGISTRY`)
    when its module is imported, so the daemon calls this before it parses a request."""
    from memvault import context, day_verbs, entry_verbs, exchange_verbs, extract_verbs

    return {"context": context, "day_verbs": day_verbs, "entry_verbs": entry_verbs,
            "exchange_verbs": exchange_verbs, "extract_verbs": extract_verbs}  # fmt: skip


def __getattr__(name: str) -> Any:
    for module, names in REEXPORTED.items():
        if name in names:
            return getattr(importlib.import_module(f"memvault.{module}"), name)  # that module alone
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Runtime(EntryRuntime, Protocol):
    """What a verb needs of the index: `memvault.local.LocalRuntime` or the daemon."""

    def search(self, query: str, options: SearchOptions) -> SearchResult: ...

    def reindex(self, request: Reindex) -> Indexed: ...

    def status(self) -> dict[str, Any]: ...

    def verify(self) -> list[str]: ...

    def events_since(self, since: int) -> list[dict[str, Any]]:
        """The daemon's recent events newer than `since` (a seq); there are none without a daemon."""
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
    status: str = "added"  # added | updated (by key) | superseded (by key, on a frozen day) | unchanged
    trashed: str | None = None  # the trash id of the entry an update replaced
    superseded: str | None = None  # PATH:LINE of the entry a keyed save marked superseded


@dataclass(frozen=True)
class Remembered(Message):
    path: str
    section: str  # the MEMORY.md section, or "daily"
    created_section: bool
    indexed: bool = False
    status: str = "added"
    trashed: str | None = None
    superseded: str | None = None


@dataclass(frozen=True)
class Got(Message):
    """Lines of a note, 1-based and inclusive; `more` when the note goes on past what was sent."""

    path: str
    start_line: int
    end_line: int
    text: str
    more: bool = False


@dataclass(frozen=True)
class EventList(Message):
    events: list[dict[str, Any]]


@dataclass(frozen=True)
class Verified(Message):
    disagreements: list[str]


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
class Get(Request):
    """A note (`memory`, a date or a vault-relative path), its lines `start_line`-`end_line`, or one
    `##` section of it; at most `GET_LINES` lines and `GET_CHARS` characters."""

    op: ClassVar[str] = "get"
    reply: ClassVar[type] = Got
    path: str
    start_line: int = 1
    end_line: int | None = None
    section: str | None = None

    def check(self) -> None:
        if self.start_line < 1 or (self.end_line is not None and self.end_line < self.start_line):
            raise UsageError("lines are 1-based, and the end is not before the start")


@dataclass(frozen=True)
class Events(Request):
    """The daemon's last events (at most 1,000) newer than `since`; `{"op": "subscribe"}` streams them."""

    op: ClassVar[str] = "events"
    reply: ClassVar[type] = EventList
    since: int = 0


@dataclass(frozen=True)
class Verify(Request):
    """Do stores, manifest and files agree? (tests and diagnosis)"""

    op: ClassVar[str] = "verify"
    reply: ClassVar[type] = Verified


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
    from vault.daily import append_daily

    day = parse_date(request.date) if request.date else None
    saved = append_daily(rt.layout, request.text, day=day, section=request.section, key=request.key,
                         tags=tuple(request.tags or ()))  # fmt: skip
    rel = rt.layout.relative(saved.path)
    return Noted(rel, rt.written(saved.notes(rt.layout)), saved.status, saved.trashed, saved.superseded)


def remember(rt: Runtime, request: Remember) -> Remembered:
    from vault.memory_file import remember as remember_in_file

    saved = remember_in_file(rt.layout, request.text, section=request.section, kind=request.type,
                             key=request.key, tags=tuple(request.tags or ()))  # fmt: skip
    rel = rt.layout.relative(saved.path)
    return Remembered(rel, saved.section, saved.created_section, rt.written(saved.notes(rt.layout)), saved.status,
                      saved.trashed, saved.superseded)  # fmt: skip


GET_LINES = 400
GET_CHARS = 20_000


def get(rt: Runtime, request: Get) -> Got:
    path = note_path(rt.layout, request.path)
    rel = rt.layout.relative(path)
    if not path.is_file():
        raise UsageError(f"{rel}: no such note")
    lines = [line.rstrip("\r") for line in read_note(path, rel).text.split("\n")]
    start, end = request.start_line, request.end_line or len(lines)
    if request.section is not None:
        found = next((s for s in find_sections(lines, 2) if s.title == request.section), None)
        if found is None:
            raise UsageError(f"{rel} has no section {request.section!r}")
        start, end = found.start + 1, found.end
    end = min(end, len(lines), start + GET_LINES - 1)
    text = "\n".join(lines[start - 1 : end])[:GET_CHARS]
    return Got(rel, start, end, text, end < len(lines) and request.end_line is None and request.section is None)


def events(rt: Runtime, request: Events) -> EventList:
    return EventList(rt.events_since(request.since))


def verify(rt: Runtime, request: Verify) -> Verified:
    return Verified(rt.verify())


def search(rt: Runtime, request: Search) -> SearchResult:
    return rt.search(request.query, request.options)


CORE_HANDLERS: dict[type[Request], Any] = {
    Ping: ping, Status: status, Reindex: reindex, Note: note, Remember: remember, Verify: verify,
    Search: search, Get: get, Events: events,
}  # fmt: skip


@cache
def handlers() -> dict[type[Request], Any]:
    """Every verb's function by its request type (importing every verb module)."""
    m = verb_modules()
    return {**CORE_HANDLERS, m["context"].Context: m["context"].context, **m["entry_verbs"].ENTRY_HANDLERS,
            **m["day_verbs"].DAY_HANDLERS, **m["extract_verbs"].EXTRACT_HANDLERS,
            **m["exchange_verbs"].EXCHANGE_HANDLERS}  # fmt: skip


def run(rt: Runtime, request: Request) -> Any:
    """Run a verb here, in `rt`."""
    handler = CORE_HANDLERS.get(type(request))
    return (handler or handlers()[type(request)])(rt, request)
