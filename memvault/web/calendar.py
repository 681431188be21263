"""The Days page's calendar: each month as weeks of seven days, Monday first, each day with its entry
count, a shade for that count and its summary. Pure date arithmetic over what the page's verbs
returned, kept apart from the page so that it can be checked without a browser or a vault."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# the panel's language, whatever the server's locale (`%B` follows it)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")  # fmt: skip
# (lowest count, CSS class): a busy day stands out at a glance, the exact number is written in the cell
SHADES = ((6, "shade-4"), (3, "shade-3"), (1, "shade-2"), (0, "shade-1"))


def noun(count: int) -> str:
    """`entry` for one, `entries` for any other count (none included)."""
    return "entry" if count == 1 else "entries"


def entries_label(count: int) -> str:
    """`1 entry`, `0 entries`, `3 entries`."""
    return f"{count} {noun(count)}"


def shade(count: int) -> str:
    """The cell's CSS class for `count` entries: none, 1-2, 3-5, 6 or more."""
    return next(name for lowest, name in SHADES if count >= lowest)


def weeks(year: int, month: int) -> list[list[dt.date | None]]:
    """The month as rows of seven (Monday to Sunday); None where a row reaches into the month before or after."""
    first = dt.date(year, month, 1)
    length = ((first.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - first).days
    cells: list[dt.date | None] = [None] * first.weekday()
    cells += [first + dt.timedelta(days=n) for n in range(length)]
    cells += [None] * (-len(cells) % 7)
    return [cells[i : i + 7] for i in range(0, len(cells), 7)]


@dataclass(frozen=True)
class Day:
    """One cell: the day, its entries, its summary ("" when none), whether a note exists to open, and today."""

    date: dt.date
    entries: int = 0
    summary: str = ""
    note: bool = False
    today: bool = False

    @property
    def label(self) -> str:
        return entries_label(self.entries)

    @property
    def noun(self) -> str:
        return noun(self.entries)

    @property
    def shade(self) -> str:
        return shade(self.entries)

    @property
    def title(self) -> str:
        """The cell's tooltip: the summary, else the date and its count."""
        if self.summary:
            return self.summary
        return f"{self.date.isoformat()}: {self.label}" if self.note or self.entries else self.date.isoformat()


@dataclass(frozen=True)
class Month:
    """One month's grid (`weeks`' shape, a `Day` in each cell of the month) and its days that have a summary."""

    first: dt.date
    weeks: list[list[Day | None]]
    summaries: list[Day] = field(default_factory=list)  # the days that have one, in order

    @property
    def key(self) -> str:
        return self.first.strftime("%Y-%m")

    @property
    def name(self) -> str:
        return f"{MONTHS[self.first.month - 1]} {self.first.year}"

    @property
    def entries(self) -> int:
        return sum(d.entries for week in self.weeks for d in week if d is not None)

    @property
    def label(self) -> str:
        return entries_label(self.entries)


def months(summaries: Mapping[str, str], counts: Mapping[str, int], today: dt.date, year: int | None = None
           ) -> list[Month]:  # fmt: skip
    """The months, newest first, that hold a day with a note (`summaries`: every day the catalog lists, by
    ISO date, "" for no summary) or with entries (`counts`), and today's month; only `year`'s when given."""
    noted = {dt.date.fromisoformat(d) for d in summaries} | {dt.date.fromisoformat(d) for d, n in counts.items() if n}
    firsts = {d.replace(day=1) for d in noted} | {today.replace(day=1)}
    out = []
    for first in sorted((f for f in firsts if year is None or f.year == year), reverse=True):
        grid: list[list[Day | None]] = [
            [None if d is None else _day(d, summaries, counts, d in noted, today) for d in week]
            for week in weeks(first.year, first.month)
        ]
        told = [d for week in grid for d in week if d is not None and d.summary]
        out.append(Month(first, grid, told))
    return out


def _day(date: dt.date, summaries: Mapping[str, str], counts: Mapping[str, int], note: bool, today: dt.date) -> Day:
    iso = date.isoformat()
    return Day(date, counts.get(iso, 0), (summaries.get(iso) or "").strip(), note, date == today)
