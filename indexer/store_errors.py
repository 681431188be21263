"""The vector stores' errors: one family under `MemvaultError`, which search answers by falling back to the
files and the CLI prints in one line (exit code 7)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from memvault.vault.errors import MemvaultError

P = ParamSpec("P")
R = TypeVar("R")


class StoreError(MemvaultError):
    """The vector store is locked, corrupt or unreachable."""

    exit_code = 7


class StoreLocked(StoreError):
    """Another process holds the store open (or, for a server collection, another writer's lease)."""


class StoreMismatch(StoreError):
    """The store was built with another embedder (or dimension)."""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def server_fault(where: str, exc: Exception) -> StoreError | None:
    """A Qdrant server's fault as the StoreError a search answers by falling back to the vault's own
    BM25 or files (a refused connection, a timeout, an error status); None for anything else, a bug
    that should surface as itself. qdrant-client is imported only when a fault is asked about."""
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    if isinstance(exc, ResponseHandlingException | OSError):
        return StoreError(f"{where}: cannot reach Qdrant ({_first_line(exc)})")
    if isinstance(exc, UnexpectedResponse):
        return StoreError(f"{where}: Qdrant refused the request ({_first_line(exc)})")
    return None


def open_fault(where: str, exc: Exception) -> StoreError:
    """A fault while opening a Qdrant store: `server_fault`'s when it is one, else any exception the
    client raised before it could answer still means the store is out of reach."""
    return server_fault(where, exc) or StoreError(f"{where}: cannot reach Qdrant ({_first_line(exc)})")


def from_server(method: Callable[P, R]) -> Callable[P, R]:
    """A method of an object with a `description` that asks a Qdrant server something: its faults
    become `server_fault`'s StoreError."""

    @functools.wraps(method)
    def asking(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except MemvaultError:
            raise
        except Exception as exc:
            fault = server_fault(getattr(args[0], "description", "qdrant"), exc)
            if fault is None:
                raise
            raise fault from None

    return asking
