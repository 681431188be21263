"""memvault: a local-first memory vault for people and AI agents. `from memvault import Vault`."""

from memvault.api import Vault

__all__ = ["Vault"]
