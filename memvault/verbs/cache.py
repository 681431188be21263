"""`cache`: the embedding cache (`indexer.embed_cache`) in figures, or cleared. It holds each text's
vector by model and content hash, so a text is embedded once ever; seed 003 shows its size and lets a
person clear it. Its vectors are capped in number and dropped after `MAX_AGE_DAYS` unasked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memvault.protocol import Message, Request, arg
from memvault.vault.errors import UsageError
from memvault.verbs.runtime import VaultRuntime

ACTIONS = ("show", "clear")


@dataclass(frozen=True)
class CacheFigures(Message):
    vectors: int | None
    bytes: int
    oldest_use: str | None
    max_age_days: int
    cleared: int | None = None

    def human(self) -> str:
        said = f"cleared {self.cleared} vectors; " if self.cleared is not None else ""
        oldest = f", least recently used on {self.oldest_use}" if self.oldest_use else ""
        return (f"{said}embedding cache: {self.vectors} vectors, {self.bytes:,} bytes{oldest} (a vector unused "
                f"for {self.max_age_days} days goes)")  # fmt: skip


@dataclass(frozen=True)
class Cache(Request, op="cache", reply=CacheFigures):
    """The embedding cache: its vectors and size (show), or every vector forgotten (clear; each text
    is embedded again when it is next indexed)."""

    action: str = arg("show or clear")

    def check(self) -> None:
        if self.action not in ACTIONS:
            raise UsageError(f"{self.action!r}: the cache's actions are {' and '.join(ACTIONS)}")


def cache(rt: VaultRuntime, request: Cache) -> CacheFigures:
    from memvault.indexer.embed_cache import EmbedCache, cache_figures

    path = rt.layout.state_dir / "embeddings.sqlite"  # `indexer.manifest.cache_path`
    cleared = None
    if request.action == "clear":
        held = EmbedCache(path, create=False)  # beside a daemon's own connection: SQLite serialises the two
        try:
            cleared = held.clear()
        finally:
            held.close()
    figures: dict[str, Any] = cache_figures(path)
    return CacheFigures(**figures, cleared=cleared)
