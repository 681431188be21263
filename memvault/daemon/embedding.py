"""The daemon's background embedding: chunks indexed for BM25 but still without a vector get one,
a small batch at a time, so a new or rebuilt vault answers (by BM25, then hybrid over the vectors
there so far) long before the model is through it.

Each step reads its batch under the daemon's lock, runs the model without it (searches and saves
go on meanwhile), and stores the vectors under it again, skipping chunks that changed or went in
between.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from memvault.indexer.index import Index

STEP = 32  # chunks per step: a few seconds of the default model on two cores


class BackgroundEmbedding:
    def __init__(self, index: Index, lock: threading.RLock) -> None:
        self.index = index
        self.lock = lock
        self._recent: deque[tuple[int, float]] = deque(maxlen=20)  # (chunks, seconds) of the last steps

    def step(self) -> bool:
        """Embed one batch; False when nothing waits."""
        with self.lock:
            rows = self.index.waiting(limit=STEP)
            if not rows:
                return False
            have = self.index.cached_vectors(rows)
        started = time.perf_counter()
        fresh = self.index.embed_texts(rows, have)
        with self.lock:
            stored = self.index.store_vectors(rows, have, fresh)
        self._recent.append((stored, time.perf_counter() - started))
        return stored > 0

    def progress(self, vectors: dict[str, Any]) -> dict[str, Any]:
        """`status`'s vector figures with the rate of the last steps and the time left at that rate."""
        chunks = sum(n for n, _ in self._recent)
        seconds = sum(s for _, s in self._recent)
        rate = chunks / seconds if chunks and seconds > 0 else None
        eta = round(vectors["waiting"] / rate) if rate and vectors.get("waiting") else (0 if rate else None)
        return {**vectors, "rate_per_s": round(rate, 2) if rate else None, "eta_s": eta}
