"""The panel's Days and Health pages (issue 46): the calendar's date arithmetic and shading, the charts'
SVG (well formed, one bar per day with entries, labels escaped), the events' rows, then both pages in
Debian's chromium against `memvault ui` with a daemon running: a day's cell links to its note with its
count, the Health page's bars and the daemon's events, which `?live=1` keeps showing as they happen.
`MEMVAULT_SCREENSHOTS=DIR` saves `days` and `health` at 1280x800 there."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest

from memvault.vault.errors import UsageError
from memvault.web import calendar, charts
from memvault.web.health import event_row, latest_events

SVG = "{http://www.w3.org/2000/svg}"


# the calendar ------------------------------------------------------------------------------------------------
def test_a_month_starting_on_a_sunday_has_its_first_day_in_the_seventh_column() -> None:
    march = calendar.weeks(2026, 3)  # 1 March 2026 is a Sunday
    assert march[0] == [None] * 6 + [dt.date(2026, 3, 1)]
    assert len(march) == 6 and march[-1] == [dt.date(2026, 3, 30), dt.date(2026, 3, 31)] + [None] * 5
    assert all(len(week) == 7 for week in march)
    assert [d for week in march for d in week if d] == [dt.date(2026, 3, n) for n in range(1, 32)]


def test_a_february_starting_on_a_monday_is_four_full_weeks_and_a_leap_year_has_its_29th() -> None:
    february = calendar.weeks(2021, 2)
    assert len(february) == 4 and february[0][0] == dt.date(2021, 2, 1)
    assert None not in [d for week in february for d in week]
    assert max(d for week in calendar.weeks(2024, 2) for d in week if d) == dt.date(2024, 2, 29)
    assert calendar.weeks(2026, 12)[0][:2] == [None, dt.date(2026, 12, 1)]  # a Tuesday: the second column


@pytest.mark.parametrize(("count", "shade"), [(0, "shade-1"), (1, "shade-2"), (2, "shade-2"), (3, "shade-3"),
                                              (5, "shade-3"), (6, "shade-4"), (40, "shade-4")])  # fmt: skip
def test_counts_shade_by_band(count: int, shade: str) -> None:
    assert calendar.shade(count) == shade


def test_entry_or_entries() -> None:
    assert [calendar.entries_label(n) for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]


def test_the_months_hold_the_noted_days_counts_summaries_and_today() -> None:
    noted = {"2026-02-03": "release day", "2026-02-04": ""}
    months = calendar.months(noted, {"2026-02-03": 4, "2026-01-10": 1, "2026-01-11": 0}, dt.date(2026, 3, 5))
    assert [m.key for m in months] == ["2026-03", "2026-02", "2026-01"] and months[1].name == "February 2026"
    cells = {d.date.isoformat(): d for m in months for week in m.weeks for d in week if d}
    third = cells["2026-02-03"]
    assert (third.entries, third.label, third.shade, third.note, third.title) == (4, "4 entries", "shade-3", True,
                                                                                 "release day")  # fmt: skip
    assert cells["2026-02-04"].note and cells["2026-02-04"].title == "2026-02-04: 0 entries"
    assert cells["2026-01-10"].note and cells["2026-01-10"].label == "1 entry"
    assert not cells["2026-01-11"].note and not cells["2026-03-04"].note  # no note, no link
    assert cells["2026-03-05"].today and not any(d.today for k, d in cells.items() if k != "2026-03-05")
    assert [d.date.isoformat() for d in months[1].summaries] == ["2026-02-03"]
    assert (months[1].entries, months[2].label) == (4, "1 entry")
    assert calendar.months(noted, {}, dt.date(2026, 3, 5), year=2025) == []
    assert [m.key for m in calendar.months(noted, {}, dt.date(2026, 3, 5), year=2026)] == ["2026-03", "2026-02"]


# the charts --------------------------------------------------------------------------------------------------
def _rows() -> list[dict[str, Any]]:
    rows = [{"path": "MEMORY.md", "section": "Preferences", "date": None}] * 3
    rows += [{"path": "MEMORY.md", "section": "Solutions", "date": "2026-03-01"}]
    rows += [{"path": "daily/2026-03-04.md", "section": "Conversations", "date": "2026-03-04"}] * 5
    rows += [{"path": "daily/2026-01-01.md", "section": "Conversations", "date": "2026-01-01"}]  # before the window
    return [*rows, {"path": "ideas.md", "section": "", "date": None}]


def test_entries_per_day_over_the_window_zeros_included() -> None:
    counts = charts.day_counts(_rows(), dt.date(2026, 3, 5), 60)
    assert len(counts) == 60 and counts[0][0] == dt.date(2026, 1, 5) and counts[-1] == (dt.date(2026, 3, 5), 0)
    assert [(d.isoformat(), n) for d, n in counts if n] == [("2026-03-01", 1), ("2026-03-04", 5)]


def test_entries_per_section_memory_in_order_then_daily_then_other() -> None:
    assert charts.section_counts(_rows()) == [("Preferences", 3), ("Solutions", 1), ("daily notes", 6),
                                              ("other notes", 1)]  # fmt: skip


def test_the_day_chart_is_svg_with_one_bar_per_day_that_has_entries() -> None:
    counts = charts.day_counts(_rows(), dt.date(2026, 3, 5), 60)
    svg = ET.fromstring(str(charts.day_chart(counts, "chart-days-project")))
    bars = svg.findall(f"{SVG}rect[@class='bar']")
    assert [b.find(f"{SVG}title").text for b in bars] == ["2026-03-01: 1 entry", "2026-03-04: 5 entries"]
    heights = [float(b.get("height")) for b in bars]
    assert heights[1] == 100 and heights[0] == 20  # the busiest day is the full height, the others in proportion
    assert svg.get("role") == "img" and svg.get("aria-labelledby") == "chart-days-project-title chart-days-project-desc"
    assert svg.find(f"{SVG}title").text == "Entries per day, 2026-01-05 to 2026-03-05"
    assert svg.find(f"{SVG}desc").text == "6 entries on 2 of 60 days; the most, 5, on 2026-03-04."
    labels = [t.text for t in svg.findall(f"{SVG}text[@class='date']")]
    assert labels == ["Jan 5", "Feb 1", "Mar 5"]  # the ends, and a month's first day not crowding them
    empty = ET.fromstring(str(charts.day_chart(charts.day_counts([], dt.date(2026, 3, 5)), "e")))
    assert not empty.findall(f"{SVG}rect") and "No entries" in empty.find(f"{SVG}desc").text


def test_the_section_chart_escapes_its_labels() -> None:
    counts = [("<script>alert(1)</script>", 2), ("Preferences", 4), ("a" * 40, 1)]
    markup = str(charts.section_chart(counts, 'x" onload="alert(1)'))
    assert "<script>" not in markup and "&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert 'onload="' not in markup
    svg = ET.fromstring(markup)
    rows = svg.findall(f"{SVG}g[@class='row']")
    assert [r.find(f"{SVG}text[@class='label']").text for r in rows] == ["<script>alert(1)</script>", "Preferences",
                                                                          "a" * 27 + "…"]  # fmt: skip
    assert rows[2].find(f"{SVG}title").text == "a" * 40 + ": 1 entry"  # the whole name in its tooltip
    widths = [float(r.find(f"{SVG}rect").get("width")) for r in rows]
    assert widths == [charts.BAR_WIDTH / 2, charts.BAR_WIDTH, charts.BAR_WIDTH / 4]
    assert [r.find(f"{SVG}text[@class='count']").text for r in rows] == ["2", "4", "1"]


def test_a_struck_clause_of_a_summary_shows_struck_and_everything_escaped() -> None:
    """A clause `correct` or `forget` struck (`vault.struck`) reads struck through on the Days page, with
    why and when; the rest of the summary, and the struck text itself, stay escaped."""
    from memvault.web.render import summary_html

    html = str(summary_html("~~Redis <b>port</b> 6379~~ (corrected 2026-12-05); backups & logs kept 30 days"))
    assert html.startswith("<del>Redis &lt;b&gt;port&lt;/b&gt; 6379</del> ")
    assert '<span class="struck">(corrected 2026-12-05)</span>' in html
    assert html.endswith("; backups &amp; logs kept 30 days") and "<b>" not in html
    assert str(summary_html(None)) == "" and str(summary_html("~~not a strike~~")) == "~~not a strike~~"


# the events --------------------------------------------------------------------------------------------------
def test_an_event_as_a_row() -> None:
    at = dt.datetime(2026, 3, 5, 9, 30, 15).timestamp()
    event = {"seq": 9, "time": at, "event": "file-indexed", "path": "daily/2026-03-05.md", "chunks": 3}
    assert event_row(event, dt.date(2026, 3, 5)) == {"time": "09:30:15", "kind": "file-indexed",
                                                     "path": "daily/2026-03-05.md", "details": "chunks 3"}  # fmt: skip
    assert event_row(event, dt.date(2026, 3, 6))["time"] == "2026-03-05 09:30:15"
    assert event_row({"seq": 1, "time": at, "event": "watcher-started"}, dt.date(2026, 3, 5))["path"] == ""


class _Daemonless:
    def events(self) -> list[dict[str, Any]]:
        raise UsageError("no daemon serves /v: events come from the daemon (memvault daemon start)")


class _Busy:
    def events(self) -> list[dict[str, Any]]:
        return [{"seq": n, "time": 0.0, "event": "file-changed", "path": f"n{n}.md"} for n in range(1, 31)]


def test_the_latest_twenty_events_newest_first_and_none_without_a_daemon() -> None:
    rows, why = latest_events(_Busy(), dt.date(2026, 3, 5))  # type: ignore[arg-type]
    assert why is None and [r["path"] for r in rows] == [f"n{n}.md" for n in range(30, 10, -1)]
    assert latest_events(_Daemonless(), dt.date(2026, 3, 5)) == ([], "no daemon serves /v: events come from the "  # type: ignore[arg-type]
                                                                 "daemon (memvault daemon start)")  # fmt: skip


# both pages in a browser -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def web() -> Any:
    """tests/test_web_panel.py's panel machinery: it skips when chromium is missing (fails with
    MEMVAULT_NEED_BROWSER set), so only the browser tests here wait on it."""
    from tests import test_web_panel

    return test_web_panel


@pytest.fixture(scope="module")
def served(web: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """test_web_panel's panel, with a busy day added (six entries, a summary) and the project vault's daemon."""
    with web._panel(tmp_path_factory.mktemp("days-health")) as panel:
        root = panel["layout"].root
        busy = web.TODAY - dt.timedelta(days=9)
        items = "".join(f"- 1{n}:00 step {n} of the migration\n" for n in range(6))
        (root / f"daily/{busy}.md").write_text(f"---\ndate: {busy}\nindex: migrated <b>billing</b>\n---\n# {busy}\n\n"
                                               f"## Conversations\n\n{items}", encoding="utf-8")  # fmt: skip
        daemon = [str(web.EXE), "--vault", str(root), "daemon"]
        started = subprocess.run([*daemon, "start", "--debounce", "0.2"], env=panel["env"], capture_output=True,
                                 text=True, timeout=120)  # fmt: skip
        assert started.returncode == 0, started.stderr
        try:
            yield {**panel, "busy": busy}
        finally:
            subprocess.run([*daemon, "stop"], env=panel["env"], capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def browser(web: Any, served: dict[str, Any]) -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = web.webdriver.ChromeOptions()
    options.binary_location = str(web.CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,800"):  # fmt: skip
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="memvault-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    driver = web.webdriver.Chrome(service=Service(str(web.DRIVER)), options=options)
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})  # fmt: skip
        driver.get(served["url"])
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _cell(browser: Any, day: dt.date) -> Any:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.CSS_SELECTOR, f"table.calendar td[data-date='{day}']")


def test_days_is_a_calendar_whose_cells_link_to_their_notes(web: Any, browser: Any, served: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    browser.get(served["base"] + "/days")
    today, past, busy = _cell(browser, web.TODAY), _cell(browser, web.PAST), _cell(browser, served["busy"])
    assert today.text.split("\n") == [str(web.TODAY.day), "2 entries"]
    assert "today" in today.get_attribute("class").split() and today.get_attribute("aria-current") == "date"
    assert past.text.split("\n") == [str(web.PAST.day), "1 entry"] and "shade-2" in past.get_attribute("class")
    assert past.get_attribute("title") == "the day we chose Postgres"
    assert busy.text.split("\n") == [str(served["busy"].day), "6 entries"] and "shade-4" in busy.get_attribute("class")
    assert busy.get_attribute("title") == "migrated <b>billing</b>"  # an attribute's text, not markup
    link = past.find_element(By.TAG_NAME, "a").get_attribute("href")
    assert link.endswith(f"/note?scope=project&path={web.PAST}")
    column = browser.execute_script("return arguments[0].cellIndex", past)
    assert column == web.PAST.weekday()  # Monday is the first column
    month = browser.find_element(By.ID, f"month-{web.PAST:%Y-%m}")
    assert "the day we chose Postgres" in month.find_element(By.CSS_SELECTOR, "ul.summaries").text
    assert browser.find_elements(By.CSS_SELECTOR, "#recent tbody tr")  # the Recent table is still there
    yesterday = web.TODAY - dt.timedelta(days=1)
    if yesterday not in (web.PAST, served["busy"]) and yesterday.month == web.TODAY.month:
        assert not _cell(browser, yesterday).find_elements(By.TAG_NAME, "a")  # no note: nothing to open
    web._shot(browser, "days")
    past.find_element(By.TAG_NAME, "a").click()
    assert "chose Postgres 16 for billing" in browser.find_element(By.ID, "note").text


def test_health_plots_the_entries_and_shows_the_daemons_events_as_they_happen(
    web: Any, browser: Any, served: dict[str, Any]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    browser.get(served["base"] + "/health")
    box = browser.find_element(By.ID, "health-project")
    bars = box.find_elements(By.CSS_SELECTOR, "#chart-days-project rect.bar")
    titles = [b.find_element(By.TAG_NAME, "title").get_attribute("textContent") for b in bars]
    expected = {served["busy"]: 6, web.PAST: 1, web.TODAY: 2}
    if (web.TODAY - dt.date(2026, 1, 2)).days < 60:  # MEMORY.md's one entry with a saved day
        expected[dt.date(2026, 1, 2)] = 1
    assert titles == [f"{d}: {calendar.entries_label(n)}" for d, n in sorted(expected.items())]
    sections = box.find_elements(By.CSS_SELECTOR, "#chart-sections-project g.row")
    assert [s.find_element(By.TAG_NAME, "title").get_attribute("textContent") for s in sections] == [
        "Preferences: 2 entries", "Notes: 1 entry", "daily notes: 9 entries"]  # fmt: skip
    numbers = box.find_element(By.CSS_SELECTOR, "#plot-sections-project details table").get_attribute("textContent")
    assert "daily notes" in numbers and "9" in numbers
    assert not browser.find_elements(By.CSS_SELECTOR, "meta[http-equiv='refresh']")
    assert "no daemon serves" in browser.find_element(By.ID, "events-user").text
    recall = browser.find_element(By.ID, "recall-project").text  # seed 002's /memory status figures
    status = subprocess.run([str(web.EXE), "--vault", str(served["layout"].root), "status", "--json"],
                            env=served["env"], capture_output=True, text=True, timeout=120)  # fmt: skip
    stable = json.loads(status.stdout)["memory"]["project"]["stable_entries"]
    assert "recall errors 0" in recall and f"stable block {stable} entries" in recall, recall
    WebDriverWait(browser, 60, 1).until(lambda d: d.refresh() or d.find_elements(By.CSS_SELECTOR,
                                        "#events-project tbody tr"))  # the daemon's first pass  # fmt: skip
    kinds = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#events-project td.kind")]
    assert "watcher-started" in kinds and len(kinds) <= 20
    web._shot(browser, "health")
    browser.find_element(By.ID, "go-live").click()
    meta = browser.find_element(By.CSS_SELECTOR, "meta[http-equiv='refresh']")
    assert meta.get_attribute("content") == "5" and browser.current_url.endswith("/health?live=1")
    (served["layout"].root / "ideas.md").write_text("# Ideas\n\n- a panel that follows the daemon\n")
    started = time.monotonic()

    def shown(driver: Any) -> bool:  # the page reloads itself: no click, no get
        rows = driver.find_elements(By.CSS_SELECTOR, "#events-project tbody tr")
        try:
            return any("ideas.md" in row.text for row in rows)
        except Exception:  # the row went with the reload between finding and reading it
            return False

    WebDriverWait(browser, 45, 0.5).until(shown)
    assert browser.current_url.endswith("/health?live=1") and time.monotonic() - started < 45
