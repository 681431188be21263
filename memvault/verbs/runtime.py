"""Where a verb runs: what its function may ask of the daemon or of `memvault.local.LocalRuntime`
(`memvault.verbs.index.IndexRuntime` is all of it).

Each verb's function names the least it needs (a verb that only writes notes takes a `WriteRuntime`),
so the local runtime and the daemon are checked against one list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memvault.search.hits import SearchResult
    from memvault.search.options import SearchOptions
    from memvault.vault.paths import Layout


class VaultRuntime(Protocol):
    layout: Layout


class WriteRuntime(VaultRuntime, Protocol):
    """Where a verb that writes notes runs: its vault, and what happens once the notes are written."""

    def written(self, paths: list[str]) -> bool:
        """Notes a verb just wrote: the daemon indexes them before replying (True); locally nothing happens."""
        ...


class SearchRuntime(VaultRuntime, Protocol):
    def search(self, query: str, options: SearchOptions) -> SearchResult: ...


class EntryRuntime(WriteRuntime, Protocol):
    """What an entry verb needs of where it runs."""

    def purge(self, paths: list[str]) -> None:
        """Text was removed from these notes for good: index them now and leave no copy in the index."""
        ...

    def recalls(self) -> dict[str, tuple[float, int]]:
        """When each entry (`memvault.vault.entries.entry_key`) was last among the hits of a daemon-served search."""
        ...
