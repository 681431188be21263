"""What the Health page shows of one vault: the status verb's figures, its entries per day and per
section as charts, and the daemon's latest events. Gathered here so that `pages.health` stays a
loop; a vault whose status or entries cannot be read still shows the rest, with the one line why."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from memvault.api import Vault
from memvault.vault.errors import MemvaultError
from memvault.web.charts import day_chart, day_counts, section_chart, section_counts

EVENTS_SHOWN = 20
DAYS_PLOTTED = 60
_SHOWN_APART = ("seq", "time", "event", "path")  # an event's other fields are its details


def event_row(event: Mapping[str, Any], today: dt.date) -> dict[str, str]:
    """An event as a row: its local time (with the date when not today), kind, path and other fields."""
    at = dt.datetime.fromtimestamp(float(event.get("time", 0)))
    when = at.strftime("%H:%M:%S") if at.date() == today else at.strftime("%Y-%m-%d %H:%M:%S")
    shown = {k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in event.items()}  # no Python reprs
    details = " · ".join(f"{k} {v}" for k, v in shown.items() if k not in _SHOWN_APART and v not in ("", None))
    return {"time": when, "kind": str(event.get("event", "")), "path": str(event.get("path", "")), "details": details}


def latest_events(vault: Vault, today: dt.date, count: int = EVENTS_SHOWN) -> tuple[list[dict[str, str]], str | None]:
    """The daemon's last `count` events, newest first; with no daemon none, and the line saying so."""
    try:
        events = vault.events()
    except MemvaultError as exc:
        return [], str(exc)
    return [event_row(e, today) for e in reversed(events[-count:])], None


def vault_health(name: str, vault: Vault, today: dt.date) -> dict[str, Any]:
    """One vault's box on the page: figures, charts (with their numbers) and events."""
    try:
        status: dict[str, Any] | str = vault.status()
    except MemvaultError as exc:
        status = str(exc)
    try:
        rows: list[dict[str, Any]] = vault.entries().entries
        problem = None
    except MemvaultError as exc:
        rows, problem = [], str(exc)
    days, sections = day_counts(rows, today, DAYS_PLOTTED), section_counts(rows)
    events, no_events = latest_events(vault, today)
    try:  # recall's hits and errors, the stable block (seed 002's /memory status)
        from memvault.verbs.entries import Overview

        memory: dict[str, Any] | None = vault.run(Overview()).to_json()
    except MemvaultError:
        memory = None
    return {"scope": name, "root": str(vault.root), "status": status, "daemon": vault.daemon_status(),
            "entries_problem": problem, "days": [(d, n) for d, n in days if n], "sections": sections,
            "day_chart": day_chart(days, f"chart-days-{name}"), "section_chart": section_chart(sections,
            f"chart-sections-{name}"), "events": events, "no_events": no_events, "memory": memory}  # fmt: skip
