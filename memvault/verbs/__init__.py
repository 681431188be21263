"""The verb table: every op the socket, the API, the CLI and MCP know, and where its function is.

A verb is a request (`memvault.protocol.Request`, whose `op` names it), a reply and one function
`(runtime, request) -> reply`, written once in the module of its area under this package. To add
one: write those three there and give it a line in `VERBS`. Modules are imported on first use, so a
front door that runs one verb imports only what that verb needs (a no-change `memvault index` none).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

from memvault.protocol import REGISTRY, Request
from memvault.vault.errors import UsageError


class Verb(NamedTuple):
    """A verb's line: where its function is ("module.function" in this package), the front doors
    that serve it by translating its request's fields (`memvault.cli.generic`, `memvault.mcp.tools`;
    the others have hand-made commands and tools there), and the field, if any, whose key sends it to
    the vault that holds that key."""

    where: str
    doors: tuple[str, ...] = ()
    route: str | None = None  # the request field whose key picks the vault (`memvault.scopes.Scopes.one`)


BOTH = ("cli", "mcp")
VERBS: dict[str, Verb] = {
    "ping": Verb("index.ping"), "status": Verb("index.status"), "reindex": Verb("index.reindex"),
    "verify": Verb("index.verify"), "events": Verb("index.events"), "cache": Verb("cache.cache", ("cli",)),
    "search": Verb("query.search"), "context": Verb("context.context"),
    "note": Verb("notes.note"), "remember": Verb("notes.remember"), "get": Verb("notes.get"),
    "sections": Verb("notes.sections", BOTH),
    "list": Verb("entries.list_entries"), "forget": Verb("entries.forget", ("cli",), route="key"),
    "restore": Verb("entries.restore", ("cli",)),
    "clear": Verb("entries.clear"), "trash": Verb("entries.trash", BOTH), "correct": Verb("entries.correct"),
    "overview": Verb("entries.overview"), "edit": Verb("edit.edit"),  # a person's, in the panel: no door
    "summary": Verb("days.summary"), "catalog": Verb("days.catalog", ("cli",)),
    "recent": Verb("days.recent", ("cli",)),
    "retention": Verb("days.retention"), "summaries": Verb("days.summaries", BOTH),
    "import": Verb("exchange.import_memories"), "export": Verb("exchange.export"),
    "extract": Verb("extract.extract"),  # approving and rejecting are a person's: not MCP tools
    "review": Verb("extract.review_queue", ("cli",)), "approve": Verb("extract.approve", ("cli",)),
    "reject": Verb("extract.reject", ("cli",)),
}  # fmt: skip


def verb(op: str) -> tuple[type[Request], Callable[[Any, Any], Any]]:
    """A verb's request type and function, its module imported on first use."""
    line = VERBS.get(op)
    if line is None:
        raise UsageError(f"unknown op {op!r}; known: {', '.join(sorted(VERBS))}")
    module, function = line.where.rsplit(".", 1)
    found = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return REGISTRY[op], found


def served_by(door: str) -> list[str]:
    """The ops a front door serves by translating their requests (`Verb.doors`)."""
    return [op for op, line in VERBS.items() if door in line.doors]


def load_all() -> None:
    """Import every verb module (the daemon does, before it takes its first request)."""
    for op in VERBS:
        verb(op)


def run(rt: Any, request: Request) -> Any:
    """Run a verb here, in `rt` (the daemon, or `memvault.local.LocalRuntime`)."""
    return verb(request.op)[1](rt, request)


def parse_request(obj: Any) -> Request:
    """A socket line's JSON object as the request it names; any fault is one line."""
    if not isinstance(obj, dict) or not isinstance(obj.get("op"), str):
        raise UsageError('a request is a JSON object with a string "op"')
    cls, _ = verb(obj["op"])
    return cls.from_json({k: v for k, v in obj.items() if k != "op"})
