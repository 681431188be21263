"""What a query can set, declared once (`OPTIONS`): the public key, type, default, bounds, choices and help of
each option. The CLI's flags, the keys of a batch line and of a socket request, the MCP tool's parameters and
`SearchOptions`' defaults (`search.options`) are all read off it.

The public names are the CLI's long flags with `-` as `_` (`from` and `to` for the date range). This module
imports nothing that defines a dataclass (whose import, with `inspect`, costs 10 ms), so a search a running
daemon answers (`memvault.cli.via_daemon`) parses its flags from here before anything else is imported.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from memvault.search.fusion import FUSION, FUSIONS, RRF_K, WEIGHTS
from memvault.vault.places import KINDS

MODES = ("hybrid", "bm25", "vector", "substring")
MAX_LIMIT = 1_000_000  # past this a vector store's integer types overflow
# how date words in a query act. `auto` (the default) is the measured choice, boost: on LoCoMo it
# raised nDCG@10 of categories 1-4 from 0.712 to 0.731 (filter: 0.730, and lower R@100), and left
# SciFact and CMRC unchanged (bench/results/README.md, issue 15)
DATES = ("auto", "boost", "filter", "off")
DATES_AUTO = "boost"


class Option(NamedTuple):
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
           "scores normalised over its own list, then weighed), rrf (reciprocal ranks) or dbsf (Qdrant's "
           "distribution-based score fusion)", FUSIONS),
    Option("rrf_k", int, RRF_K, "the k of reciprocal rank fusion", minimum=0),
    Option("w_vector", float, WEIGHTS["vector"], "weight of the dense ranking", minimum=0),
    Option("w_bm25", float, WEIGHTS["bm25"], "weight of the BM25 ranking", minimum=0),
    Option("w_translated", float, WEIGHTS["translated"], "weight of BM25 on the query's words said in the other "
           "script (CC-CEDICT), added to the dense candidates it finds (0: none)", minimum=0),
    Option("from", str, None, "notes dated on or after YYYY-MM-DD", field="date_from"),
    Option("to", str, None, "notes dated on or before YYYY-MM-DD", field="date_to"),
    Option("kind", str, None, "daily, memory, conversation (what a conversation said) or other (repeatable)", KINDS,
           many=True),
    Option("section", str, None, "only chunks under this ## section"),
    Option("tag", str, None, "only notes with this frontmatter tag"),
    Option("path", str, None, "only notes under this vault-relative prefix"),
    Option("conversation", str, None, "only one conversation: its entries ([conversation:: ID]) and what it "
           "said (its history note)", metavar="ID"),
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
