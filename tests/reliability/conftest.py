"""Shared pieces of the reliability suite: the hash embedder everywhere, a CLI runner that can run as
an unprivileged user (permission faults cannot be made as root), a daemon fixture, the check that
stores, manifest and files agree, and the tally the report script reads.

Quick tests run in the default suite; tests marked `reliability_full` run with
`pytest -m reliability_full tests/reliability` (or all of it through `python -m tests.reliability.report`).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memvault.vault.paths import Layout
from tests.conftest import MEMVAULT, SHM, is_tmpfs, run_main, run_process

HASH_ENV = {"MEMVAULT_EMBEDDER": "hash-384"}
TALLY_ENV = "MEMVAULT_RELIABILITY_TALLY"
NOBODY = 65534


def tally(category: str, trials: int) -> None:
    """Record how many trials a test ran, for `tests/reliability/report.py` (a no-op otherwise)."""
    path = os.environ.get(TALLY_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"category": category, "trials": trials}) + "\n")


def run_cli(
    layout: Layout,
    *args: str,
    input: str | None = None,
    env: dict[str, str] | None = None,
    user: int | None = None,
    timeout: float = 120,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`memvault ARGS` on this vault with the hash embedder, its `main` run in this process; `process`
    runs the real console script instead (a crash point kills the process it runs in), and `user` runs
    that as that uid."""
    full_env = {**os.environ, "MEMVAULT_VAULT": str(layout.root), **HASH_ENV, **(env or {})}
    if "MEMVAULT_CRASH_AT" not in (env or {}):
        full_env.pop("MEMVAULT_CRASH_AT", None)
    if user is None and not process:
        return run_main(args, full_env, "/", input, timeout)
    prefix = ("setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups") if user is not None else ()
    return run_process(args, full_env, "/", input, timeout, prefix)


@pytest.fixture
def mv(layout: Layout) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return run_cli(layout, *args, **kwargs)

    return run


@pytest.fixture
def world_layout() -> Iterator[tuple[Layout, int | None]]:
    """A vault an unprivileged user owns, and that user (None when the tests already run unprivileged):
    as root, `chmod 000` denies nothing, so permission faults are made by running the CLI as nobody."""
    root = Path(tempfile.mkdtemp(prefix="memvault-rel-", dir=SHM if is_tmpfs(SHM) else "/tmp"))  # see tests.conftest
    os.chmod(root, 0o755)
    vault = root / "vault"
    vault.mkdir()
    user = NOBODY if os.geteuid() == 0 else None
    if user is not None:
        pwd.getpwuid(user)
        os.chown(vault, user, user)
        _skip_unless_reachable(user, root)
    try:
        yield Layout(vault.resolve()), user
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _skip_unless_reachable(user: int, root: Path) -> None:
    """A checkout inside a private folder (mode 0700, as `mktemp -d` and many homes are) keeps its .venv
    out of that user's reach: the test cannot run the CLI as them, and says so instead of failing."""
    probe = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", MEMVAULT, "--help"],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    if probe.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        why = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"uid {user} cannot run {MEMVAULT} (the checkout is in a folder it cannot enter?): {why}")


def one_line(stderr: str) -> bool:
    """The house rule for errors: no traceback."""
    return "Traceback" not in stderr and all(line.startswith("memvault: ") for line in stderr.strip().splitlines())


def disagreements(layout: Layout) -> list[str]:
    """Open the index in this process (no daemon may hold it) and list every disagreement."""
    from memvault.indexer.config import IndexConfig
    from memvault.indexer.opening import open_index
    from memvault.indexer.verify import disagreements as check

    with open_index(layout, IndexConfig(embedder="hash-384")) as index:
        return check(index)


def snapshot(layout: Layout) -> dict[str, bytes]:
    """Every file outside memvault's own folders (its state, the trash, the derived catalog), by
    vault-relative path, with its bytes."""
    out = {}
    for path in sorted(layout.root.rglob("*")):
        rel = path.relative_to(layout.root).as_posix()
        if rel.split("/")[0] in (".memvault", ".trash", "catalog") or path.is_symlink() or not path.is_file():
            continue
        out[rel] = path.read_bytes()
    return out


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, step: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"condition not met within {timeout}s")


def pid_gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def daemon_pid(layout: Layout) -> int:
    from memvault.daemon.files import pid_path

    return int(pid_path(layout).read_text())


def ask(layout: Layout, request: dict[str, Any], timeout: float = 60.0) -> dict[str, Any] | None:
    from memvault.daemon.client import ask as client_ask

    return client_ask(layout, request, timeout=timeout)


def settle(layout: Layout, timeout: float = 120.0) -> None:
    """Wait until the daemon has nothing queued, nothing on disk is pending and no chunk waits for its vector."""

    def idle() -> bool:
        reply = ask(layout, {"op": "status"}, timeout=30)
        status = reply["status"] if reply and reply["ok"] else None
        return bool(status and not (status["queue"] or status["files_pending"] or status["vectors"]["waiting"]))

    wait_for(idle, timeout)


@contextmanager
def running_daemon(layout: Layout, env: dict[str, str] | None = None, debounce: float = 0.3) -> Iterator[int]:
    """A real background daemon (hash embedder); always stopped, or killed, on the way out."""
    started = run_cli(layout, "daemon", "start", "--debounce", str(debounce), env=env)
    assert started.returncode == 0, started.stderr
    pid = daemon_pid(layout)
    try:
        yield pid
    finally:
        stop_daemon(layout, pid)


def stop_daemon(layout: Layout, pid: int) -> None:
    if pid_gone(pid):
        return
    stopped = run_cli(layout, "daemon", "stop")
    if stopped.returncode != 0 or not pid_gone(pid):
        with_kill(pid)


def with_kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    wait_for(lambda: pid_gone(pid), 30)
