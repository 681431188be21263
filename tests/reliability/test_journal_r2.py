"""The daemon's request journal (`.memvault/requests.sqlite`) when it is not what the daemon left there.

- Damaged before the daemon starts (garbage, a folder): set aside under a recoverable name with one
  line in the log, a fresh one started; before, the daemon did not start.
- One that cannot be written (read-only, locked by another process): a write through the daemon is
  refused in one line naming it, with the exit code of a file memvault cannot use; before, "internal
  error", or no daemon at all.
- Deleted or garbled under a running daemon: a write the daemon acknowledged and then died on is still
  answered from the journal, not run a second time by its client (before, `forget MEMORY.md:5` removed
  two entries), and a client that finds no readable journal runs nothing rather than risk a second run.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.daemon.files import pid_path
from memvault.vault.paths import Layout
from tests.reliability.conftest import (
    ask,
    one_line,
    pid_gone,
    run_cli,
    running_daemon,
    tally,
    wait_for,
    with_kill,
)

MEMORY = """# Memory

## Preferences
- Uses vim for quick edits
- Drinks green tea
- Walks to work on Fridays
"""
JOURNAL = "requests.sqlite"
CANNOT_USE = 4  # the exit code of a file memvault needs and cannot use (`NoteReadError`'s, `JournalError`'s)


def _journal(layout: Layout) -> Path:
    return layout.state_dir / JOURNAL


def _set_aside(layout: Layout) -> list[Path]:
    return sorted(p for p in layout.state_dir.iterdir() if p.name.startswith(f"{JOURNAL}.damaged-"))


def _vault(layout: Layout, user: int | None = None) -> None:
    assert run_cli(layout, "init", "--lang", "en", user=user).returncode == 0
    layout.memory_md.write_text(MEMORY, encoding="utf-8")
    if user is not None:
        os.chown(layout.memory_md, user, user)


def _garbage(path: Path) -> bytes:
    data = b"not a journal: " + os.urandom(3000)
    path.write_bytes(data)
    return data


def _folder(path: Path) -> bytes:
    path.mkdir()
    (path / "inside.txt").write_bytes(b"kept")
    return b"kept"


@pytest.mark.parametrize("damage", [_garbage, _folder], ids=["garbage", "folder"])
def test_a_damaged_journal_is_set_aside_and_a_fresh_one_started(layout, damage):
    _vault(layout)
    layout.state_dir.mkdir(exist_ok=True)
    kept = damage(_journal(layout))
    with running_daemon(layout):
        saved = run_cli(layout, "remember", "--section", "Preferences", "Prefers tabs over spaces")
        assert saved.returncode == 0 and one_line(saved.stderr), saved.stderr
    assert "Prefers tabs over spaces" in layout.memory_md.read_text(encoding="utf-8")
    (aside,) = _set_aside(layout)  # recoverable, as it was
    assert (aside / "inside.txt" if aside.is_dir() else aside).read_bytes() == kept
    assert _journal(layout).read_bytes().startswith(b"SQLite format 3\x00")
    warned = [line for line in (layout.state_dir / "daemon.log").read_text().splitlines() if "set aside" in line]
    assert len(warned) == 1 and aside.name in warned[0] and "Traceback" not in warned[0], warned
    tally("corrupt", 1)


@pytest.fixture
def disk_layout() -> Iterator[Layout]:
    """A vault on a file system that keeps the immutable flag (not the tests' tmpfs): as root, a file
    made read-only by its mode is written anyway, an immutable one is not."""
    root = Path(tempfile.mkdtemp(prefix="memvault-journal-", dir="/tmp"))
    (root / "vault").mkdir()
    try:
        yield Layout((root / "vault").resolve())
    finally:
        for path in root.rglob("*"):
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_a_read_only_journal_refuses_writes_in_one_line(disk_layout):
    layout = disk_layout
    _vault(layout)
    with running_daemon(layout):
        pass  # it made its journal
    made = subprocess.run(["chattr", "+i", str(_journal(layout))], capture_output=True, text=True)
    if made.returncode != 0 and os.geteuid() == 0:
        pytest.skip(f"no immutable flag here ({made.stderr.strip()}), and root writes a read-only file anyway")
    if made.returncode != 0:
        _journal(layout).chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    before = layout.memory_md.read_bytes()
    with running_daemon(layout):
        assert ask(layout, {"op": "ping"})["ok"]  # it serves (reads need no journal)
        saved = run_cli(layout, "remember", "--section", "Preferences", "Prefers tabs over spaces")
    assert saved.returncode == CANNOT_USE, (saved.returncode, saved.stderr)
    assert one_line(saved.stderr) and saved.stderr.count("\n") == 1, saved.stderr
    assert str(_journal(layout)) in saved.stderr and "internal error" not in saved.stderr
    assert layout.memory_md.read_bytes() == before  # not written without its note in the journal
    tally("corrupt", 1)


def test_a_locked_journal_refuses_writes_in_one_line_and_they_work_once_it_is_free(layout):
    _vault(layout)
    with running_daemon(layout):
        holder = sqlite3.connect(_journal(layout), isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")  # another process holding the journal's write lock
            saved = run_cli(layout, "remember", "--section", "Preferences", "Prefers tabs over spaces")
        finally:
            holder.close()
        assert saved.returncode == CANNOT_USE, (saved.returncode, saved.stderr)
        assert one_line(saved.stderr) and str(_journal(layout)) in saved.stderr, saved.stderr
        assert "internal error" not in saved.stderr
        assert "Prefers tabs" not in layout.memory_md.read_text(encoding="utf-8")
        again = run_cli(layout, "remember", "--section", "Preferences", "Prefers tabs over spaces")
        assert again.returncode == 0, again.stderr
    assert layout.memory_md.read_text(encoding="utf-8").count("Prefers tabs over spaces") == 1
    tally("corrupt", 1)


def _delete(layout: Layout) -> None:
    for end in ("", "-wal", "-shm"):
        (layout.state_dir / f"{JOURNAL}{end}").unlink(missing_ok=True)


def _garble(layout: Layout) -> None:
    for end in ("", "-wal"):
        path = layout.state_dir / f"{JOURNAL}{end}"
        if path.exists():
            with open(path, "r+b") as fh:  # in place: the daemon's open file is the garbled one
                fh.write(os.urandom(max(path.stat().st_size, 4096)))


def _replace(layout: Layout) -> None:
    """What a sync or backup tool does: another file put in its place, the SQLite log and index dropped."""
    fresh = layout.state_dir / "other.tmp"
    fresh.write_bytes(os.urandom(8192))
    os.replace(fresh, _journal(layout))
    for end in ("-wal", "-shm"):
        (layout.state_dir / f"{JOURNAL}{end}").unlink(missing_ok=True)


@pytest.mark.parametrize("damage", [_delete, _garble, _replace], ids=["deleted", "garbled", "replaced"])
def test_a_journal_damaged_under_the_daemon_still_keeps_a_write_to_once(layout, damage):
    _vault(layout)
    assert run_cli(layout, "index").returncode == 0
    started = run_cli(layout, "daemon", "start", "--debounce", "0.3", process=True,
                      env={"MEMVAULT_CRASH_AT": "before-indexing-written"})  # fmt: skip
    assert started.returncode == 0, started.stderr
    pid = int(pid_path(layout).read_text())
    try:
        wait_for(lambda: (ask(layout, {"op": "status"}, timeout=5) or {}).get("status", {}).get("last_full_reconcile"))
        damage(layout)
        done = run_cli(layout, "forget", "MEMORY.md:5")  # killed right after it noted its reply
        wait_for(lambda: pid_gone(pid))
    finally:
        with_kill(pid)
    assert done.returncode == 0, done.stderr  # the daemon's noted answer, not a second run here
    memory = layout.memory_md.read_text(encoding="utf-8")
    assert "green tea" not in memory and "vim" in memory and "Fridays" in memory  # one entry, not two
    assert len(json.loads(run_cli(layout, "trash", "--json").stdout)["items"]) == 1
    assert len(_set_aside(layout)) == (damage is not _delete)  # what was there instead, kept to look at
    tally("crash", 1)


def test_a_client_that_cannot_read_the_journal_runs_nothing_a_second_time(layout):
    from memvault.daemon.journal import Interrupted, earlier

    _vault(layout)
    layout.state_dir.mkdir(exist_ok=True)
    _garbage(_journal(layout))  # its daemon gone, and nothing left to tell whether the write happened
    with pytest.raises(Interrupted, match="cannot be read"):
        earlier(layout, "r1")
    _journal(layout).unlink()
    with pytest.raises(Interrupted, match="cannot be read"):
        earlier(layout, "r1")
