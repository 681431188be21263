"""What each hand-made MCP tool returns, as types: the SDK publishes them as the tools' output schemas
and checks every result against them, so an agent (or its host) knows the fields before it calls. The
tools translated from a verb, and memory_save, return that verb's reply type (`memvault.verbs`),
published the same way.

Each key here is a key the tool returns: the SDK drops a key its type does not name from the
structured result (`tests/test_mcp.py` compares it with the text result on every call).
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict


class Hit(TypedDict):
    """One entry (or a piece of free text: `unit`) that answers the query, with where it is (`source`:
    path#Lstart-Lend) and what the entry is, when it says (key, tags, day, superseded, corrects); unit
    "entries": neighbouring entries that answer it together, `entries` their ids."""

    source: str
    scope: str
    unit: str
    entry_id: NotRequired[str]
    key: NotRequired[str]
    tags: NotRequired[list[str]]
    day: NotRequired[str]
    superseded: NotRequired[str]
    corrects: NotRequired[str]
    entries: NotRequired[list[str]]
    heading: list[str]
    snippet: str
    score: float


class Searched(TypedDict):
    """The hits, best first; which retrievers answered (`answered_by`: hybrid, bm25, vector or substring)
    and why not others (`reason`); the similarity floor's counts; `nothing_relevant` when no hit passed
    it; how the query's date words acted (`dates`)."""

    hits: list[Hit]
    answered_by: str
    reason: str | None
    floor: dict[str, Any] | None
    nothing_relevant: bool
    dates: dict[str, Any] | None


class Read(TypedDict):
    """The lines sent (`source`: path#Lstart-Lend); `more` when what was asked for goes on past them
    (the line or character cap cut it), and then `next_start_line`, where the next read starts."""

    source: str
    text: str
    more: bool
    next_start_line: int | None


class Forgot(TypedDict):
    """The entry's old place (PATH:LINE), its trash id (memory_restore takes it), its vault, and the
    daily notes whose summary had the clause telling it struck (`summaries_struck`)."""

    removed: str
    trash_id: str
    scope: str
    summaries_struck: list[str]


class Restored(TypedDict):
    """Where the entry is again (PATH:LINE; a `clear` batch's first), whether that is its old place
    (`exact`; else the end of its section), how many entries went back, and their vault."""

    restored: str
    exact: bool
    count: int
    scope: str
    summaries_unstruck: list[str]  # daily notes whose summary tells it again: the forget's strike lifted


class Corrected(TypedDict):
    """The note the correction went to, its status (added, or unchanged when it was there), the old
    entry now marked superseded (PATH:LINE), and the daily notes whose summary had the clause telling
    the old fact struck."""

    correction: str
    status: str
    superseded: str
    summaries_struck: list[str]


class Proposal(TypedDict):
    id: str
    text: str
    kind: str
    seen: int


class Extracted(TypedDict):
    """Today's note that holds the conversation's summary, and the proposals now in the review queue."""

    path: str
    proposals: list[Proposal]
    warnings: list[str]


class ListedEntry(TypedDict):
    source: str
    scope: str
    section: str
    key: str | None
    tags: list[str]
    text: str
    date: str | None
    conversation: str | None  # `[conversation:: ID]`: the conversation it came from
    importance: int | None  # `[importance:: N]`, 1-5


class Listed(TypedDict):
    """One page of entries; `total` of all that match; `next_offset` for the next page (null after the
    last); the count of each tag over all of them."""

    entries: list[ListedEntry]
    total: int
    next_offset: int | None
    tags: dict[str, int]


class Context(TypedDict):
    """`text` for the prompt, and the same as data: `stable` (the core entries), `recall` (each with its
    `source`); `tier`, how recall answered (dense, keyword, or recent: nothing relevant), per scope in
    `tiers`."""

    text: str
    stable: list[dict[str, Any]]
    recall: list[dict[str, Any]]
    tier: str | None
    tiers: dict[str, str]


class Failure(TypedDict):
    path: str
    reason: str


class Status(TypedDict):
    """The index (files on disk, indexed, pending, failed; chunks; model and store; failures), and per
    scope what the memory holds for an agent (`memory`)."""

    vault: str
    files_on_disk: int
    files_indexed: int
    files_pending: int
    files_failed: int
    chunks: int
    embedder: str | None
    store: str | None
    failures: list[Failure]
    memory: dict[str, Any]
