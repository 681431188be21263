"""Which entries a search recalled: what `list --unused-since` counts as used.

A hit counts when it answers the query, not when it only filled the list: BM25 ranked it (the
query's words are in it), or its cosine to the query reaches the model's calibrated relevance floor.
Every entry in such a hit is recalled. A substring answer (the files, no index) recalls nothing.
"""

from __future__ import annotations

from memvault.indexer.embedders import relevance_floor
from memvault.search.hits import Hit, SearchResult
from memvault.vault.cjk import script_of
from memvault.vault.entries import entries_in, entry_key


def answers_query(hit: Hit, floor: float) -> bool:
    """A keyword match, or a cosine at `floor`: a hit that ranked only for want of better is no recall."""
    return "bm25" in hit.ranks or hit.scores.get("vector", -1.0) >= floor


def recalled_entries(result: SearchResult, embedder: str) -> list[str]:
    """The keys (`entry_key`) of the entries in the hits of `result` that answer its query, in hit
    order; `embedder` names the model whose relevance floor a cosine must reach."""
    if result.source == "substring":
        return []
    floor = relevance_floor(embedder, script_of(result.query))
    return [entry_key(e.text) for h in result.hits if answers_query(h, floor) for e in entries_in(h.text)]
