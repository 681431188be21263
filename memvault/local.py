"""The runtime of a verb run in this process, when no daemon answers: the index is opened here.

A search keeps the index open for the next query (batch mode and host
programs ask many); `reindex` releases it first, since a writer needs the
index lock for itself. Nothing heavy is imported until a verb needs it.

With no daemon to watch the vault, a search first catches up (`_catch_up`):
the walk finds the notes saved since the last index by `stat`, and up to
`CATCH_UP` of them are indexed before the query is ranked, so a note written
a moment ago is found; more than that is a bulk change (a new vault, a
`git pull`), left to `memvault index` and said in the answer. A vault of
more than `WALK_MOST` notes is not walked (only this process's own saves
are brought in): it wants the daemon.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from memvault.vault.errors import MemvaultError, UsageError
from memvault.vault.paths import Layout

if TYPE_CHECKING:
    from memvault.indexer.config import IndexConfig
    from memvault.search.engine import Searcher
    from memvault.search.hits import SearchResult
    from memvault.search.options import SearchOptions
    from memvault.verbs.index import Indexed, Reindex

CATCH_UP = 50  # notes a search indexes before it answers: a day of saves and edits, never a bulk change
# notes a vault may hold for a search to walk it first: the walk costs about 9 us a note here, and a cold
# search of a 10,000-note vault (stand-in embedder) took 1.27 times as long with it; a vault that big
# wants the daemon, and its search still brings in this process's own saves and keeps every hit true
WALK_MOST = 2000
WALK_EVERY = 1.0  # seconds: a process that asks many queries walks the vault at most this often


class LocalRuntime:
    def __init__(self, layout: Layout, config: IndexConfig | None = None, progress: bool = False) -> None:
        self.layout = layout
        self._config = config
        self.progress = progress
        self._searcher: Searcher | None = None
        self._settled = False  # the stores were as `indexer.quickcheck.record` noted when search opened them
        self._owed: set[str] = set()  # notes this process wrote since its last catch-up
        self._walked = -WALK_EVERY  # when the last catch-up walked the vault (monotonic)

    @property
    def config(self) -> IndexConfig:
        """The index settings given, else the vault's (`IndexConfig.from_env`), read when a verb first
        needs them: `status` and the verbs on the files alone open no index (and import none of it)."""
        if self._config is None:
            from memvault.indexer.config import IndexConfig

            self._config = IndexConfig.from_env(root=self.layout.root)
        return self._config

    def written(self, paths: list[str]) -> bool:
        self._owed.update(paths)  # this process's next search indexes them first
        return False

    def search(self, query: str, options: SearchOptions) -> SearchResult:
        behind = self._catch_up(options.mode)
        if self._searcher is None:
            from memvault.indexer.quickcheck import settled
            from memvault.search.engine import Searcher

            self._settled = settled(self.layout)  # then what opening them changes is noted again at close
            self._searcher = Searcher.open(self.layout, self.config)
        result = self._searcher.search(query, options)
        if behind and result.source != "substring":
            result = dataclasses.replace(result, reason="; ".join(filter(None, [result.reason, behind])))
        return result

    def _catch_up(self, mode: str) -> str | None:
        """Index the notes that changed since the last index, when there are few (see the module's
        docstring); for more, the answer's note. Anything that stops it (another process holds the
        index, a vault that cannot be written, an index owing a migration) leaves the search to answer
        as the index is: `search.fresh` still keeps every hit true to its file."""
        from memvault.indexer.quickcheck import changed_notes, waiting_chunks

        if mode == "substring" or (not self._owed and time.monotonic() - self._walked < WALK_EVERY):
            return None
        if self.config.qdrant_url and not (self.layout.state_dir / "manifest.sqlite").is_file():
            return None  # the server's collection answers (`indexer.remote`): a search never becomes its writer
        try:
            changed = changed_notes(self.layout, WALK_MOST)
            waiting = 0 if mode == "bm25" else waiting_chunks(self.layout)  # an edit's vectors (`indexer.deferred`)
        except (OSError, sqlite3.Error, MemvaultError):
            return None
        self._walked = time.monotonic()
        if not (changed := sorted(set(changed or ()) | self._owed)) and not waiting:
            return None
        if len(changed) > CATCH_UP:
            return (f"{len(changed)} notes changed since the last index and are not searched yet: "
                    "`memvault index` brings them in (a daemon keeps up by itself: memvault daemon start)")  # fmt: skip
        from memvault.indexer.opening import open_index
        from memvault.indexer.reconcile import reconcile
        from memvault.search.engine import Searcher

        self.close()  # this process's own searcher holds the index lock
        built = (self.layout.state_dir / "manifest.sqlite").is_file()  # then keep it as it was built
        config = dataclasses.replace(self.config, embedder=None, tokenizer=None, qdrant_url=None) if built else None
        try:
            index = open_index(self.layout, config or self.config)
        except (OSError, sqlite3.Error, MemvaultError):
            return None
        try:
            reconcile(index, changed, embed=mode != "bm25")
            if waiting:  # few: the model this search loads anyway embeds their new text, the cache the rest
                index.embed_waiting()
        except (OSError, sqlite3.Error, MemvaultError):
            index.close()
            return None
        self._owed.clear()
        self._searcher = Searcher(self.layout, index)
        return None

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
        with open_index(self.layout, config, defer=not request.rebuild) as index:  # an edit: `indexer.deferred`
            if request.rebuild:
                index.reset("rebuild")
            stats = reconcile(index, request.paths or None, progress=self.progress, problems=problems)
        if request.paths is None:  # a whole pass: the next no-change `index` may trust the stores as left now
            record(self.layout)
        from memvault.verbs.index import Indexed

        return Indexed(stats.as_dict(), problems)

    def purge(self, paths: list[str]) -> None:
        from memvault.indexer.opening import open_index
        from memvault.indexer.reconcile import reconcile

        self.close()
        from memvault.daemon.journal import scrub

        with open_index(self.layout, self.config) as index:
            reconcile(index, paths)
            index.purge()
            index.embed_waiting()  # texts the cache did not hold (it is capped)
        scrub(self.layout)  # a daemon's request journal, if one ran here

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
