"""Dense retrieval across scripts.

A multilingual model scores a note in the other script than the query's lower than the same fact in
the query's own (e5-small-q4: by 0.054 for an English question, 0.120 for a Chinese one; `python -m
bench crosslingual`). An English question then ranks the Chinese note that answers it below a
hundred English near-misses (XQuAD-R: the Chinese answer was in the dense top 10 for 24% of the
questions). So when the vault holds both scripts, the dense retriever is asked once per script and the
two lists merge as if both were written in the query's: the other script's k-th note takes the cosine
of the query script's note at the same place in its half of the vault (its rank scaled by how many
notes each script has), or its own cosine raised by the model's bias when that is higher. A Chinese
note that is its script's best answer ranks beside the best English one in a vault that is half
Chinese, and far lower in a vault with a few Chinese notes among thousands, where being the best of
few says little. Which note is the other script's k-th is read on cosines with each script's mean
vector taken off both sides (`indexer.embedders.means`): on the raw cosine, a Chinese note that names
Grafana reads closer to an English question than one that answers it. What the relevance floor reads
stays the cosine raised by the bias alone: a note's place in its half does not make it relevant. A
vault in one script, or a model with no measured bias, is asked once, as before.

Whether a script's first note stands out of its list (`leads`, what `memvault context` reads to give a
prompt the note the model singles out) is read on each note's cosine less what it scores for the mean
query of the prompt's script (`indexer.embedders.means.query_means`): some notes sit near every prompt,
and on the raw cosine they lead a crowd whatever is asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from memvault.indexer.embedders import script_bias
from memvault.indexer.embedders.means import centred_cosines, query_means, script_means
from memvault.indexer.filters import FilterSpec
from memvault.indexer.reading import Reader
from memvault.search.fusion import first_margins
from memvault.vault.cjk import other_script

Ranked = list[tuple[str, float]]


@dataclasses.dataclass(frozen=True)
class Dense:
    """The dense list as the fusion ranks it, and the cosine the relevance floor reads of each chunk of
    the other script (its cosine raised by the model's bias), where the two differ."""

    ranked: list[tuple[str, float]]
    floor: dict[str, float] = dataclasses.field(default_factory=dict)
    # the query script's own list, whole: the merged top `depth` may hold few of its notes (the other
    # script's raised by the bias), and whether a note stands out of its script is read on its own list
    own: list[tuple[str, float]] | None = None
    # each script's first note and how far it stands above its third (`lead_margins_over`); None: the
    # model's mean queries are not measured, the margins are read on the lists' raw cosines
    leads: dict[str, float] | None = None

    def margins(self, own_merged: Ranked) -> dict[str, float]:
        """Each script's first note and its margin over the third (`search.fusion.first_margins`);
        `own_merged`: the query script's notes of the merged list, read where its whole list was not kept."""
        if self.leads is not None:
            return self.leads
        other = sorted(self.floor.items(), key=lambda item: -item[1])
        return first_margins([self.own if self.own is not None else own_merged, other], {})


def dense_top(index: Reader, vector: np.ndarray, own: str, depth: int, flt: FilterSpec | None) -> Dense:
    """The dense top `depth` for a query in script `own`, across scripts when the vault and the model
    call for it."""
    other = other_script(own)
    bias = script_bias(index.embedder.name, own)
    if bias is None or not index.has_script(other):
        ranked = index.vector_top(vector, depth, flt)
        return Dense(ranked, leads=lead_margins_over(index, vector, own, [ranked]) if bias is not None else None)
    base = flt or FilterSpec()
    mine = index.vector_top(vector, depth, dataclasses.replace(base, script=own))
    theirs, read = other_top(index, vector, own, other, depth, dataclasses.replace(base, script=other))
    counts = index.script_counts()
    scale = counts.get(own, 0) / max(1, counts.get(other, 0))  # the query script's notes per note of the other
    floor = {cid: score + bias for cid, score in theirs}
    merged = mine + [(cid, max(floor[cid], _peer(mine, rank, scale))) for rank, (cid, _) in enumerate(theirs)]
    merged = sorted(merged, key=lambda item: (-item[1], item[0]))[:depth]
    return Dense(merged, floor, mine, lead_margins_over(index, vector, own, [mine, theirs], read))


def other_top(
    index: Reader, vector: np.ndarray, own: str, other: str, depth: int, flt: FilterSpec
) -> tuple[Ranked, dict[str, np.ndarray]]:
    """The other script's top `depth` with their cosines, in the order of their centred cosines
    (`indexer.embedders.means`) where the model's script means are known; and the stored vectors read
    for it (none where they are not)."""
    means = script_means(index.embedder.name)
    if means is None:
        return index.vector_top(vector, depth, flt), {}
    shifted = vector - means[own]  # the query less its script: the candidates the centred order ranks
    found = index.vector_top(shifted / max(float(np.linalg.norm(shifted)), 1e-12), depth, flt)
    stored = index.vector_store().vectors([cid for cid, _ in found])  # current: `vector_top` found them
    kept = [cid for cid, _ in found if cid in stored]
    if not kept:
        return [], stored
    rows = np.stack([stored[cid] for cid in kept])
    centred = centred_cosines(rows, vector, means[own], means[other])
    cosines = rows @ vector
    order = sorted(range(len(kept)), key=lambda i: (-centred[i], kept[i]))
    return [(kept[i], float(cosines[i])) for i in order], stored


def lead_margins_over(
    index: Reader, vector: np.ndarray, own: str, lists: list[Ranked], read: Mapping[str, np.ndarray] | None = None
) -> dict[str, float] | None:
    """Of each list (one script's notes, with their cosines to a query in script `own`), the first note
    on its cosine less what it scores for the script's mean query, and its margin over the third;
    None for a model whose mean queries are not measured. `read`: stored vectors already at hand. A
    superseded entry is left out of the lists: it is never given, and beside its correction it stood
    as a second near-copy."""
    means = query_means(index.embedder.name)
    if means is None:
        return None
    ids = [cid for ranked in lists for cid, _ in ranked]
    current = {cid for cid, payload in index.payloads(ids).items() if not payload.get("superseded")}
    read = read or {}
    stored = {**read, **index.vector_store().vectors([cid for cid in current if cid not in read])}
    offsets = {cid: float(stored[cid] @ means[own]) for cid in current if cid in stored}
    return first_margins([[(cid, s) for cid, s in ranked if cid in offsets] for ranked in lists], offsets)


def _peer(mine: list[tuple[str, float]], rank: int, scale: float) -> float:
    """The cosine of the query script's note at the other's `rank` (0-based) scaled to its half: the
    middle of the span of its notes that one note of the other script stands for."""
    at = int((rank + 0.5) * scale)
    return mine[at][1] if at < len(mine) else -1.0
