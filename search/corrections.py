"""The newer fact wins: a superseded entry ranks right below the correction that replaced it.

`memvault correct` marks the old entry `[superseded:: DAY]` (a chunk of its own) and writes the
correction into that day's note (a keyed `remember` into MEMORY.md) with `[corrects:: PATH#ID]`.
A ranked list that holds the old entry gets the correction just above it: moved up if it ranked
lower, brought in if it was not there at all (a correction need not share the old entry's words).
Both stay findable.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace
from typing import Any

from memvault.indexer.filters import FilterSpec
from memvault.indexer.reading import Reader
from memvault.search.fusion import Fused
from memvault.vault.correct import correction_notes, nearest_correction, reattach
from memvault.vault.entries import entries_in, ids_of_unit
from memvault.vault.paths import Layout


def correction_of(index: Reader, layout: Layout, cid: str, payload: dict[str, Any]) -> str | None:
    """The chunk holding the correction of the superseded chunk `cid`: in the notes it may be in, the
    one pointing at its entry (`vault.correct.nearest_correction`)."""
    try:
        notes = correction_notes(layout, str(payload["superseded"]))
    except ValueError:
        return None
    old = index.chunk_rows([cid]).get(cid)
    rows = index.chunk_rows([c for rel in notes for c in index.chunk_ids(rel)])
    pairs = ((c, e) for c, r in rows.items() if "[corrects::" in r.text for e in entries_in(r.text))
    was = entries_in(textwrap.dedent(old.text))[:1] if old else []
    lost = (lambda: reattach(layout, replace(was[0], path=payload["path"]))) if was else None
    return nearest_correction(pairs, payload["path"], payload["start_line"], ids_of_unit(old.text) if old else (), lost)


def follow_corrections(
    fused: list[Fused], index: Reader, layout: Layout, flt: FilterSpec | None, payloads: dict[str, dict[str, Any]]
) -> list[Fused]:
    """`fused` with each superseded chunk's correction placed right above it (unless it ranks above
    already, or a filter leaves it out); `payloads` (by chunk id) gains the corrections brought in."""
    out = list(fused)
    for candidate in fused:
        cid = candidate.chunk_id
        payload = payloads.get(cid) or {}
        if not payload.get("superseded"):
            continue
        fix = correction_of(index, layout, cid, payload)
        if fix is not None and fix not in payloads:
            payloads.update(index.payloads([fix]))
        if fix is None or fix not in payloads or (flt is not None and not flt.matches(payloads[fix])):
            continue
        ids = [f.chunk_id for f in out]
        old = ids.index(cid)
        if fix in ids and ids.index(fix) < old:
            continue
        moved = out.pop(ids.index(fix)) if fix in ids else None  # moved up: it keeps its ranks and scores
        ranks, scores = (moved.ranks, moved.scores) if moved is not None else ({}, {})
        out.insert(old, Fused(fix, candidate.score, ranks, scores))
    return out
