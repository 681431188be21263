"""What each conversation said, kept in the vault (seed 000's `recall_memory`: "how did we solve X last
time?"): one note a conversation, `conversations/DAY-ID.md` (DAY: the day it began), its messages as
list items in order, appended to as the conversation goes on (the hooks hand it over turn by turn).
`extract` writes it beside the day's summary unless `keep_conversations = false` in memvault.toml.

It is history, not memory: indexed and searched (`search --kind conversation`, MCP `memory_search`
with `kind`), never listed as entries, never in the stable block or a prompt's recall, and moved to the
trash by retention like a daily note. A message the guards refuse (one that looks like a credential) is
kept as a line saying so, never its text."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from memvault.vault.conversation import Message
from memvault.vault.errors import GuardError, UsageError
from memvault.vault.fileio import TextFile, update_note
from memvault.vault.guards import MAX_ENTRY_CHARS, check_entry
from memvault.vault.paths import Layout
from memvault.vault.places import CONVERSATIONS_DIR

_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def _slug(conversation: str) -> str:
    return _SLUG.sub("-", conversation).strip("-")[:80] or "conversation"


PART_BYTES = 2 * 1024 * 1024  # a long conversation goes on in a next part: a note stays quick to index


def conversation_note(layout: Layout, conversation: str, today: dt.date, adding: int = 0) -> Path:
    """The conversation's note: its last part (begun on an earlier day, or today), or a next part when
    `adding` bytes would take that one past `PART_BYTES`."""
    folder = layout.root / CONVERSATIONS_DIR
    slug = _slug(conversation)
    first = sorted(folder.glob(f"????-??-??-{slug}.md")) if folder.is_dir() else []
    base = first[0].stem if first else f"{today.isoformat()}-{slug}"
    numbered = {q.stem.rsplit(".part", 1)[1]: q for q in folder.glob(f"{base}.part*.md")} if folder.is_dir() else {}
    parts = [folder / f"{base}.md", *(numbered[n] for n in sorted((n for n in numbered if n.isdigit()), key=int))]
    last = parts[-1]
    if last.exists() and last.stat().st_size + adding > PART_BYTES:
        return folder / f"{base}.part{len(parts) + 1}.md"
    return last


_AT = re.compile(r"^(- \*\*[^*\n]+\*\*) \d{2}:\d{2}:", re.MULTILINE)


def _timeless(text: str) -> str:
    """Items without the minute they were kept at: a part run again later is still the same part."""
    return _AT.sub(r"\1:", text.replace("\r\n", "\n"))


def _item(message: Message, at: str) -> str:
    """One message as a list item, its lines after the first indented under it."""
    try:
        check_entry(message.content, limit=10 * MAX_ENTRY_CHARS)
        body = message.content.strip()
    except GuardError as exc:
        body = f"(left out: {exc})"
    except UsageError:
        return ""
    first, *rest = [line.rstrip() for line in body.splitlines()] or [""]
    return "".join([f"- **{message.role}** {at}: {first}\n", *(f"  {line}\n" if line else "\n" for line in rest)])


def keep_messages(layout: Layout, conversation: str, title: str | None, messages: list[Message],
                  now: dt.datetime | None = None) -> str | None:  # fmt: skip
    """Append `messages` to the conversation's note (made with its title and id the first time); its
    vault path, or None when none of them had words."""
    now = now or dt.datetime.now()
    items = "".join(_item(m, now.strftime("%H:%M")) for m in messages)
    if not items:
        return None
    path = conversation_note(layout, conversation, now.date(), len(items.encode("utf-8")))
    path.parent.mkdir(parents=True, exist_ok=True)

    def change(current: TextFile | None) -> str:
        if current is None:
            named = " ".join((title or conversation).split())[:160]
            return f"# {named}\n\n[conversation:: {conversation}]\n\n## Messages\n\n{items}"
        if _timeless(current.text).endswith(_timeless(items)):  # the same part again (a run killed after
            return current.text  # it wrote, run again): once, as every other write of extract
        return current.text + ("" if current.text.endswith("\n") else "\n") + items

    update_note(layout, path, change)
    return layout.relative(path)
