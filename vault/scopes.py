"""Two vaults per person: the project's (`./memory`, `--vault`) and the user's own, beside it.

The user vault holds what is true of the person in every project (their name, their preferences);
the project vault what is true here. A save goes to the user vault when its key starts with
`user_`, or its tags name the person (user, preference, profile, personal), or `--scope user`
says so; everything else stays in the project.
"""

from __future__ import annotations

from pathlib import Path

from memvault.vault.errors import UsageError
from memvault.vault.paths import Layout
from memvault.vault.places import SCOPES, is_vault_root, user_root

USER_TAGS = frozenset({"user", "preference", "profile", "personal"})
USER_KEY_PREFIX = "user_"


def user_vault_root() -> Path:
    """`$MEMVAULT_USER_VAULT`, else `$XDG_DATA_HOME/memvault`, else `~/.local/share/memvault`."""
    return Path(user_root())


def is_vault(layout: Layout) -> bool:
    """A folder is a vault once it has a MEMORY.md or a daily/ folder (`vault.places.is_vault_root`)."""
    return is_vault_root(str(layout.root))


def route(scope: str | None, key: str | None, tags: list[str] | tuple[str, ...] | None) -> str:
    """Where a save goes: the scope asked for, else by the key and tags."""
    if scope is not None:
        if scope not in SCOPES:
            raise UsageError(f"{scope!r}: a save goes to one scope, project or user")
        return scope
    if key and key.startswith(USER_KEY_PREFIX):
        return "user"
    if any(t.lstrip("#").casefold() in USER_TAGS for t in tags or ()):
        return "user"
    return "project"
