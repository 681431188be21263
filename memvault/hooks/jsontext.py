"""A JSON file's text changed in place: what memvault adds or takes out is spliced into the text, and
every other byte stays as the person wrote it (their indentation, key order, duplicate keys, and numbers
such as `1e400` or a 40-digit float, which a parse and re-serialise would turn into `Infinity` or cut).

`parse` reads strict JSON (RFC 8259, what Claude Code's `JSON.parse` accepts: no NaN, Infinity, comments
or byte order mark) into a tree of `Value`s that know where they are in the text; `Splice`s built from
them (`append`, `remove`, `replace`) are applied together by `apply`. A member looked up by key is the
last of that name, as `JSON.parse` (and Python's `json`) reads a duplicated key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # (in the module, not in its stubs)
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = ("true", "false", "null")
_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


class JsonTextError(ValueError):
    """The text is not strict JSON, or nests deeper than Python can follow; the message says where."""


@dataclass
class Value:
    """One JSON value: `start`/`end` are its span in the text; an object's members are `keys` (decoded)
    with `key_starts` and `items` (their values), an array's elements are `items`; a string has `text`."""

    kind: str  # "object", "array", "string" or "scalar"
    start: int
    end: int = 0
    items: list[Value] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    key_starts: list[int] = field(default_factory=list)
    text: str | None = None

    def index(self, key: str) -> int | None:
        """Where the member `key` is (the last one of that name), or None."""
        found = [n for n, k in enumerate(self.keys) if k == key]
        return found[-1] if found else None

    def member(self, key: str) -> Value | None:
        n = self.index(key)
        return None if n is None else self.items[n]

    def unique(self, key: str) -> bool:
        return self.keys.count(key) == 1

    def item_start(self, n: int) -> int:
        """Where element or member `n` begins: its key, for an object's."""
        return self.key_starts[n] if self.kind == "object" else self.items[n].start


@dataclass(frozen=True)
class Splice:
    """Replace `text[start:end]` with `new`."""

    start: int
    end: int
    new: str


def parse(text: str) -> Value:
    try:
        value, end = _value(text, _SPACE.match(text, 0).end())  # type: ignore[union-attr]
    except RecursionError:
        raise JsonTextError("nested too deeply to edit") from None
    end = _SPACE.match(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise JsonTextError(f"extra text at character {end}")
    return value


def _value(text: str, at: int) -> tuple[Value, int]:
    char = text[at : at + 1]
    if char == "{":
        return _container(text, at, "object", "}")
    if char == "[":
        return _container(text, at, "array", "]")
    if char == '"':
        decoded, end = _string(text, at)
        return Value("string", at, end, text=decoded), end
    found = _NUMBER.match(text, at)
    if found:
        return Value("scalar", at, found.end()), found.end()
    for literal in _LITERALS:
        if text.startswith(literal, at):
            return Value("scalar", at, at + len(literal)), at + len(literal)
    raise JsonTextError(f"no JSON value at character {at}")


def _string(text: str, at: int) -> tuple[str, int]:
    try:
        return scanstring(text, at + 1, True)
    except ValueError as exc:
        raise JsonTextError(str(exc)) from None


def _container(text: str, at: int, kind: str, close: str) -> tuple[Value, int]:
    value = Value(kind, at)
    pos = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    if text.startswith(close, pos):
        value.end = pos + 1
        return value, value.end
    while True:
        if kind == "object":
            if not text.startswith('"', pos):
                raise JsonTextError(f"no key at character {pos}")
            value.key_starts.append(pos)
            key, pos = _string(text, pos)
            value.keys.append(key)
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if not text.startswith(":", pos):
                raise JsonTextError(f"no ':' at character {pos}")
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        item, pos = _value(text, pos)
        value.items.append(item)
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(close, pos):
            value.end = pos + 1
            return value, value.end
        if not text.startswith(",", pos):
            raise JsonTextError(f"no ',' or '{close}' at character {pos}")
        pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]


def apply(text: str, splices: list[Splice]) -> str:
    """The text with every splice made (they must not overlap), the last first so offsets hold."""
    out = text
    last = len(text) + 1
    for s in sorted(splices, key=lambda s: (s.start, s.end), reverse=True):
        if s.end > last:
            raise ValueError("overlapping edits")
        out = out[: s.start] + s.new + out[s.end :]
        last = s.start
    return out


def _line_indent(text: str, at: int) -> str:
    line = text[text.rfind("\n", 0, at) + 1 : at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def indent_unit(text: str) -> str:
    """The file's own indentation step (its first indented line's), else two spaces."""
    found = _INDENT.search(text)
    return found.group(1) if found else "  "


def _dumped(value: Any, indent: str | None, prefix: str) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False).replace("\n", "\n" + prefix)


def append(text: str, container: Value, new: list[tuple[str | None, Any]]) -> Splice:
    """Add elements (`(None, value)`) or members (`(key, value)`) after a container's last, laid out as
    its others are: one a line at their indentation (with the file's line ends), or on one line after ", "."""
    unit, nl = indent_unit(text), "\r\n" if "\r\n" in text else "\n"
    if container.items:
        first = container.item_start(0)
        multiline = "\n" in text[container.start : first]
        indent = _line_indent(text, first) if multiline else ""
        outer = ""
    else:
        multiline = "\n" in text
        outer = _line_indent(text, container.start)
        indent = outer + unit if multiline else ""
    items = [_item(k, v, unit if multiline else None, indent) for k, v in new]
    if multiline:
        items = [item.replace("\n", nl) for item in items]
    sep = f",{nl}{indent}" if multiline else ", "
    if container.items:
        at = container.items[-1].end
        return Splice(at, at, "".join(sep + item for item in items))
    body = f"{nl}{indent}{sep.join(items)}{nl}{outer}" if multiline else sep.join(items)
    return Splice(container.start + 1, container.end - 1, body)


def _item(key: str | None, value: Any, unit: str | None, indent: str) -> str:
    head = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    return head + _dumped(value, unit, indent)


def remove(container: Value, gone: set[int]) -> list[Splice]:
    """Take elements or members out of a container with what separates them from the rest, so that
    taking out what `append` added gives back the text as it was before."""
    n = len(container.items)
    if not gone:
        return []
    if len(gone) >= n:
        return [Splice(container.start + 1, container.end - 1, "")]
    splices = []
    i = 0
    while i < n:
        if i not in gone:
            i += 1
            continue
        j = i
        while j + 1 < n and j + 1 in gone:
            j += 1
        if i > 0:  # from the end of the element before: its "," and the run
            splices.append(Splice(container.items[i - 1].end, container.items[j].end, ""))
        else:  # the run leads: up to the first element kept, which takes its place
            splices.append(Splice(container.item_start(0), container.item_start(j + 1), ""))
        i = j + 1
    return splices


def replace(value: Value, new: Any) -> Splice:
    return Splice(value.start, value.end, json.dumps(new, ensure_ascii=False))
