"""The Health page's two charts, drawn as inline SVG on the server: entries per day and entries per
section. No script and nothing loaded from elsewhere (the panel's content security policy allows
neither), and a text alternative in each (`<title>`, `<desc>`, a `<title>` per bar). Every label
passes `escape`: a section heading is a person's text. Colours and fonts are panel.css's `.chart`
rules, since an inline `style` is refused by the same policy."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from memvault.web.calendar import MONTHS, entries_label

DAILY, OTHER = "daily notes", "other notes"
DAY_WIDTH, DAY_HEIGHT = 600, 132  # the per-day chart: 60 slots of about 9 px, bars up to 100 px, dates below
SECTION_ROW, LABEL_WIDTH, BAR_WIDTH = 22, 170, 260  # the two charts side by side at 1280 px
LABEL_CHARS = 28  # a longer section name is cut (the whole name is the row's tooltip)


def day_counts(rows: Iterable[Mapping[str, Any]], last: dt.date, days: int = 60) -> list[tuple[dt.date, int]]:
    """Entries by their day (a daily note's date, else the day memvault saved it) for each of the
    `days` days up to `last`, oldest first, zeros included."""
    counted = Counter(r["date"] for r in rows if r.get("date"))
    first = last - dt.timedelta(days=days - 1)
    return [(day, counted.get(day.isoformat(), 0)) for day in (first + dt.timedelta(days=n) for n in range(days))]


def section_counts(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """Entries per MEMORY.md section (in the file's order), then all daily notes' together, then any other note's."""
    counted: Counter[str] = Counter()
    for r in rows:
        path = str(r.get("path", ""))
        counted[(r.get("section") or "(no section)") if path == "MEMORY.md" else DAILY if path.startswith("daily/")
                else OTHER] += 1  # fmt: skip
    return sorted(counted.items(), key=lambda kv: (kv[0] == OTHER, kv[0] == DAILY))  # (a stable sort: file order)


def _n(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _frame(ident: str, width: int, height: int, title: str, desc: str, body: list[str]) -> Markup:
    ident = str(escape(ident))
    head = (f'<svg class="chart" id="{ident}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="{ident}-title {ident}-desc">'
            f'<title id="{ident}-title">{escape(title)}</title>'
            f'<desc id="{ident}-desc">{escape(desc)}</desc>')  # fmt: skip
    return Markup("\n".join([head, *body, "</svg>"]))


def day_chart(counts: Sequence[tuple[dt.date, int]], ident: str) -> Markup:
    """Columns of entries per day, oldest on the left; a bar only for a day that has entries, each with
    its date and count as its tooltip; the first, last and each month's first day named below."""
    left, top, plot = 30, 12, 100
    slot = (DAY_WIDTH - left - 6) / max(1, len(counts))
    most = max((n for _, n in counts), default=0)
    total, busy = sum(n for _, n in counts), sum(1 for _, n in counts if n)
    title = f"Entries per day, {counts[0][0]} to {counts[-1][0]}" if counts else "Entries per day"
    if most:
        top_day = next(d for d, n in counts if n == most)
        desc = f"{entries_label(total)} on {busy} of {len(counts)} days; the most, {most}, on {top_day}."
    else:
        desc = f"No entries in these {len(counts)} days."
    body = [f'<line class="axis" x1="{left}" y1="{top + plot}" x2="{DAY_WIDTH - 4}" y2="{top + plot}"/>',
            f'<text class="scale" x="{left - 4}" y="{top + plot}" text-anchor="end">0</text>']  # fmt: skip
    if most:
        body += [f'<line class="grid" x1="{left}" y1="{top}" x2="{DAY_WIDTH - 4}" y2="{top}"/>',
                 f'<text class="scale" x="{left - 4}" y="{top + 4}" text-anchor="end">{most}</text>']  # fmt: skip
    for i, (day, n) in enumerate(counts):
        x = left + i * slot
        if n:
            height = max(2.0, plot * n / most)
            body.append(f'<rect class="bar" x="{_n(x + 1)}" y="{_n(top + plot - height)}" width="{_n(slot - 2)}" '
                        f'height="{_n(height)}"><title>{day}: {entries_label(n)}</title></rect>')  # fmt: skip
        named = i in (0, len(counts) - 1) or (day.day == 1 and 5 < i < len(counts) - 6)
        if named:
            anchor = "start" if i == 0 else "end" if i == len(counts) - 1 else "middle"
            at = x if i == 0 else x + slot if anchor == "end" else x + slot / 2
            body.append(f'<text class="date" x="{_n(at)}" y="{top + plot + 15}" text-anchor="{anchor}">'
                        f"{MONTHS[day.month - 1][:3]} {day.day}</text>")  # fmt: skip
    if not most:
        body.append(f'<text class="empty" x="{DAY_WIDTH // 2}" y="{top + plot // 2}" text-anchor="middle">'
                    f"no entries in these {len(counts)} days</text>")  # fmt: skip
    return _frame(ident, DAY_WIDTH, DAY_HEIGHT, title, desc, body)


def section_chart(counts: Sequence[tuple[str, int]], ident: str) -> Markup:
    """A row per section: its name, a bar as long as its share of the largest, and the count."""
    most = max((n for _, n in counts), default=0)
    height = max(1, len(counts)) * SECTION_ROW + 6
    width = LABEL_WIDTH + BAR_WIDTH + 40
    desc = "; ".join(f"{name}: {entries_label(n)}" for name, n in counts) or "No entries."
    body = []
    for i, (name, n) in enumerate(counts):
        y = 3 + i * SECTION_ROW
        shown = name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"
        length = max(2.0, BAR_WIDTH * n / most) if n else 0.0
        body.append(f'<g class="row"><title>{escape(name)}: {entries_label(n)}</title>'
                    f'<text class="label" x="{LABEL_WIDTH - 8}" y="{y + 15}" text-anchor="end">{escape(shown)}</text>'
                    f'<rect class="bar" x="{LABEL_WIDTH}" y="{y + 3}" width="{_n(length)}" height="{SECTION_ROW - 6}"/>'
                    f'<text class="count" x="{_n(LABEL_WIDTH + length + 6)}" y="{y + 15}">{n}</text></g>')  # fmt: skip
    if not counts:
        body.append(f'<text class="empty" x="{LABEL_WIDTH}" y="18">no entries yet</text>')
    return _frame(ident, width, height, "Entries per section", desc, body)
