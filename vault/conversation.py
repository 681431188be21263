"""A conversation as memvault reads it, and the entry that summarises it in the day's note.

Accepted: a JSON list of `{"role", "content"}` messages, the same as JSON lines, or an object with
a `messages` list (the chat-completions shape). `content` may be a string or a list of parts whose
`text` fields are joined.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memvault.vault.entries import Entry, clip, iter_entries
from memvault.vault.errors import GuardError, NoteReadError, UsageError
from memvault.vault.fileio import read_note
from memvault.vault.guards import MAX_ENTRY_CHARS, check_entry
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout, daily_notes

QUOTE_CHARS = 160  # each message as the summary quotes it
LAST = 5


@dataclass(frozen=True)
class Message:
    role: str
    content: str


def _content(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text") for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


def parse_conversation(text: str, name: str = "conversation") -> list[Message]:
    """The messages of a conversation file's text; anything else is one line naming `name`."""
    data: Any
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError:
            raise UsageError(f"{name}: not JSON, nor JSON lines") from None
    if isinstance(data, dict):
        data = data.get("messages")
    if not isinstance(data, list) or not data:
        raise UsageError(f"{name}: no messages (a list of {{role, content}}, or an object with a messages list)")
    out = []
    for n, item in enumerate(data, 1):
        content = _content(item.get("content")) if isinstance(item, dict) else None
        role = item.get("role") if isinstance(item, dict) else None
        if not isinstance(role, str) or content is None:
            raise UsageError(f"{name}: message {n} is not a {{role, content}} object")
        out.append(Message(role.strip().lower(), content))
    return out


def _quote(message: Message) -> tuple[str | None, str | None]:
    """One message as the summary shows it, or why it is left out."""
    one = " ".join(message.content.split())
    cut = clip(one, QUOTE_CHARS)
    try:
        check_entry(f"{message.role}: {cut}")
        check_entry(message.content, limit=10 * MAX_ENTRY_CHARS)  # a secret past the cut counts too
    except GuardError as exc:
        return None, str(exc)
    except UsageError:
        return None, None  # an empty message: nothing to quote
    return f"{message.role}: {cut}", None


@dataclass(frozen=True)
class Summary:
    """The entry for the day's note, and what was left out of it and why."""

    text: str
    left_out: list[str]
    cut: int  # messages shortened to `QUOTE_CHARS`


SUMMARY_HEAD = "Conversation: "


def conversation_summaries(layout: Layout, count: int, notes: int | None = None) -> list[Entry]:
    """The latest `count` conversation summaries `extract` wrote into the daily notes, newest first
    (seed 002's session summaries): the notes are read from the newest day back, only as far as
    needed, and at most the newest `notes` of them (what runs on every prompt stays cheap in a vault
    of years). A note that cannot be read is passed over."""
    found: list[Entry] = []
    for _, path in list(reversed(daily_notes(layout)))[:notes]:
        if len(found) >= count:
            break
        rel = layout.relative(path)
        try:
            entries = list(iter_entries(parse_note(rel, read_note(path, rel, layout=layout).text)))
        except NoteReadError:
            continue
        mine = [e for e in entries if e.fact.startswith(SUMMARY_HEAD) and not e.superseded]
        found += sorted(mine, key=lambda e: e.start_line, reverse=True)
    return found[:count]


def summarise(messages: list[Message]) -> Summary:
    """The first message and the last five, each shortened, with the counts: enough to find the
    conversation again and see where it ended, not a transcript."""
    users = sum(m.role == "user" for m in messages)
    head = (f"{SUMMARY_HEAD}{len(messages)} messages, {users} from the user, "
            f"{sum(m.role == 'assistant' for m in messages)} from the assistant")  # fmt: skip
    shown = [messages[0], *messages[max(1, len(messages) - LAST) :]]
    lines, left_out, cut = [head], [], 0
    for n, message in enumerate(shown):
        if n == 1 and len(messages) > LAST + 1:
            lines.append(f"… {len(messages) - LAST - 1} more …")
        quoted, why = _quote(message)
        cut += len(" ".join(message.content.split())) > QUOTE_CHARS
        if quoted:
            lines.append(quoted)
        elif why:
            left_out.append(f"a {message.role} message left out: {why}")
    return Summary("\n".join(lines), left_out, cut)
