"""A write verb takes effect once even when the daemon running it dies before its reply (issue 25,
case 4): the client does not run it a second time in its own process.

The daemon is killed at a real crash point: `mid-manifest` while it re-indexes the note the verb
has just written (before the reply, where most of a write's time in the daemon goes), or
`after-trash` in the middle of `forget`."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest

from memvault.daemon.client import ask
from memvault.daemon.files import pid_path
from tests.reliability.conftest import run_cli, tally, wait_for

MEMORY = """# Memory

## Preferences
- Uses vim for quick edits
- Drinks green tea
- Walks to work on Fridays
"""
CONVERSATION = [
    {
        "role": "user",
        "content": "We decided to never deploy on Fridays. I prefer Vue 3 with TypeScript for front ends.",
    },
    {"role": "assistant", "content": "Understood, no Friday deploys."},
]


def _start_daemon_that_dies_at(layout, point: str) -> int:
    """A daemon over an indexed vault (its first pass changes nothing), killed at `point`'s first pass."""
    assert run_cli(layout, "index").returncode == 0
    started = run_cli(layout, "daemon", "start", "--debounce", "0.3", env={"MEMVAULT_CRASH_AT": point}, process=True)
    assert started.returncode == 0, started.stderr
    pid = int(pid_path(layout).read_text())
    wait_for(lambda: (ask(layout, {"op": "status"}, timeout=5.0) or {}).get("status", {}).get("last_full_reconcile"))
    return pid


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return True
    return state == "Z"


def _setup(layout, tmp_path: Path, verb: str) -> tuple[str, ...]:
    """The vault before the daemon starts, and the verb's arguments."""
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    layout.memory_md.write_text(MEMORY, encoding="utf-8")
    if verb == "forget":
        return ("forget", "MEMORY.md:5")
    if verb == "restore":
        assert run_cli(layout, "forget", "--match", "green tea").returncode == 0
        item = json.loads(run_cli(layout, "trash", "--json").stdout)["items"][0]["id"]
        return ("restore", item)
    if verb == "correct":
        return ("correct", "--match", "vim for quick", "Uses helix for quick edits")
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    if verb == "extract":
        return ("extract", str(conversation))
    assert run_cli(layout, "extract", str(conversation)).returncode == 0
    queue = json.loads(run_cli(layout, "review", "--json").stdout)["proposals"]
    return ("approve", queue[0]["id"])


@pytest.mark.parametrize("verb", ["forget", "restore", "correct", "extract", "approve"])
def test_a_daemon_killed_before_its_reply_does_not_make_the_cli_run_the_verb_again(layout, tmp_path, verb):
    args = _setup(layout, tmp_path, verb)
    pid = _start_daemon_that_dies_at(layout, "mid-manifest")
    try:
        done = run_cli(layout, *args)
        wait_for(lambda: _gone(pid))  # the daemon was to die re-indexing what the verb wrote
    finally:
        run_cli(layout, "daemon", "stop")
    assert done.returncode == 0, done.stderr  # the daemon's noted reply, not "no entry" from a second run
    tally("crash", 1)
    memory = layout.memory_md.read_text(encoding="utf-8")
    today = layout.daily_note(dt.date.today())
    if verb == "forget":
        assert "green tea" not in memory and "vim" in memory and "Fridays" in memory  # one entry, not two
        assert len(json.loads(run_cli(layout, "trash", "--json").stdout)["items"]) == 1
    elif verb == "restore":
        assert memory.count("Drinks green tea") == 1 and json.loads(run_cli(layout, "trash", "--json").stdout)[
            "items"] == []  # fmt: skip
    elif verb == "correct":
        assert today.read_text(encoding="utf-8").count("Uses helix for quick edits [corrects::") == 1
        assert memory.count("[superseded::") == 1
    elif verb == "extract":
        queue = json.loads(run_cli(layout, "review", "--json").stdout)["proposals"]
        assert queue and max(p["seen"] for p in queue) == 1  # not "seen 2x"
        assert today.read_text(encoding="utf-8").count("## ") >= 1
    else:  # one of the two proposals approved, once
        assert memory.count("never deploy on Fridays") + memory.count("Vue 3 with TypeScript") == 1
        assert len(json.loads(run_cli(layout, "review", "--json").stdout)["proposals"]) == 1


def test_a_daemon_killed_in_the_middle_of_a_verb_names_what_it_wrote_and_runs_nothing_twice(layout, tmp_path):
    args = _setup(layout, tmp_path, "forget")
    before = layout.memory_md.read_bytes()
    pid = _start_daemon_that_dies_at(layout, "after-trash")
    try:
        done = run_cli(layout, *args)
        wait_for(lambda: _gone(pid))
    finally:
        run_cli(layout, "daemon", "stop")
    assert done.returncode == 9, (done.returncode, done.stderr)
    tally("crash", 1)
    assert "in the middle of forget" in done.stderr and ".trash/" in done.stderr
    assert layout.memory_md.read_bytes() == before  # the note was not reached: it is as it was
    assert run_cli(layout, *args).returncode == 0  # asked again on purpose, it converges
    assert "green tea" not in layout.memory_md.read_text(encoding="utf-8")


def test_the_same_request_id_twice_is_answered_from_the_journal(layout):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    assert run_cli(layout, "daemon", "start", "--debounce", "0.3").returncode == 0
    try:
        request = {"op": "remember", "text": "Prefers tabs over spaces", "section": "Preferences",
                   "request_id": os.urandom(12).hex()}  # fmt: skip
        first = ask(layout, request, timeout=60)
        time.sleep(0.1)
        again = ask(layout, request, timeout=60)
        other = ask(layout, {**request, "request_id": os.urandom(12).hex()}, timeout=60)
    finally:
        run_cli(layout, "daemon", "stop")
    assert first["ok"] and again == first and first["status"] == "added"
    assert other["ok"] and other["status"] != "added"  # a new id is a new request: the same text is merged
    assert layout.memory_md.read_text(encoding="utf-8").count("Prefers tabs over spaces") == 1


def test_a_write_a_live_daemon_took_is_not_run_again_by_a_client_that_stopped_waiting(layout):
    """A reply that did not come in time, from a daemon still alive (this process stands in for it: its
    pid file and the index lock it holds): the write may yet finish, so the client does not run it too."""
    from memvault.daemon.journal import Interrupted, Journal, earlier
    from memvault.vault.locks import try_lock

    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    journal = Journal(layout)
    with journal.running("r1", "forget"):
        pass  # taken; nothing changed yet, no reply
    journal.close()
    held = try_lock(layout.state_dir / "index.lock")
    pid_path(layout).write_text(f"{os.getpid()}\n")
    try:
        with pytest.raises(Interrupted, match="still running"):
            earlier(layout, "r1", stalled=True)
        assert earlier(layout, "r1") is None  # a daemon that hung up is dying: its lock proves nothing
    finally:
        os.close(held)
    assert earlier(layout, "r1") is None  # no daemon now, and it changed nothing: the client may run it
