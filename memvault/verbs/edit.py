"""`edit`: a person's change to one entry's text, key or tags, in place (the memory panel's edit),
refused when the entry is no longer the version the person read (`vault.edit`)."""

from __future__ import annotations

from dataclasses import dataclass

from memvault.protocol import Message, Request
from memvault.vault.errors import UsageError
from memvault.verbs.runtime import WriteRuntime


@dataclass(frozen=True)
class EditedEntry(Message):
    """The note changed and the entry's line; `status` edited or unchanged; `trashed`: the old lines' trash id."""

    path: str
    line: int
    status: str
    trashed: str | None = None
    indexed: bool = False


@dataclass(frozen=True)
class Edit(Request, op="edit", reply=EditedEntry, writes=True):
    """Replace one entry (`id`: `PATH#@…`, as a search hit or `list` names it) with `text`, `key` and
    `tags`, only if its text is still `version` (`vault.forget.entry_version`)."""

    id: str
    version: str
    text: str
    key: str | None = None
    tags: list[str] | None = None
    importance: int | None = None  # 1-5; 0: none; left out: as it is

    def check(self) -> None:
        if self.importance is not None and self.importance not in range(6):
            raise UsageError(f"importance is 1 to 5 (0: none), not {self.importance}")


def edit(rt: WriteRuntime, request: Edit) -> EditedEntry:
    from memvault.vault.edit import edit as edit_entry

    done = edit_entry(rt.layout, request.id, request.version, request.text, request.key, tuple(request.tags or ()),
                      importance=request.importance)  # fmt: skip
    rel = rt.layout.relative(done.path)
    indexed = rt.written([rel]) if done.status == "edited" else False
    return EditedEntry(rel, done.line, done.status, done.trashed, indexed)
