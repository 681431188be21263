"""Snippets centred on the lines that best match the query, and terminal highlighting."""

from __future__ import annotations

import re
from collections.abc import Iterable

SNIPPET_LINES = 3
MAX_LINE_CHARS = 240


def _window(line: str, terms: list[str]) -> str:
    """A long line cut to a window around its first matched term."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    lower = line.lower()
    hits = [lower.find(t) for t in terms if t and lower.find(t) >= 0]
    centre = min(hits) if hits else 0
    start = max(0, min(centre - MAX_LINE_CHARS // 3, len(line) - MAX_LINE_CHARS))
    piece = line[start : start + MAX_LINE_CHARS]
    return ("…" if start else "") + piece + ("…" if start + MAX_LINE_CHARS < len(line) else "")


def match_terms(query_tokens: Iterable[str]) -> list[str]:
    """The query tokens worth looking for in text: single Latin letters would match everywhere."""
    return sorted({t for t in query_tokens if len(t) > 1 or not t.isascii()}, key=len, reverse=True)


def make_snippet(text: str, terms: list[str], lines: int = SNIPPET_LINES) -> str:
    """The few lines of a chunk around its best-matching line.

    `terms` come from `match_terms`. The best line holds the most distinct
    terms (as substrings, so no line is tokenised: a page of 100 hits stays
    cheap); ties go to the earlier line.
    """
    body = text.split("\n")
    best, best_score = 0, 0
    for i, line in enumerate(body):
        lower = line.lower()
        score = sum(t in lower for t in terms) if line.strip() else -1
        if score > best_score:
            best, best_score = i, score
    if best_score == 0:  # nothing matched literally (a vector hit): the first non-blank lines
        best = next((i for i, line in enumerate(body) if line.strip()), 0)
    start = max(0, min(best - (lines - 1) // 2, len(body) - lines))
    chosen = [_window(line, terms) for line in body[start : start + lines] if line.strip()]
    return "\n".join(chosen)


def highlight(snippet: str, terms: Iterable[str], on: str = "\x1b[1;33m", off: str = "\x1b[0m") -> str:
    """Wrap every occurrence of a query token in ANSI colour (for terminals only)."""
    terms = match_terms(terms)
    if not terms:
        return snippet
    pattern = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
    return pattern.sub(lambda m: f"{on}{m.group(0)}{off}", snippet)
