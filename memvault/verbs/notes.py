"""The verbs that write and read notes: `note` (today's daily note), `remember` (a MEMORY.md section),
`get` (a note's lines, or one of its sections) and `sections` (MEMORY.md's sections)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from memvault.protocol import Message, Request
from memvault.vault.entries import entry_ref, vault_entries, with_key
from memvault.vault.errors import MemvaultError, UsageError
from memvault.vault.fileio import read_note
from memvault.vault.locator import parse_place
from memvault.vault.paths import note_path, parse_date
from memvault.vault.sections import find_sections
from memvault.verbs.runtime import VaultRuntime, WriteRuntime

if TYPE_CHECKING:  # the save path (and frontmatter) is imported by the verbs that save, not by `get`
    from memvault.vault.saving import SavedEntry


@dataclass(frozen=True)
class Saved(Message):
    """What a save did, the same through every door: the note it went to (vault-relative), its
    section ("daily" in a daily note), and `status`: added, updated (the entry with its key replaced,
    the old one kept in the trash as `trashed`), superseded (the entry with its key is on a frozen
    day: it was marked, at `superseded`, PATH:LINE), unchanged (already remembered) or merged (already
    remembered, and given the tags or key this save brought: one fact, one entry). `indexed`: the
    daemon indexed it before replying; `scope`: the vault a routed save went to."""

    path: str
    section: str
    status: str = "added"
    trashed: str | None = None
    superseded: str | None = None
    created_section: bool = False
    indexed: bool = False
    scope: str | None = None


@dataclass(frozen=True)
class Got(Message):
    """Lines of a note, 1-based and inclusive; `more` when what was asked for (the lines, the section, or
    the note to its end) goes on past what was sent: `GET_LINES` or `GET_CHARS` cut it."""

    path: str
    start_line: int
    end_line: int
    text: str
    more: bool = False


@dataclass(frozen=True)
class Note(Request, op="note", reply=Saved, writes=True):
    text: str
    date: str | None = None
    section: str = "conversation"
    key: str | None = None
    tags: list[str] | None = None


@dataclass(frozen=True)
class Remember(Request, op="remember", reply=Saved, writes=True):
    text: str
    section: str | None = None
    type: str | None = None
    key: str | None = None
    tags: list[str] | None = None
    importance: int | None = None  # 1-5 (seed 003); 4 or more keeps it in the stable block
    # a decision in an ADR's shape (seed 003): why it was taken, and what follows from it, as its lines
    context: str | None = None
    consequences: str | None = None

    def check(self) -> None:
        from memvault.vault.importance import check_importance

        check_importance(self.importance)
        for name, given in (("context", self.context), ("consequences", self.consequences)):
            if given is not None and not given.strip():
                raise UsageError(f"an empty {name}: leave it out")


@dataclass(frozen=True)
class Get(Request, op="get", reply=Got):
    """A note (`memory`, a date or a vault-relative path), its lines `start_line`-`end_line`, or one
    `##` section of it (from `start_line` on, when that is inside it); at most `GET_LINES` lines and
    `GET_CHARS` characters."""

    path: str
    start_line: int = 1
    end_line: int | None = None
    section: str | None = None

    def check(self) -> None:
        if self.start_line < 1 or (self.end_line is not None and self.end_line < self.start_line):
            raise UsageError("lines are 1-based, and the end is not before the start")


@dataclass(frozen=True)
class SectionList(Message):
    """MEMORY.md's `##` sections in file order: `title`, `items` (its top-level entries) and `line`
    (its heading's, 1-based)."""

    sections: list[dict[str, Any]]

    def human(self) -> str:
        width = max(len(s["title"]) for s in self.sections)
        return "\n".join(f"{s['title']:<{width}}  {s['items']}" for s in self.sections)


@dataclass(frozen=True)
class Sections(Request, op="sections", reply=SectionList):
    """List MEMORY.md's sections with their item counts: where `remember --section` saves.

    A missing MEMORY.md is an error that says to run `memvault init`."""


def sections(rt: VaultRuntime, request: Sections) -> SectionList:
    from memvault.vault.memory_file import list_sections

    found = list_sections(rt.layout)
    if not found:
        raise MemvaultError(f"{rt.layout.relative(rt.layout.memory_md)}: no sections: run `memvault init` first")
    return SectionList([{"title": s.title, "items": s.items, "line": s.start + 1} for s in found])


def _saved(rt: WriteRuntime, saved: SavedEntry, section: str) -> Saved:
    return Saved(rt.layout.relative(saved.path), section, saved.status, saved.trashed, saved.superseded,
                 saved.created_section, rt.written(saved.notes(rt.layout)))  # fmt: skip


def note(rt: WriteRuntime, request: Note) -> Saved:
    from memvault.vault.daily import append_daily

    day = parse_date(request.date) if request.date else None
    saved = append_daily(rt.layout, request.text, day=day, section=request.section, key=request.key,
                         tags=tuple(request.tags or ()))  # fmt: skip
    return _saved(rt, saved, "daily")


ADR_LABELS = {"en": ("Context", "Consequences"), "zh": ("背景", "影响")}


def _adr(rt: WriteRuntime, request: Remember) -> str:
    """The decision, then its context and consequences as lines of the entry, labelled in the vault's language."""
    if request.context is None and request.consequences is None:
        return request.text
    from memvault.vault.daily import vault_lang

    labels = ADR_LABELS[vault_lang(rt.layout)]
    given = zip(labels, (request.context, request.consequences), strict=True)
    said = [f"{label}: {' '.join(value.split())}" for label, value in given if value]
    return "\n".join([request.text.strip(), *said])


def remember(rt: WriteRuntime, request: Remember) -> Saved:
    from memvault.vault.memory_file import remember as remember_in_file

    rated = (("importance", str(request.importance)),) if request.importance is not None else ()
    saved = remember_in_file(rt.layout, _adr(rt, request), section=request.section, kind=request.type,
                             key=request.key, tags=tuple(request.tags or ()), fields=rated)  # fmt: skip
    return _saved(rt, saved, saved.section)


GET_LINES = 400
GET_CHARS = 20_000


def get(rt: VaultRuntime, request: Get) -> Got:
    """`path` may name its lines too, as a hit's source does (`MEMORY.md#L3-L6`, `daily/….md:12`),
    when no other lines are asked for, or an entry by its id (`@…`, `PATH#ID`): its lines."""
    asked = request.path
    place = parse_place(asked) if (request.start_line, request.end_line) == (1, None) else None
    if place is None and entry_ref(asked) is not None:  # an entry's id, as a hit carries it
        found = with_key(vault_entries(rt.layout), asked)
        if len(found) != 1:
            raise UsageError(f"{asked}: {'no entry has this id' if not found else 'more than one entry has this id'}")
        place = (found[0].path, found[0].start_line, found[0].end_line)
    if place is not None and not (rt.layout.root / asked).is_file():
        request = replace(request, path=place[0], start_line=place[1], end_line=place[2])
    path = note_path(rt.layout, request.path)
    rel = rt.layout.relative(path)
    if not path.is_file():
        raise UsageError(f"{rel}: no such note")
    lines = [line.rstrip("\r") for line in read_note(path, rel, layout=rt.layout).text.split("\n")]
    start, end = request.start_line, request.end_line or len(lines)
    if request.section is not None:
        sections = find_sections(lines, 2)
        titled = next((s for s in sections if s.title == request.section), None)
        if titled is None:
            there = ", ".join(repr(s.title) for s in sections) or "none"
            raise UsageError(f"{rel} has no section {request.section!r} (its sections: {there})")
        start, end = max(start, titled.start + 1), titled.end  # a start_line in it: a capped read going on
        if start > end:
            raise UsageError(f"{rel}: section {request.section!r} ends at line {end}: line {start} is past it")
    elif start > len(lines):
        raise UsageError(f"{rel} has {len(lines)} lines: line {start} is past its end")
    last = min(end, len(lines))
    end = min(last, start + GET_LINES - 1)
    used, whole = -1, start - 1  # the whole lines within GET_CHARS; a first line longer than that is cut, alone
    for i in range(start - 1, end):
        used += len(lines[i]) + 1
        if used > GET_CHARS:
            break
        whole = i + 1
    end = max(start, whole)
    text = "\n".join(lines[start - 1 : end])[:GET_CHARS]
    return Got(rel, start, end, text, end < last)
