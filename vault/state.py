"""Derived state a front door keeps beside the index (the hooks' sessions, the daemon's statistics and
events): a JSON object per file in the vault's state folder, so a file that is gone or unreadable is
an empty state, never an error; replaced atomically."""

from __future__ import annotations

import json
from typing import Any

from memvault.vault.fileio import atomic_write
from memvault.vault.paths import Layout, make_state_dir
from memvault.vault.regular import read_regular


def read_state(layout: Layout, name: str) -> dict[str, Any]:
    try:
        found = json.loads(read_regular(layout.state_dir / name))  # a FIFO in its place is no state, not a hang
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def write_state(layout: Layout, name: str, state: dict[str, Any]) -> None:
    atomic_write(make_state_dir(layout) / name, json.dumps(state, ensure_ascii=False).encode("utf-8"))
