"""`hash-384`: feature hashing instead of a model, for tests and scale runs."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from memvault.vault.cjk import LETTER_CLASS, on_first_use


class HashEmbedder:
    """Feature hashing of word tokens into a fixed-size vector: no model at all.

    A lexical stand-in, not a semantic model: the benchmark uses it to build
    100,000-chunk indexes in minutes, to measure the machinery, not quality.
    """

    name = "hash-384"
    dim = 384
    multilingual = True  # hashes CJK characters like words
    # a run of CJK letters is one word to `[^\W\d_]+`; the CJK class adds only the few CJK letters that are
    # not word characters (the katakana middle dot, the kana sound marks)
    _token = on_first_use(rf"[^\W\d_]+|\d+|{LETTER_CLASS}")

    def _vector(self, text: str) -> np.ndarray:
        import numpy as np

        vec = np.zeros(self.dim, dtype=np.float32)
        for token in self._token.findall(text.lower()):
            h = zlib.crc32(token.encode())
            vec[h % self.dim] += 1.0 if h & 0x80000000 else -1.0
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)
