"""The vector stores' errors: one family under `MemvaultError`, which search answers by falling back to the
files and the CLI prints in one line (exit code 7)."""

from __future__ import annotations

from memvault.vault.errors import MemvaultError


class StoreError(MemvaultError):
    """The vector store is locked, corrupt or unreachable."""

    exit_code = 7


class StoreLocked(StoreError):
    """Another process holds the store open (or, for a server collection, another writer's lease)."""


class StoreMismatch(StoreError):
    """The store was built with another embedder (or dimension)."""
