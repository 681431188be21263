"""The yearly catalog: `catalog/YYYY.tsv` in the vault, one line per day (its date, a tab, its
summary), a cheap view of a whole year for a person or an agent.

It is derived from the daily notes and safe to delete: the indexer rewrites a year's file whenever
a day's summary changes, and regenerates one that disagrees with the notes (a file edited by hand,
which is said). A day without a summary has its line, with nothing after the tab: a summary is never
invented. A day retention moved to the trash keeps its line, read from the copy in the trash.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path

from memvault.vault.fileio import atomic_write, vault_lock
from memvault.vault.paths import DAILY_DIR, Layout, daily_notes, make_state_dir

CATALOG_DIR = "catalog"
_RETIRED = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md\.(\d{8}T\d{6,12})\.bak$")
_YEAR = re.compile(r"^[0-9]{4}$")
_WRITTEN = "catalog.json"  # in the state dir: the SHA-256 of each file as memvault last wrote it


def catalog_path(layout: Layout, year: int) -> Path:
    return layout.root / CATALOG_DIR / f"{year}.tsv"


def recent_summaries(layout: Layout, today: dt.date, days: int) -> list[tuple[dt.date, str]]:
    """The days of the last `days` (today's included) that have a summary, newest first, as the catalog
    holds them (one file a year, read as it is: what a prompt reads stays cheap; a catalog not written
    yet gives none)."""
    from memvault.vault.days import live

    since = today - dt.timedelta(days=days - 1)
    found: list[tuple[dt.date, str]] = []
    for year in sorted({since.year, today.year}):
        try:
            lines = catalog_path(layout, year).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            day, _, said = line.partition("\t")
            try:
                when = dt.date.fromisoformat(day)
            except ValueError:
                continue
            said = live(said.strip())  # an agent reads what it still says
            if since <= when <= today and said:
                found.append((when, said))
    return sorted(found, reverse=True)


def retired_days(layout: Layout) -> dict[dt.date, Path]:
    """Days whose note is gone from `daily/` but kept in the trash: the latest copy of each."""
    folder = layout.trash_dir / DAILY_DIR
    found: dict[dt.date, tuple[str, Path]] = {}
    for path in folder.iterdir() if folder.is_dir() else ():
        match = _RETIRED.match(path.name)
        if not match:
            continue
        try:
            day = dt.date.fromisoformat(match.group(1))
        except ValueError:
            continue
        if day not in found or match.group(2) > found[day][0]:
            found[day] = (match.group(2), path)
    return {day: path for day, (_, path) in found.items()}


def retired_copy(layout: Layout, path: Path) -> Path | None:
    """The latest trash copy of the daily note at `path` that retention (or a whole-note removal) took
    out of `daily/`; None for any other note. `show` reads a day the catalog still lists there, and
    `restore` puts such a day back whole before its entry."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})\.md", path.name)
    if path.parent != layout.daily_dir or not match:
        return None
    try:
        day = dt.date.fromisoformat(match.group(1))
    except ValueError:
        return None
    return retired_days(layout).get(day)


def _summary_in(layout: Layout, path: Path, day: dt.date) -> str:
    from memvault.vault.days import read_day, summary_of  # parsing notes (frontmatter) only when a year is rebuilt

    note = read_day(layout, path, f"{DAILY_DIR}/{day.isoformat()}.md")
    return (summary_of(note) if note is not None else None) or ""


def _days(layout: Layout) -> dict[dt.date, Path]:
    """Every day's note: in `daily/`, else its latest copy in the trash (a retired day)."""
    days = dict(retired_days(layout))
    days.update(daily_notes(layout))
    return days


def expected(layout: Layout, year: int, days: dict[dt.date, Path] | None = None) -> str:
    """A year's catalog as the notes (and the retired days in the trash) say it."""
    found = sorted(
        (day, path) for day, path in (days if days is not None else _days(layout)).items() if day.year == year
    )
    return "".join(f"{day.isoformat()}\t{_summary_in(layout, path, day)}\n" for day, path in found)


def years(layout: Layout, days: dict[dt.date, Path] | None = None, warn: bool = False) -> list[int]:
    """Every year with a daily note, a retired day or a catalog file (a file that names no year is
    left alone, and with `warn` named in a warning)."""
    found = {day.year for day in (days if days is not None else _days(layout))}
    folder = layout.root / CATALOG_DIR
    for path in sorted(folder.glob("*.tsv")) if folder.is_dir() else ():
        if _YEAR.match(path.stem):
            found.add(int(path.stem))
        elif warn:  # `².tsv` is digits to str.isdigit, not a year
            import logging  # only to warn: a no-change `index` reads the catalog and imports none of it

            logging.getLogger("memvault").warning("%s: not a year's catalog (YYYY.tsv); skipped", layout.relative(path))
    return sorted(found)


def _written(layout: Layout) -> dict[str, str]:
    try:
        return json.loads((layout.state_dir / _WRITTEN).read_text())
    except (OSError, ValueError):
        return {}


def _due(layout: Layout, written: dict[str, str], days: dict[dt.date, Path], touched: set[int] | None,
         warn: bool = False) -> list[tuple[int, Path, bytes | None, bool]]:  # fmt: skip
    """The years `sync` rebuilds from their notes, each with its file's bytes (None: missing) and
    whether it was edited: those in `touched` (None: every year), and those whose file is missing
    or is not what memvault last wrote."""
    due = []
    for year in years(layout, days, warn):
        path = catalog_path(layout, year)
        current = path.read_bytes() if path.is_file() else None
        edited = current is not None and hashlib.sha256(current).hexdigest() != written.get(str(year))
        if touched is None or year in touched or current is None or edited:
            due.append((year, path, current, edited))
    return due


def in_sync(layout: Layout) -> bool:
    """True when a `sync` after a pass that changed no note has nothing to do: every year's file is
    there, as memvault last wrote it. Costs directory listings and reading the catalog files, no note."""
    return not _due(layout, _written(layout), _days(layout), set())


def _patched(layout: Layout, year: int, current: bytes, days: dict[dt.date, Path], changed: set[dt.date]) -> str:
    """A year's catalog from its file as memvault wrote it, with only the `changed` days read again
    from their notes (a day gone from the notes loses its line): the same text as `expected`, without
    reading a year of notes for one edit."""
    lines: dict[dt.date, str] = {}
    for line in filter(None, current.decode("utf-8").split("\n")):  # a line ends at "\n" only, as written
        named, _, summary = line.partition("\t")
        lines[dt.date.fromisoformat(named)] = summary
    for day in changed | (days.keys() - lines.keys()):
        if day.year == year:
            lines.pop(day, None)
            if day in days:
                lines[day] = _summary_in(layout, days[day], day)
    return "".join(f"{day.isoformat()}\t{lines[day]}\n" for day in sorted(lines) if day in days)


def sync(layout: Layout, touched: set[int] | None = None, changed: set[dt.date] | None = None) -> list[str]:
    """Bring the catalog in line with the notes and return a line for each file found edited by hand.
    A year is rebuilt from its notes when `touched` holds it (None: every year), when its file is
    missing, or when its file is not what memvault last wrote; the rest costs a directory listing.
    Given the `changed` days, a touched year whose file is as memvault wrote it reads only those."""
    written = _written(layout)
    told, dirty = [], False
    with vault_lock(layout):
        days = _days(layout)  # listed once for every year
        for year, path, current, edited in _due(layout, written, days, touched, warn=True):
            try:
                patch = changed is not None and current is not None and not edited
                text = (_patched(layout, year, current or b"", days, changed or set()) if patch
                        else expected(layout, year, days)).encode("utf-8")  # fmt: skip
            except ValueError:  # a line that is not `date<TAB>summary`: the file is rebuilt from the notes
                text = expected(layout, year, days).encode("utf-8")
            if current != text:
                if edited:
                    told.append(f"{layout.relative(path)} disagreed with the notes (edited by hand?): regenerated")
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, text)
            digest = hashlib.sha256(text).hexdigest()
            if written.get(str(year)) != digest:  # also a right file memvault has no record of (a new state dir)
                written[str(year)], dirty = digest, True
        if dirty:
            make_state_dir(layout)
            atomic_write(layout.state_dir / _WRITTEN, json.dumps(written, sort_keys=True).encode())
    return told
