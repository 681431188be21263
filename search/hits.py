"""`Hit`: one search result, and the JSON shape that is memvault's public search interface."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memvault.search.option_table import MODES

# what a hit says of its unit, when it has it: an entry's id (its key, else `@` and a hash of its text:
# every verb that names an entry takes it), key, #tags (its own and its note's), the day it belongs to,
# and for a superseded entry the day it was corrected, for a correction what it corrects; a hit of
# neighbouring entries (unit "entries", `search.join`) names them all, in line order, its best-ranked
# entry's id, key and tags first
ABOUT = ("entry_id", "key", "tags", "day", "superseded", "corrects", "entries")


def about_unit(payload: dict[str, Any], text: str) -> dict[str, Any]:
    """What a hit says of its unit (`ABOUT`), from its payload (`memvault.indexer.filters.payload_for`)
    and its text."""
    from memvault.vault.entries import id_of_unit  # (not for a client that only renders hits)

    day = (payload.get("date") or "")[:10]
    about = {"day": day, "tags": payload.get("tags"), "superseded": payload.get("superseded")}
    if payload.get("unit") == "entry":
        about.update(entry_id=id_of_unit(text), key=payload.get("key"), corrects=payload.get("corrects"))
    return {k: v for k, v in about.items() if v}


@dataclass(frozen=True)
class Hit:
    """A ranked chunk. Lines are 1-based and inclusive; `path` is vault-relative with `/`.

    `ranks` and `scores` hold each retriever's view (`vector`, `bm25`, or
    `substring`), so a caller can see why a hit ranked where it did.
    """

    path: str
    start_line: int
    end_line: int
    heading: tuple[str, ...]
    text: str
    score: float
    snippet: str = ""
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    chunk_id: str = ""
    scope: str | None = None  # project or user, when more than one vault was read
    unit: str = "text"  # entry, entries (neighbours joined), text or summary (`memvault.vault.model.Chunk`)
    about: dict[str, Any] = field(default_factory=dict)  # ABOUT: what the unit is, from its note and its fields

    def to_json(self) -> dict[str, Any]:
        return {
            **({"scope": self.scope} if self.scope else {}),
            "unit": self.unit,
            **{k: self.about[k] for k in ABOUT if self.about.get(k) not in (None, [], ())},
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "heading": list(self.heading),
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "ranks": self.ranks,
            "scores": {k: round(v, 6) for k, v in self.scores.items()},
            "text": self.text,
            "chunk_id": self.chunk_id,
        }

    @classmethod
    def from_json(cls, h: dict[str, Any]) -> Hit:
        """A hit from its public shape: the same hit, whichever process ranked it."""
        return cls(h["path"], h["start_line"], h["end_line"], tuple(h["heading"]), h.get("text", ""), h["score"],
                   h["snippet"], h["ranks"], h["scores"], h.get("chunk_id", ""), h.get("scope"), h.get("unit", "text"),
                   {k: h[k] for k in ABOUT if k in h})  # fmt: skip


@dataclass(frozen=True)
class SearchResult:
    """A query's answer: which retriever(s) answered (`source`), and why not the mode asked for."""

    query: str
    source: str
    reason: str | None
    hits: list[Hit]
    terms: tuple[str, ...] = ()  # the query's words, for highlighting
    floor: dict[str, Any] | None = None  # with a relevance floor: {"min_similarity", "passed", "candidates", ...}
    dates: dict[str, Any] | None = None  # date words read from the query: {"words", "from", "to", "applied"}

    def to_json(self) -> dict[str, Any]:
        """The public shape (`RESULT_SCHEMA`): what `search --json` prints and the daemon replies."""
        return {
            "query": self.query,
            "source": self.source,
            "reason": self.reason,
            "hits": [h.to_json() for h in self.hits],
            "terms": list(self.terms),
            **({"floor": self.floor} if self.floor is not None else {}),
            **({"dates": self.dates} if self.dates is not None else {}),
        }

    @classmethod
    def from_json(cls, reply: dict[str, Any]) -> SearchResult:
        """Rebuild a result from its public shape."""
        hits = [Hit.from_json(h) for h in reply["hits"]]
        return cls(reply["query"], reply["source"], reply["reason"], hits, tuple(reply.get("terms", ())),
                   reply.get("floor"), reply.get("dates"))  # fmt: skip


# The documented shape of `search --json` (one object) and of each `--batch` line (plus "id").
HIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "path",
        "start_line",
        "end_line",
        "heading",
        "snippet",
        "score",
        "ranks",
        "scores",
        "text",
        "chunk_id",
    ],
    "properties": {
        "scope": {"type": "string", "enum": ["project", "user"]},  # which vault (when both were read)
        "path": {"type": "string"},
        "start_line": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
        "heading": {"type": "array", "items": {"type": "string"}},
        "snippet": {"type": "string"},
        "score": {"type": "number"},
        "ranks": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
        "scores": {"type": "object", "additionalProperties": {"type": "number"}},
        "text": {"type": "string"},  # the whole chunk the snippet is cut from
        "chunk_id": {"type": "string"},  # the index's id of that chunk ("" from the substring fallback)
        "unit": {"type": "string", "enum": ["entry", "entries", "text", "summary"]},
        "entry_id": {"type": "string"},
        "key": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "day": {"type": "string"},
        "superseded": {"type": "string"},
        "corrects": {"type": "string"},
        "entries": {"type": "array", "items": {"type": "string"}},  # unit "entries": the ids of the joined
    },
}
RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["query", "source", "hits"],
    "properties": {
        "id": {},
        "query": {"type": "string"},
        "source": {"type": "string", "enum": list(MODES)},
        "reason": {"type": ["string", "null"]},
        "hits": {"type": "array", "items": HIT_SCHEMA},
        # the query's words as snippets match them, so a client can highlight without a tokenizer
        "terms": {"type": "array", "items": {"type": "string"}},
        # with --min-similarity: how many of the fused candidates reached the floor (0: nothing relevant)
        "floor": {
            "type": "object",
            "required": ["min_similarity", "passed", "candidates"],
            "properties": {
                "min_similarity": {"type": "number"},
                "passed": {"type": "integer", "minimum": 0},
                "candidates": {"type": "integer", "minimum": 0},
                # while vectors are still coming in: hits the dense list could not judge are kept
                "vectors_pending": {"type": "boolean"},
                # the query's words no note holds (what `context` reads to tell a name the vault never saw)
                "unheard": {"type": "array", "items": {"type": "string"}},
            },
        },
        # with --dates: the date words read, the days they name, and how they acted (boost, filter, or
        # none: no note is dated in that range, so they were not used)
        "dates": {
            "type": "object",
            "required": ["words", "from", "to", "applied"],
            "properties": {
                "words": {"type": "array", "items": {"type": "string"}},
                "from": {"type": "string", "format": "date"},
                "to": {"type": "string", "format": "date"},
                "applied": {"type": "string", "enum": ["boost", "filter", "none"]},
            },
        },
    },
}
