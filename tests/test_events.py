"""The daemon's events: a note saved the way editors save (a temp file renamed over it) is seen as
`file-changed`, then `file-indexed` and `daily-note-updated`, in order, by a socket subscriber and
by `memvault events`."""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import subprocess
import threading

from memvault.daemon.client import follow
from tests.conftest import MEMVAULT
from tests.reliability.conftest import HASH_ENV


def _collect(layout, since: int, into: queue.Queue) -> None:
    try:
        for event in follow(layout, since):  # the daemon's backlog after `since` first: nothing is missed
            into.put(event)
    except Exception as exc:  # the daemon stopped: the test reads what it got
        into.put({"event": "closed", "error": str(exc)})


def test_an_editor_save_is_changed_then_indexed_in_order(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    rel = f"daily/{dt.date.today().isoformat()}.md"
    assert cli("note", "first line").returncode == 0
    assert cli("daemon", "start", "--debounce", "0.2", env=HASH_ENV).returncode == 0
    try:
        got: queue.Queue = queue.Queue()
        since = max(json.loads(line)["seq"] for line in cli("events", "--json").stdout.splitlines())
        threading.Thread(target=_collect, args=(layout, since, got), daemon=True).start()
        note = layout.root / rel
        temp = note.with_name(f".{note.name}.swp")  # a dot-file: not a note, as editors name them
        temp.write_text(note.read_text(encoding="utf-8") + "- 12:00 written in an editor\n", encoding="utf-8")
        os.replace(temp, note)
        seen = []
        while not any(e["event"] == "daily-note-updated" and e.get("path") == rel for e in seen):
            event = got.get(timeout=60)  # a bound that only catches a hang
            assert event["event"] != "closed", event
            seen.append(event)
        mine = [e["event"] for e in seen if e.get("path") == rel]
        assert mine[:3] == ["file-changed", "file-indexed", "daily-note-updated"], seen
        assert [e["seq"] for e in seen] == sorted(e["seq"] for e in seen)
        listed = cli("events", "--json")
        assert listed.returncode == 0, listed.stderr
        names = [json.loads(line)["event"] for line in listed.stdout.splitlines()]
        assert names[0] == "watcher-started" and "file-indexed" in names and "daily-note-updated" in names
        remembered = cli("remember", "--type", "config", "Port 8080")
        assert remembered.returncode == 0
        last = int(json.loads(listed.stdout.splitlines()[-1])["seq"])
        newer = [json.loads(line) for line in cli("events", "--json", "--since", str(last)).stdout.splitlines()]
        order = [e["event"] for e in newer if e.get("path") == "MEMORY.md"]
        firsts = [order.index(name) for name in ("file-changed", "file-indexed", "memory-updated")]
        assert firsts == sorted(firsts), order
        human = cli("events").stdout.splitlines()
        assert "watcher-started" in human[0]
    finally:
        cli("daemon", "stop")
    refused = cli("events")
    assert refused.returncode == 2 and "memvault daemon start" in refused.stderr


def test_events_follow_prints_lines_as_they_happen(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("daemon", "start", "--debounce", "0.2", env=HASH_ENV).returncode == 0
    env = {**os.environ, "MEMVAULT_VAULT": str(layout.root)}
    since = max(json.loads(line)["seq"] for line in cli("events", "--json").stdout.splitlines())
    proc = subprocess.Popen([MEMVAULT, "events", "--follow", "--json", "--since", str(since)],
                            stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        assert cli("note", "hello from the test").returncode == 0
        while json.loads(lines.get(timeout=60))["event"] != "daily-note-updated":  # a bound that only catches a hang
            pass
    finally:
        proc.kill()
        proc.wait(timeout=30)
        cli("daemon", "stop")
