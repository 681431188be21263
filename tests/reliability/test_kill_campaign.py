"""Issue 25's SIGKILL campaign: every write verb killed at a random moment of its own run time (timed
first on this machine, so the kills land inside the run whatever its speed), with no daemon and then
with the daemon killed mid-verb; 300 kills and more in all.

After each kill every note must be whole: it reads and parses, and each of its entries (and its day
summary) is one it had before the verb or one a clean run writes, never a piece of one, another text,
or one twice. The verb run again must converge: to what one clean run leaves, or, where the
killed run had already done everything, to what two clean runs leave (`extract` counts a conversation
seen twice; a second `forget KEY` finds nothing). Entries are compared `normalise`d (stamps aside),
with their keys and marks; the trash may keep a spare copy (a kill between the copy and the note),
which `restore` can use and which loses nothing.

Run with `pytest -m reliability_full tests/reliability/test_kill_campaign.py` (about 10 minutes).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from memvault.vault.days import summary_of
from memvault.vault.entries import iter_entries, normalise
from memvault.vault.fileio import read_note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout
from tests.conftest import MEMVAULT
from tests.reliability.conftest import HASH_ENV, daemon_pid, pid_gone, run_cli, stop_daemon, tally, with_kill

LOCAL_KILLS, DAEMON_KILLS = 22, 5  # per verb: 13 verbs, 351 kills
MEMORY = """# Memory

## User Preferences
- Likes green tea [key:: tea]
- Terse answers, no emoji

## Configuration
- Uses vim for quick edits [key:: editor]
- Deploys from the main branch [key:: deploy]

## Facts
- The bike lock code is on the fridge [key:: bike]
- The lab opens at nine
- Ana owns the budget
"""
CONVERSATION = [
    {"role": "user", "content": "We decided to never deploy on Fridays. I prefer Vue 3 with TypeScript."},
    {"role": "assistant", "content": "Understood."},
]
QUEUED = [{"role": "user", "content": "I prefer short commit messages. We decided to keep the monorepo."}]
IMPORTED = {
    "version": 1,
    "exportedAt": "2026-11-01T00:00:00Z",
    "memories": [{"content": "Prefers dark mode in every editor"}, {"content": "The office is in Porto"}],
}


def _template(root: Path) -> dict[str, tuple[str, ...]]:
    """The vault every trial starts from, and each write verb's arguments against it."""
    layout = Layout(root)
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    layout.memory_md.write_text(MEMORY, encoding="utf-8")
    for day in ("2025-01-03", "2025-01-04", "2026-11-20"):
        assert run_cli(layout, "note", "--date", day, f"worked on the {day} release").returncode == 0
        assert run_cli(layout, "summary", day, f"release work on {day}").returncode == 0
    assert run_cli(layout, "remember", "--section", "Facts", "--key", "locker", "Locker 12 is mine").returncode == 0
    assert run_cli(layout, "forget", "locker").returncode == 0
    item = json.loads(run_cli(layout, "trash", "--json").stdout)["items"][0]["id"]
    (root.parent / "conversation.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    (root.parent / "queued.json").write_text(json.dumps(QUEUED), encoding="utf-8")
    (root.parent / "import.json").write_text(json.dumps(IMPORTED), encoding="utf-8")
    assert run_cli(layout, "extract", str(root.parent / "queued.json")).returncode == 0
    queue = json.loads(run_cli(layout, "review", "--json").stdout)["proposals"]
    assert len(queue) >= 2
    return {
        "note": ("note", "Booked the kayak trip for Sunday"),
        "remember": ("remember", "--type", "preference", "--key", "tea", "Now prefers black tea"),
        "remember-new": ("remember", "--section", "Facts", "Parking is behind the lab"),
        "forget": ("forget", "editor"),
        "restore": ("restore", item),
        "clear": ("clear", "--section", "Facts", "--yes"),
        "correct": ("correct", "deploy", "Deploys from release tags"),
        "summary": ("summary", "2026-11-20", "shipped the November release"),
        "retention": ("retention", "--apply", "--days", "30"),
        "import": ("import", str(root.parent / "import.json")),
        "extract": ("extract", str(root.parent / "conversation.json")),
        "approve": ("approve", queue[0]["id"]),
        "reject": ("reject", queue[1]["id"]),
    }


_SAID_AT = re.compile(r"^(\*\*\w+\*\*) \d{1,2}:\d{2}:")


def _notes(layout: Layout) -> dict[str, Counter]:
    """Each note's entries (and day summary) as memvault reads them; the trash and the catalog aside.
    A note that does not read or parse is reported by raising."""
    out = {}
    for path in sorted(layout.root.rglob("*.md")):
        rel = path.relative_to(layout.root).as_posix()
        if rel.split("/")[0] in (".memvault", ".trash", "catalog"):
            continue
        note = parse_note(rel, read_note(path, rel, layout=layout).text)
        assert note.problem is None, note.problem
        # a conversation's lines carry the minute they were kept at (`**user** 12:34: ...`): a run killed
        # and run again a minute later keeps the same lines at another minute
        out[rel] = Counter((_SAID_AT.sub(r"\1:", normalise(e.text)), e.key, bool(e.superseded), bool(e.corrects),
                            e.section) for e in iter_entries(note))  # fmt: skip
        out[rel][("summary", summary_of(note) or "")] += 1
    return out


def _copy(template: Path, to: Path) -> Layout:
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(template, to, symlinks=True)
    return Layout(to.resolve())


def _timed(layout: Layout, args: tuple[str, ...]) -> float:
    started = time.monotonic()
    done = run_cli(layout, *args, process=True)
    assert done.returncode == 0, (args, done.stderr)
    return time.monotonic() - started


def _killed(layout: Layout, args: tuple[str, ...], after: float) -> int:
    env = {**os.environ, "MEMVAULT_VAULT": str(layout.root), **HASH_ENV}
    env.pop("MEMVAULT_CRASH_AT", None)
    proc = subprocess.Popen([MEMVAULT, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=60)


def _check(before: dict, once: dict, twice: dict, killed: dict, again: dict, what: str) -> None:
    """Whole notes after the kill: each entry (and summary) one the note had before or one a clean run
    writes, never more often than either has it (a verb that writes one note twice, as `correct` does
    its correction and then the day's summary, may be caught between the two); then convergence."""
    for rel, held in killed.items():
        was, will = before.get(rel, Counter()), once.get(rel, Counter())
        stray = {k: n for k, n in held.items() if n > max(was[k], will[k])}
        assert not stray, f"{what}: {rel} torn: {stray}"
    assert again in (once, twice), f"{what}: did not converge: {again}"


def _references(template: Path, work: Path, args: tuple[str, ...]) -> tuple[dict, dict, dict, float]:
    layout = _copy(template, work)
    before = _notes(layout)
    took = _timed(layout, args)
    once = _notes(layout)
    run_cli(layout, *args, process=True)
    return before, once, _notes(layout), took


def _campaign(tmp_path: Path, through_daemon: bool) -> dict[str, int]:
    template = tmp_path / "template" / "vault"
    template.parent.mkdir()
    verbs = _template(template)
    rng = random.Random(25 if through_daemon else 52)
    counts = {"kills": 0, "killed mid-run": 0, "interrupted replies": 0}
    for what, args in verbs.items():
        before, once, twice, took = _references(template, tmp_path / "ref" / "vault", args)
        if through_daemon:  # the window: the verb's time through a daemon, indexing what it wrote included
            layout = _copy(template, tmp_path / "ref" / "vault")
            assert run_cli(layout, "daemon", "start", "--debounce", "0.2", process=True).returncode == 0
            took = _timed(layout, args)
            stop_daemon(layout, daemon_pid(layout))
        for trial in range(DAEMON_KILLS if through_daemon else LOCAL_KILLS):
            layout = _copy(template, tmp_path / "trial" / "vault")
            if through_daemon:
                assert run_cli(layout, "daemon", "start", "--debounce", "0.2", process=True).returncode == 0
                pid = daemon_pid(layout)
                timer = subprocess.Popen(["sh", "-c", f"sleep {rng.uniform(0.0, took):.3f}; kill -9 {pid}"])
                done = run_cli(layout, *args, process=True, timeout=180)
                died = pid_gone(pid)  # before the verb's reply reached its client
                timer.wait(timeout=60)
                with_kill(pid)
                counts["kills"] += 1
                counts["killed mid-run"] += died
                counts["interrupted replies"] += done.returncode == 9
                assert done.returncode in (0, 2, 9), (what, done.returncode, done.stderr)
            else:
                code = _killed(layout, args, rng.uniform(0.0, took))
                counts["kills"] += 1
                counts["killed mid-run"] += code == -signal.SIGKILL
            killed = _notes(layout)
            rerun = run_cli(layout, *args, process=True)
            assert rerun.returncode in (0, 2), (what, trial, rerun.stderr)
            _check(before, once, twice, killed, _notes(layout), f"{what} #{trial}")
            if through_daemon and (pid := _alive(layout)) is not None:
                stop_daemon(layout, pid)
    tally("crash", counts["kills"])
    print(json.dumps({"through_daemon": through_daemon, **counts}))
    return counts


def _alive(layout: Layout) -> int | None:
    try:
        pid = daemon_pid(layout)
    except (OSError, ValueError):
        return None
    return None if pid_gone(pid) else pid


@pytest.mark.reliability_full
def test_every_write_verb_killed_at_random_moments_leaves_whole_notes_and_converges(tmp_path):
    counts = _campaign(tmp_path, through_daemon=False)
    assert counts["kills"] >= 280 and counts["killed mid-run"] >= counts["kills"] * 0.8


@pytest.mark.reliability_full
def test_every_write_verb_with_the_daemon_killed_mid_verb_leaves_whole_notes_and_converges(tmp_path):
    counts = _campaign(tmp_path, through_daemon=True)
    assert counts["kills"] >= 60
