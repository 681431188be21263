"""Days: a daily note's one-line summary (frontmatter `index`), its figures, and the latest days.

A daily note may carry frontmatter `date` and `index`: one line of names, decisions, numbers and
open items, what a person would want to find the day by. memvault writes `date` when it creates
a daily note, and `summary` sets `index` (an explicit write, so allowed on a past day); the
summary is indexed as a unit of its own and gathered into the yearly catalog.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.cjk import on_first_use
from memvault.vault.entries import iter_entries
from memvault.vault.errors import NoteReadError, UsageError
from memvault.vault.fileio import TextFile, read_note, split_lines, update_note
from memvault.vault.model import Note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout, daily_notes
from memvault.vault.templates import DAILY_SECTIONS

SUMMARY_KEY = "index"
SUMMARY_CHARS = 300
DAYS_AHEAD = 1  # a day's note may be written this far ahead of today: a clock or a time zone ahead of this one's
# where `str.splitlines` breaks a line besides "\n" and "\r" (which a summary may not hold): spaces in a summary,
# so it stays one line in the frontmatter (YAML breaks at U+0085, U+2028, U+2029 too) and the catalog
_BREAKS = str.maketrans(dict.fromkeys("\v\f\x1c\x1d\x1e\x85\u2028\u2029", " "))
_WORD = re.compile(r"[^\W\d_](?:[^\W_]|['’-][^\W_])*|\d+", re.UNICODE)
_CJK = on_first_use(r"[\u3400-\u9fff\uf900-\ufaff]")
# a clause struck when the fact it told was corrected or forgotten (`vault.struck`): kept for a person to
# read, out of what is indexed and given to an agent (`live`)
STRUCK = re.compile(r"~~(?P<clause>[^~]+)~~ \((?P<why>corrected|forgotten|已更正|已遗忘) (?P<day>\d{4}-\d{2}-\d{2})\)")
_SEPARATORS = re.compile(r"(?:\s*[;；]\s*)+")
STRUCK_ROOM = 3  # a summary with its struck clauses may be this many times `SUMMARY_CHARS` long


def live(summary: str) -> str:
    """What a summary still says: its struck clauses out, the separators around them tidied."""
    if "~~" not in summary:
        return summary
    return _SEPARATORS.sub("; ", STRUCK.sub("", summary)).strip().strip(";；").strip()


def check_day(day: dt.date, today: dt.date | None = None, where: str = "") -> dt.date:
    """A day memvault may write a daily note (or its summary) for: any day up to today, and `DAYS_AHEAD`
    past it; a day to come has nothing to say yet, and its note would sort first, as the newest, for ever."""
    today = today or dt.date.today()
    if day > today + dt.timedelta(days=DAYS_AHEAD):
        prefix = f"{where}: " if where else ""
        raise UsageError(f"{prefix}{day.isoformat()} is a day to come (today is {today.isoformat()}); memvault "
                         "writes no daily note ahead of its day")  # fmt: skip
    return day


def check_summary(text: object, where: str = "") -> str:
    """A summary is one line of at most 300 characters, without tabs (the catalog is tab-separated); the
    other characters a line breaks at (U+2028, U+0085, \\v, ...) are spaces in it."""
    prefix = f"{where}: " if where else ""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"{prefix}a day's summary (index) is one line of text")
    text = text.translate(_BREAKS)
    if "\n" in text.strip() or "\r" in text or "\t" in text:
        raise UsageError(f"{prefix}a day's summary (index) is one line, without tabs")
    size = len(live(text.strip()))
    if size > SUMMARY_CHARS or len(text.strip()) > STRUCK_ROOM * SUMMARY_CHARS:
        raise UsageError(f"{prefix}a day's summary (index) is at most {SUMMARY_CHARS} characters, not {size}")
    return text.strip()


def summary_of(note: Note) -> str | None:
    """The day's valid summary, if it has one (`summary_problem` says what is wrong with a bad one)."""
    if note.kind != "daily" or SUMMARY_KEY not in note.frontmatter:
        return None
    try:
        return check_summary(note.frontmatter[SUMMARY_KEY])
    except UsageError:
        return None


def summary_problem(note: Note) -> str | None:
    if note.kind != "daily" or SUMMARY_KEY not in note.frontmatter or note.frontmatter[SUMMARY_KEY] is None:
        return None
    try:
        check_summary(note.frontmatter[SUMMARY_KEY], note.path)
    except UsageError as exc:
        return f"{exc}; it is not indexed"
    return None


def set_summary(layout: Layout, day: dt.date, text: str, template: str) -> Path:
    """Set the day's `index` in its frontmatter (the note is created from `template` if missing),
    every other byte as it was: a line replaced, or added before the frontmatter's end; a summary it
    replaces is kept in the note's copy in `.trash/` (`backup`). Not for a day to come (`check_day`)."""
    check_day(day)
    summary = check_summary(text)
    path = layout.daily_note(day)
    line = f"{SUMMARY_KEY}: {json.dumps(summary, ensure_ascii=False)}"  # a YAML double-quoted scalar

    def change(current: TextFile | None) -> str:
        rel = layout.relative(path)
        earlier = parse_note(rel, current.text) if current else None
        if current and earlier and SUMMARY_KEY in earlier.frontmatter and summary_of(earlier) != summary:
            from memvault.vault.trash import backup

            # the summary it replaces stays recoverable, as a rewritten note does: copied from the version
            # this write replaces, read under the lock (read before it, the note could be renamed aside
            # for a moment by another memvault writer, and the copy failed with an internal error); a
            # pass an editor's save cut short leaves the copy of what it read, and the next makes another
            backup(layout, path, data=current.encode(current.text))
        problem = earlier.problem if earlier else None
        new = "" if problem else _with_summary(current, rel)
        if not problem and parse_note(rel, new).frontmatter.get(SUMMARY_KEY) != summary:
            problem = f"{rel}: its frontmatter would not hold the index"
        if problem:  # a list, a scalar, broken YAML: refused in one line, nothing written
            raise UsageError(f"{problem.removesuffix('; read as plain text')}; make it a YAML mapping by hand")
        return new

    def _with_summary(current: TextFile | None, rel: str) -> str:
        body = current.text if current else template
        newline = current.newline if current else "\n"
        lines = split_lines(body)
        if not lines or lines[0].rstrip("\r\n") != "---":
            return f"---{newline}date: {day.isoformat()}{newline}{line}{newline}---{newline}" + body
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in ("---", "...")), None)
        if end is None:
            return f"---{newline}date: {day.isoformat()}{newline}{line}{newline}---{newline}" + body
        at = next((i for i in range(1, end) if lines[i].startswith(f"{SUMMARY_KEY}:")), None)
        if at is not None and (at + 1 == end or not lines[at + 1][:1].isspace()):
            lines[at] = line + newline
        elif at is None:
            lines.insert(end, line + newline)
        else:
            raise UsageError(f"{rel}: its index spans several lines; edit it by hand")
        return "".join(lines)

    update_note(layout, path, change)
    return path


@dataclass(frozen=True)
class DayFigures:
    """What a day holds: entries per daily section, and the words written."""

    date: str
    path: str
    summary: str | None
    conversations: int
    tasks_done: int
    todos: int
    discoveries: int
    words: int


def figures(note: Note) -> DayFigures:
    titles = {spec[lang][0]: key for key, spec in DAILY_SECTIONS.items() for lang in ("zh", "en")}
    counts = dict.fromkeys(DAILY_SECTIONS, 0)
    for entry in iter_entries(note):
        key = titles.get(entry.section)
        if key is not None:
            counts[key] += 1
    body = note.body
    words = len(_CJK.findall(body)) + len(_WORD.findall(_CJK.sub(" ", body)))
    day = note.date.isoformat() if note.date else ""
    return DayFigures(day, note.path, summary_of(note), counts["conversation"], counts["task"], counts["todo"],
                      counts["discovery"], words)  # fmt: skip


def read_day(layout: Layout, path: Path, rel: str | None = None) -> Note | None:
    """A day's note, or None when it cannot be read; `rel` names it when `path` is a copy of it
    elsewhere (the trash), so it still parses as that day's daily note."""
    where = layout.relative(path)
    try:
        return parse_note(rel or where, read_note(path, where, layout=layout).text)
    except NoteReadError:
        return None


def recent(layout: Layout, count: int = 7) -> list[DayFigures]:
    """The latest `count` daily notes with their figures and summary, newest first."""
    if count < 1:
        raise UsageError("recent: give a number of days, 1 or more")
    out = []
    for _, path in reversed(daily_notes(layout)):
        note = read_day(layout, path)
        if note is not None:
            out.append(figures(note))
        if len(out) >= count:
            break
    return out
