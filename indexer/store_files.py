"""Removing a vector store's files, whatever was done to them: they are derived data, ours to remove."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memvault.vault.logger import log


def remove_store_files(path: Path) -> None:
    """Remove derived data even when it was made unreadable (`chmod 000`): it is ours, so make it
    accessible first; if even that is refused, move it aside so a fresh store can take its place."""
    import shutil  # (1.8 ms of a cold search's imports, with the compressors it imports)

    shutil.rmtree(path, ignore_errors=True)
    if not path.exists():
        return
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
        for dirpath, dirnames, _ in os.walk(path):
            for name in dirnames:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(dirpath, name), 0o700)
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        aside = path.with_name(f"{path.name}.unreadable-{os.getpid()}")
        os.replace(path, aside)
        log.warning(f"{path}: could not be removed; moved aside to {aside}")
