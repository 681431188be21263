"""Heading-aware chunking: sections by `#`-`######` headings, split to a token budget.

Sizes are estimated in model tokens, not characters: a CJK character is about
one token (a 300-character Chinese paragraph is about 280), an English word
about 1.3. Long sections split at paragraph, then line, then sentence
boundaries, with the last small piece of one chunk repeated at the start of
the next so a fact on a boundary is not cut in half. An entry marked
`[superseded:: DAY]` is a chunk of its own, so search can rank it below its
correction without moving the entries around it. A daily note's frontmatter
summary (`index`) is a chunk too; its overview counters ("- Todos: 0") are
bookkeeping, never text to find.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Container, Iterator
from dataclasses import dataclass

from memvault.vault.cjk import CJK_WIDE, script_of
from memvault.vault.days import SUMMARY_KEY, live, summary_of
from memvault.vault.entries import MARKER, field_in, item_end, tags_in
from memvault.vault.importance import level as importance_level
from memvault.vault.model import Chunk, Note, vector_text
from memvault.vault.sections import HEADING, iter_headings, outside_fences
from memvault.vault.templates import COUNTER, OVERVIEW

# bump when chunk boundaries, texts or payloads change: indexes re-chunk every note, their vectors from the
# cache (c9: a note's script read from its sentence, `indexer.filters`)
VERSION = "c9"
MAX_TOKENS = 240  # all-MiniLM-L6-v2 reads 256 tokens, [CLS] and [SEP] included
OVERLAP_TOKENS = 40
# An entry is embedded with its heading path (less its dates: `vault.model.dense_context`), and put into
# BM25 with the two entries before it as well: on LoCoMo (bench/results/README.md, issue 26) the neighbours
# lifted BM25's recall@10 of evidence turns from 0.638 to 0.730 and cut the dense retriever's from 0.637 to
# 0.577; before, not after, so appending an entry changes no other unit. Only entries in its own script:
# an English entry below a Chinese one would take the Chinese words, and the dense retriever's cross-script
# bias then ranked it above the Chinese entry for a Chinese question
NEAR = 2

_WORD = re.compile(r"[^\W_]+|[^\w\s]")
_LONG_WORD = re.compile(r"[^\W_]{8,}")  # the words of _WORD that count more than once
_OPEN, _CLOSE = "<!--", "-->"
_OVERVIEWS = set(OVERVIEW.values())
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;.])\s*")


def estimate_tokens(text: str) -> int:
    """A cheap, model-free estimate of WordPiece tokens, good enough to size chunks."""
    cjk = len(CJK_WIDE.findall(text))
    rest = CJK_WIDE.sub(" ", text)
    words = len(_WORD.findall(rest))
    long_words = sum(len(w) >> 3 for w in _LONG_WORD.findall(rest))  # split into several pieces
    return cjk + words + long_words


@dataclass
class _Piece:
    """A unit of a section: whole lines [start, end] (0-based, inclusive), or part of one line."""

    start: int
    end: int
    text: str
    tokens: int
    superseded: str | None = None  # a superseded entry: packed alone
    entry: int | None = None  # the entry it is (of), numbered in its section; None for text


def _sections(lines: list[str]) -> Iterator[tuple[list[tuple[int, str]], int, int]]:
    """Yield (heading path as (level, title) pairs, first line, last line) for each section."""
    path: list[tuple[int, str]] = []
    start = 0
    for i, level, title in iter_headings(lines):
        if i > start:
            yield path, start, i - 1
        path = [(lv, t) for lv, t in path if lv < level] + [(level, title)]
        start = i
    if start < len(lines):
        yield path, start, len(lines) - 1


def _paragraphs(lines: list[str], start: int, end: int) -> Iterator[tuple[int, int]]:
    """Runs of non-blank lines; a blank line inside a fenced block does not end one."""
    prose = {start + i for i, _ in outside_fences(lines[start : end + 1])}  # fence lines are not prose
    first = None
    for i in range(start, end + 1):
        if lines[i].strip() or i not in prose:
            first = i if first is None else first
        elif first is not None:
            yield first, i - 1
            first = None
    if first is not None:
        yield first, end


def _split_line(i: int, line: str, limit: int) -> Iterator[_Piece]:
    """Split one over-long line at sentence ends, then by length, keeping its line number.

    A sentence over the limit is cut through a bounded window that moves along it, so a
    multi-megabyte line with no sentence end costs linear time, not quadratic."""
    buf = ""
    for sentence in _SENTENCE_END.split(line):
        start = 0
        view = _window(sentence, start, limit)
        while estimate_tokens(view) > limit:
            cut = _cut_point(view, limit)
            if buf:
                yield _Piece(i, i, buf, estimate_tokens(buf))
                buf = ""
            yield _Piece(i, i, view[:cut], estimate_tokens(view[:cut]))
            start += cut
            view = _window(sentence, start, limit)
        sentence = view  # within the limit, so the window reached the sentence's end
        candidate = f"{buf} {sentence}".strip() if not CJK_WIDE.search(sentence[:1]) else buf + sentence
        if buf and estimate_tokens(candidate) > limit:
            yield _Piece(i, i, buf, estimate_tokens(buf))
            buf = sentence
        else:
            buf = candidate
    if buf.strip():
        yield _Piece(i, i, buf, estimate_tokens(buf))


def _window(text: str, start: int, limit: int) -> str:
    """`text[start:]`, or the shortest prefix of it (growing 4x from 16 x limit characters) already
    over `limit` tokens. The estimate never falls as a prefix grows, so a cut found in the window
    is the cut the whole text would give."""
    width = 16 * limit
    while start + width < len(text):
        view = text[start : start + width]
        if estimate_tokens(view) > limit:
            return view
        width *= 4
    return text[start:]


def _cut_point(text: str, limit: int) -> int:
    """The longest prefix within `limit` tokens, found by bisection, ending at a space if one is near."""
    lo, hi = 1, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if estimate_tokens(text[:mid]) <= limit else (lo, mid - 1)
    space = text.rfind(" ", lo // 2, lo)
    return space if space > 0 else lo


def _runs(lines: list[str], start: int, end: int, prose: Container[int]) -> Iterator[tuple[int, int, str | None, bool]]:
    """A section as runs of lines (first, last, superseded day, entry?): each entry a run of its own
    (a list item outside code fences, with what `item_end` gives it, as `list` reads it: its paragraphs
    past a blank line too, and the nested items under it), a superseded entry, a nested one too, apart
    from the entry around it with its day; the lines between as runs of text, a paragraph each."""
    run = i = start
    while i <= end:
        if i not in prose or not MARKER.match(lines[i]):
            i += 1
            continue
        for first, last in _paragraphs(lines, run, i - 1):
            yield first, last, None, False
        day = field_in(lines[i], "superseded")
        last = item_end(lines, i, end, prose)
        while day is None and last < end and _nested_current(lines[last + 1]):
            last = item_end(lines, last + 1, end, prose)
        yield i, last, day, True
        run = i = last + 1
    for first, last in _paragraphs(lines, run, end):
        yield first, last, None, False


def _nested_current(line: str) -> bool:
    found = MARKER.match(line)
    return found is not None and bool(found.group(1)) and field_in(line, "superseded") is None


def _pieces(lines: list[str], start: int, end: int, limit: int, prose: Container[int]) -> Iterator[_Piece]:
    entry = 0
    for p_start, p_end, superseded, is_entry in _runs(lines, start, end, prose):
        entry += is_entry
        unit = entry if is_entry else None
        text = "\n".join(lines[p_start : p_end + 1])
        tokens = estimate_tokens(text)
        if tokens <= limit:
            yield _Piece(p_start, p_end, text, tokens, superseded, unit)
            continue
        for i in range(p_start, p_end + 1):
            if not lines[i].strip():
                continue  # a blank line between an entry's paragraphs: `_join` puts it back
            tokens = estimate_tokens(lines[i])
            pieces = [_Piece(i, i, lines[i], tokens)] if tokens <= limit else _split_line(i, lines[i], limit)
            for piece in pieces:
                piece.superseded, piece.entry = superseded, unit
                yield piece


def _pack(pieces: list[_Piece], limit: int, overlap: int) -> Iterator[list[_Piece]]:
    """Greedy packing of text; a chunk starts with the previous chunk's last piece when it is small.
    An entry shares its chunk with nothing else and carries nothing over (a long one takes several)."""
    group: list[_Piece] = []
    size = 0
    for piece in pieces:
        if group and piece.entry != group[-1].entry:
            yield group
            group, size = [], 0
        if group and size + piece.tokens > limit:
            yield group
            tail = group[-1]
            carried = len(group) > 1 and tail.tokens <= overlap and tail.tokens + piece.tokens <= limit
            group, size = ([tail], tail.tokens) if carried and tail.entry is None else ([], 0)
        group.append(piece)
        size += piece.tokens
    if group:
        yield group


def _join(group: list[_Piece]) -> str:
    parts: list[str] = []
    for prev, piece in zip([None, *group], group, strict=False):
        sep = "" if prev is None else ("\n" if prev.end < piece.start else " ")
        if prev is not None and prev.end + 1 < piece.start:
            sep = "\n\n"
        parts.append(sep + piece.text)
    return "".join(parts).strip()


def chunk_id(path: str, heading: tuple[str, ...], ordinal: int) -> str:
    """A UUID (Qdrant accepts it as a point id) from path, heading path and ordinal only."""
    h = hashlib.sha256("\x00".join([path, *heading, str(ordinal)]).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"  # str(uuid.UUID(hex=h[:32])), without importing uuid


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _drop_counters(lines: list[str]) -> None:
    """Blank the counter lines of a daily note's overview section (in place, so lines still match the
    file); whatever else a person wrote there stays."""
    overview = False
    for i, line in outside_fences(lines):
        if (heading := HEADING.match(line)) is not None:
            overview = (heading.group(2) or "").strip() in _OVERVIEWS
        elif overview and COUNTER.match(line):
            lines[i] = ""


def chunk_note(note: Note, max_tokens: int = MAX_TOKENS, overlap: int = OVERLAP_TOKENS) -> list[Chunk]:
    """Split a note into units whose line ranges are 1-based, inclusive, in file lines: each entry
    its own, the free text between them packed to the budget, and a heading line that would be a
    chunk alone (its section holds entries) left to the entries' context, which names it."""
    body = _drop_comments(note.body)
    lines = [line.rstrip() for line in body.split("\n")]
    if note.kind == "daily":
        _drop_counters(lines)
    prose = {i for i, _ in outside_fences(lines)}
    ordinals: dict[tuple[str, ...], int] = {}
    chunks: list[Chunk] = []
    talk = field_in(body[:2000], "conversation") if note.kind == "conversation" else None  # (`vault.history`)
    summary = live(summary_of(note) or "")  # what it still says: no clause of a corrected or forgotten fact
    if summary:  # the day's one-line summary: a unit of its own, pointing at the frontmatter that holds it
        top: tuple[str, ...] = (SUMMARY_KEY,)
        chunks.append(Chunk(chunk_id(note.path, top, 0), note.path, top, 1, max(1, note.body_line - 1),
                            summary, content_hash(summary), SUMMARY_KEY, unit="summary"))  # fmt: skip
    for levels, start, end in _sections(lines):
        heading = tuple(title for _, title in levels)
        section = next((t for lv, t in levels if lv == 2), heading[0] if heading else "")
        pieces = list(_pieces(lines, start, end, max_tokens, prose))
        if heading and all(not line.strip() for line in lines[start + 1 : end + 1]):
            continue  # a heading with nothing under it (an empty template section) says nothing
        has_entries = any(p.entry is not None for p in pieces)
        before: dict[str, deque[str]] = {}  # the section's last NEAR entries of each script
        for group in _pack(pieces, max_tokens, overlap):
            text = _join(group)
            if not text or (heading and has_entries and (group[0].start, group[-1].end) == (start, start)):
                continue
            ordinal = ordinals.get(heading, 0)
            ordinals[heading] = ordinal + 1
            script = script_of(text)
            near = list(before.get(script, ()))  # (a scan of every entry before it made a section quadratic)
            chunks.append(_unit(note, heading, ordinal, group, text, section, near, talk))
            if group[0].entry is not None:
                before.setdefault(script, deque(maxlen=NEAR)).append(text)
    return chunks


def _drop_comments(body: str) -> str:
    """The body without its HTML comments (invisible when rendered), their newlines kept so lines still
    match: each `<!--` up to the first `-->` after it; one with none after it is text, and so is every
    later one. Found by `str.find`, each character looked at once: a regex retried at each unclosed
    `<!--` searched on to the end every time (32,000 of them in a 480 KB note: 77 s)."""
    parts: list[str] = []
    done = 0
    while (start := body.find(_OPEN, done)) != -1 and (end := body.find(_CLOSE, start + len(_OPEN))) != -1:
        end += len(_CLOSE)
        parts += (body[done:start], "\n" * body.count("\n", start, end))
        done = end
    parts.append(body[done:])
    return "".join(parts)


def _unit(
    note: Note,
    heading: tuple[str, ...],
    ordinal: int,
    group: list[_Piece],
    text: str,
    section: str,
    near: list[str],
    talk: str | None = None,
) -> Chunk:
    entry = group[0].entry is not None
    context = " > ".join(heading) if entry else ""
    return Chunk(
        id=chunk_id(note.path, heading, ordinal),
        path=note.path,
        heading=heading,
        start_line=group[0].start + note.body_line,
        end_line=group[-1].end + note.body_line,
        text=text,
        content_hash=content_hash(vector_text(context, text)),
        section=section,
        superseded=group[0].superseded,
        unit="entry" if entry else "text",
        context=context,
        near="\n".join(near) if entry else "",
        key=field_in(text, "key") if entry else None,
        corrects=field_in(text, "corrects") if entry else None,
        tags=tags_in(text) if entry else (),
        importance=importance_level(field_in(text, "importance")) if entry else None,
        conversation=(field_in(text, "conversation") if entry else None) or talk,  # a history note's, else its own
    )
