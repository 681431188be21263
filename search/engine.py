"""Where a query is ranked: `Searcher._indexed` reads as its list of stages (retrieve, fuse, first,
time, floor, diversify, corrections, hits), each a method below it in the order they run; and the
fallbacks.

`Searcher` holds an open index (or the reason there is none) so batch mode
and the daemon load the model and BM25 once for many queries.
"""

from __future__ import annotations

import dataclasses
import math
import sqlite3
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from memvault.indexer.config import IndexConfig
from memvault.indexer.embedders import lead_margins, relevance_floor
from memvault.indexer.embedders.base import EmbedderError
from memvault.indexer.filters import FilterSpec, iso_day
from memvault.indexer.index import Index
from memvault.indexer.opening import open_index
from memvault.indexer.reading import Reader, own_words_top
from memvault.indexer.rows import ChunkRow
from memvault.indexer.tokenizer import tokenize
from memvault.indexer.vectors import StoreError
from memvault.search.corrections import follow_corrections
from memvault.search.dates import DateWords, narrowed, read_dates
from memvault.search.fallback import substring_search
from memvault.search.fresh import AsIndexed, Freshness
from memvault.search.fusion import NEAR_TOP, RRF_K, Fused, above_floor, cap_per_doc, convex, first_near, leads, rrf
from memvault.search.hits import Hit, SearchResult, about_unit
from memvault.search.join import JOIN_POOL, Place, answers_beside, content_words, join_runs, row_place, run_text
from memvault.search.option_table import DATES_AUTO
from memvault.search.options import SearchOptions
from memvault.search.snippet import SNIPPET_LINES, make_snippet, match_terms
from memvault.search.time import boost_factor, decay_factor, newest_daily, reweigh
from memvault.vault.cjk import script_of
from memvault.vault.entries import one_line
from memvault.vault.errors import UsageError
from memvault.vault.importance import importance_factor
from memvault.vault.paths import Layout

if TYPE_CHECKING:  # numpy, and the stages that need it, are imported by the dense stages: a BM25 search
    import numpy as np  # in a new process never loads it (see `indexer.bm25.BM25.top`)

    from memvault.search.scripts import Dense

DEPTH = 20
NO_FLOOR = "no dense scores for this query: the similarity floor was not applied"
QUERY_CACHE = 256


class Searcher:
    """Answers queries over one vault, from its index when it can and from the files when not."""

    def __init__(self, layout: Layout, index: Reader | None, reason: str | None = None) -> None:
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
        self._query_vectors[query] = vector = self.index.embedder.embed_query(query) if vector is None else vector
        if len(self._query_vectors) > QUERY_CACHE:
            self._query_vectors.popitem(last=False)
        return vector

    @classmethod
    def open(cls, layout: Layout, config: IndexConfig | None = None) -> Searcher:
        """Open the index read-only; any reason it cannot answer becomes the fallback's reason. With a
        Qdrant server configured and no local index, the server's collection answers (`indexer.remote`)."""
        remote = config is not None and config.qdrant_url and not (layout.state_dir / "manifest.sqlite").exists()
        try:
            if remote and config is not None:
                from memvault.indexer.remote import RemoteIndex

                return cls(layout, RemoteIndex.open(config))
            return cls(layout, open_index(layout, config, writable=False))
        except (StoreError, EmbedderError) as exc:
            if remote and not layout.root.is_dir():
                raise  # no files here to answer instead: the reason is the answer
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
        asked = Asked(query, tuple(dict.fromkeys(tokenize(query))), script_of(query))
        if opts.mode == "substring":
            return self._substring(asked, opts, None)
        if opts.mode == "bm25" and opts.min_similarity is not None:
            raise UsageError("--min-similarity is a floor on dense (cosine) scores: use --mode hybrid or vector")
        if self.index is None:
            return self._substring(asked, opts, f"index unavailable: {self.reason}")
        try:
            assert self.index.tokenizer is not None  # (an opened index has one: only a stand-in lacks it)
            return self._indexed(asked, self.index.tokenizer(query), opts)
        except (sqlite3.DatabaseError, StoreError) as exc:  # broke after it opened: the files still answer
            if not self.layout.root.is_dir():
                raise  # a reader with only a server's URL: no files to answer instead, the reason is the answer
            return self._substring(asked, opts, f"index failed: {exc}")

    def _vector_helps(self, asked: Asked) -> bool:
        """An English-only model ranks Chinese passages like noise (MiniLM: nDCG@10 0.142 on CMRC 2018, and
        hybrid 0.354 against BM25's 0.983), so a mostly-CJK query skips it; multilingual models always take part."""
        assert self.index is not None
        return getattr(self.index.embedder, "multilingual", True) or asked.script == "latin"

    def _substring(self, asked: Asked, opts: SearchOptions, reason: str | None) -> SearchResult:
        hits = substring_search(self.layout, asked.text, opts.limit, opts.filters, opts.per_doc)
        if opts.threshold is not None:
            hits = [h for h in hits if h.score >= opts.threshold]
        return SearchResult(asked.text, "substring", reason, hits, asked.terms)

    def _date_words(self, query: str, opts: SearchOptions) -> tuple[DateWords | None, dict[str, Any] | None]:
        """The query's date words and how they act (`applied`); none when off or --from/--to are given."""
        assert self.index is not None
        if opts.dates == "off" or opts.filters.date_from or opts.filters.date_to:
            return None, None
        words = read_dates(query)
        if words is None:
            return None, None
        applied = DATES_AUTO if opts.dates == "auto" else opts.dates
        if not self.index.any_dated(iso_day(words.start), iso_day(words.end)):
            applied = "none"  # a range no note is dated in would filter everything out or boost nothing
        info = {"words": list(words.words), "from": words.start.isoformat(), "to": words.end.isoformat(),
                "applied": applied}  # fmt: skip
        return (words if applied != "none" else None), info

    def _vector_share(self) -> tuple[float, str | None]:
        """While a new vault's vectors come in, the dense ranking covers only the chunks embedded so
        far: its fusion weight is scaled by that share (SciFact, a quarter embedded: hybrid at equal
        weight fell below BM25 alone), and the answer says so."""
        assert self.index is not None
        waiting, total = self.index.waiting_share()
        if not waiting:
            return 1.0, None
        done = total - waiting
        return done / total, f"vectors for {done} of {total} chunks so far: the dense ranking weighs {done / total:.0%}"

    def _indexed(self, asked: Asked, tokens: list[str], opts: SearchOptions) -> SearchResult:
        """A query ranked from the index, one stage a line in the order they run, each the method of that
        name below (after `search.dates.narrowed`, which the date words may narrow). What a stage leaves out, no later
        stage sees."""
        assert self.index is not None
        depth = opts.depth or max(DEPTH, opts.limit)
        words, dates = self._date_words(asked.text, opts)
        flt = narrowed(opts.filters, words, dates)
        found = self._retrieve(asked, tokens, opts, depth, flt)
        if found.fallback is not None:
            return self._substring(asked, opts, found.fallback)
        source, fused = self._fuse(found, opts)
        payloads = self.index.payloads([f.chunk_id for f in fused])  # the rows of the candidates, never of the vault
        fused = self._first(asked.script, fused, found, payloads)
        fused = self._time(fused, opts, words if dates and dates["applied"] == "boost" else None, payloads)
        fused, floor, reason = self._floor(asked, fused, found, opts, depth, payloads)
        fused = self._diversify(fused, opts, payloads)
        fused = self._corrections(fused, flt, payloads)
        hits, changed = self._hits(asked, fused, opts, payloads)
        reason = "; ".join(filter(None, [reason, changed])) or None
        return SearchResult(asked.text, source, reason, hits, asked.terms, floor, dates)

    # the stages of `_indexed`, in the order they run -----------------------------------------------

    def _retrieve(
        self, asked: Asked, tokens: list[str], opts: SearchOptions, depth: int, flt: FilterSpec | None
    ) -> _Retrieved:
        """Each retriever's own ranked list, `depth` long: BM25 on the query's tokens, the dense one on
        its vector. The answer says why a retriever the mode asks for did not take part: a model that
        does not cover the query's script, an embedder that failed, or a vector store out of reach (a
        Qdrant server down, a store locked or broken: the vault's manifest still holds BM25); hybrid then
        answers with BM25 alone, while `--mode vector` has nothing left and falls back to the files."""
        assert self.index is not None
        ranked: dict[str, list[tuple[str, float]]] = {}
        dense: Dense | None = None
        reason, share = None, 1.0
        if opts.mode in ("hybrid", "bm25"):
            ranked["bm25"] = own_words_top(self.index, tokens, depth, flt)  # repeated tokens count, as in rank-bm25
        vector_wanted = opts.mode == "vector" or (opts.mode == "hybrid" and self._vector_helps(asked))
        if opts.mode == "hybrid" and not vector_wanted:
            reason = f"{self.index.embedder.name} does not cover CJK text: BM25 only for this query"
        if vector_wanted:
            try:
                self.index.vector_store()  # opened on first use, before the model is: its faults come first
                vector = self._embed_query(asked.text)
                from memvault.search.scripts import dense_top

                if opts.mode == "hybrid":  # across scripts in the fusion; `--mode vector` is the model's own ranking
                    dense = dense_top(self.index, vector, asked.script, depth, flt)
                    ranked["vector"] = dense.ranked
                    if opts.w_translated and "bm25" in ranked:
                        from memvault.search.translation import translated_top

                        ranked["translated"] = translated_top(self.index, asked.script, tokens, depth, flt)
                else:
                    ranked["vector"] = self.index.vector_top(vector, depth, flt)
            except (EmbedderError, StoreError) as exc:
                what = "embedder" if isinstance(exc, EmbedderError) else "vector store"
                if opts.mode == "vector":
                    return _Retrieved(ranked, reason, share, fallback=f"{what} unavailable: {exc}")
                reason = f"{what} unavailable, BM25 only: {exc}"
            else:
                share, partial = self._vector_share()
                reason = "; ".join(filter(None, [reason, partial]))
        return _Retrieved(ranked, reason, share, dense=dense)

    @staticmethod
    def _fuse(found: _Retrieved, opts: SearchOptions) -> tuple[str, list[Fused]]:
        """One ranked list, and what it came from: with both retrievers, "hybrid", their lists fused
        as the options say (search.fusion), the dense weight scaled by the share of chunks embedded so
        far; with one, its own list in its own order, its score as the fused score."""
        if "vector" in found.ranked and "bm25" in found.ranked:
            from memvault.search.translation import lift

            lists = {k: found.ranked[k] for k in ("vector", "bm25")}
            weights = {"vector": opts.w_vector * found.share, "bm25": opts.w_bm25}
            fused = rrf(lists, weights, opts.rrf_k) if opts.fusion == "rrf" else convex(lists, weights, opts.fusion)
            return "hybrid", lift(fused, found.ranked.get("translated", []), opts.w_translated, opts.fusion, opts.rrf_k)
        source, items = next(iter(found.ranked.items()))
        return source, [Fused(cid, s, {source: r}, {source: s}) for r, (cid, s) in enumerate(items, start=1)]

    @staticmethod
    def _first(own: str, fused: list[Fused], found: _Retrieved, payloads: dict[str, Any]) -> list[Fused]:
        """With both retrievers, the first place goes to a candidate one of them ranked first in the
        query's own script (`search.fusion.first_near`); the date boost and decay may still move it."""
        if "vector" not in found.ranked or "bm25" not in found.ranked:
            return fused
        dense = [cid for cid, _ in found.ranked["vector"] if payloads.get(cid, {}).get("script", own) == own]
        near = {cid for cid, _ in found.ranked["bm25"][:NEAR_TOP]} | set(dense[:NEAR_TOP])
        return first_near(fused, lambda f: f.chunk_id in near)

    def _time(
        self, fused: list[Fused], opts: SearchOptions, boost: DateWords | None, payloads: dict[str, Any]
    ) -> list[Fused]:
        """Decay and the date boost (on the fused score, then re-sorted), so recent notes and the days
        a query names rise. The boost doubles a score, which was measured on RRF's scores (LoCoMo 1-4
        nDCG@10 0.712 -> 0.731); a score fusion's spread is another, so with one the boost acts on the
        fused order as RRF would: 1/(k + fused rank)."""
        assert self.index is not None
        rated = any((payloads.get(f.chunk_id) or {}).get("importance") for f in fused)  # `[importance:: N]`
        if (boost is not None or rated) and opts.fusion != "rrf":
            fused = [f._replace(score=1.0 / (RRF_K + r)) for r, f in enumerate(fused, start=1)]
        factors = [lambda cid: importance_factor(payloads.get(cid))] if rated else []
        if opts.decay is not None:
            half_life, reference = opts.decay, newest_daily(self.index.newest_date("daily"))
            factors.append(lambda cid: decay_factor(payloads.get(cid), half_life, reference))
        if boost is not None:
            factors.append(lambda cid: boost_factor(payloads.get(cid), boost.start, boost.end))
        return reweigh(fused, lambda cid: math.prod(f(cid) for f in factors)) if factors else fused

    def _floor(
        self, asked: Asked, fused: list[Fused], found: _Retrieved, opts: SearchOptions, depth: int, payloads: dict
    ) -> tuple[list[Fused], dict[str, Any] | None, str | None]:
        """The candidates good enough to show, so a query nothing answers gets few hits or none rather
        than the least bad chunks: `--threshold` on the fused score, then `--min-similarity` on the
        cosine (a number, or the model's calibrated floor for the query's script for "auto"). Whether
        anything is relevant is asked of the notes in the query's own script: a note in the other
        script ranks by its place in its half (`search.scripts`), and unrelated ones would reach the
        floor (CMRC 2018: every Chinese question, answerable or not, had an English chunk at 0.95;
        `python -m bench offtopic`); one passes by its cosine raised by the model's bias. While vectors
        come in, a candidate the dense list did not rank is kept (it may have no vector yet) and the
        counts say `vectors_pending`. The first note of each script keeps its margin (`fusion.leads`), and
        the counts name the query's words no note holds (`unheard`: `search.recall.named`).
        Returns the candidates, the floor's counts, and the reason (no dense list to cut on, say)."""
        assert self.index is not None
        own = asked.script
        if opts.threshold is not None:
            fused = [f for f in fused if f.score >= opts.threshold]
        dense = found.ranked.get("vector", [])
        if self.index.has_script(own):  # else a vault all in the other script: its notes decide
            dense = [(cid, s) for cid, s in dense if payloads.get(cid, {}).get("script", own) == own]
        fused = leads(fused, found.dense.margins(dense) if found.dense else None, dense)
        if opts.min_similarity is None:
            return fused, None, found.reason
        if "vector" not in found.ranked:
            return fused, None, "; ".join(filter(None, [found.reason, NO_FLOOR]))
        cut = opts.min_similarity
        cut = relevance_floor(self.index.embedder.name, own) if cut == "auto" else float(cut)
        relevant = any(s >= cut for _, s in dense)
        floors = found.dense.floor if found.dense else None
        passed = above_floor(fused, found.ranked["vector"], depth, cut, floors) if relevant else []
        counts = {"min_similarity": cut, "passed": len(passed), "candidates": len(fused),
                  "lead_margins": lead_margins(self.index.embedder.name, own),
                  "unheard": self.index.unheard(asked.terms)}  # fmt: skip
        if found.share < 1.0:  # chunks with no vector yet cannot be told relevant or not: not "nothing relevant"
            kept = {f.chunk_id for f in passed}
            passed = [f for f in fused if f.chunk_id in kept or "vector" not in f.scores]
            counts |= {"passed": len(passed), "vectors_pending": True}
        return passed, counts, found.reason

    def _diversify(self, fused: list[Fused], opts: SearchOptions, payloads: dict[str, Any]) -> list[Fused]:
        """With `--mmr`, the candidates in MMR order, so the hits are not near-copies of one another
        (search.mmr), compared by their cached vectors; without it, the order as it stands."""
        assert self.index is not None
        if opts.mmr is None:
            return fused
        from memvault.search.mmr import mmr

        return mmr(fused, self.index.chunk_vectors(payloads, [f.chunk_id for f in fused]), opts.mmr)

    def _corrections(self, fused: list[Fused], flt: FilterSpec | None, payloads: dict[str, Any]) -> list[Fused]:
        """The newer fact wins: each superseded entry's correction goes right above it, brought in if no
        retriever found it (search.corrections). Last of the reorderings, so none moves the two apart;
        `payloads` gains the rows of the corrections brought in."""
        assert self.index is not None
        return follow_corrections(fused, self.index, self.layout, flt, payloads)

    def _hits(
        self, asked: Asked, fused: list[Fused], opts: SearchOptions, payloads: dict[str, Any]
    ) -> tuple[list[Hit], str | None]:
        """What the caller gets, and what the answer says of it: neighbouring entries that answer the
        query joined into one hit (search.join), at most `per_doc` hits a note and `limit` in all, each
        with its lines, heading, text and a snippet around the query's words. Rows are read for the
        pool a join draws from and then as far down as the hits need, each as its note holds it now
        (search.fresh): a candidate whose text is no longer in its note, or that has no payload or row,
        is left out and the next one moves up."""
        assert self.index is not None
        fresh = (Freshness(self.layout, self.index.manifest) if isinstance(self.index, Index)
                 else AsIndexed(self.index))  # type: ignore[arg-type]  # (a reader not an Index is the remote one)  # fmt: skip
        by_id = {f.chunk_id: f for f in fused}
        order = [f.chunk_id for f in fused if f.chunk_id in payloads]
        floor, words = relevance_floor(self.index.embedder.name, asked.script), content_words(asked.terms)
        other = {cid for cid, p in payloads.items() if p.get("script", asked.script) != asked.script}
        cosines = {f.chunk_id: f.scores["vector"] for f in fused if "vector" in f.scores}
        # its own words: a key or a saved day says nothing of the fact
        answering = answers_beside(lambda cid: not words.isdisjoint(tokenize(one_line(rows[cid].text))), cosines,
                                   floor, other.__contains__)  # fmt: skip

        rows: dict[str, ChunkRow] = {}
        places: dict[str, Place] = {}
        read = 0
        while True:
            step = order[read : max(read + opts.limit, JOIN_POOL)]
            new = fresh.check(self.index.chunk_rows(step))
            rows.update(new)
            places.update((cid, row_place(row)) for cid, row in new.items())
            read += len(step)
            runs = join_runs(order[:read], places, answering)
            keep = cap_per_doc(((i, r.path) for i, r in enumerate(runs)), opts.per_doc, opts.limit)
            if len(keep) >= opts.limit or read >= len(order):
                break
        wanted = match_terms(asked.terms)
        hits = []
        for run in (runs[i] for i in keep):
            row, f = rows[run.lead], by_id[run.lead]
            about, text, unit = about_unit(row.payload, row.text), row.text, row.payload.get("unit", "text")
            lines = fresh.lines(run.path) if len(run.members) > 1 else None
            joined = run_text(lines, run) if lines is not None else None
            if joined is not None:
                (text, about["entries"]), unit = joined, "entries"
            else:
                run.start, run.end = row.start_line, row.end_line
            snippet = make_snippet(text, wanted, max(SNIPPET_LINES, run.end - run.start + 1))
            hits.append(Hit(row.path, run.start, run.end, row.heading, text, f.score, snippet, f.ranks, f.scores,
                            run.lead, None, unit, about))  # fmt: skip
        return hits, fresh.reason()


@dataclasses.dataclass(frozen=True)
class Asked:
    """A query in the forms the stages read, each made once: as typed (`text`: embedded, its dates read),
    its words (`terms`: the snippets', the joins') and its script (its half of a vault, its floor)."""

    text: str
    terms: tuple[str, ...]
    script: str


@dataclasses.dataclass(frozen=True)
class _Retrieved:
    """What the retrieve stage hands on: each retriever's ranked (chunk id, score) list by name."""

    ranked: dict[str, list[tuple[str, float]]]
    reason: str | None  # for the answer: a retriever left out, or a dense list still partial
    share: float = 1.0  # the dense list's fusion weight scale while vectors come in (`_vector_share`)
    fallback: str | None = None  # why the files answer instead: no retriever could rank the query
    dense: Dense | None = None  # hybrid's dense lists (`search.scripts.Dense`): the floor's cosines, the leads
