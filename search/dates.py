"""Date words in a query, read as a range of days: "yesterday", "last week", "in March 2023",
"on 8 May 2023", "上周", "三月", "2023年5月8日".

Relative words ("yesterday", "上个月", "3 days ago") count from `today`. A month or day without a
year takes the year another date in the query names ("between August 11 and August 15 2023"),
else its latest occurrence not after today ("in March" read in May 2026 is March 2026, in
February 2026 it is March 2025). "Since X" runs from X to today; "before"/"after" are not read:
a note is usually dated the day an event was told, so the date named is the best anchor. Several
date words give the range from the earliest to the latest. Pure functions, no index.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memvault.indexer.filters import FilterSpec

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
}  # fmt: skip
FULL = "january|february|march|april|may|june|july|august|september|october|november|december"
ABBR = f"{FULL}|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBERS = "one|two|three|four|five|six|seven|eight|nine|ten"
NUMBER_WORDS = {w: i for i, w in enumerate(NUMBERS.split("|"), start=1)}
CN_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CN_NUM = "[0-9〇零一二两三四五六七八九十]"
ORD = r"(?:st|nd|rd|th)?"
YEAR = r"((?:19|20)\d\d)"
Span = tuple[dt.date, dt.date]
Make = Callable[[re.Match[str]], Span]


@dataclass(frozen=True)
class DateWords:
    """The days a query's date words name (inclusive), and the words themselves."""

    start: dt.date
    end: dt.date
    words: tuple[str, ...]


def _cn(text: str) -> int:
    """A number written in digits or Chinese numerals up to 99 (十二, 二十三, 二〇二三 digit by digit)."""
    if text.isdigit():
        return int(text)
    if "十" not in text:
        return int("".join(str(CN_DIGITS[c]) for c in text))
    tens, _, ones = text.partition("十")
    return (CN_DIGITS[tens] if tens else 1) * 10 + (CN_DIGITS[ones] if ones else 0)


def _month(year: int, month: int) -> Span:
    return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])


def _year(year: int) -> Span:
    return dt.date(year, 1, 1), dt.date(year, 12, 31)


def _week(day: dt.date) -> Span:
    monday = day - dt.timedelta(days=day.weekday())
    return monday, monday + dt.timedelta(days=6)


def _months_back(today: dt.date, n: int) -> Span:
    index = today.year * 12 + today.month - 1 - n
    return _month(index // 12, index % 12 + 1)


def _latest(today: dt.date, month: int, day: int | None = None) -> int:
    """The year of the latest such month (or day) not after today."""
    now = (today.month, today.day) if day else (today.month, 0)
    return today.year if (month, day or 0) <= now else today.year - 1


def _n(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def _relative(today: dt.date) -> list[tuple[str, Make]]:
    day = dt.timedelta(days=1)

    def days_ago(n: int) -> Span:
        return today - n * day, today - n * day

    return [
        (r"大前天", lambda m: days_ago(3)),
        (r"\bthe day before yesterday\b|前天", lambda m: days_ago(2)),
        (r"\byesterday\b|昨天|昨日", lambda m: days_ago(1)),
        (r"\btoday\b|\btonight\b|\bthis morning\b|今天|今日|今晚", lambda m: days_ago(0)),
        (rf"\b(\d+|{NUMBERS}) days? ago\b", lambda m: days_ago(_n(m.group(1)))),
        (rf"({CN_NUM}+)天前", lambda m: days_ago(_cn(m.group(1)))),
        (rf"\b(\d+|{NUMBERS}) weeks? ago\b", lambda m: _week(today - 7 * _n(m.group(1)) * day)),
        (rf"\b(\d+|{NUMBERS}) months? ago\b", lambda m: _months_back(today, _n(m.group(1)))),
        (r"\b(?:the )?(?:past|last) (\d+) days\b", lambda m: (today - (int(m.group(1)) - 1) * day, today)),
        (r"\b(?:the )?past (?:week|7 days)\b|最近一周|近一周|过去一周", lambda m: (today - 6 * day, today)),
        (r"\b(?:last|previous) week\b|上上?(?:个)?(?:周|星期|礼拜)",
         lambda m: _week(today - (14 if m.group(0).startswith("上上") else 7) * day)),
        (r"\bthis week\b|本周|这周|这个?星期|本星期|这个?礼拜", lambda m: _week(today)),
        (r"\b(?:last|previous) month\b|上个?月", lambda m: _months_back(today, 1)),
        (r"\bthis month\b|本月|这个月", lambda m: _months_back(today, 0)),
        (r"\b(?:last|previous) year\b|去年", lambda m: _year(today.year - 1)),
        (r"\bthis year\b|今年", lambda m: _year(today.year)),
        (r"前年", lambda m: _year(today.year - 2)),
        (rf"\blast ({'|'.join(WEEKDAYS)})\b",
         lambda m: days_ago((today.weekday() - WEEKDAYS.index(m.group(1))) % 7 or 7)),
    ]  # fmt: skip


# every pattern below holds a digit (`\d`: what `str.isdecimal` says) or one of these words: a query
# with none names no date, and is answered before a pattern is compiled (the thirty of them cost a cold
# search 5 ms; 天 alone, as in 哪天 or 多少天, is no date word)
_DATE_WORDS = ("day", "tonight", "morning", "ago", "week", "month", "year", *FULL.split("|"),
               "年", "月", "前天", "昨天", "昨日", "今天", "今日", "今晚", "天前", "周", "星期", "礼拜")  # fmt: skip


def _may_name_a_date(text: str) -> bool:
    return any(c.isdecimal() for c in text) or any(w in text for w in _DATE_WORDS)


def read_dates(query: str, today: dt.date | None = None) -> DateWords | None:
    """The range of days the query's date words name, or None when it names none."""
    text = query.lower()
    if not _may_name_a_date(text):
        return None
    today = today or dt.date.today()
    spans: list[Span] = []
    words: list[tuple[int, str]] = []
    taken = [False] * len(text)

    def take(pattern: str, make: Make) -> None:
        for m in re.finditer(pattern, text):
            if any(taken[m.start() : m.end()]):
                continue
            try:
                span = make(m)
            except (ValueError, KeyError):  # 31 February, month 13: not a date
                continue
            taken[m.start() : m.end()] = [True] * (m.end() - m.start())
            spans.append(span)
            words.append((m.start(), query[m.start() : m.end()].strip()))

    named = re.search(rf"{YEAR}(?:年|\b)", text)  # the year a yearless month or day borrows

    def year_of(month: int, day: int | None = None) -> int:
        return int(named.group(1)) if named else _latest(today, month, day)

    def on(year: int, month: int, day: int) -> Span:
        return dt.date(year, month, day), dt.date(year, month, day)

    def since(m: re.Match[str], span: Span) -> Span:
        return (span[0], max(today, span[1])) if m.group(0).startswith("since") else span

    def mday(month: str, day: str, year: str | None = None) -> Span:
        mo, d = MONTHS[month], int(day)
        return on(int(year) if year else year_of(mo, d), mo, d)

    # numeric and Chinese dates first, the most specific before the less
    take(rf"\b{YEAR}-(\d\d?)-(\d\d?)\b", lambda m: on(*map(int, m.groups())))
    take(rf"\b{YEAR}/(\d\d?)/(\d\d?)\b", lambda m: on(*map(int, m.groups())))
    take(rf"({CN_NUM}{{4}})年({CN_NUM}{{1,2}})月({CN_NUM}{{1,3}})[日号]",
         lambda m: on(*(_cn(g) for g in m.groups())))  # fmt: skip
    take(rf"({CN_NUM}{{4}})年({CN_NUM}{{1,2}})月", lambda m: _month(_cn(m.group(1)), _cn(m.group(2))))
    take(rf"(今年|去年|前年)({CN_NUM}{{1,2}})月",
         lambda m: _month(today.year - ("今去前".index(m.group(1)[0])), _cn(m.group(2))))  # fmt: skip
    take(rf"(?<![0-9〇零一二两三四五六七八九十几个每同])({CN_NUM}{{1,2}})月({CN_NUM}{{1,3}})[日号]",
         lambda m: on(year_of(_cn(m.group(1)), _cn(m.group(2))), _cn(m.group(1)), _cn(m.group(2))))  # fmt: skip
    take(r"([0-9〇零一二两三四五六七八九]{4})年", lambda m: _year(_cn(m.group(1))))
    take(rf"(?<![0-9〇零一二两三四五六七八九十几个每同])({CN_NUM}{{1,2}})月",
         lambda m: _month(year_of(_cn(m.group(1))), _cn(m.group(1))))  # fmt: skip
    # English: day and month with a year, month and year, then yearless days and months
    take(rf"\b(?:since )?(\d\d?){ORD} (?:of )?({ABBR})\.?,? {YEAR}\b",
         lambda m: since(m, mday(m.group(2), m.group(1), m.group(3))))  # fmt: skip
    take(rf"\b(?:since )?({ABBR})\.? (\d\d?){ORD},? ?{YEAR}\b",
         lambda m: since(m, mday(m.group(1), m.group(2), m.group(3))))  # fmt: skip
    take(rf"\b(?:since )?({ABBR})\.?,? (?:of )?{YEAR}\b",
         lambda m: since(m, _month(int(m.group(2)), MONTHS[m.group(1)])))  # fmt: skip
    take(rf"\b(?:since )?(\d\d?){ORD} (?:of )?({ABBR})\b(?! \d)", lambda m: since(m, mday(m.group(2), m.group(1))))
    take(rf"\b(?:since )?({ABBR}) (\d\d?){ORD}\b(?![:\d])", lambda m: since(m, mday(m.group(1), m.group(2))))
    take(rf"\b(?:in|during|since|of|last|early|late|mid)[- ]({FULL})\b",
         lambda m: since(m, _month(year_of(MONTHS[m.group(1)]), MONTHS[m.group(1)])))  # fmt: skip
    take(rf"\b(?:in|during|since|by|until|year) {YEAR}\b", lambda m: since(m, _year(int(m.group(1)))))
    for pattern, make in _relative(today):
        take(pattern, make)
    if not spans:
        return None
    return DateWords(min(s for s, _ in spans), max(e for _, e in spans), tuple(w for _, w in sorted(words)))


def narrowed(filters: FilterSpec, words: DateWords | None, dates: dict[str, Any] | None) -> FilterSpec | None:
    """The filter the retrievers and the corrections obey: a query's own, narrowed to the range its date
    words name when they act as a filter (`dates["applied"]`); None when it filters nothing."""
    if words is not None and dates is not None and dates["applied"] == "filter":
        filters = dataclasses.replace(filters, date_from=words.start, date_to=words.end)
    return None if filters.is_empty() else filters
