"""The exchange verbs: import memories from a file, export every entry (the logic is
`memvault.vault.exchange`'s)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from memvault.protocol import Message, Request
from memvault.vault.errors import UsageError
from memvault.vault.exchange import DEFAULT_SECTION, export_days, export_entries, import_file
from memvault.vault.guards import check_section_name
from memvault.verbs.runtime import WriteRuntime


@dataclass(frozen=True)
class Imported(Message):
    """How many memories were written, how many were already in the vault (or earlier in the file), and
    each refused one: its 1-based place in the file and why. `paths`: each note written, and how many
    entries went there; `created_sections`: MEMORY.md sections the import had to add."""

    imported: int
    skipped: int
    refused: list[dict[str, Any]]
    paths: dict[str, int]
    created_sections: list[str]
    indexed: bool = False
    summaries: int = 0  # days' summaries set


@dataclass(frozen=True)
class Exported(Message):
    """Every entry of the vault, as `vault.entries.Entry`'s fields, and each day's summary; `skipped`:
    each note that could not be read (its entries are not here), with why."""

    entries: list[dict[str, Any]]
    days: list[dict[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Import(Request, op="import", reply=Imported, writes=True, timeout=3600.0):  # the daemon indexes it first
    """Import the memories of the file at `path`. The file travels by name, not by content: a socket
    request is at most 1 MiB, an import file may be far larger, and the daemon runs as the same user.
    `section`: where in MEMORY.md the memories without a place of their own go."""

    path: str
    section: str = DEFAULT_SECTION

    def check(self) -> None:
        if not os.path.isabs(self.path):
            raise UsageError(f"{self.path!r}: the file to import is named by its absolute path")
        check_section_name(self.section)


@dataclass(frozen=True)
class Export(Request, op="export", reply=Exported, timeout=600.0):
    """Every entry of the vault, with its text, section, key, tags, place and day; with `conversation`,
    only that conversation's (`[conversation:: ID]`: seed 000's "this conversation" scope)."""

    conversation: str | None = None


def import_memories(rt: WriteRuntime, request: Import) -> Imported:
    done = import_file(rt.layout, request.path, request.section)
    indexed = rt.written(list(done.paths)) if done.paths else False
    return Imported(done.imported, done.skipped, done.refused, done.paths, done.created_sections, indexed,
                    done.summaries)  # fmt: skip


def export(rt: WriteRuntime, request: Export) -> Exported:
    failed: list[str] = []
    entries = export_entries(rt.layout, failed)
    if request.conversation is not None:  # its entries alone; the days' summaries say whole days, so none
        entries = [e for e in entries if e.get("conversation") == request.conversation]
        return Exported(entries, [], failed)
    return Exported(entries, export_days(rt.layout), failed)
