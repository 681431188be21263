"""The MCP tools, one per verb: each translates its typed arguments into the verb's request and runs it
through `Scopes` (the project vault and the user vault), so a tool does exactly what the CLI does.

Outputs are bounded (hits, lines, characters); every hit and item names its source as
`path#Lstart-Lend`. A bad argument or a refused write is a `ToolError` with one line.

Each tool names the verbs it runs (`runs`): whether it writes is theirs to say (`Request.writes`), so
its read-only annotation cannot disagree with what it does.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import Field

from memvault.api import Vault
from memvault.mcp import outputs as out
from memvault.scopes import Scopes
from memvault.search.hits import ABOUT
from memvault.search.option_table import DEFAULTS, OPTIONS, Option
from memvault.search.options import build_options
from memvault.vault.errors import MemvaultError
from memvault.verbs.context import MAX_BUDGET, MIN_BUDGET, core_home
from memvault.verbs.notes import Get, Note, Remember, Saved
from memvault.verbs.query import Search

MAX_HITS = 50
# the search engine's own knobs: how retrievers are fused and weighed, how deep each looks, a raw score
# cut. They are for the CLI and the benchmarks, which measure them; an agent has `min_similarity` and
# `mode` for what they would be asked to do, and a schema without them leaves it fewer ways to go wrong
ENGINE = frozenset({"threshold", "depth", "fusion", "rrf_k", "w_vector", "w_bm25", "w_translated"})
MAX_ENTRIES = 200
Scope = Literal["project", "user"]
ReadScope = Literal["all", "project", "user"]
# what a refusal that nothing matched adds: the call that finds it
IMPORTANCE = "how important the fact is, 1 to 5; 4 or 5 keep it in the stable block of every prompt"
FIND = "memory_search finds it: give a hit's `source` or `entry_id` (as `path` or `where`); memory_list takes a key"


# a line number: 1-based, as the schema says; `Get` refuses one out of range with its own line, which says
# more than the SDK's validation error would (the end before the start, past the note's end)
LINE = Field(json_schema_extra={"minimum": 1})


def source(path: str, start: int, end: int) -> str:
    return f"{path}#L{start}-L{end}"


Tool = TypeVar("Tool", bound=Callable[..., Any])


def _nothing_relevant(floor: dict[str, Any] | None, hits: list[Any]) -> bool:
    """No hit passed the floor, and the floor could judge: while vectors are still being built a note
    with none yet is unknown, not irrelevant."""
    return floor is not None and not hits and not floor.get("vectors_pending")


def runs(*ops: str, destructive: bool = False, idempotent: bool = False) -> Callable[[Tool], Tool]:
    """Mark a tool with the verbs it runs (`memvault.verbs.VERBS`): `memvault.mcp.server` annotates it
    read-only when none of them writes. `destructive`: what it removes is gone from recall;
    `idempotent`: a writing tool whose second identical call changes nothing."""

    def mark(tool: Tool) -> Tool:
        tool.ops, tool.destructive, tool.idempotent = ops, destructive, idempotent  # type: ignore[attr-defined]
        return tool

    return mark


def _parameter(option: Option, default: Any) -> inspect.Parameter:
    """A search option as a tool parameter: its type, choices, bounds and help from its one declaration."""
    kind: Any = {"float|auto": float | Literal["auto"]}.get(option.kind, option.kind)  # type: ignore[arg-type]
    if option.choices:
        kind = Literal[option.choices]
    if option.many:
        kind = kind | list[kind]
    maximum = MAX_HITS if option.name == "limit" else option.maximum
    field = Field(description=option.help, ge=option.minimum if option.kind != "float|auto" else None,
                  le=maximum if option.kind != "float|auto" else None)  # fmt: skip
    return inspect.Parameter(option.attr, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind | None, field])  # fmt: skip


class MemoryTools:
    """The tools of one project vault (and the user vault beside it)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.scopes = Scopes(vault)

    def all(self) -> list[Callable[..., Any]]:
        """The hand-made tools, then one per verb MCP serves by translation (`memvault.verbs.VERBS`).

        Each hand-made tool does more than translate its verb's request: search (the engine's options
        as parameters, bounded hits with their sources, `nothing_relevant`), get (a hit's source or
        entry id read back, bounded, `next_start_line`), save (note or remember by save type, a key's
        vault found), forget and correct (an entry named by key, text or a hit's source, in the vault
        that holds it), restore (the vault found by the trash id), extract (a conversation given as
        text), list and status (both vaults merged), context (the blocks rendered in a budget)."""
        from memvault.verbs import served_by

        made: list[Callable[..., Any]] = [self.memory_search, self.memory_get, self.memory_save, self.memory_forget,
                                          self.memory_restore, self.memory_correct, self.memory_extract,
                                          self.memory_list, self.memory_context, self.memory_status]  # fmt: skip
        return made + [self.translated(op) for op in served_by("mcp")]

    def translated(self, op: str) -> Callable[..., Any]:
        """`memory_<op>`: the verb's request fields as its parameters (with their help), `scope` for the
        vault, and the reply's JSON as its result."""
        import dataclasses
        import typing

        from memvault.protocol import offered
        from memvault.verbs import VERBS, verb

        request_type, _ = verb(op)
        route = VERBS[op].route

        def tool(scope: Scope = "project", **given: Any) -> dict[str, Any]:
            request = request_type(**{k: v for k, v in given.items() if v is not None})
            key = getattr(request, route) if route else None
            return self._run(lambda: self.scopes.one(scope, key)[1].run(request).to_json())

        hints = typing.get_type_hints(request_type)
        params = [inspect.Parameter("scope", inspect.Parameter.KEYWORD_ONLY, default="project", annotation=Scope)]
        for f in offered(request_type):
            default = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
            bounds = {k: f.metadata[k] for k in ("ge", "le") if k in f.metadata}  # a number's range, as declared
            # (a type built at run time from the request's field: what mypy cannot read, the SDK does)
            annotation = Annotated[hints[f.name], Field(description=f.metadata.get("help"), **bounds)]  # type: ignore[valid-type,name-defined]
            params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))  # fmt: skip
        tool.__signature__ = inspect.Signature(params, return_annotation=request_type.reply)  # type: ignore[attr-defined]
        tool.__name__ = f"memory_{op}"
        tool.__doc__ = inspect.cleandoc(request_type.__doc__ or "")
        return runs(op)(tool)

    def _run(self, call: Callable[[], Any], next_step: str | None = None) -> Any:
        """The call, a refusal as a one-line tool error; `next_step` says what to call instead when the
        refusal is that nothing matched (as basic-memory's and qmd's errors do: a dead end costs an agent
        a guess, a named next call does not)."""
        from mcp.server.mcpserver.exceptions import ToolError

        try:
            return call()
        except MemvaultError as exc:
            message = str(exc)
            if next_step and any(w in message for w in ("no entry", "not a note", "no such note", "no such item")):
                message += f"; {next_step}"
            raise ToolError(message) from None

    @runs("search")
    def memory_search(self, query: str, scope: ReadScope = "all", **options: Any) -> out.Searched:
        """Search the memory (hybrid: meaning and keywords). Dates are YYYY-MM-DD; `kind` daily
        notes or MEMORY.md; `min_similarity` drops weak hits: "auto" (the default: the model's
        floor for the question's language), a cosine, or null for none; `nothing_relevant` is then
        true when no hit passed (nothing relevant is remembered; never while vectors are still being
        built: `floor.vectors_pending`). `decay`: a
        half-life in days for daily-note hits; `mmr`: 0..1, lower gives more varied hits; `dates`:
        how date words in the query ("last week", "上周") act. Each hit is one entry (or a piece of
        free text: `unit`) with its `source` (path#Lstart-Lend) and `entry_id`, which memory_get,
        memory_forget and memory_correct take, its `scope`, and its `key`, `tags`, `day`,
        `superseded` / `corrects` when it has them; a hit of unit "entries" is neighbouring entries
        that answer together, `entries` their ids (memory_forget takes one). At most 50 hits."""

        def call() -> out.Searched:
            limit = min(max(options.get("limit") or DEFAULTS["limit"], 1), MAX_HITS)
            given = {"min_similarity": "auto", **options, "limit": limit}  # an explicit null: no floor
            if given.get("mode") in ("bm25", "substring") and given.get("min_similarity") == "auto":
                given["min_similarity"] = None  # the default floor is on cosines: a keyword search has none
            result = self.scopes.search_result(Search(query, build_options(**given)), scope)
            hits: list[Any] = [{"source": source(h.path, h.start_line, h.end_line), "scope": h.scope, "unit": h.unit,
                     **{k: h.about[k] for k in ABOUT if h.about.get(k)},
                     "heading": list(h.heading), "snippet": h.snippet, "score": round(h.score, 6)}
                    for h in result.hits]  # fmt: skip
            return {"hits": hits, "answered_by": result.source, "reason": result.reason, "floor": result.floor,
                    "nothing_relevant": _nothing_relevant(result.floor, hits), "dates": result.dates}  # fmt: skip

        return self._run(call)

    memory_search.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
         inspect.Parameter("query", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str),
         inspect.Parameter("scope", inspect.Parameter.KEYWORD_ONLY, default="all", annotation=ReadScope),
         *(_parameter(o, "auto" if o.name == "min_similarity" else o.default) for o in OPTIONS
           if o.name not in ENGINE)],
        return_annotation=out.Searched,
    )  # fmt: skip

    @runs("get")
    def memory_get(self, path: str, start_line: Annotated[int, LINE] = 1, end_line: Annotated[int | None, LINE] = None,
                   section: str | None = None, scope: Scope = "project") -> out.Read:  # fmt: skip
        """Read a note: `path` is a source's path (or `memory` for MEMORY.md, or a date for that
        day's note), with a line range (1-based, inclusive) or one `##` section; or a search hit's
        `source` or `entry_id`, for just those lines. At most 400 lines (and 20,000 characters): `more`
        is true when what was asked for goes on, and `next_start_line` is the `start_line` that reads on."""
        got = self._run(lambda: self.scopes.one(scope)[1].run(Get(path, start_line, end_line, section)), FIND)
        return {"source": source(got.path, got.start_line, got.end_line), "text": got.text, "more": got.more,
                "next_start_line": got.end_line + 1 if got.more else None}  # fmt: skip

    @runs("note", "remember", idempotent=True)  # the same save twice writes once
    def memory_save(
        self, text: str,
        type: Literal["preference", "architecture", "solution", "discovery", "config", "conversation", "daily"]
        | None = None,
        section: str | None = None, key: str | None = None, tags: list[str] | None = None, scope: Scope | None = None,
        importance: Annotated[int | None, Field(ge=1, le=5, description=IMPORTANCE)] = None,
        context: Annotated[str | None, Field(description="for a decision: why it was taken, kept as a line of it")]
        = None,
        consequences: Annotated[str | None, Field(description="for a decision: what follows from it")] = None,
    ) -> Saved:  # fmt: skip
        """Save one lasting fact about the user or the project: a preference, a decision and its
        reason, a constraint, a solution that took effort, a setting; not one-off chatter, never a
        secret. Search first (memory_search): if the fact is there, save it under the same `key`
        to update it rather than adding a second one. With `type` or `section` it goes to MEMORY.md (preference,
        architecture, solution, discovery, config have their sections); without, to today's daily
        note. Give a `key` (a short name, e.g. `frontend-stack`) to a fact that may change: saving
        the same key again replaces it in place. Saving the same text twice is a no-op. A key
        starting with `user_`, or a tag user/preference/profile/personal, saves to the user vault.
        A tag preference/decision/constraint/rule/workflow with no type or section puts it in
        MEMORY.md, where `memory_context` shows it in every prompt."""

        def call() -> dict[str, Any]:  # `Saved` as JSON: what the output schema describes
            kind, title = (type, section) if type or section else core_home(tags) or (None, None)
            to_day = kind is None and title is None
            if to_day and (importance is not None or context or consequences):  # MEMORY.md's: to its last section
                to_day = False
            remember = Remember(text, title, kind, key, tags, importance, context, consequences)
            request = Note(text, key=key, tags=tags) if to_day else remember
            return self.scopes.saved(request, scope).to_json()

        return self._run(call)

    @runs("forget", destructive=True)  # to the trash, restorable, but gone from recall
    def memory_forget(self, key: str | None = None, match: str | None = None, where: str | None = None,
                      scope: Scope | None = None) -> out.Forgot:  # fmt: skip
        """Remove one entry, by its `key`, a piece of its text (`match`) or its place (`where`:
        PATH:LINE, or a search hit's `source`). It goes to the trash: memory_restore puts it back by
        the `trash_id` this answers; when more than one entry matches, nothing is removed and the
        candidates are named."""
        from memvault.verbs.entries import Forget

        named = where if where is not None else key  # an empty `where` is refused, not taken for no place

        def call() -> out.Forgot:
            name, vault = self.scopes.one(scope, key)
            moved = vault.run(Forget(named, match))
            return {"removed": f"{moved.path}:{moved.line}", "trash_id": moved.id, "scope": name,
                    "summaries_struck": moved.summaries}  # fmt: skip

        return self._run(call, FIND)

    @runs("restore")  # a second restore of one id finds it gone from the trash: not idempotent
    def memory_restore(self, id: str, scope: Scope | None = None) -> out.Restored:
        """Undo a forget: put a trashed entry back where it was, by the `trash_id` memory_forget
        answered (memory_trash lists the trash). When its note changed around it, it goes to the end
        of its section (`exact` false)."""
        from memvault.vault.trash import is_item
        from memvault.verbs.entries import Restore

        def call() -> out.Restored:
            vaults = self.scopes.read(scope or "all")
            name, vault = next(((n, v) for n, v in vaults if is_item(v.layout, id)), vaults[0])
            moved = vault.run(Restore(id))
            return {"restored": f"{moved.path}:{moved.line}", "exact": moved.exact, "count": moved.count,
                    "scope": name, "summaries_unstruck": moved.summaries}  # fmt: skip

        return self._run(call, "memory_trash lists what the trash holds, each with its `id`")

    @runs("correct")
    def memory_correct(self, text: str, key: str | None = None, match: str | None = None, where: str | None = None,
                       scope: Scope | None = None) -> out.Corrected:  # fmt: skip
        """Correct a fact that was wrong or changed, keeping the history: `text` is written to
        today's note pointing at the old entry (named by `key`, a piece of its text `match`, or
        `where`: PATH:LINE or a hit's `source`), which is marked superseded. Search then ranks the
        correction first."""
        from memvault.verbs.entries import Correct

        named = where if where is not None else key
        done = self._run(lambda: self.scopes.one(scope, key)[1].run(Correct(text, named, match)), FIND)
        return {"correction": done.path, "status": done.status, "superseded": f"{done.old_path}:{done.old_line}",
                "summaries_struck": done.summaries}  # fmt: skip

    @runs("extract")
    def memory_extract(self, messages: list[dict[str, Any]]) -> out.Extracted:
        """Hand over a finished conversation (`[{role, content}]`): its summary goes to today's note,
        and the lasting statements the user made go to the review queue for a person to approve
        (never straight into MEMORY.md). Returns the proposals and any warnings."""
        from memvault.verbs.extract import Extract

        request = Extract(json.dumps(messages, ensure_ascii=False), "messages")
        done = self._run(lambda: self.vault.run(request))
        proposals: list[Any] = [{k: p[k] for k in ("id", "text", "kind", "seen")} for p in done.proposals]
        return {"path": done.path, "proposals": proposals, "warnings": done.warnings}

    @runs("list")
    def memory_list(
        self, section: str | None = None, tag: str | None = None, key: str | None = None, scope: ReadScope = "all",
        conversation: str | None = None,
        importance: Annotated[int | None, Field(ge=1, le=5, description="only entries of this importance or "
                                                "more (1-5)")] = None,
        offset: Annotated[int, Field(ge=0, description="skip this many entries (the last page's next_offset)")] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_ENTRIES, description="at most this many entries")] = MAX_ENTRIES,
    ) -> out.Listed:  # fmt: skip
        """List remembered entries, a page at a time, narrowed by section, tag, key or conversation, with a
        count per tag; `next_offset` is where the next page starts (null after the last)."""
        listed = self._run(lambda: self.scopes.entries(section, tag, key, scope, conversation=conversation,
                                                       importance=importance))  # fmt: skip
        page = listed.entries[offset : offset + limit]
        entries: list[Any] = [{"source": source(e["path"], e["start_line"], e["end_line"]), "scope": e["scope"],
                    "section": e["section"], "key": e["key"], "tags": e["tags"], "text": e["text"][:240],
                    "date": e["date"], "conversation": e.get("conversation"), "importance": e.get("importance")}
                   for e in page]  # fmt: skip
        more = offset + len(page) < len(listed.entries)
        return {"entries": entries, "total": len(listed.entries), "next_offset": offset + len(page) if more else None,
                "tags": listed.tags}  # fmt: skip

    @runs("context")
    def memory_context(
        self, query: str | None = None,
        budget: Annotated[int | None, Field(ge=MIN_BUDGET, le=MAX_BUDGET,
                                            description="characters for both blocks (default 4000)")] = None,
        scope: ReadScope = "all",
    ) -> out.Context:  # fmt: skip
        """A prompt-ready memory block: the user's core preferences and decisions, then what is
        relevant to `query` (pass the user's last messages): `text` for the prompt, and the same as data
        (`stable`, `recall` with each item's source). `tier` says how recall answered: dense, keyword, or
        recent (nothing relevant was found)."""
        return self._run(lambda: self.scopes.context(query, budget, scope))  # what `context --json` gives

    @runs("status", "overview")
    def memory_status(self) -> out.Status:
        """The vault: files on disk and indexed, failures, the model and the store; and `memory`, per
        scope, what it holds for an agent: entries (current, superseded, keyed), the stable block's
        entries and characters, conversation summaries, proposals to review, entries recalled."""
        from memvault.verbs.entries import Overview

        status = self._run(self.vault.status)
        keys = ("vault", "files_on_disk", "files_indexed", "files_pending", "files_failed", "chunks", "embedder",
                "store", "failures")  # fmt: skip
        memory = self._run(lambda: {name: v.run(Overview()).to_json() for name, v in self.scopes.read("all")})
        return cast(out.Status, {**{k: status.get(k) for k in keys}, "memory": memory})
