"""KinetAios's memory file, both ways (seed 000/001): `{"version": 1, "exportedAt": number, "memories":
[{"content", "createdAt", "conversationId"}]}`.

KinetAios keeps `created_at INTEGER` (Unix milliseconds) and `conversation_id` in its table, so a file
may carry either spelling and a time as a number; an ISO date-time string is read too (what older
memvault exports wrote). The day of a time is the local day of that instant, as the person saw it; the
day of a string is the date as written there, offset and all.

Out, a memory is a fact: its text without memvault's fields or a daily entry's `HH:MM` stamp (that is
its time, in `createdAt`), and a conversation's digest (`extract`'s summary of it) is not one.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

from memvault.vault.conversation import SUMMARY_HEAD
from memvault.vault.days import check_day
from memvault.vault.entries import field_in, one_line
from memvault.vault.errors import UsageError
from memvault.vault.guards import check_field_value

_STAMP = re.compile(r"^(\d{1,2}):(\d{2}) ")  # a daily entry's time, as `append_daily` writes it
_LATEST_MS = 253402300799999  # 9999-12-31T23:59:59.999Z: past it no date can be written


def read_memory(where: str, item: Any, today: dt.date) -> tuple[str, str | None, str | None]:
    """One memory of a KinetAios file: (content, its day or None, its conversation id or None); any fault
    is one `UsageError` starting with `where`."""
    if not isinstance(item, dict) or not isinstance(item.get("content"), str):
        raise UsageError(f'{where} needs a string "content"')
    created = _either(where, item, "createdAt", "created_at")
    conversation = _either(where, item, "conversationId", "conversation_id")
    day = None
    if created is not None:
        name, value = created
        day = _day(f'{where}: "{name}"', value)
        check_day(dt.date.fromisoformat(day), today, f'{where}: "{name}"')
    if conversation is not None:
        name, value = conversation
        if not isinstance(value, str):
            raise UsageError(f'{where}: "{name}" must be a string, not {_kind(value)}')
        try:
            check_field_value(f'"{name}"', value)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from None
    return item["content"], day, conversation[1] if conversation else None


def _either(where: str, item: dict[str, Any], camel: str, snake: str) -> tuple[str, Any] | None:
    """The field under whichever name the file used, with that name; both, saying different things, is
    a fault (which one holds is not for memvault to guess)."""
    given = [(name, item[name]) for name in (camel, snake) if item.get(name) is not None]
    if len(given) == 2 and given[0][1] != given[1][1]:
        raise UsageError(f'{where}: "{camel}" and "{snake}" differ; give one')
    return given[0] if given else None


def _day(where: str, value: Any) -> str:
    """The day of a `createdAt`: Unix milliseconds (local day), or an ISO date-time (its date as written)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or not 0 <= value <= _LATEST_MS:
            raise UsageError(f"{where} {value!r} is not a time (Unix milliseconds)")
        return dt.datetime.fromtimestamp(value / 1000).date().isoformat()
    if not isinstance(value, str):
        raise UsageError(f"{where} must be Unix milliseconds or an ISO date-time, not {_kind(value)}")
    try:
        return dt.datetime.fromisoformat(value).date().isoformat()
    except ValueError:
        raise UsageError(f"{where} {value[:40]!r} is not an ISO date-time") from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", bool: "true or false"}.get(type(value), f"a {type(value).__name__}")


def _ms(day: str, hour: int = 0, minute: int = 0) -> int:
    """Local `day` at `hour:minute` as Unix milliseconds."""
    return int(dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute).astimezone().timestamp() * 1000)


def is_digest(text: str) -> bool:
    """A conversation's digest, as `extract` writes it into the day's note: about a conversation, not a
    fact from one."""
    return _STAMP.sub("", one_line(text)).startswith(SUMMARY_HEAD)


def memory_of(entry: dict[str, Any]) -> dict[str, Any] | None:
    """One exported entry (`vault.exchange.export_entry`) as a KinetAios memory, None for a digest:
    `createdAt` is its day (a daily note's, or the day memvault saved a MEMORY.md entry) at its stamp's
    time if it has one, else at midnight."""
    if entry["path"].startswith("daily/") and is_digest(entry["text"]):
        return None
    content = one_line(entry["text"])
    memory: dict[str, Any] = {"content": content}
    if entry.get("date"):
        stamp = _STAMP.match(content) if entry["path"].startswith("daily/") else None
        hour, minute = (int(stamp[1]), int(stamp[2])) if stamp else (0, 0)
        if stamp is not None and hour < 24 and minute < 60:
            memory["content"] = content[stamp.end() :]
        else:
            hour, minute = 0, 0
        memory["createdAt"] = _ms(entry["date"], hour, minute)
    conversation = field_in(entry["text"], "conversation")
    if conversation:
        memory["conversationId"] = conversation
    return memory


def kinetaios_document(entries: list[dict[str, Any]], now: dt.datetime | None = None) -> dict[str, Any]:
    """The KinetAios shape `import` reads, `exportedAt` in Unix milliseconds as KinetAios writes it."""
    stamp = int((now or dt.datetime.now().astimezone()).timestamp() * 1000)
    memories = [m for m in map(memory_of, entries) if m is not None]
    return {"version": 1, "exportedAt": stamp, "memories": memories}
