"""The panel's writes: edit, forget (after a confirmation), correct, restore, approve and reject. Each
is one verb, the CLI's own. Edit, forget and correct name the entry by its version id and carry the
exact version the page read: when the entry is no longer that version, nothing is written and the
page shows what it read, what the person asked for and what the note holds now, side by side."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from memvault.scopes import Scopes
from memvault.vault.errors import MemvaultError
from memvault.web.pages import common, one_entry, scopes_of
from memvault.web.render import page
from memvault.web.security import CSRF_FIELD


async def _form(request: Request) -> FormData | Response:
    """The form, when it carries the session's form token (the Origin was checked by the guard already)."""
    form = await request.form()
    if not request.app.state.session.same(str(form.get(CSRF_FIELD, "")), request.app.state.session.csrf):
        return PlainTextResponse("refused: the form token is missing or wrong; reload the page", 403)
    return form


def _field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _done(where: str, message: str, **params: str) -> Response:
    return RedirectResponse(f"{where}?{urlencode({**params, 'done': message})}", 303)


def _tags(text: str) -> list[str]:
    return [t.lstrip("#") for t in text.replace(",", " ").split() if t.lstrip("#")]


def _vault(scopes: Scopes, scope: str) -> Any:
    return scopes.read(scope if scope in ("project", "user") else "project")[0][1]


def _still(scopes: Scopes, form: FormData) -> bool:
    """Whether the entry the form names is still the exact version the page read."""
    row = one_entry(scopes, _field(form, "scope"), _field(form, "id"))
    return row is not None and row["version"] == _field(form, "version")


def _conflict(request: Request, form: FormData, asked: str, error: str = "") -> Response:
    """What the page read, what was asked, and the note's lines there now: nothing was written."""
    from memvault.verbs.notes import Get

    path, _, _ = _field(form, "id").partition("#")
    line = int(_field(form, "line")) if _field(form, "line").isdigit() else 1
    try:
        now = _vault(scopes_of(request), _field(form, "scope")).run(Get(path, max(1, line - 3), line + 5))
        there, start = now.text, now.start_line
    except MemvaultError as exc:  # the note is gone, or shorter than that now
        there, start = f"({exc})", 1
    return page("conflict.html", 409, **common(request, was=_field(form, "was"), asked=asked, there=there,
                                               start=start, note=path, line=line, error=error,
                                               scope=_field(form, "scope")))  # fmt: skip


async def _write(request: Request, form: FormData, asked: str, run: Any) -> Any:
    """Run a versioned write: a conflict page when the entry is no longer the version read (before or during)."""
    scopes = scopes_of(request)
    if not await run_in_threadpool(_still, scopes, form):
        return _conflict(request, form, asked)
    try:
        return await run_in_threadpool(run, _vault(scopes, _field(form, "scope")))
    except MemvaultError as exc:
        if await run_in_threadpool(_still, scopes, form):
            raise  # the entry is as read: the refusal is about the request itself
        return _conflict(request, form, asked, str(exc))


async def edit(request: Request) -> Response:
    from memvault.verbs.edit import Edit

    form = await _form(request)
    if isinstance(form, Response):
        return form
    text, key, tags = _field(form, "text"), _field(form, "key").strip(), _tags(_field(form, "tags"))
    rated = _field(form, "importance")
    request_ = Edit(_field(form, "id"), _field(form, "version"), text, key or None, tags,
                    int(rated) if rated.isdigit() else None)  # fmt: skip
    asked = text + (f"  [key:: {key}]" if key else "") + "".join(f" #{t}" for t in tags)
    done = await _write(request, form, asked, lambda vault: vault.run(request_))
    if isinstance(done, Response):
        return done
    said = "nothing to change" if done.status == "unchanged" else f"saved {done.path}:{done.line}"
    return _done("/entries", said, scope=_field(form, "scope"))


async def forget(request: Request) -> Response:
    from memvault.verbs.entries import Forget

    form = await _form(request)
    if isinstance(form, Response):
        return form
    if _field(form, "confirm") != "yes":
        row = await run_in_threadpool(one_entry, scopes_of(request), _field(form, "scope"), _field(form, "id"))
        if row is None or row["version"] != _field(form, "version"):
            return _conflict(request, form, "(forget it)")
        return page("confirm.html", **common(request, row=row))
    forget_it = Forget(_field(form, "id"), version=_field(form, "version"))  # refused under the lock if changed
    done = await _write(request, form, "(forget it)", lambda vault: vault.run(forget_it))
    if isinstance(done, Response):
        return done
    return _done("/trash", f"forgot {done.path}:{done.line}; it is in the trash as {done.id}")


async def correct(request: Request) -> Response:
    from memvault.verbs.entries import Correct

    form = await _form(request)
    if isinstance(form, Response):
        return form
    text, tags = _field(form, "text"), _tags(_field(form, "tags"))
    asked = Correct(text, _field(form, "id"), None, tags or None, _field(form, "version"))  # refused if changed
    run = lambda vault: vault.run(asked)  # noqa: E731
    done = await _write(request, form, text, run)
    if isinstance(done, Response):
        return done
    return _done("/entries", f"corrected {done.old_path}:{done.old_line}; the correction is in {done.path}",
                 scope=_field(form, "scope"))  # fmt: skip


async def _simple(request: Request, make: Any) -> Any:
    """An unversioned write (a trash id, a proposal id name what they name for good): form token, then the verb."""
    form = await _form(request)
    if isinstance(form, Response):
        return form
    vault = _vault(scopes_of(request), _field(form, "scope"))
    return await run_in_threadpool(vault.run, make(form))


async def restore(request: Request) -> Response:
    from memvault.verbs.entries import Restore

    done = await _simple(request, lambda form: Restore(_field(form, "id")))
    if isinstance(done, Response):
        return done
    where = f"{done.path}:{done.line}" if done.exact else f"the end of its section in {done.path}"
    return _done("/trash", f"restored {done.id} to {where}")


async def approve(request: Request) -> Response:
    from memvault.verbs.extract import Approve

    done = await _simple(request, lambda form: Approve(_field(form, "id"), _field(form, "section").strip() or None,
                                                       _field(form, "key").strip() or None))  # fmt: skip
    if isinstance(done, Response):
        return done
    return _done("/review", f"approved: written to {done.path} § {done.section}")


async def reject(request: Request) -> Response:
    from memvault.verbs.extract import Reject

    done = await _simple(request, lambda form: Reject(_field(form, "id")))
    if isinstance(done, Response):
        return done
    return _done("/review", f"rejected {done.id}")
