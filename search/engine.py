"""Where a query is ranked: retrievers, fusion, time (decay, date words), MMR, the per-document cap,
and the fallbacks.

`Searcher` holds an open index (or the reason there is none) so batch mode
and the daemon load the model and BM25 once for many queries.
"""

from __future__ import annotations

import dataclasses
import math
import sqlite3
from collections import OrderedDict
from typing import Any

import numpy as np

from indexer.config import IndexConfig
from indexer.embedder import EmbedderError
from indexer.embedders import relevance_floor
from indexer.filters import iso_day
from indexer.index import Index
from indexer.opening import open_index
from indexer.tokenizer import tokenize
from indexer.vectors import StoreError
from search.corrections import follow_corrections
from search.dates import DateWords, read_dates
from search.fallback import substring_search
from search.fusion import RRF_K, Fused, above_floor, cap_per_doc, convex, rrf
from search.hits import Hit, SearchResult
from search.mmr import chunk_vectors, mmr
from search.options import DATES_AUTO, SearchOptions
from search.scripts import dense_top
from search.snippet import make_snippet, match_terms
from search.time import boost_factor, decay_factor, newest_daily, reweigh
from vault.cjk import cjk_share
from vault.errors import UsageError
from vault.paths import Layout

DEPTH = 20
QUERY_CACHE = 256


class Searcher:
    """Answers queries over one vault, from its index when it can and from the files when not."""

    def __init__(self, layout: Layout, index: Index | None, reason: str | None = None) -> None:
        self.layout = layout
        self.index = index
        self.reason = reason
        # agents repeat queries and batches ask one query in several modes: embed each once
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.query_cache = {"hits": 0, "misses": 0}

    def _embed_query(self, query: str) -> np.ndarray:
        assert self.index is not None
        vector = self._query_vectors.pop(query, None)
        self.query_cache["hits" if vector is not None else "misses"] += 1
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
            return cls(layout, open_index(layout, config, writable=False))
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
        if opts.mode == "bm25" and opts.min_similarity is not None:
            raise UsageError("--min-similarity is a floor on dense (cosine) scores: use --mode hybrid or vector")
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

    def _date_words(self, query: str, opts: SearchOptions) -> tuple[DateWords | None, dict[str, Any] | None]:
        """The query's date words and how they act (`applied`); none when off or --from/--to are given."""
        assert self.index is not None
        if opts.dates == "off" or opts.filters.date_from or opts.filters.date_to:
            return None, None
        words = read_dates(query)
        if words is None:
            return None, None
        applied = DATES_AUTO if opts.dates == "auto" else opts.dates
        if not self.index.manifest.any_dated(iso_day(words.start), iso_day(words.end)):
            applied = "none"  # a range no note is dated in would filter everything out or boost nothing
        info = {"words": list(words.words), "from": words.start.isoformat(), "to": words.end.isoformat(),
                "applied": applied}  # fmt: skip
        return (words if applied != "none" else None), info

    def _reranked(
        self, fused: list[Fused], opts: SearchOptions, boost: DateWords | None, payloads: dict[str, Any]
    ) -> list[Fused]:
        """Decay and the date boost (on the fused score, then re-sorted). The boost doubles a score, which
        was measured on RRF's scores (LoCoMo 1-4 nDCG@10 0.712 -> 0.731); a score fusion's spread is
        another, so with one the boost acts on the fused order as RRF would: 1/(k + fused rank)."""
        assert self.index is not None
        if boost is not None and opts.fusion != "rrf":
            fused = [(f[0], 1.0 / (RRF_K + r), f[2], f[3]) for r, f in enumerate(fused, start=1)]
        factors = []
        if opts.decay is not None:
            half_life, reference = opts.decay, newest_daily(self.index.manifest.newest_date("daily"))
            factors.append(lambda cid: decay_factor(payloads.get(cid), half_life, reference))
        if boost is not None:
            factors.append(lambda cid: boost_factor(payloads.get(cid), boost.start, boost.end))
        return reweigh(fused, lambda cid: math.prod(f(cid) for f in factors)) if factors else fused

    def _vector_share(self) -> tuple[float, str | None]:
        """While a new vault's vectors come in, the dense ranking covers only the chunks embedded so
        far: its fusion weight is scaled by that share (SciFact, a quarter embedded: hybrid at equal
        weight fell below BM25 alone), and the answer says so."""
        assert self.index is not None
        waiting = self.index.manifest.waiting_count()
        if not waiting:
            return 1.0, None
        total = len(self.index.manifest.bm25)
        done = total - waiting
        return done / total, f"vectors for {done} of {total} chunks so far: the dense ranking weighs {done / total:.0%}"

    def _indexed(self, query: str, tokens: list[str], opts: SearchOptions, terms: tuple[str, ...]) -> SearchResult:
        assert self.index is not None
        depth = opts.depth or max(DEPTH, opts.limit)
        words, dates = self._date_words(query, opts)
        filters = opts.filters
        if words is not None and dates is not None and dates["applied"] == "filter":
            filters = dataclasses.replace(filters, date_from=words.start, date_to=words.end)
        flt = None if filters.is_empty() else filters
        ranked: dict[str, list[tuple[str, float]]] = {}
        reason = None
        if opts.mode in ("hybrid", "bm25"):
            ranked["bm25"] = self.index.bm25_top(tokens, depth, flt)  # repeated tokens count, as in rank-bm25
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
                ranked["vector"] = (  # across scripts in the fusion; `--mode vector` is the model's own ranking
                    dense_top(self.index, vector, query, depth, flt)
                    if opts.mode == "hybrid"
                    else self.index.vector_top(vector, depth, flt)
                )
                share, partial = self._vector_share()
                reason = "; ".join(filter(None, [reason, partial]))
        if len(ranked) == 2:
            weights = {"vector": opts.w_vector * share, "bm25": opts.w_bm25}
            fused = rrf(ranked, weights, opts.rrf_k) if opts.fusion == "rrf" else convex(ranked, weights, opts.fusion)
            source = "hybrid"
        else:
            source, items = next(iter(ranked.items()))
            fused = [(cid, score, {source: r}, {source: score}) for r, (cid, score) in enumerate(items, start=1)]
        payloads = self.index.payloads([f[0] for f in fused])  # the rows of the candidates, never of the vault
        fused = self._reranked(fused, opts, words if dates and dates["applied"] == "boost" else None, payloads)
        if opts.threshold is not None:
            fused = [f for f in fused if f[1] >= opts.threshold]
        floor = None
        if opts.min_similarity is not None and "vector" not in ranked:
            reason = "; ".join(
                filter(None, [reason, "no dense scores for this query: the similarity floor was not applied"])
            )
        elif opts.min_similarity is not None:
            cut = opts.min_similarity
            cut = relevance_floor(self.index.embedder.name) if cut == "auto" else float(cut)
            candidates = len(fused)
            fused = above_floor(fused, ranked["vector"], depth, cut)
            floor = {"min_similarity": cut, "passed": len(fused), "candidates": candidates}
        if opts.mmr is not None:
            fused = mmr(fused, chunk_vectors(self.index, payloads, [f[0] for f in fused]), opts.mmr)
        fused = follow_corrections(fused, self.index, self.layout, flt, payloads)
        paths = ((f[0], payloads[f[0]]["path"] if f[0] in payloads else None) for f in fused)
        keep = cap_per_doc(((cid, path) for cid, path in paths if path is not None), opts.per_doc, opts.limit)
        rows = self.index.chunk_rows(keep)
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
        return SearchResult(query, source, reason, hits, terms, floor, dates)
