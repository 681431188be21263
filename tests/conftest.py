"""Shared fixtures: a fresh vault in a temp folder, and the real `memvault` CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memvault.vault.paths import Layout

MEMVAULT = str(Path(sys.executable).parent / "memvault")


@pytest.fixture(autouse=True)
def user_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test, and every CLI and daemon it starts, has a user vault of its own that does not
    exist yet, never the machine's; a save routed to the user scope creates it."""
    root = tmp_path / "user-vault"
    monkeypatch.setenv("MEMVAULT_USER_VAULT", str(root))
    return root


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    root = tmp_path / "vault"
    root.mkdir()
    return Layout(root.resolve())


CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(layout: Layout) -> CliRunner:
    """Run the installed console script against the temp vault (via $MEMVAULT_VAULT)."""

    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None):
        full_env = {**os.environ, "MEMVAULT_VAULT": str(layout.root), **(env or {})}
        return subprocess.run(
            [MEMVAULT, *args],
            input=input,
            capture_output=True,
            text=True,
            env=full_env,
            cwd=cwd or layout.root.parent,
            timeout=60,
        )

    return run


def start_daemon(cli: CliRunner, root: Path, *args: str, env: dict[str, str] | None = None) -> None:
    """`memvault daemon start` answers before the daemon's first pass over the vault is done, and
    embeds after it (a search meanwhile sees what is indexed so far); a test that checks indexed
    content waits for both."""
    from memvault.daemon.client import ask
    from tests.reliability.conftest import wait_for

    started = cli("--vault", str(root), "daemon", "start", *args, env=env)
    assert started.returncode == 0, started.stderr
    status = lambda: (ask(Layout(root), {"op": "status"}, timeout=5.0) or {}).get("status", {})  # noqa: E731
    wait_for(lambda: (now := status()).get("last_full_reconcile") and not now["vectors"]["waiting"])
