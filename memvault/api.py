"""The Python API, and the one place that decides where a verb runs: in the vault's daemon when one
answers, else here.

    from memvault import Vault
    v = Vault("memory")
    v.note("talked about the release")
    v.index()
    hits = v.search("release", limit=5, kind="daily", date_from="2026-11-01")
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.daemon.client import DaemonClient
from memvault.vault.paths import note_path, resolve_vault

if TYPE_CHECKING:  # each verb's module is imported by the method that runs it: a search through the
    # daemon imports no module of notes, entries or the index
    import datetime as dt

    from memvault.indexer.config import IndexConfig
    from memvault.indexer.reconcile import ReconcileStats
    from memvault.local import LocalRuntime
    from memvault.protocol import Request
    from memvault.search.hits import Hit, SearchResult
    from memvault.vault.sections import Section
    from memvault.verbs.entries import Cleared, Corrected, Listed, Moved
    from memvault.verbs.exchange import Imported
    from memvault.verbs.notes import Saved


class Vault:
    """One vault. When its daemon answers, every verb that touches the index goes through it (a
    note written is searchable at once); otherwise it runs here, and a search keeps the index
    open for the next one until `close()` or `index()`."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, config: IndexConfig | None = None, progress: bool = False
    ) -> None:
        self.layout = resolve_vault(path)
        self._config = config
        self._progress = progress
        self._daemon = DaemonClient(self.layout)
        self._runtime: LocalRuntime | None = None
        # one verb at a time: the daemon connection carries one request and its reply, and the index this
        # process opens is not shared between threads (agents call tools in parallel; hosts use to_thread)
        self._lock = threading.RLock()

    @property
    def root(self) -> Path:
        return self.layout.root

    def run(self, request: Request) -> Any:
        """Run one verb: through the daemon when one answers, else in this process."""
        with self._lock:
            reply = self._daemon.call(request, os.urandom(12).hex() if request.writes else None)
            if reply is not None:
                return reply
            from memvault import verbs

            return verbs.run(self._local(), request)

    def _local(self) -> LocalRuntime:
        if self._runtime is None:
            from memvault.local import LocalRuntime

            self._runtime = LocalRuntime(self.layout, self._config, self._progress)
        return self._runtime

    # verbs that touch the index ------------------------------------------
    def note(
        self, text: str, date: str | dt.date | None = None, section: str = "conversation",
        key: str | None = None, tags: list[str] | None = None,
    ) -> Saved:  # fmt: skip
        """Append to a daily note (today's unless `date` names a missing past day); `Saved` as `remember`."""
        from memvault.verbs.notes import Note

        day = date if date is None or isinstance(date, str) else date.isoformat()
        return self.run(Note(text, day, section, key, tags))

    def remember(
        self, text: str, section: str | None = None, type: str | None = None,
        key: str | None = None, tags: list[str] | None = None,
    ) -> Saved:  # fmt: skip
        """Save a lasting fact; with `key`, replace the entry that has it. `status` says what happened:
        added, updated (the old entry is in the trash as `trashed`), superseded (the old entry, on a
        frozen day, is marked: `superseded` says where) or unchanged (already remembered); `path` is
        vault-relative."""
        from memvault.verbs.notes import Remember

        return self.run(Remember(text, section, type, key, tags))

    def index(self, rebuild: bool = False, **setup: str | None) -> ReconcileStats:
        """Bring the index up to date (incremental); `rebuild` starts from nothing. `setup` (embedder,
        tokenizer, qdrant_url) changes what the index is built with, only while no daemon runs."""
        from memvault.indexer.reconcile import ReconcileStats
        from memvault.verbs.index import Reindex

        return ReconcileStats(**self.run(Reindex(rebuild, None, **setup)).stats)

    def search_result(self, query: str, **options: Any) -> SearchResult:
        """Like `search`, with the answering source and the reason for any fallback."""
        from memvault.search.options import build_options
        from memvault.verbs.query import Search

        return self.run(Search(query, build_options(**options)))

    def search(self, query: str, **options: Any) -> list[Hit]:
        """The hits for `query`; `options` are `memvault.search.option_table.OPTIONS` by attribute name: limit,
        mode, per_doc, date_from, date_to, kind, section, tag, path, min_similarity, decay, mmr, ..."""
        return self.search_result(query, **options).hits

    def entries(self, section: str | None = None, tag: str | None = None, key: str | None = None,
                unused_since: str | None = None, conversation: str | None = None) -> Listed:  # fmt: skip
        """The vault's entries (list items with their key and tags), narrowed by section, tag and key,
        or to those no search served by the daemon has returned since a day, or of one conversation."""
        from memvault.verbs.entries import ListEntries

        return self.run(ListEntries(section, tag, key, unused_since, conversation))

    def forget(self, key: str | None = None, match: str | None = None, purge: bool = False) -> Moved:
        """Move one entry to the trash: by key (or "PATH:LINE") or by a piece of its text; `purge`
        removes it for good, from the trash and the index too."""
        from memvault.verbs.entries import Forget

        return self.run(Forget(key, match, purge))

    def restore(self, id: str) -> Moved:
        from memvault.verbs.entries import Restore

        return self.run(Restore(id))

    def correct(self, text: str, key: str | None = None, match: str | None = None, tags: list[str] | None = None
                ) -> Corrected:  # fmt: skip
        """Correct one entry (by key, "PATH:LINE" or a piece of its text): `text` goes to today's note
        with a pointer to it, and it is marked superseded; search ranks the correction above it."""
        from memvault.verbs.entries import Correct

        return self.run(Correct(text, key, match, tags))

    def clear(self, section: str | None = None, all: bool = False, yes: bool = False) -> Cleared:
        """Move every entry of a MEMORY.md section (or, `all`, of every note) to the trash; without
        `yes` it is refused, naming what would move."""
        from memvault.verbs.entries import Clear

        return self.run(Clear(section, all, yes))

    def import_file(self, path: str | os.PathLike[str], section: str = "Imported") -> Imported:
        """Import the memories of a file (a KinetAios export, a JSON list of strings, or memvault's own
        export): dated ones into their day's note while it does not exist, the rest into MEMORY.md
        `section`; what the vault holds already is skipped, what the guards refuse is named."""
        from memvault.verbs.exchange import Import

        return self.run(Import(os.path.abspath(path), section))

    def export(self) -> list[dict[str, Any]]:
        """Every entry of the vault, as `vault.entries.Entry`'s fields (`Scopes.export` gives the document)."""
        from memvault.verbs.exchange import Export

        return self.run(Export()).entries

    def trash(self) -> list[dict[str, Any]]:
        from memvault.verbs.entries import Trash

        return self.run(Trash()).items

    def status(self) -> dict[str, Any]:
        """The index against the files. A `memvault.toml` a search would refuse is refused here too, in the
        same line: a status that reports a vault as fine while every search fails would mislead."""
        from memvault.vault.config import load_settings
        from memvault.verbs.index import Status

        load_settings(self.root if self.root.is_dir() else None)
        return self.run(Status()).status

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        """The daemon's recent events (`seq`, `time`, `event`, ...) newer than `since`."""
        from memvault.verbs.index import Events

        return self.run(Events(since)).events

    def follow(self, since: int = 0) -> Iterator[dict[str, Any]]:
        """The daemon's events as they happen, until the loop stops; raises when no daemon runs."""
        from memvault.daemon.client import follow

        return follow(self.layout, since)

    def verify(self) -> list[str]:
        """Every way the index differs from the notes (empty when they agree)."""
        from memvault.verbs.index import Verify

        return self.run(Verify()).disagreements

    # verbs on the files alone --------------------------------------------
    def init(self, lang: str | None = None) -> list[Path]:
        """Create the vault's folders and MEMORY.md, in `lang` (zh or en), else the locale's language."""
        from memvault.vault.memory_file import init_vault
        from memvault.vault.templates import locale_lang

        return init_vault(self.layout, lang or locale_lang())

    def sections(self) -> list[Section]:
        from memvault.vault.memory_file import list_sections

        return list_sections(self.layout)

    def note_path(self, ref: str) -> Path:
        """`memory`, a date or a vault-relative path, as `show` and `rewrite` name a note."""
        return note_path(self.layout, ref)

    def rewrite(self, ref: str, text: str) -> Path | None:
        """Replace a whole note; returns where the previous version was kept."""
        from memvault.vault.memory_file import rewrite

        return rewrite(self.layout, self.note_path(ref), text)

    # the daemon ------------------------------------------------------------
    def start_daemon(self, args: list[str] | None = None) -> int:
        from memvault.daemon import process

        self.close()  # the index this process opened, if any, is the daemon's from now on
        return process.start(self.layout, args or [])

    def stop_daemon(self) -> int | None:
        from memvault.daemon import process

        with self._lock:
            self._daemon.close()
        return process.stop(self.layout)

    def daemon_status(self) -> dict[str, Any]:
        from memvault.daemon import process

        return process.status(self.layout)

    def install_service(self) -> tuple[Path, str]:
        from memvault.daemon import process

        return process.install_service(self.layout)

    def close_index(self) -> None:
        """Release an index this process opened for searching (a writer needs its lock)."""
        with self._lock:
            if self._runtime is not None:
                self._runtime.close()

    def close(self) -> None:
        with self._lock:
            self.close_index()
            self._daemon.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
