"""The names of a vault's places, and which folders the vaults are, as plain strings.

Importing this costs nothing (no pathlib, no dataclass): a search a running daemon answers
(`memvault.cli.via_daemon`) finds its vaults here before anything else is imported. `vault.paths`'
`Layout` and `vault.scopes` build on the same names and functions.

`env()` is the one place `MEMVAULT_*` (and the few other) environment variables are read.
"""

from __future__ import annotations

import os

ENV_VAR = "MEMVAULT_VAULT"
USER_ENV = "MEMVAULT_USER_VAULT"
DEFAULT_VAULT = "memory"
STATE_DIR = ".memvault"
TRASH_DIR = ".trash"
MEMORY_FILE = "MEMORY.md"
REVIEW_FILE = "REVIEW.md"  # proposed facts waiting for a person: read in an editor, never indexed
DAILY_DIR = "daily"
CONVERSATIONS_DIR = "conversations"  # what each conversation said (`vault.history`), one note a conversation
KINDS = ("daily", "memory", "conversation", "other")  # what a note is, by where it lives
SCOPES = ("project", "user")
READ_SCOPES = ("all", *SCOPES)


def env(name: str) -> str | None:
    """An environment variable's value; unset and empty are both None."""
    return os.environ.get(name) or None


def vault_root(arg: str | os.PathLike[str] | None = None, start: str | None = None) -> str:
    """`--vault`, else `$MEMVAULT_VAULT`, else the project's vault found from `start` (the working
    directory; a hook's payload names its session's), absolute and resolved: the order users expect
    from CLI tools."""
    chosen = arg or env(ENV_VAR)
    if chosen:
        return os.path.realpath(os.path.expanduser(chosen))
    return project_vault(start or os.getcwd())


def project_vault(start: str) -> str:
    """The project vault of a folder, found the way git finds its repository, so one install serves
    every project and a command run in a subfolder reads its project's memory: the first of
    `START/memory`, `REPO/memory` (the repository `start` is in) and, in a worktree, `MAIN/memory` (its
    main repository's) that is a vault. A worktree whose branch carries its own `memory/` reads that
    one (its branch's), else the main checkout's. None is a vault: `REPO/memory`, where `init` makes it."""
    here = os.path.realpath(start)
    repo = repository_root(here)
    candidates = [os.path.join(folder, DEFAULT_VAULT) for folder in (here, repo, main_repository_root(repo))]
    return next((c for c in candidates if is_vault_root(c)), candidates[1])


def main_repository_root(repo: str) -> str:
    """For a git worktree (its `.git` a file naming `.git/worktrees/NAME` of the main repository), the
    main repository's folder; `repo` itself otherwise (a submodule's `.git/modules/NAME` has no
    `commondir`, so it stays itself)."""
    try:
        with open(os.path.join(repo, ".git"), encoding="utf-8") as fh:
            line = fh.readline().strip()
    except OSError:  # a folder (the main checkout), or no repository at all
        return repo
    if not line.startswith("gitdir:"):
        return repo
    gitdir = os.path.join(repo, line.removeprefix("gitdir:").strip())
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            common = os.path.realpath(os.path.join(gitdir, fh.readline().strip()))
    except OSError:
        return repo
    return os.path.dirname(common) if os.path.basename(common) == ".git" else repo


def user_root() -> str:
    """`$MEMVAULT_USER_VAULT`, else `$XDG_DATA_HOME/memvault`, else `~/.local/share/memvault`."""
    chosen = env(USER_ENV) or os.path.join(env("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "memvault")
    return os.path.realpath(os.path.expanduser(chosen))


def is_vault_root(root: str) -> bool:
    """A folder is a vault once it has a MEMORY.md or a daily/ folder (`init` or a first save). One
    this process may not even look into is none: it never stops the project vault from answering."""
    return os.path.isfile(os.path.join(root, MEMORY_FILE)) or os.path.isdir(os.path.join(root, DAILY_DIR))


def read_roots(project: str, user: str, scope: str) -> list[tuple[str, str]]:
    """The vaults a read of `scope` (one of `READ_SCOPES`) covers, named: `all` leaves out a user vault
    that does not exist yet, and a user vault that is the project's folder is read once, as the project."""
    shared = user == project
    out = [("project", project)] if scope in ("all", "project") or shared else []
    if scope in ("all", "user") and not shared and is_vault_root(user):
        out.append(("user", user))
    return out


def repository_root(start: str) -> str:
    """The repository `start` is in: the nearest folder up from it holding `.git` (a folder, or the file
    a worktree or submodule has), else `start` itself. A host's project settings live at its root, not
    in whichever subfolder a person ran the command from."""
    here = os.path.realpath(start)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return os.path.realpath(start)
        here = parent
