"""Shared fixtures: a fresh vault in a temp folder, and the `memvault` CLI: `cli` runs its `main` in this
process (the same argv, environment, working folder, stdin, stdout, stderr and exit code as the console
script), `cli_process` runs the installed console script as a subprocess, for the tests that need a
process boundary (a crash point that kills its process, several CLIs at once, a hang a timeout catches)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import jsonschema
import pytest

from memvault.vault.paths import Layout

MEMVAULT = str(Path(sys.executable).parent / "memvault")
CRASH = "MEMVAULT_CRASH_AT"
SHM = "/dev/shm"
ON_TMPFS = "MEMVAULT_TESTS_ON_TMPFS"  # set when pytest_configure moved the temp root there


def is_tmpfs(path: str) -> bool:
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            return any(line.split()[1:3] == [path, "tmpfs"] for line in fh)
    except OSError:
        return False


def pytest_configure(config: pytest.Config) -> None:
    """Temp folders (`tmp_path`) in memory where the machine has a tmpfs: every save fsyncs its note, the
    manifest and the stores, and on a shared disk each fsync can take a tenth of a second. Nothing a test
    checks depends on the data reaching the disk (a crash test kills a process, not the machine); pytest's
    own numbered folders stay (so parallel runs do not collide), only their root moves. `--basetemp` or
    `$PYTEST_DEBUG_TEMPROOT` choose otherwise."""
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    if is_tmpfs(SHM) and os.access(SHM, os.W_OK | os.X_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = SHM
        os.environ[ON_TMPFS] = "1"  # (the workers inherit both)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run on the tmpfs that passed gives its memory back at once (a full run leaves some 2.6 GB there,
    and pytest keeps its last three runs); a failed one is kept to look at. Each xdist worker removes its
    own folder, the controller the run's."""
    if os.environ.get(ON_TMPFS) != "1" or exitstatus != 0 or session.testsfailed:
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is not None:
        shutil.rmtree(factory.getbasetemp(), ignore_errors=True)


@pytest.fixture(autouse=True)
def user_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test, and every CLI and daemon it starts, has a user vault of its own that does not
    exist yet, never the machine's; a save routed to the user scope creates it."""
    root = tmp_path / "user-vault"
    monkeypatch.setenv("MEMVAULT_USER_VAULT", str(root))
    return root


@pytest.fixture(autouse=True)
def _daemons_reaped() -> Iterator[None]:
    """A daemon that `memvault daemon start` started in this process is this process's child: one a test
    killed is reaped here (not left a zombie), and one it left running is stopped."""
    yield
    from memvault.daemon import process

    for pid, child in list(process._CHILDREN.items()):
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(30)
        process._CHILDREN.pop(pid, None)


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    root = tmp_path / "vault"
    root.mkdir()
    return Layout(root.resolve())


def write_notes(layout: Layout, notes: Mapping[str, str]) -> None:
    """Each note at its vault-relative path, with the folders it needs."""
    for rel, text in notes.items():
        path = layout.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def open_files(pid: int) -> set[str]:
    """What a process's open descriptors name (`socket:[inode]`, paths); one it closes while they are read
    (a daemon's first pass opens and closes notes) is left out, never a FileNotFoundError."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):
            found.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return found


CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def _forget_process_state() -> None:
    """What a run leaves in module state that a fresh process would not have."""
    from memvault.search import fallback
    from memvault.vault import faults, swap

    fallback._cache.clear()
    faults._COUNTERS.clear()
    swap._OURS.clear()
    swap._CONTENDED.clear()


class CliHung(BaseException):
    """An in-process run went over its time (what `subprocess.run`'s timeout catches): not an `Exception`,
    so `main` does not turn it into an exit code; the test fails with it."""


def _hung(timeout: float) -> Callable[..., None]:
    def raise_it(signum: int, frame: object) -> None:
        raise CliHung(f"the CLI did not finish within {timeout:g} s")

    return raise_it


@contextlib.contextmanager
def _as_a_process(env: Mapping[str, str], cwd: Path | str, timeout: float) -> Iterator[None]:
    """This process dressed as a fresh CLI process for one run: its environment, working folder and the
    `memvault` logger's setup are put back afterwards, and a run still going after `timeout` seconds is
    interrupted (SIGALRM) with `CliHung`, as the subprocess's timeout would have ended the test."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("the in-process CLI changes the environment and cwd: use cli_process from threads")
    if env.get(CRASH):
        raise RuntimeError(f"{CRASH} kills the process it runs in: use cli_process")
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    logger = logging.getLogger("memvault")
    saved_logger = (logger.handlers[:], logger.level, logger.propagate)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    saved_alarm = signal.signal(signal.SIGALRM, _hung(timeout))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, saved_alarm)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        logger.handlers[:], logger.level, logger.propagate = saved_logger[0], saved_logger[1], saved_logger[2]
        _forget_process_state()


def run_main(
    args: tuple[str, ...] | list[str], env: Mapping[str, str], cwd: Path | str, input: str | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`memvault ARGS` through `memvault.cli.main` in this process, as `subprocess.run(..., text=True)` of
    the console script reports it (an exception that escapes `main`, as with `--debug`, is a traceback and
    exit code 1, as Python reports it)."""
    from memvault.cli import main

    out, err = io.StringIO(newline=None), io.StringIO(newline=None)  # text mode reads "\r\n" as "\n", too
    saved_stdin = sys.stdin
    with _as_a_process(env, cwd, timeout):
        sys.stdin = io.StringIO(input or "")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(list(args))
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
                    if not isinstance(exc.code, int | None):
                        print(exc.code, file=sys.stderr)
                except CliHung:
                    raise
                except BaseException:  # what the interpreter does with an exception that leaves main
                    traceback.print_exc()
                    code = 1
                sys.stdout.flush()
        finally:
            sys.stdin = saved_stdin
    return subprocess.CompletedProcess([MEMVAULT, *args], code, out.getvalue(), err.getvalue())


def run_process(
    args: tuple[str, ...] | list[str],
    env: Mapping[str, str],
    cwd: Path | str,
    input: str | None,
    timeout: float,
    prefix: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """The installed console script as a subprocess."""
    return subprocess.run(
        [*prefix, MEMVAULT, *args], input=input, capture_output=True, text=True, env=dict(env), cwd=cwd,
        timeout=timeout,
    )  # fmt: skip


def _runner(layout: Layout, run: Callable[..., subprocess.CompletedProcess[str]]) -> CliRunner:
    def cli(*args: str, input: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None):
        full_env = {**os.environ, "MEMVAULT_VAULT": str(layout.root), **(env or {})}
        return run(args, full_env, cwd or layout.root.parent, input, 60)

    return cli


@pytest.fixture
def cli(layout: Layout) -> CliRunner:
    """`memvault ...` against the temp vault (via $MEMVAULT_VAULT), run in this process."""
    return _runner(layout, run_main)


@pytest.fixture
def cli_process(layout: Layout) -> CliRunner:
    """The installed console script as a real subprocess against the temp vault (via $MEMVAULT_VAULT)."""
    return _runner(layout, run_process)


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


def search_json(cli: CliRunner, *args: str) -> dict:
    """`memvault search --json ARGS` through `cli`: it succeeded, and its answer has the public shape."""
    from memvault.search.hits import RESULT_SCHEMA

    result = cli("search", "--json", *args)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    jsonschema.validate(data, RESULT_SCHEMA)
    return data
