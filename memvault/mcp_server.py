"""`memvault mcp`: the vault as an MCP server over stdio, one tool per verb.

Each tool translates its typed arguments into a verb request and runs it through `Scopes` (the
project vault and the user vault), so a tool does exactly what the CLI does. The verb runs in the
vault's daemon, which this server starts when none runs, so a saved entry is searchable in the
next call. Outputs are bounded (hits, lines, characters); every hit and item names its source as
`path#Lstart-Lend`. A bad argument or a refused write is a tool error with one line, never a crash
of the server.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from memvault import verbs
from memvault.api import Vault
from memvault.context import DEFAULT_BUDGET
from memvault.scopes import Scopes
from search.options import build_options
from vault.errors import MemvaultError

log = logging.getLogger("memvault")

MAX_HITS = 50
MAX_ENTRIES = 200
INSTRUCTIONS = """\
memvault is this user's long-term memory: Markdown notes (a daily log and a sectioned MEMORY.md) in a
project vault, and a user vault for what holds in every project. Search it before you answer questions
about the user, the project or past work, and before you save, so you update an entry instead of adding
a duplicate. Save lasting facts: the user's preferences, decisions and their reasons, constraints,
solutions to problems that took effort, configuration. Do not save one-off chatter, secrets or
anything the user asked you to keep out. Call memory_context at the start of a task for a prompt-ready
block."""


def _source(path: str, start: int, end: int) -> str:
    return f"{path}#L{start}-L{end}"


def build_server(vault: Vault) -> Any:
    """The MCP server for one project vault (and the user vault beside it)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("memvault", instructions=INSTRUCTIONS)
    scopes = Scopes(vault)

    def run(call: Any) -> Any:
        try:
            return call()
        except MemvaultError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    def memory_search(
        query: str,
        limit: int = 10,
        mode: Literal["hybrid", "bm25", "vector", "substring"] = "hybrid",
        scope: Literal["all", "project", "user"] = "all",
        date_from: str | None = None,
        date_to: str | None = None,
        kind: Literal["daily", "memory", "other"] | None = None,
        section: str | None = None,
        tag: str | None = None,
        path: str | None = None,
        min_similarity: float | None = None,
        decay: float | None = None,
        mmr: float | None = None,
        dates: Literal["auto", "boost", "filter", "off"] | None = None,
    ) -> dict[str, Any]:
        """Search the memory (hybrid: meaning and keywords). Dates are YYYY-MM-DD; `kind` daily
        notes or MEMORY.md; `min_similarity` (a cosine, about 0.8 for the default model) drops
        weak hits, and `floor.passed == 0` then means nothing relevant is remembered. `decay`: a
        half-life in days for daily-note hits; `mmr`: 0..1, lower gives more varied hits; `dates`:
        how date words in the query ("last week", "上周") act. Each hit has its `source`
        (path#Lstart-Lend, for memory_get) and `scope`. At most 50 hits."""

        def call() -> dict[str, Any]:
            options = build_options(mode=mode, limit=min(max(limit, 1), MAX_HITS), date_from=date_from,
                                    date_to=date_to, kind=kind, section=section, tag=tag, path=path,
                                    min_similarity=min_similarity, decay=decay, mmr=mmr, dates=dates)  # fmt: skip
            result = scopes.search_result(verbs.Search(query, options), scope)
            hits = [{"source": _source(h.path, h.start_line, h.end_line), "scope": h.scope,
                     "heading": list(h.heading), "snippet": h.snippet, "score": round(h.score, 6)}
                    for h in result.hits]  # fmt: skip
            return {"hits": hits, "answered_by": result.source, "reason": result.reason, "floor": result.floor,
                    "dates": result.dates}  # fmt: skip

        return run(call)

    @server.tool()
    def memory_get(
        path: str,
        start_line: int = 1,
        end_line: int | None = None,
        section: str | None = None,
        scope: Literal["project", "user"] = "project",
    ) -> dict[str, Any]:
        """Read a note: `path` is a source's path (or `memory` for MEMORY.md, or a date for that
        day's note), with a line range (1-based, inclusive) or one `##` section. At most 400 lines."""
        request = verbs.Get(path, start_line, end_line, section)
        got = run(lambda: scopes.one(scope)[1].run(request))
        return {"source": _source(got.path, got.start_line, got.end_line), "text": got.text, "more": got.more}

    @server.tool()
    def memory_save(
        text: str,
        type: Literal["preference", "architecture", "solution", "discovery", "config", "conversation", "daily"]
        | None = None,
        section: str | None = None,
        key: str | None = None,
        tags: list[str] | None = None,
        scope: Literal["project", "user"] | None = None,
    ) -> dict[str, Any]:
        """Save one lasting fact about the user or the project: a preference, a decision and its
        reason, a constraint, a solution that took effort, a setting; not one-off chatter, never a
        secret. Search first (memory_search): if the fact is there, save it under the same `key`
        to update it rather than adding a second one. With `type` or `section` it goes to MEMORY.md (preference,
        architecture, solution, discovery, config have their sections); without, to today's daily
        note. Give a `key` (a short name, e.g. `frontend-stack`) to a fact that may change: saving
        the same key again replaces it in place. Saving the same text twice is a no-op. A key
        starting with `user_`, or a tag user/preference/profile/personal, saves to the user vault."""

        def call() -> dict[str, Any]:
            name, target = scopes.save(scope, key, tags)
            if type is None and section is None:
                noted = target.run(verbs.Note(text, key=key, tags=tags))
                reply = {"status": noted.status, "path": noted.path, "section": "daily", "scope": name}
                return {**reply, **({"superseded": noted.superseded} if noted.superseded else {})}
            saved = target.run(verbs.Remember(text, section, type, key, tags))
            reply = {"status": saved.status, "path": saved.path, "section": saved.section, "scope": name}
            return {**reply, **({"superseded": saved.superseded} if saved.superseded else {})}

        return run(call)

    @server.tool()
    def memory_forget(
        key: str | None = None,
        match: str | None = None,
        where: str | None = None,
        scope: Literal["project", "user"] | None = None,
    ) -> dict[str, Any]:
        """Remove one entry, by its `key`, a piece of its text (`match`) or its place (`where`:
        PATH:LINE). It goes to the trash (a person can restore it); when more than one entry
        matches, nothing is removed and the candidates are named."""

        def call() -> dict[str, Any]:
            moved = scopes.one(scope, key)[1].run(verbs.Forget(where or key, match))
            return {"removed": f"{moved.path}:{moved.line}", "trash_id": moved.id}

        return run(call)

    @server.tool()
    def memory_correct(
        text: str,
        key: str | None = None,
        match: str | None = None,
        where: str | None = None,
        scope: Literal["project", "user"] | None = None,
    ) -> dict[str, Any]:
        """Correct a fact that was wrong or changed, keeping the history: `text` is written to
        today's note pointing at the old entry (named by `key`, a piece of its text `match`, or
        `where`: PATH:LINE), which is marked superseded. Search then ranks the correction first."""

        def call() -> dict[str, Any]:
            done = scopes.one(scope, key)[1].run(verbs.Correct(text, where or key, match))
            return {"correction": done.path, "status": done.status, "superseded": f"{done.old_path}:{done.old_line}"}

        return run(call)

    @server.tool()
    def memory_extract(messages: list[dict[str, Any]]) -> dict[str, Any]:
        """Hand over a finished conversation (`[{role, content}]`): its summary goes to today's note,
        and the lasting statements the user made go to the review queue for a person to approve
        (never straight into MEMORY.md). Returns the proposals and any warnings."""
        request = verbs.Extract(json.dumps(messages, ensure_ascii=False), "messages")
        done = run(lambda: vault.run(request))
        return {"path": done.path, "proposals": [{k: p[k] for k in ("id", "text", "kind", "seen")}
                                                 for p in done.proposals], "warnings": done.warnings}  # fmt: skip

    @server.tool()
    def memory_list(
        section: str | None = None,
        tag: str | None = None,
        key: str | None = None,
        scope: Literal["all", "project", "user"] = "all",
    ) -> dict[str, Any]:
        """List remembered entries (at most 200), narrowed by section, tag or key, with a count per tag."""
        listed = run(lambda: scopes.entries(section, tag, key, scope))
        entries = [{"source": _source(e["path"], e["start_line"], e["end_line"]), "scope": e["scope"],
                    "section": e["section"], "key": e["key"], "tags": e["tags"], "text": e["text"][:240],
                    "date": e["date"]} for e in listed.entries[:MAX_ENTRIES]]  # fmt: skip
        return {"entries": entries, "total": len(listed.entries), "tags": listed.tags}

    @server.tool()
    def memory_context(
        query: str | None = None, budget: int = DEFAULT_BUDGET, scope: Literal["all", "project", "user"] = "all"
    ) -> dict[str, Any]:
        """A prompt-ready memory block: the user's core preferences and decisions, then what is
        relevant to `query` (pass the user's last messages). `tier` says how recall answered:
        dense, keyword, or recent (nothing relevant was found)."""
        blocks = run(lambda: scopes.context(query, min(max(budget, 200), 20_000), scope))
        return {"text": blocks["text"], "tier": blocks["tier"]}

    @server.tool()
    def memory_status() -> dict[str, Any]:
        """The vault: files on disk and indexed, failures, the model and the store."""
        status = run(vault.status)
        keys = ("vault", "files_on_disk", "files_indexed", "files_pending", "files_failed", "chunks", "embedder",
                "store", "failures")  # fmt: skip
        return {k: status.get(k) for k in keys}

    return server


def serve(vault: Vault) -> None:
    """Start the vault's daemon when none runs (and the user vault's, when there is one), then serve stdio."""
    with Scopes(vault) as scopes:
        for _, each in scopes.read("all"):
            if not each.daemon_status()["running"]:
                try:
                    each.start_daemon()
                except MemvaultError as exc:  # the tools still work, in this process
                    log.warning(f"{each.root}: no daemon ({exc}); answering here")
    build_server(vault).run("stdio")
