"""Markdown headings and the sections they open: finding them, counting items, inserting entries.

Fenced code blocks are skipped, so a `# comment` inside a shell snippet is
never taken for a heading.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from memvault.vault.fileio import split_lines

HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])[ \t]+\S")


def outside_fences(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Yield (index, line) for lines that are not inside (or fencing) a fenced code block."""
    fence = ""
    for i, line in enumerate(lines):
        fence_match = FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if not fence:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = ""
            continue
        if not fence:
            yield i, line


def iter_headings(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """Yield (line index, level, title) for every heading outside fenced code."""
    for i, line in outside_fences(lines):
        match = HEADING.match(line)
        if match:
            yield i, len(match.group(1)), (match.group(2) or "").strip()


@dataclass(frozen=True)
class Section:
    """A heading's span: lines [start, end) as 0-based indices, heading line included."""

    title: str
    level: int
    start: int
    end: int
    items: int


def find_sections(lines: list[str], level: int) -> list[Section]:
    """Sections opened by headings of exactly `level`; each runs to the next heading of level <= it."""
    heads = list(iter_headings(lines))
    sections = []
    for n, (i, lv, title) in enumerate(heads):
        if lv != level:
            continue
        end = next((j for j, lv2, _ in heads[n + 1 :] if lv2 <= level), len(lines))
        items = sum(1 for _, line in outside_fences(lines[i + 1 : end]) if _ITEM.match(line))
        sections.append(Section(title, level, i, end, items))
    return sections


def title_key(title: str) -> str:
    """What two section titles share when they name one section: "user  preferences" is "User
    Preferences", so a save spelled either way goes to the one section rather than making a second."""
    return " ".join(title.split()).casefold()


def spellings(text: str, level: int = 2) -> dict[str, str]:
    """Each section's `title_key` -> the note's own spelling of it (the first, when two spell it)."""
    bare = [line.rstrip("\r\n") for line in split_lines(text)]
    found: dict[str, str] = {}
    for section in find_sections(bare, level):
        found.setdefault(title_key(section.title), section.title)
    return found


def title_in(text: str, title: str, level: int = 2) -> str:
    """The note's own spelling of section `title` (`title_key`), or `title` when the note has none."""
    return spellings(text, level).get(title_key(title), title)


def entry_lines(entry: str, prefix: str = "- ", indent: str = "") -> list[str]:
    """Format an entry as one list item (nested `indent` deep); continuation lines are indented under
    it. A line that would read as a heading or a code fence at two spaces (both may be indented up to
    three) gets four, so it stays inside the entry instead of ending its section or fencing off the
    rest of the note; one that would read as a list item gets six, past a nested item's reach, so
    it stays text of this entry instead of becoming an entry of its own."""
    first, *rest = entry.split("\n")
    return [indent + prefix + first.rstrip()] + [(indent + _continuation(line)).rstrip() for line in rest]


def _continuation(line: str) -> str:
    bare = line.strip()
    if _ITEM.match(bare):
        return "      " + bare
    return ("    " + bare if bare.startswith(("#", "```", "~~~")) else "  " + line).rstrip()


def insert_in_section(text: str, title: str, new_lines: list[str], newline: str, level: int = 2) -> tuple[str, bool]:
    """Insert lines after the last non-blank line of the named section (`title_key`), or add the section
    at the end.

    Returns the new text and whether the section had to be created. Every
    existing byte is kept; the new lines use the note's own line ending.
    """
    lines = split_lines(text)
    bare = [line.rstrip("\r\n") for line in lines]
    block = [line + newline for line in new_lines]
    match = next((s for s in find_sections(bare, level) if title_key(s.title) == title_key(title)), None)
    if match is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += newline
        lead = [newline] if lines and bare[-1].strip() else []
        return "".join([*lines, *lead, f"{'#' * level} {title}{newline}", newline, *block]), True
    last = max(i for i in range(match.start, match.end) if i == match.start or bare[i].strip())
    if not lines[last].endswith("\n"):
        lines[last] += newline
    if last == match.start:
        block.insert(0, newline)  # a blank line between a heading and its first item
    if last + 1 < len(lines) and bare[last + 1].strip():
        block.append(newline)  # keep the next heading or paragraph apart
    return "".join([*lines[: last + 1], *block, *lines[last + 1 :]]), False
