"""Search results for people (path:lines, heading, snippet) and for programs (JSON).

A result is printed from its public shape (`SearchResult.to_json`, what the daemon replies), so a search
the daemon answers is printed by `memvault.cli.via_daemon` without rebuilding a `SearchResult` (whose
module's dataclasses cost a client 10 ms to import)."""

from __future__ import annotations

import json
import os
import time
from typing import Any, TextIO

from memvault.search.snippet import highlight

ENTRY_CHARS = 120


def print_result(answer: dict[str, Any], as_json: bool, out: TextIO, err: TextIO) -> None:
    """A search's answer: on `err` why another source answered, the date words read and a floor no hit
    passed (the last two are in the JSON itself); then the hits, as one JSON object or for people."""
    if answer["reason"]:
        err.write(f"memvault: answered by {answer['source']} search: {answer['reason']}\n")
    if (d := answer.get("dates")) and not as_json:
        how = "no note is dated then, not used" if d["applied"] == "none" else f"notes dated then: {d['applied']}"
        err.write(f"memvault: read {', '.join(map(repr, d['words']))} as {d['from']}..{d['to']} ({how})\n")
    if (floor := answer.get("floor")) and not answer["hits"]:
        err.write(f"memvault: nothing relevant: none of {floor['candidates']} candidates reached the similarity "
                  f"floor {floor['min_similarity']}\n")  # fmt: skip
    if as_json:
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    else:
        _print_human(answer, out)


def print_entries(entries: list[dict[str, Any]], tags: dict[str, int], out: TextIO) -> None:
    """One line per entry: where, section, key, tags, the first 120 characters, the day; then the tags."""
    from memvault.vault.entries import Entry, clip  # (a search's hits are printed without it)

    if not entries:
        out.write("no entries\n")
    for e in entries:
        fields = {k: v for k, v in e.items() if k in Entry.__dataclass_fields__}
        text = Entry(**{**fields, "tags": tuple(e["tags"])}).summary
        text = clip(text, ENTRY_CHARS)
        link = f"(corrects {e['corrects']})" if e.get("corrects") else ""
        if e.get("superseded"):
            link = f"(superseded {e['superseded']}" + (f" by {e['superseded_by']})" if e.get("superseded_by") else ")")
        where = ("[user] " if e.get("scope") == "user" else "") + f"{e['path']}:{e['start_line']}"
        parts = [where, e["section"] or "-", f"[{e['key']}]" if e["key"] else "",
                 " ".join(f"#{t}" for t in e["tags"]), text, link, e["date"] or ""]  # fmt: skip
        out.write("  ".join(p for p in parts if p) + "\n")
    if tags:
        out.write("tags: " + ", ".join(f"#{t} {n}" for t, n in tags.items()) + "\n")


def print_event(event: dict[str, Any], as_json: bool, out: TextIO) -> None:
    """One line per event: the JSON object, or its time, name and fields for people."""
    if as_json:
        out.write(json.dumps(event, ensure_ascii=False) + "\n")
    else:
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(event["time"]))
        rest = " ".join(f"{k}={v}" for k, v in event.items() if k not in ("seq", "time", "event"))
        out.write(f"{event['seq']:>6} {when} {event['event']:<18} {rest}".rstrip() + "\n")
    out.flush()


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _print_human(answer: dict[str, Any], out: TextIO) -> None:
    colour = use_colour(out)
    if not answer["hits"]:
        out.write("no results\n")
    for hit in answer["hits"]:
        where = f"{hit['path']}:{hit['start_line']}-{hit['end_line']}"
        if hit.get("scope") == "user":
            where = f"[user] {where}"
        heading = " › ".join(hit["heading"])
        if colour:
            where = f"\x1b[35m{where}\x1b[0m"
        out.write(f"{where}  {heading}\n" if heading else f"{where}\n")
        snippet = highlight(hit["snippet"], answer["terms"]) if colour else hit["snippet"]
        for line in snippet.split("\n"):
            out.write(f"    {line}\n")
        out.write("\n")
