"""The runtime of a verb run in this process, when no daemon answers: the index is opened here.

A search keeps the index open read-only for the next query (batch mode and
host programs ask many); `reindex` releases it first, since a writer needs
the index lock for itself. Nothing heavy is imported until a verb needs it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from memvault.vault.errors import UsageError
from memvault.vault.paths import Layout
from memvault.verbs.index import Indexed, Reindex

if TYPE_CHECKING:
    from memvault.indexer.config import IndexConfig
    from memvault.search.engine import Searcher
    from memvault.search.hits import SearchResult
    from memvault.search.options import SearchOptions


class LocalRuntime:
    def __init__(self, layout: Layout, config: IndexConfig | None = None, progress: bool = False) -> None:
        self.layout = layout
        self._config = config
        self.progress = progress
        self._searcher: Searcher | None = None
        self._settled = False  # the stores were as `indexer.quickcheck.record` noted when search opened them

    @property
    def config(self) -> IndexConfig:
        """The index settings given, else the vault's (`IndexConfig.from_env`), read when a verb first
        needs them: `status` and the verbs on the files alone open no index (and import none of it)."""
        if self._config is None:
            from memvault.indexer.config import IndexConfig

            self._config = IndexConfig.from_env(root=self.layout.root)
        return self._config

    def written(self, paths: list[str]) -> bool:
        return False  # the next `index`, or a daemon's watcher, picks them up

    def search(self, query: str, options: SearchOptions) -> SearchResult:
        if self._searcher is None:
            from memvault.indexer.quickcheck import settled
            from memvault.search.engine import Searcher

            self._settled = settled(self.layout)  # then what opening them changes is noted again at close
            self._searcher = Searcher.open(self.layout, self.config)
        return self._searcher.search(query, options)

    def reindex(self, request: Reindex) -> Indexed:
        from memvault.indexer.opening import open_index
        from memvault.indexer.quickcheck import record
        from memvault.indexer.reconcile import reconcile

        self.close()
        config = dataclasses.replace(
            self.config,
            embedder=request.embedder or self.config.embedder,
            qdrant_url=request.qdrant_url or self.config.qdrant_url,
            tokenizer=request.tokenizer or self.config.tokenizer,
        )
        problems: list[str] = []
        with open_index(self.layout, config) as index:
            if request.rebuild:
                index.reset("rebuild")
            stats = reconcile(index, request.paths or None, progress=self.progress, problems=problems)
        if request.paths is None:  # a whole pass: the next no-change `index` may trust the stores as left now
            record(self.layout)
        return Indexed(stats.as_dict(), problems)

    def purge(self, paths: list[str]) -> None:
        from memvault.indexer.opening import open_index
        from memvault.indexer.reconcile import reconcile

        self.close()
        with open_index(self.layout, self.config) as index:
            reconcile(index, paths)
            index.purge()
            index.embed_waiting()  # texts the cache did not hold (it is capped)

    def recalls(self) -> dict[str, tuple[float, int]]:
        from memvault.indexer.manifest import IndexUnavailable, Manifest

        try:
            manifest = Manifest(self.layout.state_dir / "manifest.sqlite", create=False)
        except IndexUnavailable:
            return {}
        try:
            return manifest.recalls()
        finally:
            manifest.close()

    def events_since(self, since: int) -> list[dict[str, Any]]:
        raise UsageError(f"no daemon serves {self.layout.root}: events come from the daemon (memvault daemon start)")

    def status(self) -> dict[str, Any]:
        from memvault.indexer.status import vault_status

        return vault_status(self.layout)

    def verify(self) -> list[str]:
        from memvault.indexer.opening import open_index
        from memvault.indexer.verify import disagreements

        self.close()
        with open_index(self.layout, self.config) as index:
            return disagreements(index)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
            if self._settled:  # the next no-change `index` can still trust the stores
                from memvault.indexer.quickcheck import record

                record(self.layout)
