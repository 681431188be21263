"""What a query can set, declared once (`OPTIONS`): the public key, type, default, bounds, choices and help of
each option. The CLI's flags, the keys of a batch line and of a socket request, the MCP tool's parameters and
`SearchOptions`' defaults are all read off it.

The public names are the CLI's long flags with `-` as `_` (`from` and `to` for the date range). This module is
light (no model, no index), so a client that only talks to the daemon can check a query before sending it.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from memvault.indexer.filters import KINDS, FilterSpec
from memvault.search.fusion import FUSION, FUSIONS, RRF_K, WEIGHTS
from memvault.search.hits import MODES
from memvault.vault.errors import UsageError
from memvault.vault.paths import parse_date

MAX_LIMIT = 1_000_000  # past this a vector store's integer types overflow
# how date words in a query act. `auto` (the default) is the measured choice, boost: on LoCoMo it
# raised nDCG@10 of categories 1-4 from 0.712 to 0.731 (filter: 0.730, and lower R@100), and left
# SciFact and CMRC unchanged (bench/results/README.md, issue 15)
DATES = ("auto", "boost", "filter", "off")
DATES_AUTO = "boost"


@dataclass(frozen=True)
class Option:
    """One search option. `name` is its public key (a batch line, the socket, MCP) and, with `_` as `-`,
    its CLI flag; `field` is its keyword in `build_options` and attribute of `SearchOptions` when the
    public name is a Python keyword (`from`). `kind` float|str (`min_similarity`) takes a number or a word."""

    name: str
    kind: type | str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    metavar: str | None = None
    many: bool = False  # repeatable on the CLI, a list on the wire
    field: str | None = None

    @property
    def attr(self) -> str:
        return self.field or self.name

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


OPTIONS: tuple[Option, ...] = (
    Option("mode", str, "hybrid", "hybrid (dense + BM25, fused), bm25, vector, or substring (no index)", MODES),
    Option("limit", int, 10, "at most this many hits", minimum=1, maximum=MAX_LIMIT),
    Option("per_doc", int, 3, "at most this many hits per note (0: no cap)", minimum=0),
    Option("threshold", float, None, "drop hits scoring below this"),
    Option("min_similarity", "float|auto", None, "relevance floor: drop hits whose cosine to the query is lower "
           "than this, or than the model's calibrated floor (auto)", minimum=-1, maximum=1),
    Option("depth", int, None, "candidates per retriever (default: max(20, limit))", minimum=1, maximum=MAX_LIMIT),
    Option("fusion", str, FUSION, "how the dense and BM25 rankings combine: zscore or minmax (each retriever's "
           "scores normalised over its own list, then weighed) or rrf (reciprocal ranks)", FUSIONS),
    Option("rrf_k", int, RRF_K, "the k of reciprocal rank fusion", minimum=0),
    Option("w_vector", float, WEIGHTS["vector"], "weight of the dense ranking", minimum=0),
    Option("w_bm25", float, WEIGHTS["bm25"], "weight of the BM25 ranking", minimum=0),
    Option("from", str, None, "notes dated on or after YYYY-MM-DD", field="date_from"),
    Option("to", str, None, "notes dated on or before YYYY-MM-DD", field="date_to"),
    Option("kind", str, None, "daily, memory or other (repeatable)", KINDS, many=True),
    Option("section", str, None, "only chunks under this ## section"),
    Option("tag", str, None, "only notes with this frontmatter tag"),
    Option("path", str, None, "only notes under this vault-relative prefix"),
    Option("decay", float, None, "daily-note hits lose half their score every DAYS days older than the newest "
           "daily note (MEMORY.md and other notes never decay)", metavar="DAYS"),
    Option("mmr", float, None, "diversify the hits: 1 is the fused order, lower trades relevance for hits unlike "
           "those above them (0..1)", minimum=0, maximum=1, metavar="LAMBDA"),
    Option("dates", str, "auto", "date words in the query ('last week', '2023年5月'): auto, boost the notes dated "
           "then, filter to them, or off (default auto: boost)", DATES),
)  # fmt: skip
BY_NAME = {o.name: o for o in OPTIONS}
BY_ATTR = {o.attr: o for o in OPTIONS}
DEFAULTS = {o.attr: o.default for o in OPTIONS}


@dataclass(frozen=True)
class SearchOptions:
    """Everything a query can set, one attribute per option (`OPTIONS` gives the defaults), checked once."""

    mode: str = DEFAULTS["mode"]
    limit: int = DEFAULTS["limit"]
    per_doc: int = DEFAULTS["per_doc"]
    threshold: float | None = None
    min_similarity: float | str | None = None  # the relevance floor: a cosine (-1..1), or "auto": the model's
    depth: int | None = None  # each retriever's candidates; default max(20, limit)
    fusion: str = DEFAULTS["fusion"]  # zscore or minmax (normalised scores), or rrf (ranks)
    rrf_k: int = DEFAULTS["rrf_k"]
    w_vector: float = DEFAULTS["w_vector"]
    w_bm25: float = DEFAULTS["w_bm25"]
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    kind: tuple[str, ...] = ()
    section: str | None = None
    tag: str | None = None
    path: str | None = None  # a vault-relative prefix
    decay: float | None = None  # half-life in days of daily-note hits (search.time); None: no decay
    mmr: float | None = None  # MMR lambda, 0..1 (search.mmr); None: the fused order
    dates: str = DEFAULTS["dates"]  # date words in the query: auto (DATES_AUTO), boost, filter or off

    def __post_init__(self) -> None:
        for option in OPTIONS:
            _check(option, getattr(self, option.attr))
        if self.min_similarity not in (None, "auto") and not isinstance(self.min_similarity, float):
            raise UsageError("min-similarity is a cosine from -1 to 1, or auto (the model's calibrated floor)")

    @cached_property
    def filters(self) -> FilterSpec:
        return FilterSpec(self.path, self.kind, self.date_from, self.date_to, self.section, self.tag)

    def to_public(self) -> dict[str, Any]:
        """The public keys that rebuild these options through `options_from` (unset ones left out)."""
        out = {}
        for option in OPTIONS:
            value = getattr(self, option.attr)
            value = value.isoformat() if isinstance(value, dt.date) else list(value) if option.many else value
            if value is not None and value != []:
                out[option.name] = value
        return out


def _check(option: Option, value: Any) -> None:
    """One line naming the option (as its flag) when a value is out of its choices or bounds."""
    if value is None or (option.kind == "float|auto" and value == "auto"):
        return
    for each in value if option.many else (value,):
        if option.choices and each not in option.choices:
            raise UsageError(f"{each!r}: unknown {option.name}; use one of {', '.join(option.choices)}")
    if isinstance(value, int | float) and not (option.minimum is None and option.maximum is None):
        if not math.isfinite(value):
            raise UsageError(f"{option.flag} must be a finite number")
        low = option.minimum if option.minimum is not None else -math.inf
        high = option.maximum if option.maximum is not None else math.inf
        if not low <= value <= high:
            bounds = f"from {_n(low)} to {_n(high)}" if option.maximum is not None else f"{_n(low)} or more"
            raise UsageError(f"{option.flag} is {bounds}, not {_n(value)}")
    if option.name == "decay" and not (math.isfinite(value) and value > 0):
        raise UsageError("decay is a half-life in days, more than zero")


def _n(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def build_options(**given: Any) -> SearchOptions:
    """The one place that turns CLI flags, batch-line keys and API keywords (`SearchOptions`' attribute
    names: `date_from`, not `from`) into `SearchOptions`; None means the option's default."""
    unknown = set(given) - set(BY_ATTR)
    if unknown:
        raise UsageError(f"unknown search option {sorted(unknown)[0]!r}; known: {', '.join(BY_ATTR)}")
    values = {k: v for k, v in given.items() if v is not None}
    kinds = values.get("kind", ())
    values["kind"] = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    if "path" in values:
        values["path"] = _prefix(values["path"])
    if "tag" in values:
        values["tag"] = values["tag"].lstrip("#") or None
    if "section" in values:
        values["section"] = values["section"] or None
    for name in ("date_from", "date_to"):
        if name in values and not isinstance(values[name], dt.date):
            values[name] = parse_date(str(values[name]))
    for option in OPTIONS:  # numbers as their declared type: a JSON 3 for a float, "0.8" from the CLI
        value = values.get(option.attr)
        if value is None or option.kind not in (int, float, "float|auto") or value == "auto":
            continue
        values[option.attr] = (float if option.kind == "float|auto" else option.kind)(value)  # type: ignore[operator]
    return SearchOptions(**values)


def _prefix(path: str) -> str | None:
    prefix = path.strip()
    if prefix.startswith("/") or ".." in prefix.split("/"):  # judged before any `./` is dropped
        raise UsageError(f"{path!r}: a path filter is a vault-relative prefix")
    while prefix.startswith("./"):
        prefix = prefix[2:]
    return prefix or None


def options_from(item: dict[str, Any], ignore: frozenset[str] = frozenset()) -> SearchOptions:
    """Search options from public keys (a batch line, a socket request, CLI flags); other keys are refused."""
    unknown = set(item) - set(BY_NAME) - ignore
    if unknown:
        raise UsageError(f"unknown key {sorted(unknown)[0]!r}")
    try:
        return build_options(**{BY_NAME[k].attr: v for k, v in item.items() if k in BY_NAME and v is not None})
    except (TypeError, OverflowError, ValueError) as exc:  # a list for a limit, an infinite number
        raise UsageError(f"bad search option: {exc}") from None
