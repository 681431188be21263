"""Nothing lost (issue 25), hostile paths: symlinks out of the vault, files that are not regular files,
a `.memvault` that is not a folder, leftover temp files. Every path memvault reads or writes resolves
inside the vault and is a regular file, else one line names it; nothing outside is read or changed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memvault.vault.paths import Layout
from tests.reliability.conftest import ask, one_line, run_cli, running_daemon

SECRET = "# outside\n\n- the outside file's secret line\n"


def _outside(layout: Layout, name: str = "outside.md") -> Path:
    target = layout.root.parent / name
    target.write_text(SECRET, encoding="utf-8")
    return target


def _refused(result, name: str) -> None:
    assert result.returncode != 0, result.stdout
    assert one_line(result.stderr) and name in result.stderr, result.stderr
    assert "secret" not in result.stdout + result.stderr


def _trash_files(layout: Layout) -> list[Path]:
    return [p for p in layout.trash_dir.rglob("*") if p.is_file()] if layout.trash_dir.exists() else []


def test_memory_md_symlinked_out_is_neither_read_nor_copied(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    outside = _outside(layout)
    layout.memory_md.unlink()
    layout.memory_md.symlink_to(outside)
    for args in (("show", "memory"), ("show", "MEMORY.md"), ("remember", "--type", "config", "kept in the vault"),
                 ("rewrite", "memory"), ("sections",)):  # fmt: skip
        _refused(cli(*args, input="- new text\n"), "MEMORY.md")
    assert layout.memory_md.is_symlink() and outside.read_text(encoding="utf-8") == SECRET
    assert _trash_files(layout) == []


def test_memory_md_symlinked_out_is_refused_by_the_socket_and_mcp(layout, cli):
    from mcp.server.mcpserver.exceptions import ToolError

    from memvault.api import Vault
    from memvault.mcp.tools import MemoryTools

    assert cli("init", "--lang", "en").returncode == 0
    layout.memory_md.unlink()
    layout.memory_md.symlink_to(_outside(layout))
    with running_daemon(layout):
        reply = ask(layout, {"op": "get", "path": "memory"})
        assert reply is not None and not reply["ok"], reply
        assert "MEMORY.md" in str(reply) and "secret" not in str(reply)
    vault = Vault(layout.root)
    try:
        with pytest.raises(ToolError) as refused:
            MemoryTools(vault).memory_get("memory")
    finally:
        vault.close()
    assert "MEMORY.md" in str(refused.value) and "secret" not in str(refused.value)


def test_review_md_symlinked_out_is_neither_read_nor_written(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    outside = _outside(layout)
    (layout.root / "REVIEW.md").symlink_to(outside)
    _refused(cli("review"), "REVIEW.md")
    assert outside.read_text(encoding="utf-8") == SECRET


def test_trash_symlinked_out_gets_no_copy(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "--key", "k1", "first version").returncode == 0
    before = layout.memory_md.read_bytes()
    elsewhere = layout.root.parent / "elsewhere"
    elsewhere.mkdir()
    layout.trash_dir.symlink_to(elsewhere)
    _refused(cli("rewrite", "memory", input="- replaced\n"), ".trash")
    _refused(cli("remember", "--type", "config", "--key", "k1", "second version"), ".trash")
    _refused(cli("forget", "--match", "first version"), ".trash")
    assert list(elsewhere.rglob("*")) == [] and layout.memory_md.read_bytes() == before
    assert os.path.islink(layout.trash_dir)


def test_fifo_note_is_refused_before_it_is_opened(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    os.mkfifo(layout.root / "x.md")
    for args in (("rewrite", "x.md"), ("show", "x.md"), ("forget", "x.md:1")):
        result = run_cli(layout, *args, input="- new\n", process=True, timeout=20)
        assert result.returncode != 0 and one_line(result.stderr) and "x.md" in result.stderr, result.stderr
    saved = run_cli(layout, "remember", "--type", "config", "the lock is free", process=True, timeout=20)
    assert saved.returncode == 0, saved.stderr  # no writer waits on a lock held by a hung one
    indexed = run_cli(layout, "index", process=True, timeout=60)
    assert indexed.returncode == 0 and "x.md: " in indexed.stderr and "not a regular file" in indexed.stderr
    assert "lock is free" in run_cli(layout, "search", "--mode", "substring", "lock", process=True, timeout=60).stdout


@pytest.mark.parametrize("name", [".gitignore", "memvault.toml"])
def test_fifo_read_by_every_walk_hangs_nothing(layout, cli, name):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "the lighthouse keeper counts gulls").returncode == 0
    os.mkfifo(layout.root / name)
    for args in (("index",), ("search", "--mode", "substring", "lighthouse"), ("status",)):
        try:
            result = run_cli(layout, *args, process=True, timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(args)} hung on the FIFO {name}")
        assert one_line(result.stderr) and (result.returncode == 0 or name in result.stderr), result.stderr
        assert result.returncode == 0 or name == "memvault.toml", result.stderr
        if result.returncode == 0 and args[0] == "search":
            assert "lighthouse" in result.stdout


def test_read_note_never_blocks_on_a_fifo(layout):
    """The walk saw a regular file; by the time it is read it is a FIFO: the read refuses, never waits."""
    from memvault.vault.errors import NoteReadError
    from memvault.vault.fileio import read_note

    fifo = layout.root / "swapped.md"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            read_note(fifo, "swapped.md", size=0)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # let the blocked open go, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
        pytest.fail("read_note blocked opening a FIFO")
    assert isinstance(outcome[0], NoteReadError) and "swapped.md: is a FIFO" in str(outcome[0]), outcome


def test_state_dir_that_is_a_file(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "the lighthouse keeper counts gulls").returncode == 0
    shutil.rmtree(layout.state_dir)
    layout.state_dir.write_text("not memvault's folder\n")
    before = layout.memory_md.read_bytes()
    for args in (("search", "lighthouse"), ("search", "--json", "lighthouse"), ("search", "--mode", "bm25", "gulls")):
        found = cli(*args)  # the files answer, and one line says why
        assert found.returncode == 0 and "lighthouse" in found.stdout, found.stderr
        assert one_line(found.stderr) and ".memvault" in found.stderr and len(found.stderr.splitlines()) == 1
    assert "lighthouse" in cli("search", "--mode", "substring", "lighthouse").stdout
    status = cli("status")
    assert status.returncode == 0 and "files_on_disk   1" in status.stdout and ".memvault" in status.stderr
    for args in (("remember", "--type", "config", "one more"), ("index",), ("forget", "--match", "gulls"),
                 ("daemon", "start")):  # fmt: skip
        refused = cli(*args)
        assert refused.returncode not in (0, 70) and one_line(refused.stderr), refused.stderr
        assert ".memvault" in refused.stderr and "not a folder" in refused.stderr, refused.stderr
    assert layout.memory_md.read_bytes() == before and layout.state_dir.read_text() == "not memvault's folder\n"


def test_service_unit_names_differ_for_vaults_of_the_same_name(tmp_path, monkeypatch):
    from memvault.daemon.process import install_service

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("sys.platform", "linux")
    units = []
    for parent in ("work", "home", "odd name;$x"):
        root = tmp_path / parent / "memory"
        root.mkdir(parents=True)
        path, how = install_service(Layout(root.resolve()))
        assert path.name in how and str(root.resolve()) in path.read_text()
        units.append(path.name)
    assert len(set(units)) == 3, units
    assert all(u.startswith("memvault-memory-") and u.endswith(".service") for u in units), units
    again, _ = install_service(Layout((tmp_path / "work" / "memory").resolve()))
    assert again.name == units[0]  # the same vault keeps its unit


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_leftover_temp_files_of_dead_saves_move_to_the_trash(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    dead, alive = _dead_pid(), os.getppid()
    leftovers = {layout.root / f".MEMORY.md.{dead}.tmp": b"- an editor's save displaced by a killed swap\n",
                 layout.daily_dir / f".2020-01-01.md.{dead}.tmp": b"- half of a daily note\n"}  # fmt: skip
    kept = [layout.root / f".MEMORY.md.{alive}.tmp", layout.root / ".MEMORY.md.tmp", layout.root / ".x.md.12ab.tmp"]
    for path, data in leftovers.items():
        path.write_bytes(data)
    for path in kept:
        path.write_bytes(b"not a leftover of a dead save\n")
    saved = cli("remember", "--type", "config", "after the crash")
    assert saved.returncode == 0, saved.stderr
    noted = cli("note", "a daily line")
    assert noted.returncode == 0, noted.stderr
    log = saved.stderr + noted.stderr
    for path, data in leftovers.items():
        rel = layout.relative(path)
        assert not path.exists() and one_line(log) and rel in log and ".trash/" in log, log
        moved = layout.trash_dir / "leftovers" / f"{rel.replace('/.', '/').lstrip('.')[: -len('.tmp')]}.bak"
        assert moved.read_bytes() == data, sorted(p.name for p in layout.trash_dir.rglob("*"))
    assert all(path.exists() for path in kept)
    assert cli("remember", "--type", "config", "once more").stderr == ""  # swept once


# a daemon that answers like one (its pid file, the index lock, the socket) and dies 0.6 s after it is up,
# as one whose first pass meets a fatal error does
_DYING_DAEMON = """
import fcntl, json, os, socket, sys, threading, time
state, sock_path = sys.argv[1], sys.argv[2]
lock = os.open(os.path.join(state, "index.lock"), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(lock, fcntl.LOCK_EX)
server = socket.socket(socket.AF_UNIX)
server.bind(sock_path)
server.listen()
def serve():
    while True:
        conn, _ = server.accept()
        with conn, conn.makefile("rwb") as fh:
            for line in fh:
                fh.write(json.dumps({"ok": True, "status": {"last_full_reconcile": None}}).encode() + b"\\n")
                fh.flush()
threading.Thread(target=serve, daemon=True).start()
with open(os.path.join(state, "daemon.pid"), "w") as fh:
    fh.write(f"{os.getpid()}\\n")
time.sleep(0.6)
print("reconcile failed: StoreError: the first pass met a fatal error", file=sys.stderr, flush=True)
os.unlink(sock_path)
os.unlink(os.path.join(state, "daemon.pid"))
sys.exit(1)
"""


def test_daemon_start_reports_a_daemon_that_dies_just_after_answering(layout, cli, monkeypatch):
    from memvault.daemon import process
    from memvault.daemon.files import socket_path

    assert cli("init", "--lang", "en").returncode == 0
    real = subprocess.Popen

    def dying(argv, **kwargs):
        return real([sys.executable, "-c", _DYING_DAEMON, str(layout.state_dir), str(socket_path(layout))], **kwargs)

    monkeypatch.setattr(process.subprocess, "Popen", dying)
    started = cli("daemon", "start")
    assert started.returncode != 0 and "started" not in started.stdout, started.stdout
    assert one_line(started.stderr) and "the first pass met a fatal error" in started.stderr, started.stderr
