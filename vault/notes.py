"""Turning a note's text into a `Note`: frontmatter, kind and date.

Broken frontmatter never hides a note: the whole file is kept as body text
and the problem is reported with the file and line.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import cache
from typing import Any

from memvault.vault.model import Note
from memvault.vault.paths import DAILY_DIR, MEMORY_FILE
from memvault.vault.places import CONVERSATIONS_DIR

_DAILY_NAME = re.compile(rf"^{DAILY_DIR}/(\d{{4}}-\d{{2}}-\d{{2}})\.md$")
_FENCE_END = re.compile(r"^(?:---|\.\.\.)\s*$")


@cache
def _yaml() -> tuple[Any, Any, Any]:
    """yaml, frontmatter's loader and one without aliases, imported by the first note with frontmatter
    (16 ms: a search through the daemon, or a note without any, never pays it)."""
    import frontmatter
    import yaml

    class NoAliases(yaml.SafeLoader):
        """YAML without aliases (`*name`): a few hundred bytes of them can stand for billions of values
        (billion laughs), which a listing or an export would then write out in full."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, "an alias (*name), which frontmatter may not use", mark)
            return super().compose_node(parent, index)

    return yaml, frontmatter.YAMLHandler(), NoAliases


def _load(block: str) -> Any:
    yaml, handler, no_aliases = _yaml()
    return yaml.load(block, Loader=no_aliases) if "*" in block else handler.load(block)


def note_kind(rel_path: str) -> str:
    """`memory` for MEMORY.md, `daily` for daily/YYYY-MM-DD.md, `conversation` for a conversation's own
    note (`vault.history`), `other` for any other note."""
    if rel_path == MEMORY_FILE:
        return "memory"
    if rel_path.startswith(f"{CONVERSATIONS_DIR}/"):
        return "conversation"
    return "daily" if _DAILY_NAME.match(rel_path) else "other"


def _daily_date(rel_path: str) -> dt.date | None:
    match = _DAILY_NAME.match(rel_path)
    if not match:
        return None
    try:
        return dt.date.fromisoformat(match.group(1))
    except ValueError:
        return None


def _as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def _split_frontmatter(text: str) -> tuple[str | None, int]:
    """Return the YAML block (or None) and the 1-based line where the body starts."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None, 1
    for i in range(1, len(lines)):
        if _FENCE_END.match(lines[i].rstrip("\r")):
            return "\n".join(lines[1:i]), i + 2
    return None, 1  # an opening fence with no close is ordinary Markdown (a thematic break)


def parse_note(rel_path: str, text: str) -> Note:
    """Build a `Note`; a frontmatter block that is not a YAML mapping becomes a `problem`."""
    block, body_line = _split_frontmatter(text)
    meta: dict[str, Any] = {}
    problem = None
    if block is not None:
        try:
            loaded = _load(block)
        except (_yaml()[0].YAMLError, RecursionError) as exc:  # RecursionError: nested thousands deep
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            problem = f"{rel_path}:{line}: broken frontmatter ({reason}); read as plain text"
        else:
            if loaded is None or isinstance(loaded, dict):
                meta = {str(k): v for k, v in (loaded or {}).items()}
            else:
                problem = f"{rel_path}:1: frontmatter is a {type(loaded).__name__}, not a mapping; read as plain text"
        if problem:
            body_line = 1
    body = "\n".join(text.split("\n")[body_line - 1 :]) if body_line > 1 else text
    day = _as_date(meta.get("date")) or _daily_date(rel_path)
    return Note(rel_path, note_kind(rel_path), day, meta, body, body_line, problem)
