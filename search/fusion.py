"""How the dense and the BM25 rankings become one, and the per-document cap applied after it.

The default weighs each retriever's scores as standard scores over its own list (`convex`, "zscore"):
unlike ranks, a score keeps how far the best chunk stands above the rest, so a retriever that is sure
of its answer counts for more than one that ranks near-ties. Weighted Reciprocal Rank Fusion
(`w / (k + rank)` summed over the retrievers that found a chunk) and min-max scores stay options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple, TypeVar

T = TypeVar("T")

RRF_K = 60
# Chosen by `python -m bench fusion` (bench/results/README.md, issue 18): z-scores at equal weights, with
# the dense list taken across scripts (search.scripts), had the best worst case of "hybrid minus the better
# single retriever" over SciFact, LoCoMo, CMRC 2018 and XQuAD-R (+0.005 to +0.009 nDCG@10 at depth 20 and
# 100), where RRF 0.2/0.8, the earlier default chosen on the first three sets alone, fell 0.046 below the
# dense retriever on the bilingual set.
WEIGHTS = {"vector": 0.5, "bm25": 0.5, "translated": 0.5}  # translated: a lift, not a list (`search.translation`)
FUSIONS = ("zscore", "minmax", "rrf", "dbsf")
FUSION = "zscore"


LEAD_OVER = 2  # `leads`: the margin is over the third note of a list (index 2), past one near-copy


class Fused(NamedTuple):
    """One candidate chunk as the stages after fusion pass it on: its fused score (what the date boost,
    decay, the floor and MMR act on), and each retriever's rank and raw score, kept so a hit shows why."""

    chunk_id: str
    score: float
    ranks: dict[str, int]  # retriever -> 1-based rank in its own list
    scores: dict[str, float]  # retriever -> its raw score (BM25, cosine)


def rrf(
    ranked: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float] = WEIGHTS,
    k: int = RRF_K,
) -> list[Fused]:
    """Fuse ranked lists of (id, score) into `Fused` candidates, best first."""
    return _fuse(ranked, weights, lambda w, scores: terms("rrf", w, scores, k))


def _fuse(
    ranked: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float],
    terms: Callable[[float, list[float]], list[float]],
) -> list[Fused]:
    """The sum over retrievers of what `terms` makes of each one's weight and list (a chunk a
    retriever did not keep adds nothing), best first; ties go to the better rank, then the id."""
    fused: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    scores: dict[str, dict[str, float]] = {}
    for source, items in ranked.items():
        weight = weights.get(source, 1.0)
        values = terms(weight, [score for _, score in items]) if items else []
        for rank, ((item_id, score), term) in enumerate(zip(items, values, strict=True), start=1):
            fused[item_id] = fused.get(item_id, 0.0) + term
            ranks.setdefault(item_id, {})[source] = rank
            scores.setdefault(item_id, {})[source] = score
    return best_first(Fused(i, fused[i], ranks[i], scores[i]) for i in fused)


def best_first(fused: Iterable[Fused]) -> list[Fused]:
    """Candidates by fused score; ties go to the better rank, then the id."""
    return sorted(fused, key=lambda f: (-f.score, min(f.ranks.values()), f.chunk_id))


def _minmax(values: Sequence[float]) -> list[float]:
    """The best score a retriever kept becomes 1, the last 0 (and a chunk it did not keep)."""
    low, high = min(values), max(values)
    return [(v - low) / (high - low) if high > low else 1.0 for v in values]


def _zscore(values: Sequence[float]) -> list[float]:
    """Standard scores over the retriever's own list, counted from its last (a chunk it did not keep
    scores as the last): ranked as z-scores are, and never below 0, so the date boost and decay can
    still scale a fused score."""
    if len(values) < 2:
        return [1.0] * len(values)
    import statistics  # (on first use: with fractions, 6 ms of every process's start)

    low, spread = min(values), statistics.pstdev(values) or 1.0
    return [(v - low) / spread for v in values]


def _dbsf(values: Sequence[float]) -> list[float]:
    """Qdrant's Distribution-Based Score Fusion (`Fusion.DBSF`, as qdrant-client computes it): the
    list's mean less three sample deviations is 0, plus three is 1 (a chunk the retriever did not keep:
    0). An option beside Qdrant's own RRF (`rrf` with `rrf_k` 1: Qdrant's k 2 counts ranks from 0), so
    a server's fusion is measured on the same lists as memvault's (bench/results/README.md, issue 31)."""
    if len(values) < 2:
        return [0.5] * len(values)
    mean = sum(values) / len(values)
    deviation = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    if not deviation:
        return [0.5] * len(values)
    return [(v - mean + 3 * deviation) / (6 * deviation) for v in values]


NORMALISE = {"minmax": _minmax, "zscore": _zscore, "dbsf": _dbsf}


def terms(how: str, weight: float, scores: Sequence[float], k: int = RRF_K) -> list[float]:
    """What one retriever's list adds to the fused score of each of its chunks, in its order: `weight`
    over k plus its rank (`rrf`), or times its score normalised over the list (`NORMALISE[how]`)."""
    if how == "rrf":
        return [weight / (k + rank) for rank in range(1, len(scores) + 1)]
    return [weight * v for v in NORMALISE[how](scores)]


def convex(
    ranked: Mapping[str, Sequence[tuple[str, float]]], weights: Mapping[str, float] = WEIGHTS, how: str = "zscore"
) -> list[Fused]:
    """A weighted sum of each retriever's scores, each normalised over its own list (`NORMALISE`), a
    chunk a retriever did not keep counting 0 for it; returns what `rrf` returns."""
    return _fuse(ranked, weights, lambda w, scores: terms(how, w, scores))


NEAR_TOP = 1  # the first place goes to what a retriever ranked first (`first_near`)


def first_near(items: list[T], near: Callable[[T], bool]) -> list[T]:
    """What no retriever ranked first is not ranked first: the first place goes to the best fused
    candidate `near` admits (what BM25, or the dense list in the query's own script, ranked first;
    `NEAR_TOP`), the rest keep their order (`bench.fusion` runs it on its own candidates). Fused scores
    can crown a candidate both lists only half liked, and in a vault of two scripts the dense list's
    cross-script lift can crown a note in the other script over the one both retrievers ranked first
    in the query's own (issue 28). Chosen by `python -m bench fusion` over the four sets and six
    mixed-script vaults (bench/results/README.md): the best worst margin over the better single
    retriever of every guard tried (top 1, 2, 3, 5, 10; other weights)."""
    for i, item in enumerate(items):
        if near(item):
            return [item, *items[:i], *items[i + 1 :]] if i else items
    return items


def above_floor(fused: list[Fused], dense: Sequence[tuple[str, float]], depth: int, floor: float,
                cosines: Mapping[str, float] | None = None) -> list[Fused]:  # fmt: skip
    """The fused hits whose cosine to the query reaches `floor` (`cosines` where given, else the dense
    list's score: a note of the other script is ranked by its place in its half, `search.scripts`, and
    floored by its cosine). A hit the dense retriever did not rank has a cosine at most the lowest it
    ranked: it is kept only when its full list (`depth` long) stayed above the floor, so nothing shows
    the hit is below it."""
    cosines = cosines or {}
    unranked_may_pass = len(dense) >= depth and bool(dense) and min(s for _, s in dense) >= floor
    return [
        f
        for f in fused
        if cosines.get(f.chunk_id, f.scores.get("vector", -2.0)) >= floor
        or ("vector" not in f.scores and unranked_may_pass)
    ]


def first_margins(lists: Iterable[Sequence[tuple[str, float]]], offsets: Mapping[str, float]) -> dict[str, float]:
    """The first note of each list and its margin: how far its cosine, less its `offset` (what it scores
    for any prompt; none: 0), stands above the third's. A prompt that names a fact singles its note out
    (and a near-copy of it, the second: a fact saved twice, or told again in a day); one that names none
    ("run the tests") finds a crowd of notes at one cosine. Each list is one script's notes, best first
    (the other script's raised by the bias, which a difference cancels)."""
    margins = {}
    for ranked in lists:
        scored = sorted(((score - offsets.get(cid, 0.0), cid) for cid, score in ranked), key=lambda x: (-x[0], x[1]))
        if len(scored) > LEAD_OVER:
            margins[scored[0][1]] = scored[0][0] - scored[LEAD_OVER][0]
    return margins


def leads(
    fused: list[Fused], margins: Mapping[str, float] | None, own: Sequence[tuple[str, float]] = ()
) -> list[Fused]:
    """The candidates, each script's first with its `margin` (`first_margins`; None: read on the raw
    cosines of `own`, the query script's dense list)."""
    margins = first_margins([own], {}) if margins is None else margins
    return [f._replace(scores={**f.scores, "margin": margins[f.chunk_id]}) if f.chunk_id in margins else f
            for f in fused]  # fmt: skip


def cap_per_doc(items: Iterable[tuple[T, str]], per_doc: int, limit: int) -> list[T]:
    """Keep at most `per_doc` ids per path, in order, up to `limit`; items are (id, path)."""
    seen: dict[str, int] = {}
    out: list[T] = []
    for item_id, path in items:
        if per_doc and seen.get(path, 0) >= per_doc:
            continue
        seen[path] = seen.get(path, 0) + 1
        out.append(item_id)
        if len(out) >= limit:
            break
    return out
