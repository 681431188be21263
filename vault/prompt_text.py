"""An entry's line as a prompt gives it to an agent: memvault's markup (inline fields, the `saved`
comment) is for the note and for memvault; an agent reads what it means, in words."""

from __future__ import annotations

import re

from memvault.vault.entries import FIELDS, SAVED, literal

# how a prompt says what a field means: memvault's markup is for the note, not for the agent that reads it
_MEANING = {"key": "key {}", "superseded": "superseded on {}", "corrects": "corrects an earlier entry",
            "conversation": "from conversation {}", "source": "source {}",
            "importance": "importance {} of 5"}  # fmt: skip


def for_agent(line: str) -> str:
    """A line of a note as a prompt gives it: no `saved` comment and no raw field, but what they say in
    words after the text, `(key redis-port; saved 2026-12-04)`; a text that merely holds such markup
    reads as it was said (`literal`)."""
    meant = [_MEANING[m[1]].format(m[2]) for m in FIELDS.finditer(line) if m[1] != "source"]
    if saved := SAVED.search(line):
        meant.append(f"saved {saved[1]}")
    text = re.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", literal(FIELDS.sub("", SAVED.sub("", line)))).rstrip()
    return f"{text} ({'; '.join(meant)})" if meant else text
