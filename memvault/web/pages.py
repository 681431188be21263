"""The panel's pages that only read: entries, one entry, the trash, the review queue, what a prompt is
given, the days and a note, and health. Each one runs verbs (through `memvault.scopes.Scopes`, both
vaults) and hands their replies to a template."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from memvault.scopes import READ_SCOPES, Scopes
from memvault.web.render import page
from memvault.web.rows import named, narrowed, paged

PAGE_SIZE = 100
RECENT_PROMPTS = 10  # the inspector's prompts kept while the panel runs, to ask again in one click


def scopes_of(request: Request) -> Scopes:
    return request.app.state.scopes


def common(request: Request, **context: Any) -> dict[str, Any]:
    """What every template gets: the form token, the page's name, and a message a write left (`done`)."""
    return {"csrf": request.app.state.session.csrf, "path": request.url.path, "done": request.query_params.get("done"),
            "scopes": READ_SCOPES, **context}  # fmt: skip


def arg(request: Request, name: str, default: str = "") -> str:
    return request.query_params.get(name, default).strip()


def home(request: Request) -> Response:
    return RedirectResponse("/entries", 303)


def entries(request: Request) -> Response:
    scope = arg(request, "scope", "all")
    section, tag, conversation = arg(request, "section"), arg(request, "tag"), arg(request, "conversation")
    listed = scopes_of(request).entries(section or None, tag or None, None, scope, None, conversation or None)
    rows = narrowed(listed.entries, arg(request, "from"), arg(request, "to"), arg(request, "q"))
    number = int(arg(request, "page", "1")) if arg(request, "page", "1").isdigit() else 1
    shown = paged(rows, number, PAGE_SIZE)
    sections = sorted({r["section"] for r in listed.entries if r["section"]})
    filters = {"scope": scope, "section": section, "tag": tag, "conversation": conversation,
               "from": arg(request, "from"), "to": arg(request, "to"), "q": arg(request, "q")}  # fmt: skip
    return page("entries.html", **common(request, page=shown, filters=filters, sections=sections,
                                         tags=list(listed.tags.items())[:200]))  # fmt: skip


def one_entry(scopes: Scopes, scope: str, ident: str) -> dict[str, Any] | None:
    """The entry with the version id `ident` in `scope`'s vault, as the panel names it; None when no entry has it."""
    from memvault.verbs.entries import ListEntries

    name, vault = scopes.read(scope)[0]
    found = vault.run(ListEntries(key=ident)).entries
    return named({"scope": name, **found[0]}) if len(found) == 1 else None


def entry(request: Request) -> Response:
    scope, ident = arg(request, "scope", "project"), arg(request, "id")
    row = one_entry(scopes_of(request), scope, ident)
    if row is None:
        return page("error.html", 404, **common(request, message=f"{ident}: no entry has this id now (it changed "
                                                 "or is gone); find it again in the list"))  # fmt: skip
    return page("entry.html", **common(request, row=row))


def _each(request: Request, scope: str, run: Any) -> list[tuple[str, Any]]:
    """A verb's reply from each vault of `scope` (`all`: both that exist)."""
    return [(name, run(vault)) for name, vault in scopes_of(request).read(scope)]


def trash(request: Request) -> Response:
    from memvault.verbs.entries import Trash

    scope = arg(request, "scope", "all")
    items = [{"scope": name, **item} for name, reply in _each(request, scope, lambda v: v.run(Trash()))
             for item in reply.items]  # fmt: skip
    items.sort(key=lambda t: t["removed"], reverse=True)
    return page("trash.html", **common(request, items=items, scope=scope))


def review(request: Request) -> Response:
    from memvault.verbs.extract import Review

    scope = arg(request, "scope", "all")
    proposals = [{"scope": name, **p} for name, reply in _each(request, scope, lambda v: v.run(Review()))
                 for p in reply.proposals]  # fmt: skip
    return page("review.html", **common(request, proposals=proposals, scope=scope))


def context(request: Request) -> Response:
    from memvault.verbs.context import DEFAULT_BUDGET, prompt_block, stable_block

    prompt, scope = arg(request, "q"), arg(request, "scope", "all")
    budget_arg = arg(request, "budget", str(DEFAULT_BUDGET))
    budget = int(budget_arg) if budget_arg.isdigit() else DEFAULT_BUDGET
    blocks = None
    if "q" in request.query_params:
        try:
            blocks = scopes_of(request).context(prompt or None, budget, scope, explain=True)
        finally:  # a search opened the index: let go of it, or every agent's recall falls back to the notes' text
            for _, vault in scopes_of(request).read(scope):
                vault.close_index()
    hooked = None
    if blocks is not None:  # what Claude Code's hooks add, by the same functions
        hooked = {"start": stable_block(blocks), "prompt": prompt_block(blocks) if prompt else None}
    recent: list[str] = request.app.state.recent_prompts  # this panel's, newest first, to pick one again
    if prompt:
        recent[:] = [prompt, *[p for p in recent if p != prompt]][:RECENT_PROMPTS]
    return page("context.html", **common(request, prompt=prompt, budget=budget, scope=scope, blocks=blocks,
                                         hooked=hooked, columns=_columns(blocks), recent=recent))  # fmt: skip


def _columns(blocks: dict[str, Any] | None) -> dict[str, list[str]]:
    """Every field the context verb gave its items, text last: shown as they come, whatever it adds."""
    out: dict[str, list[str]] = {}
    for part in ("stable", "recall", "left_out"):
        keys = dict.fromkeys(k for item in (blocks or {}).get(part, []) for k in item if k != "text")
        out[part] = [*keys, "text"]
    return out


def days(request: Request) -> Response:
    from memvault.verbs.days import Catalog, Recent
    from memvault.web.calendar import WEEKDAYS, months

    scope, year = arg(request, "scope", "project"), arg(request, "year")
    name, vault = scopes_of(request).read(scope)[0]
    catalog = vault.run(Catalog(int(year) if year.isdigit() else None))
    listed = scopes_of(request).entries(scope=name)
    per_day = Counter(r["date"] for r in listed.entries if r["path"].startswith("daily/") and r["date"])
    noted = {day["date"]: day["summary"] for rows in catalog.years.values() for day in rows}  # every day with a note
    today = dt.date.today()
    shown = months(noted, per_day, today, int(year) if year.isdigit() else None)
    recent = vault.run(Recent(7)).days
    return page("days.html", **common(request, months=shown, weekdays=WEEKDAYS, recent=recent, scope=name,
                                      today=today.isoformat()))  # fmt: skip


def note(request: Request) -> Response:
    from memvault.verbs.notes import Get

    scope, ref = arg(request, "scope", "project"), arg(request, "path", "today")
    start = arg(request, "start", "1")
    name, vault = scopes_of(request).read(scope)[0]
    got = vault.run(Get(ref, int(start) if start.isdigit() and int(start) > 0 else 1))
    return page("note.html", **common(request, got=got, scope=name, ref=ref))


def health(request: Request) -> Response:
    """Each vault's figures, charts and daemon events; `live=1` reloads the page every 5 s (a meta refresh:
    the content security policy lets no script fetch anything)."""
    from memvault.web.health import vault_health

    today = dt.date.today()
    vaults = [vault_health(name, vault, today) for name, vault in scopes_of(request).read("all")]
    return page("health.html", **common(request, vaults=vaults, live=arg(request, "live") == "1"))
