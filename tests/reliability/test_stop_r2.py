"""`daemon stop` (also what a Claude Code session's end does) while a write runs in the daemon: the stop
takes no new request, lets the one it took finish and answer, then exits. Before, the daemon exited
under it: the client got exit 9 and the trash held copies of entries still in their note."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess

from memvault.daemon.journal import journal_path
from tests.conftest import MEMVAULT
from tests.reliability.conftest import HASH_ENV, pid_gone, run_cli, running_daemon, tally, wait_for

ENTRIES = 1500  # a `clear` of this many takes the daemon about a second: a stop lands in its middle


def _trashed(layout) -> int:
    folder = layout.root / ".trash"
    return sum(1 for p in folder.rglob("*.md")) if folder.is_dir() else 0


def test_a_stop_lets_the_write_in_flight_finish_and_answer(layout):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    memory = layout.memory_md.read_text(encoding="utf-8")
    lines = "".join(f"- preference {i} of the harbour crane\n" for i in range(ENTRIES))
    layout.memory_md.write_text(memory.replace("## User Preferences\n", "## User Preferences\n" + lines, 1))
    env = {**os.environ, "MEMVAULT_VAULT": str(layout.root), **HASH_ENV}
    with running_daemon(layout) as pid:
        clear = subprocess.Popen([MEMVAULT, "clear", "--all", "--yes"], env=env, cwd="/", text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        try:
            wait_for(lambda: _trashed(layout) > 0 or clear.poll() is not None, step=0.005)
            assert clear.poll() is None, "the clear was over before the stop: nothing to test"
            stopped = run_cli(layout, "daemon", "stop")
            out, err = clear.communicate(timeout=120)
        finally:
            if clear.poll() is None:
                clear.kill()
        assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout, stopped.stderr
        assert pid_gone(pid)
    assert clear.returncode == 0, (clear.returncode, err)
    assert f"moved {ENTRIES} entries" in out
    with sqlite3.connect(journal_path(layout)) as db:  # the daemon ran it and noted its answer: no hang-up
        assert [(op, json.loads(reply)["ok"]) for op, reply in db.execute("SELECT op, reply FROM requests")] == [
            ("clear", True)]  # fmt: skip
    assert "- preference" not in layout.memory_md.read_text(encoding="utf-8")
    trash = json.loads(run_cli(layout, "trash", "--json").stdout)["items"]
    assert len(trash) == ENTRIES == _trashed(layout)  # one copy per entry moved: none orphaned, none twice
    tally("crash", 1)
