"""What a query can set, validated once, and the public names it travels under.

The public names are the CLI's long flags with `-` as `_` (`from` and `to`
for the date range): the keys of a batch line, of a socket request and of
the MCP tool. This module is light (no model, no index), so a client that
only talks to the daemon can check a query before sending it.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from indexer.filters import KINDS, FilterSpec
from search.fusion import FUSION, FUSIONS, RRF_K, WEIGHTS
from search.hits import MODES
from vault.errors import UsageError
from vault.paths import parse_date

MAX_LIMIT = 1_000_000  # past this a vector store's integer types overflow
# public key -> `build_options` keyword
PUBLIC_KEYS = {
    "mode": "mode", "limit": "limit", "per_doc": "per_doc", "threshold": "threshold", "depth": "depth",
    "rrf_k": "rrf_k", "w_vector": "w_vector", "w_bm25": "w_bm25", "from": "date_from", "to": "date_to",
    "kind": "kind", "section": "section", "tag": "tag", "path": "path", "min_similarity": "min_similarity",
    "decay": "decay", "mmr": "mmr", "dates": "dates", "fusion": "fusion",
}  # fmt: skip
# how date words in a query act. `auto` (the default) is the measured choice, boost: on LoCoMo it
# raised nDCG@10 of categories 1-4 from 0.712 to 0.731 (filter: 0.730, and lower R@100), and left
# SciFact and CMRC unchanged (bench/results/README.md, issue 15)
DATES = ("auto", "boost", "filter", "off")
DATES_AUTO = "boost"


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
    min_similarity: float | str | None = None  # the relevance floor: a cosine (-1..1), or "auto": the model's
    decay: float | None = None  # half-life in days of daily-note hits (search.time); None: no decay
    mmr: float | None = None  # MMR lambda, 0..1 (search.mmr); None: the fused order
    dates: str = "auto"  # date words in the query: auto (DATES_AUTO), boost, filter or off (search.dates)
    fusion: str = FUSION  # how the two rankings combine: zscore or minmax (normalised scores), or rrf (ranks)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UsageError(f"{self.mode!r}: unknown mode; use one of {', '.join(MODES)}")
        if self.limit < 1 or self.per_doc < 0 or (self.depth is not None and self.depth < 1):
            raise UsageError("limit and depth must be positive, per-doc zero (no cap) or more")
        if max(self.limit, self.depth or 0) > MAX_LIMIT:
            raise UsageError(f"limit and depth are at most {MAX_LIMIT:,}")
        if self.rrf_k < 0 or not all(math.isfinite(w) and w >= 0 for w in (self.w_vector, self.w_bm25)):
            raise UsageError("rrf-k and the retriever weights must be zero or more")
        floor = self.min_similarity
        if floor is not None and floor != "auto" and not (isinstance(floor, float) and -1 <= floor <= 1):
            raise UsageError("min-similarity is a cosine from -1 to 1, or auto (the model's calibrated floor)")
        if self.decay is not None and not (math.isfinite(self.decay) and self.decay > 0):
            raise UsageError("decay is a half-life in days, more than zero")
        if self.mmr is not None and not 0 <= self.mmr <= 1:
            raise UsageError("mmr is a lambda from 0 (most diverse) to 1 (the fused order)")
        if self.dates not in DATES:
            raise UsageError(f"{self.dates!r}: dates is one of {', '.join(DATES)}")
        if self.fusion not in FUSIONS:
            raise UsageError(f"{self.fusion!r}: fusion is one of {', '.join(FUSIONS)}")

    def to_public(self) -> dict[str, Any]:
        """The public keys that rebuild these options through `options_from`."""
        f = self.filters
        out: dict[str, Any] = {
            "mode": self.mode, "limit": self.limit, "per_doc": self.per_doc, "threshold": self.threshold,
            "depth": self.depth, "rrf_k": self.rrf_k, "w_vector": self.w_vector, "w_bm25": self.w_bm25,
            "from": f.date_from and f.date_from.isoformat(), "to": f.date_to and f.date_to.isoformat(),
            "kind": list(f.kinds) or None, "section": f.section, "tag": f.tag, "path": f.path_prefix,
            "min_similarity": self.min_similarity, "decay": self.decay, "mmr": self.mmr, "dates": self.dates,
            "fusion": self.fusion,
        }  # fmt: skip
        return {k: v for k, v in out.items() if v is not None}


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
    min_similarity: float | str | None = None,
    decay: float | None = None,
    mmr: float | None = None,
    dates: str | None = None,
    fusion: str | None = None,
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
    floor = min_similarity if min_similarity in (None, "auto") else float(min_similarity)  # type: ignore[arg-type]
    return SearchOptions(
        mode, int(limit), depth, int(per_doc), threshold, int(rrf_k), float(w_vector), float(w_bm25), flt, floor,
        None if decay is None else float(decay), None if mmr is None else float(mmr),
        SearchOptions.dates if dates is None else str(dates), SearchOptions.fusion if fusion is None else str(fusion),
    )  # fmt: skip


def options_from(item: dict[str, Any], ignore: frozenset[str] = frozenset()) -> SearchOptions:
    """Search options from public keys (a batch line, a socket request, CLI flags); other keys are refused."""
    unknown = set(item) - set(PUBLIC_KEYS) - ignore
    if unknown:
        raise UsageError(f"unknown key {sorted(unknown)[0]!r}")
    try:
        return build_options(**{PUBLIC_KEYS[k]: v for k, v in item.items() if k in PUBLIC_KEYS and v is not None})
    except (TypeError, OverflowError, ValueError) as exc:  # a list for a limit, an infinite number
        raise UsageError(f"bad search option: {exc}") from None


def _date(value: str | dt.date | None) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    return parse_date(str(value))
