"""Crash consistency: SIGKILL `memvault index` and the daemon at random moments, during indexing and
during a burst of edits; after a restart and one reconcile, stores, manifest and files agree exactly
and every note is byte-identical to what was written."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time

import pytest

from memvault.vault.fileio import read_note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout
from tests.conftest import MEMVAULT
from tests.reliability.conftest import (
    HASH_ENV,
    ask,
    daemon_pid,
    disagreements,
    pid_gone,
    run_cli,
    settle,
    snapshot,
    stop_daemon,
    tally,
    wait_for,
    with_kill,
)

QUICK_SEED, FULL_SEED = 8, 2026
POINTS = ("after-embed", "after-upsert", "after-delete", "mid-manifest")
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "记忆",
    "向量",
    "kayak",
    "river",
    "mountain",
    "ledger",
    "invoice",
    "检索",
    "orbit",
    "comet",
]


def _text(rng: random.Random, n: int) -> str:
    paragraphs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60))) for _ in range(rng.randint(1, 4))]
    return f"# note {n}\n\n" + "\n\n".join(paragraphs) + "\n"


def _mutate(layout: Layout, rng: random.Random, expected: dict[str, bytes], counter: list[int]) -> None:
    """Add, edit and delete notes the way a person or a sync tool would; `expected` follows."""
    for _ in range(rng.randint(10, 40)):
        counter[0] += 1
        rel = f"notes/{rng.choice('abc')}/n{counter[0]:05}.md"
        expected[rel] = _text(rng, counter[0]).encode()
    existing = [r for r in expected if r.startswith("notes/")]
    for rel in rng.sample(existing, min(len(existing), rng.randint(0, 15))):
        expected[rel] = _text(rng, rng.randint(0, 9999)).encode()
    for rel in rng.sample(existing, min(len(existing), rng.randint(0, 8))):
        expected.pop(rel, None)
        (layout.root / rel).unlink(missing_ok=True)
    for rel, data in expected.items():
        path = layout.root / rel
        if not path.exists() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def _index_trials(layout: Layout, trials: int, seed: int) -> None:
    rng = random.Random(seed)
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    expected = snapshot(layout)
    counter = [0]
    _mutate(layout, rng, expected, counter)
    start = time.monotonic()  # how long a pass over one mutation takes here: the window a random kill aims at
    assert run_cli(layout, "index", process=True).returncode == 0
    took = time.monotonic() - start
    killed = 0
    for trial in range(trials):
        _mutate(layout, rng, expected, counter)
        env = {**os.environ, "MEMVAULT_VAULT": str(layout.root), **HASH_ENV}
        if trial % 2 == 0:  # a named crash point: a kill exactly between two store writes
            env["MEMVAULT_CRASH_AT"] = f"{rng.choice(POINTS)}:{rng.randint(1, 3)}"
            proc = subprocess.run([MEMVAULT, "index"], env=env, capture_output=True, text=True, timeout=120)
            killed += proc.returncode == -signal.SIGKILL
        else:  # a kill from outside at a random moment
            proc = subprocess.Popen([MEMVAULT, "index"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.3, 0.9) * took)  # inside the pass, whatever this machine's speed
            proc.send_signal(signal.SIGKILL)
            killed += proc.wait(timeout=60) == -signal.SIGKILL
        again = run_cli(layout, "index")  # the restart and its one reconcile
        assert again.returncode == 0, (trial, again.stderr)
        assert disagreements(layout) == [], trial
        assert snapshot(layout) == expected, trial
    assert killed >= trials // 3, f"only {killed} of {trials} runs were killed mid-way: the trials prove little"
    tally("crash", trials)


def _daemon_trials(layout: Layout, trials: int, seed: int) -> None:
    rng = random.Random(seed)
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    expected = snapshot(layout)
    counter = [0]
    acked: list[str] = []
    for trial in range(trials):
        _mutate(layout, rng, expected, counter)
        env = {"MEMVAULT_CRASH_AT": f"{rng.choice(POINTS)}:{rng.randint(2, 6)}"} if trial % 2 else None
        started = run_cli(layout, "daemon", "start", "--debounce", "0.2", env=env, process=env is not None)
        if started.returncode != 0:  # killed at a crash point during its start-up reconcile: that is a trial too
            # before its first answer, or after it and before its first pass was done (start waits for that)
            assert re.search(r"exited (at start|just after it answered)", started.stderr), started.stderr
        else:
            pid = daemon_pid(layout)
            timer = threading.Timer(rng.uniform(0.1, 2.0), with_kill, (pid,))
            timer.start()
            for step in range(rng.randint(3, 8)):  # a burst of edits, and notes through the socket
                _mutate(layout, rng, expected, counter)
                word = f"acked{trial}x{step}"
                reply = ask(layout, {"op": "note", "text": f"entry {word}"}, timeout=10)
                if reply and reply.get("ok"):
                    acked.append(word)
                time.sleep(rng.uniform(0, 0.3))
            timer.join()
            with_kill(pid)
        restarted = run_cli(layout, "daemon", "start", "--debounce", "0.2")
        assert restarted.returncode == 0, (trial, restarted.stderr)
        pid = daemon_pid(layout)
        try:
            settle(layout)
            assert ask(layout, {"op": "verify"}, timeout=120)["disagreements"] == [], trial
        finally:
            stop_daemon(layout, pid)
        notes = {k: v for k, v in snapshot(layout).items() if not k.startswith("daily/")}
        assert notes == {k: v for k, v in expected.items() if not k.startswith("daily/")}, trial
        for day in layout.daily_dir.glob("*.md"):
            text = read_note(day).text
            assert parse_note(f"daily/{day.name}", text).problem is None
        daily = "".join(p.read_text(encoding="utf-8") for p in layout.daily_dir.glob("*.md"))
        assert all(daily.count(f"entry {w}\n") == 1 for w in acked), trial
    assert wait_for(lambda: pid_gone(pid), 5)
    tally("crash", trials)


def test_sigkill_index_quick(layout):
    _index_trials(layout, 4, QUICK_SEED)


def test_sigkill_daemon_quick(layout):
    _daemon_trials(layout, 2, QUICK_SEED)


@pytest.mark.reliability_full
def test_sigkill_index_full(layout):
    _index_trials(layout, 20, FULL_SEED)


@pytest.mark.reliability_full
def test_sigkill_daemon_full(layout):
    _daemon_trials(layout, 20, FULL_SEED)


ENTRY_WRITES = (
    ("update by key", ("remember", "--type", "preference", "--key", "tea", "Now prefers black tea"), "after-trash"),
    ("forget", ("forget", "tea"), "after-trash"),
)


@pytest.mark.parametrize(("what", "args", "point"), ENTRY_WRITES, ids=[w[0] for w in ENTRY_WRITES])
def test_sigkill_during_an_entry_write_leaves_the_note_whole_and_the_trash_a_spare_copy(layout, what, args, point):
    """Killed after the trash copy is written and before the note is: the note is as it was, and
    restoring the spare copy writes nothing twice."""
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    assert run_cli(layout, "remember", "--type", "preference", "--key", "tea", "Likes green tea").returncode == 0
    memory = layout.root / "MEMORY.md"
    before = memory.read_bytes()
    crashed = run_cli(layout, *args, env={"MEMVAULT_CRASH_AT": point}, process=True)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert memory.read_bytes() == before
    (item,) = (layout.root / ".trash" / "entries").glob("*.md")
    restored = run_cli(layout, "restore", item.stem)
    assert restored.returncode == 0, restored.stderr
    assert memory.read_bytes() == before and not item.exists()
    tally("crash", 1)


def test_sigkill_during_restore_leaves_the_entry_back_once(layout):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    assert run_cli(layout, "remember", "--type", "preference", "--key", "tea", "Likes green tea").returncode == 0
    memory = layout.root / "MEMORY.md"
    before = memory.read_bytes()
    assert run_cli(layout, "forget", "tea").returncode == 0
    (item,) = (layout.root / ".trash" / "entries").glob("*.md")
    crashed = run_cli(layout, "restore", item.stem, env={"MEMVAULT_CRASH_AT": "before-untrash"}, process=True)
    assert crashed.returncode == -signal.SIGKILL and memory.read_bytes() == before and item.exists()
    again = run_cli(layout, "restore", item.stem)  # the item left behind is found to be back already
    assert again.returncode == 0 and memory.read_bytes() == before and not item.exists()
    tally("crash", 1)


@pytest.mark.parametrize("point", ["after-trash:1", "after-trash:2", "restore:before-untrash:2"])
def test_sigkill_during_clear_or_its_restore_leaves_each_note_before_or_after(layout, tmp_path, point):
    """`clear --all` writes note by note: killed before the first note, between two notes, or in the
    middle of restoring the batch, each note is whole (as before or as cleared), and restoring the
    batch brings every note back byte for byte."""
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    for fact in ("Likes green tea", "Reads on trains"):
        assert run_cli(layout, "remember", "--type", "preference", fact).returncode == 0
    assert run_cli(layout, "note", "--date", "2026-01-02", "A day of planning").returncode == 0
    rels = ["MEMORY.md", "daily/2026-01-02.md"]
    before = [(layout.root / r).read_bytes() for r in rels]
    twin = Layout((tmp_path / "twin").resolve())  # the same vault cleared without a crash: the "after"
    shutil.copytree(layout.root, twin.root)
    assert run_cli(twin, "clear", "--all", "--yes").returncode == 0
    after = [(twin.root / r).read_bytes() for r in rels]
    assert after != before
    restore_crash = point.startswith("restore:")
    crash = {} if restore_crash else {"MEMVAULT_CRASH_AT": point}
    cleared = run_cli(layout, "clear", "--all", "--yes", env=crash, process=bool(crash))
    assert cleared.returncode == (0 if restore_crash else -signal.SIGKILL), cleared.stderr
    items = list((layout.root / ".trash" / "entries").glob("*.md"))
    batch = {line[7:] for item in items for line in item.read_text().splitlines() if line.startswith("batch: ")}
    assert len(batch) == 1 and len(items) == (2 if point == "after-trash:1" else 3)  # MEMORY.md first
    if restore_crash:
        crash = {"MEMVAULT_CRASH_AT": point.removeprefix("restore:")}
        crashed = run_cli(layout, "restore", *batch, env=crash, process=True)
        assert crashed.returncode == -signal.SIGKILL
    for rel, old, new in zip(rels, before, after, strict=True):
        assert (layout.root / rel).read_bytes() in (old, new), (point, rel)
    restored = run_cli(layout, "restore", *batch)
    assert restored.returncode == 0, restored.stderr
    assert [(layout.root / r).read_bytes() for r in rels] == before
    assert not list((layout.root / ".trash" / "entries").glob("*.md"))
    tally("crash", 1)


def test_sigkill_between_a_correction_and_its_mark_is_finished_by_running_it_again(layout):
    """Killed after the correction is written and before the old entry is marked: both notes are
    whole, and the same `correct` again writes no second correction, only the mark."""
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    assert run_cli(layout, "remember", "--type", "preference", "--key", "tea", "Likes green tea").returncode == 0
    args = ("correct", "tea", "Likes black tea now")
    crashed = run_cli(layout, *args, env={"MEMVAULT_CRASH_AT": "before-supersede"}, process=True)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    memory = layout.root / "MEMORY.md"
    assert "superseded" not in memory.read_text(encoding="utf-8")
    (today,) = (layout.root / "daily").glob("*.md")
    assert today.read_text(encoding="utf-8").count("Likes black tea now [") == 1  # the entry, not the summary
    again = run_cli(layout, *args)
    assert again.returncode == 0 and "already written" in again.stdout, again.stderr
    assert today.read_text(encoding="utf-8").count("Likes black tea now [") == 1  # the entry, not the summary
    assert memory.read_text(encoding="utf-8").count("[superseded:: ") == 1
    tally("crash", 1)
