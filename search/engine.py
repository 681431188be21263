"""Where a query is ranked: retrievers, fusion, the per-document cap, and the fallbacks.

`Searcher` holds an open index (or the reason there is none) so batch mode
and the daemon load the model and BM25 once for many queries.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from indexer.embedder import EmbedderError
from indexer.filters import KINDS, FilterSpec
from indexer.index import Index, IndexConfig
from indexer.tokenizer import tokenize
from indexer.vectors import StoreError
from search.fallback import substring_search
from search.fusion import RRF_K, WEIGHTS, cap_per_doc, rrf
from search.hits import MODES, Hit, SearchResult
from search.snippet import make_snippet, match_terms
from vault.cjk import cjk_share
from vault.errors import UsageError
from vault.paths import Layout, parse_date

DEPTH = 20
QUERY_CACHE = 256
MAX_LIMIT = 1_000_000  # past this a vector store's integer types overflow


@dataclass(frozen=True)
class SearchOptions:
    """Everything a query can set; the defaults are DESIGN.md's."""

    mode: str = "hybrid"
    limit: int = 10
    depth: int | None = None  # each retriever's candidates; default max(20, limit)
    per_doc: int = 3
    threshold: float | None = None
    rrf_k: int = RRF_K
    w_vector: float = WEIGHTS["vector"]
    w_bm25: float = WEIGHTS["bm25"]
    filters: FilterSpec = field(default_factory=FilterSpec)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UsageError(f"{self.mode!r}: unknown mode; use one of {', '.join(MODES)}")
        if self.limit < 1 or self.per_doc < 0 or (self.depth is not None and self.depth < 1):
            raise UsageError("limit and depth must be positive, per-doc zero (no cap) or more")
        if max(self.limit, self.depth or 0) > MAX_LIMIT:
            raise UsageError(f"limit and depth are at most {MAX_LIMIT:,}")
        if self.rrf_k < 0 or not all(math.isfinite(w) and w >= 0 for w in (self.w_vector, self.w_bm25)):
            raise UsageError("rrf-k and the retriever weights must be zero or more")


class Searcher:
    """Answers queries over one vault, from its index when it can and from the files when not."""

    def __init__(self, layout: Layout, index: Index | None, reason: str | None = None) -> None:
        self.layout = layout
        self.index = index
        self.reason = reason
        # agents repeat queries and batches ask one query in several modes: embed each once
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def _embed_query(self, query: str) -> np.ndarray:
        assert self.index is not None
        vector = self._query_vectors.pop(query, None)
        if vector is None:
            vector = self.index.embedder.embed_query(query)
        self._query_vectors[query] = vector
        if len(self._query_vectors) > QUERY_CACHE:
            self._query_vectors.popitem(last=False)
        return vector

    @classmethod
    def open(cls, layout: Layout, config: IndexConfig | None = None) -> Searcher:
        """Open the index read-only; any reason it cannot answer becomes the fallback's reason."""
        try:
            return cls(layout, Index(layout, config, writable=False))
        except (StoreError, EmbedderError) as exc:
            return cls(layout, None, str(exc))
        except sqlite3.DatabaseError as exc:  # a garbled page met while loading BM25
            return cls(layout, None, f"{layout.state_dir / 'manifest.sqlite'}: unreadable manifest ({exc})")

    def close(self) -> None:
        if self.index is not None:
            self.index.close()
            self.index = None

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        opts = options or SearchOptions()
        if not query.strip():
            raise UsageError("empty query")
        terms = tuple(dict.fromkeys(tokenize(query)))
        if opts.mode == "substring":
            return self._substring(query, opts, None, terms)
        if self.index is None:
            return self._substring(query, opts, f"index unavailable: {self.reason}", terms)
        try:
            return self._indexed(query, self.index.tokenizer(query), opts, terms)
        except (sqlite3.DatabaseError, StoreError) as exc:  # broke after it opened: the files still answer
            return self._substring(query, opts, f"index failed: {exc}", terms)

    def _vector_helps(self, query: str) -> bool:
        """An English-only model ranks Chinese passages like noise (MiniLM: nDCG@10 0.142 on CMRC 2018, and
        hybrid 0.354 against BM25's 0.983), so a mostly-CJK query skips it; multilingual models always take part."""
        return getattr(self.index.embedder, "multilingual", True) or cjk_share(query) < 0.5

    def _substring(self, query: str, opts: SearchOptions, reason: str | None, terms: tuple[str, ...]) -> SearchResult:
        hits = substring_search(self.layout, query, opts.limit, opts.filters, opts.per_doc)
        if opts.threshold is not None:
            hits = [h for h in hits if h.score >= opts.threshold]
        return SearchResult(query, "substring", reason, hits, terms)

    def _indexed(self, query: str, tokens: list[str], opts: SearchOptions, terms: tuple[str, ...]) -> SearchResult:
        assert self.index is not None
        depth = opts.depth or max(DEPTH, opts.limit)
        flt = None if opts.filters.is_empty() else opts.filters
        ranked: dict[str, list[tuple[str, float]]] = {}
        reason = None
        if opts.mode in ("hybrid", "bm25"):
            allow = None if flt is None else (lambda cid: flt.matches(self.index.payloads[cid]))
            ranked["bm25"] = self.index.bm25.top(tokens, depth, allow)  # repeated tokens count, as in rank-bm25
        vector_wanted = opts.mode == "vector" or (opts.mode == "hybrid" and self._vector_helps(query))
        if opts.mode == "hybrid" and not vector_wanted:
            reason = f"{self.index.embedder.name} does not cover CJK text: BM25 only for this query"
        if vector_wanted:
            try:
                vector = self._embed_query(query)
            except EmbedderError as exc:
                if opts.mode == "vector":
                    return self._substring(query, opts, f"embedder unavailable: {exc}", terms)
                reason = f"embedder unavailable, BM25 only: {exc}"
            else:
                ranked["vector"] = self.index.vectors.search(vector, depth, flt)
        if len(ranked) == 2:
            fused = rrf(ranked, {"vector": opts.w_vector, "bm25": opts.w_bm25}, opts.rrf_k)
            source = "hybrid"
        else:
            source, items = next(iter(ranked.items()))
            fused = [(cid, score, {source: r}, {source: score}) for r, (cid, score) in enumerate(items, start=1)]
        if opts.threshold is not None:
            fused = [f for f in fused if f[1] >= opts.threshold]
        payloads = self.index.payloads
        candidates = ((f[0], payloads[f[0]]["path"]) for f in fused if f[0] in payloads)
        keep = cap_per_doc(candidates, opts.per_doc, opts.limit)
        rows = self.index.manifest.get_chunks(keep)
        info = {f[0]: f for f in fused}
        wanted = match_terms(terms)
        hits = []
        for cid in keep:
            row = rows.get(cid)
            if row is None:
                continue
            snippet = make_snippet(row.text, wanted)
            _, score, ranks, scores = info[cid]
            hits.append(
                Hit(row.path, row.start_line, row.end_line, row.heading, row.text, score, snippet, ranks, scores, cid)
            )
        return SearchResult(query, source, reason, hits, terms)


def build_options(
    mode: str = "hybrid",
    limit: int = 10,
    per_doc: int = 3,
    threshold: float | None = None,
    depth: int | None = None,
    rrf_k: int = RRF_K,
    w_vector: float = WEIGHTS["vector"],
    w_bm25: float = WEIGHTS["bm25"],
    date_from: str | dt.date | None = None,
    date_to: str | dt.date | None = None,
    kind: str | list[str] | tuple[str, ...] | None = None,
    section: str | None = None,
    tag: str | None = None,
    path: str | None = None,
) -> SearchOptions:
    """One place that turns CLI flags, batch-line keys and API keywords into `SearchOptions`."""
    kinds = (kind,) if isinstance(kind, str) else tuple(kind or ())
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise UsageError(f"{bad[0]!r}: unknown kind; use one of {', '.join(KINDS)}")
    prefix = path.strip() if path else ""
    if prefix.startswith("/") or ".." in prefix.split("/"):  # judged before any `./` is dropped
        raise UsageError(f"{path!r}: a path filter is a vault-relative prefix")
    while prefix.startswith("./"):
        prefix = prefix[2:]
    flt = FilterSpec(
        path_prefix=prefix or None,
        kinds=kinds,
        date_from=_date(date_from),
        date_to=_date(date_to),
        section=section or None,
        tag=tag.lstrip("#") if tag else None,
    )
    return SearchOptions(
        mode, int(limit), depth, int(per_doc), threshold, int(rrf_k), float(w_vector), float(w_bm25), flt
    )


def _date(value: str | dt.date | None) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    return parse_date(str(value))
