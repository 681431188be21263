"""memvault: a local-first memory vault for people and AI agents. `from memvault import Vault`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memvault.api import Vault
    from memvault.scopes import Scopes

__all__ = ["Scopes", "Vault"]


def __getattr__(name: str) -> Any:
    """`Vault` and `Scopes` are loaded on first use, so importing one front door (the daemon, the CLI)
    does not load the others."""
    if name == "Vault":
        from memvault.api import Vault

        return Vault
    if name == "Scopes":
        from memvault.scopes import Scopes

        return Scopes
    raise AttributeError(f"module 'memvault' has no attribute {name!r}")
