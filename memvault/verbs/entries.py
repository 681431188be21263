"""The entry verbs: list, forget (and purge), clear, restore, trash and correct: the requests,
replies and functions that manage single memories."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from memvault.protocol import Message, Request, arg
from memvault.vault.correct import correct as correct_entry
from memvault.vault.correct import correction_place
from memvault.vault.entries import collect, entry_key
from memvault.vault.errors import UsageError
from memvault.vault.forget import MovedEntry
from memvault.vault.forget import clear as clear_entries
from memvault.vault.forget import forget as forget_entry
from memvault.vault.forget import restore as restore_entry
from memvault.vault.locator import check_selector
from memvault.vault.paths import parse_date
from memvault.vault.trash import list_trashed
from memvault.verbs.runtime import EntryRuntime


# replies ------------------------------------------------------------------
@dataclass(frozen=True)
class Moved(Message):
    """An entry moved to the trash (`forget`) or back (`restore`): its note, line and trash id;
    `exact` is False when a restore could not use the old line (the note changed) and appended it
    to its section instead."""

    path: str
    line: int
    id: str
    exact: bool = True
    indexed: bool = False
    count: int = 1  # a restored `clear` batch: how many entries went back (`path`, `line`: the first)
    scrubbed: int = 0  # forget --purge: copies removed from the trash (`id` is then "": none kept)
    elsewhere: list[str] = field(default_factory=list)  # forget --purge: entries still holding the text
    # daily notes whose summary told it: purged from (--purge), struck (forget), lifted (restore)
    summaries: list[str] = field(default_factory=list)
    resumed: bool = False  # forget --purge: this finished a purge an earlier run was cut short in


@dataclass(frozen=True)
class Forgot(Moved):
    """What `forget` moved to the trash, or purged (`id` "": no copy kept)."""

    def human(self) -> str:
        if self.id:
            told = f"; its clause struck in the summary of {', '.join(self.summaries)}" if self.summaries else ""
            return f"forgot {self.path}:{self.line}; it is in the trash as {self.id} (memvault restore {self.id}){told}"
        told = f", its clause taken out of the summary of {', '.join(self.summaries)}" if self.summaries else ""
        again = " (finishing the purge an earlier run was cut short in)" if self.resumed else ""
        return (f"purged {self.path}:{self.line}{again}: no copy kept, {self.scrubbed} older copies removed (from "
                f"the trash and the review queue){told}, none left in the index")  # fmt: skip

    def notes(self) -> list[str]:
        return [f"the same text is still in {', '.join(self.elsewhere)}"] if self.elsewhere else []


@dataclass(frozen=True)
class Restored(Moved):
    """What `restore` put back: one entry, or a cleared batch of `count`."""

    def human(self) -> str:
        if self.count > 1:
            how = "each where it was" if self.exact else "some at the end of their section (their note changed)"
            return f"restored {self.count} entries of batch {self.id}, {how}"
        where = f"{self.path}:{self.line}" if self.exact else f"the end of its section in {self.path} (it changed)"
        told = f"; the summary of {', '.join(self.summaries)} tells it again" if self.summaries else ""
        return f"restored {self.id} to {where}{told}"


M = TypeVar("M", bound=Moved)


@dataclass(frozen=True)
class Cleared(Message):
    """What `clear` moved to the trash (or, with `dry_run`, would move): `count` entries of `paths`,
    restored together by `restore BATCH`."""

    batch: str
    count: int
    paths: list[str]
    dry_run: bool = False
    indexed: bool = False


@dataclass(frozen=True)
class TrashList(Message):
    items: list[dict[str, Any]]

    def human(self) -> str:
        """One line per trashed entry: its id, where it was, when and why, its first 80 characters."""
        return "\n".join(f"{t['id']}  {t['origin']}:{t['line']}  {t['removed']}  {t['reason']}  "
                         f"{' '.join(t['text'].split())[:80]}" for t in self.items) or "the trash is empty"  # fmt: skip


@dataclass(frozen=True)
class Listed(Message):
    """Entries as `vault.entries.Entry` fields, with `superseded_by` (where a superseded entry's
    correction is), `last_recalled` and `recalled` (when and how often searches served by the daemon
    returned it), and how many entries carry each tag."""

    entries: list[dict[str, Any]]
    tags: dict[str, int]


@dataclass(frozen=True)
class Corrected(Message):
    """The correction written to `path` (`status`: added, or unchanged when it was there already)
    and where the entry it corrects, now marked superseded, is."""

    path: str
    status: str
    old_path: str
    old_line: int
    indexed: bool = False
    summaries: list[str] = field(default_factory=list)  # daily notes whose clause telling the old fact it struck


# requests -----------------------------------------------------------------
@dataclass(frozen=True)
class ListEntries(Request, op="list", reply=Listed):
    """The entries of the vault's notes, narrowed by section, tag and key."""

    section: str | None = None
    tag: str | None = None
    key: str | None = None
    unused_since: str | None = None  # YYYY-MM-DD: only entries no search has returned since that day
    conversation: str | None = None  # only the entries of this conversation (`[conversation:: ID]`)
    importance: int | None = None  # only the entries of this importance or more (`[importance:: N]`)

    def check(self) -> None:
        from memvault.vault.importance import check_importance

        if self.unused_since is not None:
            parse_date(self.unused_since)
        check_importance(self.importance)


@dataclass(frozen=True)
class Forget(Request, op="forget", reply=Forgot, writes=True):
    """Move one entry to the trash: by KEY, ID, PATH:LINE or --match TEXT.

    `key` names it by its key, its id or its place (`PATH:LINE`, `PATH#L5-L7`), `match` by a piece of its
    text; `purge` keeps no copy in the trash or the index."""

    key: str | None = field(default=None, metadata={"positional": True, "help": "the entry's key, its id (a "
                            "hit's entry_id), or PATH:LINE / PATH#L5-L7"})  # fmt: skip
    match: str | None = arg("a piece of the entry's text (refused when more than one entry holds it)", None)
    purge: bool = arg("for a secret: keep no copy, in the trash or the index", False)
    # the exact text a person read (`vault.forget.entry_version`), refused if changed since: the panel's
    version: str | None = field(default=None, metadata={"door": False})

    def check(self) -> None:
        check_selector(self.key, self.match)
        if self.purge and self.version is not None:
            raise UsageError("a purge takes no version: it removes what it finds, copies included")


@dataclass(frozen=True)
class Restore(Request, op="restore", reply=Restored, writes=True):
    """Put a forgotten entry back where it was, or a whole cleared batch."""

    id: str = arg("its trash id, or the batch id a clear printed (see memvault trash)")


@dataclass(frozen=True)
class Clear(Request, op="clear", reply=Cleared, writes=True):
    """Every entry of one MEMORY.md `section`, or of every note (`all`), to the trash. Nothing moves
    without `yes`: the request is refused with what it would move, unless it is a `dry_run`."""

    section: str | None = None
    all: bool = False
    yes: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Trash(Request, op="trash", reply=TrashList):
    """List the entries in the trash with their id, origin and time."""


@dataclass(frozen=True)
class Correct(Request, op="correct", reply=Corrected, writes=True):
    """Correct one entry (named as `Forget` names it) with `text`, written to today's note."""

    text: str
    key: str | None = None
    match: str | None = None
    tags: list[str] | None = None
    version: str | None = None  # the exact text read (`vault.forget.entry_version`): refused if changed since

    def check(self) -> None:
        check_selector(self.key, self.match)


@dataclass(frozen=True)
class Overviewed(Message):
    """What the vault holds for an agent (seed 002's `/memory status`): its entries (`current`,
    `superseded`, `keyed`), the stable block every prompt carries (`stable_entries`, `stable_chars`
    at the default budget), the conversation summaries `extract` wrote, the proposals waiting in
    REVIEW.md, and how many entries searches the daemon served have returned (`recalled`, `recalls`); the
    latest summary's size, and the recall errors with the last one and its time."""

    current: int
    superseded: int
    keyed: int
    stable_entries: int
    stable_chars: int
    summaries: int
    review: int
    recalled: int
    recalls: int
    latest_summary_chars: int = 0  # the latest conversation summary, as one line
    recall_errors: int = 0  # `context` answered from the notes' text, not the index (`verbs.recall_errors`)
    last_recall_error: str | None = None
    last_recall_error_at: str | None = None
    memory_updated: str | None = None  # when MEMORY.md last changed (seed 003's lastUpdated), local time
    daily_notes: int = 0  # the days with a note (seed 003's statistics)
    sections: int = 0  # MEMORY.md's `##` sections


@dataclass(frozen=True)
class Overview(Request, op="overview", reply=Overviewed):
    """What the vault holds for an agent: entries, the stable block's size, conversation summaries,
    proposals to review, entries recalled."""


# the verbs ----------------------------------------------------------------
def list_entries(rt: EntryRuntime, request: ListEntries) -> Listed:
    from memvault.vault.importance import importance

    found = collect(rt.layout, request.section, request.tag, request.key)
    recalls = rt.recalls()
    rows = []
    for e in found:
        if request.conversation is not None and e.conversation != request.conversation:
            continue
        rated = importance(e)
        if request.importance is not None and (rated or 0) < request.importance:
            continue
        last, times = recalls.get(entry_key(e.text), (None, 0))
        when = dt.datetime.fromtimestamp(last).isoformat(timespec="seconds") if last else None
        if request.unused_since and when and when[:10] >= request.unused_since:
            continue
        rows.append({**asdict(e), "superseded_by": correction_place(rt.layout, e), "last_recalled": when,
                     "recalled": times, "importance": rated})  # fmt: skip
    counts = Counter(t for row in rows for t in row["tags"])
    return Listed(rows, dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))))


def forget(rt: EntryRuntime, request: Forget) -> Forgot:
    if request.purge:
        return _purge(rt, request)
    return _moved(rt, forget_entry(rt.layout, request.key, request.match, request.version), Forgot)


def _purge(rt: EntryRuntime, request: Forget) -> Forgot:
    """A purge cut short (killed midway) is finished first, by any purge; when it is the one asked
    for again, its entry is gone from the note and finishing it is the answer (vault.purge)."""
    from memvault.vault.purge import done, purge, resume

    earlier = resume(rt.layout)
    if earlier is not None:
        rt.purge(list(earlier[0].paths))
        done(rt.layout)
    try:
        purged = purge(rt.layout, request.key, request.match)
    except UsageError:
        if earlier is None or not earlier[0].names(request.key, request.match, earlier[1]):
            raise
        purged = earlier[0]
    else:
        rt.purge(list(purged.paths))
        done(rt.layout)
    return Forgot(purged.path, purged.line, "", indexed=True, scrubbed=purged.scrubbed,
                 elsewhere=list(purged.elsewhere), summaries=list(purged.summaries),
                 resumed=purged.resumed)  # fmt: skip


def restore(rt: EntryRuntime, request: Restore) -> Restored:
    moved = restore_entry(rt.layout, request.id)
    if len(moved) == 1:
        return _moved(rt, moved[0], Restored)
    paths = list(dict.fromkeys(rt.layout.relative(m.path) for m in moved))
    days = list(moved[0].summaries)
    return Restored(paths[0], moved[0].line, request.id, all(m.exact for m in moved),
                 rt.written(list(dict.fromkeys(paths + days))), len(moved), summaries=days)  # fmt: skip


def _moved(rt: EntryRuntime, moved: MovedEntry, reply: type[M]) -> M:
    rel = rt.layout.relative(moved.path)
    days = list(moved.summaries)
    return reply(rel, moved.line, moved.id, moved.exact, rt.written(list(dict.fromkeys([rel, *days]))), summaries=days)


def clear(rt: EntryRuntime, request: Clear) -> Cleared:
    dry = request.dry_run or not request.yes
    found = clear_entries(rt.layout, request.section, request.all, dry_run=dry)
    paths = [rt.layout.relative(p) for p in found.paths]
    if dry and not request.dry_run:
        scope = f"section {request.section!r} of MEMORY.md" if request.section is not None else "every note"
        raise UsageError(f"clear would move {found.count} entries of {scope} to the trash; add --yes to do it")
    return Cleared(found.batch, found.count, paths, dry, False if dry else rt.written(paths))


def trash(rt: EntryRuntime, request: Trash) -> TrashList:
    return TrashList([{"id": t.id, **t.meta, "text": t.body} for t in list_trashed(rt.layout)])


def correct(rt: EntryRuntime, request: Correct) -> Corrected:
    done = correct_entry(rt.layout, request.key, request.match, request.text, tags=tuple(request.tags or ()),
                         version=request.version)  # fmt: skip
    rel, old, days = rt.layout.relative(done.path), rt.layout.relative(done.old_path), list(done.summaries)
    return Corrected(rel, done.status, old, done.old_line, rt.written(list(dict.fromkeys([rel, old, *days]))), days)


def overview(rt: EntryRuntime, request: Overview) -> Overviewed:
    from memvault.vault.conversation import conversation_summaries
    from memvault.vault.entries import vault_entries
    from memvault.vault.memory_file import list_sections
    from memvault.vault.paths import daily_notes
    from memvault.vault.proposals import review
    from memvault.verbs.context import Contexted, render, stable_entries
    from memvault.verbs.recall_errors import recall_errors

    entries = list(vault_entries(rt.layout))
    stable = render([("project", Contexted(stable_entries(rt.layout)))])
    recalls = rt.recalls()
    keys = {entry_key(e.text) for e in entries}
    mine = [times for key, (_, times) in recalls.items() if key in keys]
    summaries = conversation_summaries(rt.layout, 10_000)
    memory = rt.layout.memory_md
    at = dt.datetime.fromtimestamp(memory.stat().st_mtime) if memory.exists() else None
    changed = at.isoformat(timespec="seconds") if at else None
    return Overviewed(sum(not e.superseded for e in entries), sum(bool(e.superseded) for e in entries),
                      sum(bool(e.key) and not e.superseded for e in entries), len(stable["stable"]),
                      len(stable["text"]), len(summaries), len(review(rt.layout)), len(mine), sum(mine),
                      len(summaries[0].fact) if summaries else 0, **recall_errors(rt.layout), memory_updated=changed,
                      daily_notes=len(daily_notes(rt.layout)), sections=len(list_sections(rt.layout)))  # fmt: skip
