"""Search results for people (path:lines, heading, snippet) and for programs (JSON)."""

from __future__ import annotations

import json
import os
from typing import TextIO

from search.hits import SearchResult
from search.snippet import highlight


def print_json(result: SearchResult, out: TextIO) -> None:
    out.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def print_human(result: SearchResult, out: TextIO) -> None:
    colour = use_colour(out)
    if not result.hits:
        out.write("no results\n")
    for hit in result.hits:
        where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
        heading = " › ".join(hit.heading)
        if colour:
            where = f"\x1b[35m{where}\x1b[0m"
        out.write(f"{where}  {heading}\n" if heading else f"{where}\n")
        snippet = highlight(hit.snippet, result.terms) if colour else hit.snippet
        for line in snippet.split("\n"):
            out.write(f"    {line}\n")
        out.write("\n")
