"""The daemon as a child of the process that started it (`Vault.start_daemon`, an MCP server, a test)."""

from __future__ import annotations

import os
import time

from memvault import Vault
from memvault.daemon.files import pid_path


def test_start_then_stop_in_one_process_reaps_the_child(layout, monkeypatch):
    """`os.kill(pid, 0)` succeeds on a zombie: before, stop waited its whole 60 s and said "did not stop"."""
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash-384")
    with Vault(layout.root) as v:
        v.init("en")
        pid = v.start_daemon(["--debounce", "0.2"])
        assert v.daemon_status()["running"]
        started = time.monotonic()
        assert v.stop_daemon() == pid
        assert time.monotonic() - started < 30  # a bound that only catches the wait-out of the old code
    assert not pid_path(layout).exists()
    try:
        os.kill(pid, 0)
        raise AssertionError(f"pid {pid} is still there (a zombie)")
    except ProcessLookupError:
        pass
