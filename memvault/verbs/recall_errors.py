"""Recall errors (seed 002's `/memory status`): each time `context` could not rank a query from the index
(a manifest garbled, a store locked, no index yet) and the notes' own text answered instead. The answer
says so (`Contexted.reason`); the vault counts them and keeps the last reason and its time, for `status`.

The count lives beside the index, in `.memvault/recall-errors.json`, written whole by rename: it is about
the index, outlives the process (a CLI's `context` is one) and is gone with the derived data it is about.
A vault that cannot be written still answers; only the count is not kept.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from typing import Any

from memvault.search.hits import SearchResult
from memvault.search.options import SearchOptions
from memvault.vault.paths import Layout
from memvault.verbs.runtime import SearchRuntime

FILE = "recall-errors.json"


class Watched:
    """A search runtime that notes why its searches answered from the notes' text when the index was
    asked (the first such reason): what `context`'s recall could not say otherwise."""

    def __init__(self, rt: SearchRuntime) -> None:
        self.rt = rt
        self.layout = rt.layout
        self.reason: str | None = None

    def search(self, query: str, options: SearchOptions) -> SearchResult:
        result = self.rt.search(query, options)
        if result.source == "substring" and options.mode != "substring" and self.reason is None:
            self.reason = result.reason or "the index did not answer"
        return result


def noted(layout: Layout, reason: str | None) -> str | None:
    """Count `reason` as a recall error of the vault (when there is one), and give it back."""
    if reason is None:
        return None
    path = layout.state_dir / FILE
    now = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    kept = {"count": recall_errors(layout)["recall_errors"] + 1, "last": reason, "at": now}
    tmp = path.with_name(f".{FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # no `.memvault/`, or a vault that cannot be written: the answer still says why
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return reason


def recall_errors(layout: Layout) -> dict[str, Any]:
    """How many recall errors the vault has had, and the last one with its time (None before any)."""
    try:
        kept = json.loads((layout.state_dir / FILE).read_text(encoding="utf-8"))
        count, last, at = int(kept["count"]), str(kept["last"]), str(kept["at"])
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or garbled: counting starts again
        return {"recall_errors": 0, "last_recall_error": None, "last_recall_error_at": None}
    return {"recall_errors": count, "last_recall_error": last, "last_recall_error_at": at}
