"""A query's options as one checked value (`SearchOptions`), built from CLI flags, batch-line and socket keys
or API keywords; what each option is, is declared once in `search.option_table`.

This module is light (no model, no index), so a client can check a query before sending it to the daemon.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from memvault.indexer.filters import FilterSpec
from memvault.search.option_table import BY_ATTR, BY_NAME, DEFAULTS, OPTIONS, Option
from memvault.vault.errors import UsageError
from memvault.vault.paths import parse_date


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
    w_translated: float = DEFAULTS["w_translated"]  # the other script's words' lift (search.translation)
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    kind: tuple[str, ...] = ()
    section: str | None = None
    tag: str | None = None
    path: str | None = None  # a vault-relative prefix
    conversation: str | None = None  # its entries and what it said (seed 000's "this conversation")
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
        return FilterSpec(self.path, self.kind, self.date_from, self.date_to, self.section, self.tag,
                          conversation=self.conversation)  # fmt: skip

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
