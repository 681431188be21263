"""Each script's mean vector, by model: what every text of a script shares before it says anything.

A multilingual model places all Chinese text in one region of its space and all English in another, so
an English question's cosine to a Chinese note reads "Chinese" as much as what the note says: the
notes that answer it and those that do not sit at one cosine, and the order among them is mostly noise
(XQuAD-R, English questions over the Chinese sentences alone: the answer in the top 10 for 88%).
Taking each script's mean off both sides (the query's script's from the query, the note's from the
note) leaves what the texts say: 92% there. The means are those of dictionary words embedded as
passages (CC-CEDICT, Chinese headwords and their first English sense), not of any vault or benchmark
set, so they carry the script and no topic. `python -m bench means` computes them into
`script_means.json`; a model not named there is ranked across scripts on its raw cosines.

The same words embedded as queries give each script's mean query (`query_means`): what a note scores
for a prompt of that script that asks nothing in particular. A note that sits near every prompt ("老李
负责 iOS 打包" for most English ones) stands above the rest of its list whatever is asked; its cosine less
that score tells whether the prompt singled it out (`search.scripts.lead_margins_over`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MEANS_FILE = Path(__file__).resolve().parent / "script_means.json"


def script_means(name: str) -> dict[str, np.ndarray] | None:
    """The mean vector of each script ("latin", "cjk") for the model `name`, or None when not measured."""
    return _stored(name, "")


def query_means(name: str) -> dict[str, np.ndarray] | None:
    """The mean query of each script ("latin", "cjk") for the model `name`, or None when not measured."""
    return _stored(name, "query_")


@functools.cache
def _stored(name: str, prefix: str) -> dict[str, np.ndarray] | None:
    import numpy as np

    try:
        found = json.loads(MEANS_FILE.read_text(encoding="utf-8")).get(name)
    except (OSError, ValueError):
        return None
    if not found or any(prefix + script not in found for script in ("latin", "cjk")):
        return None
    return {script: np.asarray(found[prefix + script], dtype=np.float32) for script in ("latin", "cjk")}


def centred_cosines(vectors: np.ndarray, query: np.ndarray, own: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """The cosine of each row of `vectors` (notes of one script, mean `theirs`) to `query` (of the script
    whose mean is `own`), each side less its script's mean."""
    import numpy as np

    rows = vectors - theirs
    q = query - own
    norms = np.linalg.norm(rows, axis=1) * max(float(np.linalg.norm(q)), 1e-12)
    return np.asarray(rows @ q / np.maximum(norms, 1e-12))
