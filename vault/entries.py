"""Entries: the single memories inside a note, each one list item with its continuation lines.

An entry may carry a key and tags, written so a person can read and type them
in any editor, the way Obsidian writes inline fields and tags:

    - Prefers Vue 3 + TypeScript for front ends #frontend #projectx [key:: frontend-stack]

- the key is an inline field `[key:: NAME]` anywhere in the item;
- `[superseded:: YYYY-MM-DD]` marks an entry a later one corrected on that day, and
  `[corrects:: PATH#ID]` marks the correction, pointing at the entry it corrects by its id (`entry_id`;
  corrections written before ids point by `PATH:LINE`);
- a tag is `#word` after a space or at the start (letters of any script,
  digits, `_`, `-`, `/`; not digits alone, so `#1` is not a tag);
- tags in the note's frontmatter apply to every entry in it;
- `<!-- saved YYYY-MM-DD -->` (hidden when the note is rendered, left out of the index) is the
  day memvault last wrote an entry of MEMORY.md; a daily note's entries have the note's day.

Hand-written entries are parsed exactly like memvault's own. A text memvault is asked to save makes no
field: one in it is escaped (`escape`); a `#tag` in it stays a tag, the way a person tags a fact in
its words. A daily note's overview counters are not entries.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.errors import NoteReadError, UsageError
from memvault.vault.fileio import read_note
from memvault.vault.logger import log
from memvault.vault.model import Note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout, is_note_rel
from memvault.vault.places import CONVERSATIONS_DIR
from memvault.vault.scan import scan_vault
from memvault.vault.sections import HEADING, outside_fences
from memvault.vault.templates import OVERVIEW
from memvault.vault.whole import read_whole

ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])[ \t]+(?=\S)")
MARKER = re.compile(r"^([ \t]*)((?:[-*+]|\d{1,9}[.)])[ \t]+)(?=\S)")  # an item, at any indentation
FIELD_NAMES = "key|superseded|corrects|source|conversation|importance"  # the inline fields memvault reads
SAVED = re.compile(r"[ \t]*<!--[ \t]*saved[ \t]+(\d{4}-\d{2}-\d{2})[ \t]*-->")
FIELDS = re.compile(rf"\[({FIELD_NAMES})::[ \t]*([^\]\n]*?)[ \t]*\]")
# what a saved text holds that would read as memvault's own markup (`[key:: K]`, `<!-- saved DAY -->`), with
# the backslashes already before its colons or `!`: escaping adds one, reading it back as text takes one
_MARKUP = (re.compile(rf"(\[(?:{FIELD_NAMES}))(\\*)(::)"),
           re.compile(r"(<)(\\*)(!--[ \t]*saved[ \t]+\d{4}-\d{2}-\d{2}[ \t]*-->)"))  # fmt: skip
TAG = re.compile(r"(?<!\S)#([\w/-]+)")
_TIME = re.compile(r"^\d{1,2}:\d{2} ")
_CUT_LONG = 100  # entries and snippet lines are cut at 240 characters: anything shorter was not cut
_OVERVIEWS = set(OVERVIEW.values())


@dataclass(frozen=True)
class Entry:
    """One list item of a note. Lines are 1-based and inclusive, in file lines (frontmatter
    included); `text` is the item without its bullet (and its `saved` comment), continuation lines
    unindented and kept."""

    path: str
    section: str
    start_line: int
    end_line: int
    text: str
    key: str | None
    tags: tuple[str, ...]
    date: str | None  # the daily note's date, else the day memvault saved it (if it did)
    superseded: str | None = None  # the day a correction replaced it
    corrects: str | None = None  # for a correction: the `PATH#ID` (older: `PATH:LINE`) of the entry it corrects
    conversation: str | None = None  # `[conversation:: ID]`: the conversation it came from (seed 000's scope)

    @property
    def summary(self) -> str:
        """The text without its fields (key, superseded, corrects), on one line: what `list` shows."""
        return one_line(self.text)

    @property
    def unstamped(self) -> str:
        """The text as written, lines and fields kept, without a daily entry's `HH:MM` stamp."""
        return _TIME.sub("", self.text)

    @property
    def fact(self) -> str:
        """The summary without a daily entry's `HH:MM` stamp: what a prompt needs."""
        return _TIME.sub("", self.summary)


def escape(text: str) -> str:
    """A text to save as it reads: anything in it that memvault would read as its own markup (an inline
    field it reads, `[key:: K]`, or its `<!-- saved DAY -->` comment) written as Markdown escapes it,
    `[key\\:: K]` and `<\\!-- saved DAY -->`, which a Markdown viewer shows as typed and memvault
    reads as text, never as a field: fields exist only where memvault writes them (or a person types
    them into the note). A backslash already there gets one more, so `literal` gives the text back."""
    for markup in _MARKUP:
        text = markup.sub(lambda m: f"{m[1]}\\{m[2]}{m[3]}", text)
    return text


def literal(text: str) -> str:
    """The text a person gave, from an entry's text as stored (`escape` undone)."""
    for markup in _MARKUP:
        text = markup.sub(lambda m: f"{m[1]}{m[2][1:]}{m[3]}", text)
    return text


def one_line(text: str) -> str:
    """The text without its fields and `saved` comment, on one line, as it was given (`literal`)."""
    return " ".join(literal(FIELDS.sub("", SAVED.sub("", text))).split())


def match_form(match: str) -> str:
    """A piece of text a person typed (`--match`) in the form `normalise` gives an entry's text, so the
    one is looked for in the other; empty when it holds nothing to look for (spaces alone)."""
    return normalise(escape(match))


def normalise(text: str) -> str:
    """The form two saves of the same fact share: no fields, no `HH:MM` stamp, one space, no case."""
    return _TIME.sub("", one_line(text)).casefold()


def says_same(shown: str, other: str) -> bool:
    """Whether two shown entries state one fact, whatever their key, tags or stamps: their `normalise`d
    forms without tags (a tag labels a fact, it is no part of it) are equal, or, where one was cut short
    by `clip` (an ending "…"), the cut one starts the other."""
    (a, cut_a), (b, cut_b) = _bare(shown), _bare(other)
    if not a or not b:  # tags alone, or a bare ellipsis: nothing to compare but the text
        return normalise(shown) == normalise(other)
    return a == b or (cut_a and b.startswith(a)) or (cut_b and a.startswith(b))


def _bare(text: str) -> tuple[str, bool]:
    cut = text.rstrip().endswith("…") and len(text) > _CUT_LONG  # a short "…" was written so, not cut
    return " ".join(TAG.sub("", normalise(text.rstrip().removesuffix("…"))).split()), cut


def _saved_on(text: str) -> str | None:
    found = SAVED.search(text)
    return found.group(1) if found else None


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, an ellipsis marking the cut: how entries are shown short."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def entry_key(text: str) -> str:
    """What identifies an entry across edits elsewhere in its note: its normalised text, hashed."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:16]


def entry_id(entry: Entry) -> str:
    """An entry's id, the same after edits above it or anywhere else: its key, else `version_id` (a
    key never starts with `@`)."""
    return entry.key or version_id(entry)


def version_id(entry: Entry) -> str:
    """`@` and twelve hex of the entry's normalised text: what tells apart the versions of a keyed
    fact (a correction keeps the key), so it is what a correction points at."""
    return "@" + entry_key(entry.text)[:12]


def entry_ids(entry: Entry) -> tuple[str, ...]:
    """Every id that names `entry`: its key (pointers written before corrections kept the key named
    it so) and its version id."""
    return tuple(dict.fromkeys((entry_id(entry), version_id(entry))))


def entry_ref(ref: str) -> tuple[str, str] | None:
    """(note or "", id) when `ref` names an entry by its id: `@…`, or `NOTE#ID` as a correction's
    pointer does (any note, `.markdown` too); None for anything else (a key, a place)."""
    path, _, ident = ref.rpartition("#")
    return (path, ident) if ident.startswith("@") or (path and is_note_rel(path)) else None


def id_of_unit(text: str) -> str | None:
    """The id of the entry an entry unit's text (a chunk, a hit) begins with."""
    found = entries_in(textwrap.dedent(text))
    return entry_id(found[0]) if found else None


def ids_of_unit(text: str) -> tuple[str, ...]:
    """`entry_ids` of the entry an entry unit's text begins with."""
    found = entries_in(textwrap.dedent(text))
    return entry_ids(found[0]) if found else ()


def entries_in(text: str) -> list[Entry]:
    """The entries of a piece of note text (a chunk, a hit): list items and their continuation lines."""
    return list(iter_entries(parse_note("chunk.md", text)))


def field_in(text: str, name: str) -> str | None:
    """The value of the first inline field `[name:: value]`, if it has one."""
    return next((value for found, value in FIELDS.findall(text) if found == name and value), None)


def tags_in(text: str) -> tuple[str, ...]:
    """`#tags` in a text, in order, once each; digits alone (`#1`, an issue number) are not a tag."""
    return tuple(dict.fromkeys(t for t in TAG.findall(text) if not t.isdigit()))


def item_end(lines: list[str], i: int, last: int | None = None, prose: Container[int] | None = None) -> int:
    """The last line of the entry whose item starts at line `i` (0-based, at most `last`): the
    indented lines after it, up to a list item of its own, and past a blank line when the next line is
    indented to the item's text (its next paragraph, as in CommonMark). As there, a nested item
    (indented less than four columns past this item's text) is its own entry, not this one's
    continuation; an item-like line indented deeper is text (`entry_lines` writes one so)."""
    found = MARKER.match(lines[i])
    column = len(found.group(0).expandtabs(4)) if found else 2
    last = len(lines) - 1 if last is None else last
    end = i
    while end < last:
        step = 1
        while end + step <= last and not lines[end + step].strip():
            step += 1  # blank lines: the item goes on past them only to a line indented to its text
        nxt = lines[end + step] if end + step <= last else ""
        indent = len(nxt.expandtabs(4)) - len(nxt.expandtabs(4).lstrip())
        if not nxt.strip() or indent == 0 or (step > 1 and indent < column):
            break
        nested = MARKER.match(nxt) if prose is None or end + step in prose else None
        if nested and len(nested.group(1).expandtabs(4)) < column + 4:
            break
        end += step
    return end


def iter_entries(note: Note) -> Iterator[Entry]:
    """Every entry of a note, in file order: each list item, a nested one too, with its own lines."""
    lines = note.body.split("\n")
    prose = dict(outside_fences(lines))
    section = ""
    day = note.date.isoformat() if note.kind == "daily" and note.date else None
    note_tags = note.tags
    i = 0
    listing = False  # the line before ended an entry: an indented item here is a nested one
    while i < len(lines):
        line = prose.get(i)
        heading = HEADING.match(line) if line is not None else None
        if heading:
            if len(heading.group(1)) <= 2:
                section = (heading.group(2) or "").strip()
            i, listing = i + 1, False
            continue
        item = (MARKER if listing else ITEM).match(line) if line is not None else None
        if item is None or (note.kind == "daily" and section in _OVERVIEWS):
            i, listing = i + 1, False
            continue
        end = item_end(lines, i, prose=prose)
        body = [(line or "")[item.end() :].rstrip("\r")] + [raw.strip() for raw in lines[i + 1 : end + 1]]
        text = "\n".join(body)
        saved = _saved_on(text)
        text = SAVED.sub("", text) if saved else text  # the day is `date`; the text is what was said
        yield Entry(
            path=note.path,
            section=section,
            start_line=i + note.body_line,
            end_line=end + note.body_line,
            text=text,
            key=field_in(text, "key"),
            tags=tuple(dict.fromkeys((*note_tags, *tags_in(text)))),
            date=day or saved,
            superseded=field_in(text, "superseded"),
            corrects=field_in(text, "corrects"),
            conversation=field_in(text, "conversation"),
        )
        i, listing = end + 1, True


def vault_entries(
    layout: Layout,
    rel: str | None = None,
    containing: str | None = None,
    skipped: str = "",
    failed: list[str] | None = None,
    whole: bool = False,
) -> Iterator[Entry]:
    """The entries of every note of the vault, notes in path order (one that cannot be read is skipped
    here, named in `failed` when that is given, for the caller to report, else in a warning that ends
    with `skipped` when that is given; `status` and `index` name it too), or of the note `rel` alone,
    which must be readable. With `containing`, only notes whose text holds it are parsed: a key looked
    up in a big vault. `whole`: each note read from a whole save, as a verb that changes it decides
    (`vault.whole`)."""

    def read(path: Path, name: str, rule: Layout | None) -> str:  # rule: the vault's path rule, if not passed yet
        return read_whole(rule, path, name) if whole else read_note(path, name, layout=rule).text

    if rel is not None:
        if not (layout.root / rel).is_file():
            raise UsageError(f"{rel}: no such note")
        yield from iter_entries(parse_note(rel, read(layout.root / rel, rel, layout)))
        return
    for file in scan_vault(layout):
        if file.rel.startswith(f"{CONVERSATIONS_DIR}/"):
            continue  # what a conversation said is its history, searched, not entries to list or keep
        try:
            if file.error:
                raise NoteReadError(file.error)
            text = read(file.path, file.rel, None)  # the walk has checked its path
            if containing is not None and containing not in text:
                continue
            note = parse_note(file.rel, text)
        except NoteReadError as exc:
            if failed is not None:
                failed.append(str(exc))
            elif skipped:
                log.warning("%s; %s", exc, skipped)
            continue
        yield from iter_entries(note)


def holding_key(layout: Layout, key: str) -> list[Entry]:
    """The current (not superseded) entries of the vault that hold `key` as spelled, read from whole
    saves: what a verb that writes the key decides on."""
    return [e for e in vault_entries(layout, containing=key, whole=True) if e.key == key and not e.superseded]


def collect(layout: Layout, section: str | None = None, tag: str | None = None, key: str | None = None) -> list[Entry]:
    """Every entry of the vault that matches all the given filters (the key as `with_key` matches it)."""
    wanted_tag = tag.lstrip("#") if tag else None
    found = [
        e
        for e in vault_entries(layout, skipped="skipped")
        if (section is None or e.section == section) and (wanted_tag is None or wanted_tag in e.tags)
    ]
    return found if key is None else with_key(found, key)


def fold_key(key: str) -> str:
    """A key as it is compared on the second try: lower case, spaces as `_` (seed 002's rule)."""
    return key.strip().lower().replace(" ", "_")


def with_key(entries: Iterable[Entry], key: str) -> list[Entry]:
    """The entries a KEY argument names: an id (`entry_ids`: `@` and a hash, or `PATH#ID` as a
    correction points) names one; a key matches as typed, else as `fold_key` folds both (`RUFF-RULE`
    or `Ruff Rule` finds `ruff-rule` / `ruff_rule` when no key is spelled exactly so)."""
    if (ref := entry_ref(key)) is not None:
        return [e for e in entries if ref[1] in entry_ids(e) and ref[0] in ("", e.path)]
    entries = [e for e in entries if e.key is not None]
    exact = [e for e in entries if e.key == key]
    return exact or [e for e in entries if fold_key(e.key or "") == fold_key(key)]
