"""The `search` verb: a query and its options in, the ranked hits out (`memvault.search` ranks them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.protocol import Request
from memvault.search.hits import SearchResult
from memvault.search.options import SearchOptions, options_from
from memvault.vault.errors import UsageError

if TYPE_CHECKING:
    from memvault.verbs.runtime import SearchRuntime


@dataclass(frozen=True)
class Search(Request, op="search", reply=SearchResult):  # its JSON is the published `RESULT_SCHEMA`
    """A query and its options; on the socket the options are flat public keys beside `query` (and `id`)."""

    query: str
    options: SearchOptions = field(default_factory=SearchOptions)
    id: Any = None
    has_id: bool = False  # a socket request that sent an "id" (even null) gets it back

    def check(self) -> None:
        if not self.query.strip():
            raise UsageError("empty query")

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Search:
        if not isinstance(obj.get("query"), str):
            raise UsageError('a search request needs a string "query"')
        options = options_from(obj, ignore=frozenset({"query", "id", "op"}))
        return cls(obj["query"], options, obj.get("id"), "id" in obj)

    def to_json(self) -> dict[str, Any]:
        extra = {"id": self.id} if self.has_id else {}
        return {"op": self.op, "query": self.query, **self.options.to_public(), **extra}

    def reply_json(self, reply: Any) -> dict[str, Any]:
        return {**({"id": self.id} if self.has_id else {}), **reply.to_json()}


def search(rt: SearchRuntime, request: Search) -> SearchResult:
    return rt.search(request.query, request.options)
