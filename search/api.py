"""The Python API: the same verbs as the CLI, for host programs and agents.

from search.api import Vault
v = Vault("memory")
v.note("talked about the release")
v.index()
hits = v.search("release", limit=5, kind="daily", date_from="2026-11-01")
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from indexer.index import Index, IndexConfig
from indexer.reconcile import ReconcileStats, reconcile
from indexer.status import vault_status
from search.client import request
from search.engine import Searcher, build_options
from search.hits import Hit, SearchResult
from vault.daily import append_daily
from vault.memory_file import Saved, init_vault, remember
from vault.paths import parse_date, resolve_vault


class Vault:
    """One vault. When its daemon answers, every verb goes through it (and a note written is
    searchable at once); otherwise a search keeps the index open for the next one, and
    `index()` releases it."""

    def __init__(self, path: str | os.PathLike[str] | None = None, config: IndexConfig | None = None) -> None:
        self.layout = resolve_vault(path)
        self.config = config or IndexConfig.from_env(root=self.layout.root)
        self._searcher: Searcher | None = None

    @property
    def root(self) -> Path:
        return self.layout.root

    def init(self, lang: str = "zh") -> list[Path]:
        return init_vault(self.layout, lang)

    def note(self, text: str, date: str | dt.date | None = None, section: str = "conversation") -> Path:
        day = parse_date(date) if isinstance(date, str) else date
        return append_daily(self.layout, text, day=day, section=section)

    def remember(self, text: str, section: str | None = None, type: str | None = None) -> Saved:
        return remember(self.layout, text, section=section, kind=type)

    def index(self, rebuild: bool = False) -> ReconcileStats:
        """Bring the index up to date (incremental); `rebuild` starts from nothing."""
        self.close()
        reply = request(self.layout, {"op": "reindex", "rebuild": rebuild}, timeout=24 * 3600)
        if reply is not None:
            return ReconcileStats(**reply["stats"])
        with Index(self.layout, self.config, load_bm25=False) as index:
            if rebuild:
                index.rebuild()
            return reconcile(index)

    def search_result(self, query: str, **options: Any) -> SearchResult:
        """Like `search`, with the answering source and the reason for any fallback."""
        options_now = build_options(**options)  # refuse bad options here, whoever answers
        reply = request(self.layout, {"op": "search", "query": query, **_public(options)})
        if reply is not None:
            return SearchResult.from_reply(reply)
        if self._searcher is None:
            self._searcher = Searcher.open(self.layout, self.config)
        return self._searcher.search(query, options_now)

    def search(self, query: str, limit: int = 10, mode: str = "hybrid", **filters: Any) -> list[Hit]:
        """Filters: date_from, date_to, kind, section, tag, path; also per_doc, threshold, weights."""
        return self.search_result(query, limit=limit, mode=mode, **filters).hits

    def status(self) -> dict[str, Any]:
        reply = request(self.layout, {"op": "status"}, timeout=30)
        return reply["status"] if reply is not None else vault_status(self.layout)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _public(options: dict[str, Any]) -> dict[str, Any]:
    """API keywords to the socket protocol's public keys (`date_from` is `from` there)."""
    renamed = {"date_from": "from", "date_to": "to"}
    return {renamed.get(k, k): (v.isoformat() if isinstance(v, dt.date) else v) for k, v in options.items()}
