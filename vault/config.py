"""memvault's settings, read in one place: arguments, then the environment, then `<vault>/memvault.toml`,
then the defaults.

`env()` (`vault.places`) is the one place `MEMVAULT_*` (and the few other) environment variables are
read. The Qdrant API key comes from `$QDRANT_API_KEY` or an argument only, never from a file in the vault.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from memvault.vault.errors import UsageError
from memvault.vault.places import env
from memvault.vault.regular import read_regular

CONFIG_FILE = "memvault.toml"
DEBOUNCE_S = 1.5  # the watcher's quiet window per path
RESCAN_S = 300.0  # the daemon's full reconcile, in case inotify missed something

# setting: environment variable
ENV_VARS = {
    "embedder": "MEMVAULT_EMBEDDER",
    "tokenizer": "MEMVAULT_TOKENIZER",
    "qdrant_url": "MEMVAULT_QDRANT_URL",
    "qdrant_api_key": "QDRANT_API_KEY",
    "collection": "MEMVAULT_COLLECTION",
    "cache_dir": "MEMVAULT_CACHE",
}
# setting: the type memvault.toml must give it
FILE_KEYS: dict[str, type] = {
    "embedder": str,
    "tokenizer": str,
    "qdrant_url": str,
    "collection": str,
    "debounce": float,
    "rescan": float,
    "retention_days": int,
    "keep_conversations": bool,
    "auto_index": bool,
    "daily_notes": bool,
    "long_term_memory": bool,
    "embedding_cache": bool,
}
# seed 003's switches of what memvault writes: the setting, what it stops
SWITCHES = {"daily_notes": "memvault writes no daily note", "long_term_memory": "memvault writes nothing to MEMORY.md"}


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/memvault`, else `~/.cache/memvault` (where `$MEMVAULT_CACHE` is not set)."""
    return Path(os.path.join(env("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memvault"))


@dataclass(frozen=True)
class Settings:
    """Every setting; `None` for embedder, tokenizer and qdrant_url means "what the index was built with"."""

    embedder: str | None = None
    tokenizer: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    collection: str = "memvault"
    cache_dir: Path = field(default_factory=default_cache_dir)
    debounce: float = DEBOUNCE_S
    rescan: float = RESCAN_S
    retention_days: int | None = None  # opt-in: daily notes older than this move to the trash
    keep_conversations: bool = True  # what each conversation said, in conversations/ (`vault.history`)
    auto_index: bool = True  # seed 003's switch: the hooks and the MCP server start the vault's daemon
    daily_notes: bool = True  # seed 003's switch: memvault writes daily notes (what is there stays searchable)
    long_term_memory: bool = True  # seed 003's switch: memvault writes MEMORY.md (what is there stays read)
    embedding_cache: bool = True  # seed 003's switch: vectors kept by text, so a rebuild embeds nothing twice


def _given(value: Any) -> bool:
    return value is not None and value != ""


def read_file(path: Path) -> dict[str, Any]:
    """The settings `path` gives, checked; {} when it does not exist. Any problem is one UsageError line."""
    try:
        data = read_regular(path)  # a FIFO is refused, never waited on
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    import tomllib  # (on first use: its regexes cost every process 1.5 ms)

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not valid TOML (not UTF-8)") from None
    except tomllib.TOMLDecodeError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise UsageError(f"{path}: not valid TOML ({reason})") from None
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key == "qdrant_api_key":
            raise UsageError(f"{path}: qdrant_api_key: the API key is read from $QDRANT_API_KEY only, never a file")
        wanted = FILE_KEYS.get(key)
        if wanted is None:
            raise UsageError(f"{path}: unknown key {key!r}; known: {', '.join(FILE_KEYS)}")
        if wanted is bool:
            if not isinstance(value, bool):
                raise UsageError(f"{path}: {key} must be true or false, not {value!r}")
        elif wanted is float:
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise UsageError(f"{path}: {key} must be a positive number of seconds, not {value!r}")
            value = float(value)
        elif wanted is int:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{path}: {key} must be a whole number of days, 1 or more, not {value!r}")
        elif not isinstance(value, str):
            raise UsageError(f"{path}: {key} must be a string, not {type(value).__name__}")
        out[key] = value
    return out


def load_settings(root: Path | None = None, **overrides: Any) -> Settings:
    """Each setting from the first source that gives it: `overrides` (None or "" give nothing), the
    environment, `<root>/memvault.toml` (when `root` is given), the default."""
    names = {f.name for f in fields(Settings)}
    unknown = overrides.keys() - names
    if unknown:
        raise TypeError(f"load_settings: unknown setting(s) {', '.join(sorted(unknown))}")
    from_file = read_file(Path(root) / CONFIG_FILE) if root is not None else {}
    chosen: dict[str, Any] = {}
    for name in names:
        if _given(overrides.get(name)):
            chosen[name] = overrides[name]
        elif name in ENV_VARS and _given(env(ENV_VARS[name])):
            chosen[name] = env(ENV_VARS[name])
        elif _given(from_file.get(name)):
            chosen[name] = from_file[name]
    if "cache_dir" in chosen:
        chosen["cache_dir"] = Path(chosen["cache_dir"])
    return Settings(**chosen)


def require(root: Path, switch: str) -> None:
    """Refuse a write a switch of `SWITCHES` turned off in the vault's memvault.toml, in one line."""
    if not getattr(load_settings(root), switch):
        raise UsageError(f"{Path(root) / CONFIG_FILE}: {switch} = false: {SWITCHES[switch]}")
