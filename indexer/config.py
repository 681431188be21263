"""The choices that shape an index's derived data: the model, the store and its collection, the tokenizer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memvault.vault.config import Settings, load_settings


@dataclass(frozen=True)
class IndexConfig:
    """Choices that shape the derived data; `None` means keep what the index was built with."""

    embedder: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    collection: str = "memvault"
    tokenizer: str | None = None
    embedding_cache: bool = True  # memvault.toml's switch: vectors kept by text in the cache

    @classmethod
    def from_settings(cls, settings: Settings) -> IndexConfig:
        return cls(settings.embedder, settings.qdrant_url, settings.qdrant_api_key, settings.collection,
                   settings.tokenizer, settings.embedding_cache)  # fmt: skip

    @classmethod
    def from_env(
        cls,
        embedder: str | None = None,
        qdrant_url: str | None = None,
        tokenizer: str | None = None,
        root: Path | None = None,
    ) -> IndexConfig:
        """The arguments, else the environment, else `<root>/memvault.toml` (see `vault.config`)."""
        return cls.from_settings(load_settings(root, embedder=embedder, qdrant_url=qdrant_url, tokenizer=tokenizer))
