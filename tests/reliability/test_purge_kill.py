"""`forget --purge` killed at any of its file writes (after each fsync and each rename memvault makes),
then run again: once it says it is done, no file under the vault holds a byte of the text, the
manifest's free pages, its WAL, the catalog, the trash, the state folder and leftover temp files
included; and it says "none left" only after looking.

A kill at an exact fsync or rename cannot be timed from outside and the file writes have no named
crash points, so the CLI runs under a wrapper that counts those calls and SIGKILLs its own process
right after the N-th (the injected fault); everything else is the real console code."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memvault.vault.paths import Layout
from tests.reliability.conftest import HASH_ENV, run_cli, tally

SECRET = "quokka7731zebra"
KILLER = """
import os, signal, sys
after, seen = int(os.environ.get("KILL_AFTER") or 0), []
def counted(name, call):
    def run(*args, **kwargs):
        result = call(*args, **kwargs)
        seen.append(name)
        if len(seen) == after:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return run
for name in ("fsync", "replace", "rename", "link"):
    setattr(os, name, counted(name, getattr(os, name)))
from memvault.cli import main
try:
    code = main(sys.argv[1:])
finally:
    if os.environ.get("KILL_COUNT"):
        open(os.environ["KILL_COUNT"], "w").write(" ".join(seen))
sys.exit(code)
"""


def _holding(root: Path) -> list[str]:
    """Every file under the vault whose bytes hold the text."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and SECRET.encode() in p.read_bytes())  # fmt: skip


@pytest.fixture
def planted(layout: Layout) -> Layout:
    """A vault where the text is in a note, an older version in the trash, a whole-note backup, another
    day's summary and the catalog, and the index."""
    mv = lambda *args, **kw: run_cli(layout, *args, **kw)  # noqa: E731
    assert mv("init", "--lang", "en").returncode == 0
    assert mv("remember", "--type", "config", "--key", "door", "Door code was 1111 quokka").returncode == 0
    assert mv("remember", "--type", "config", "--key", "door", f"Door code for the lab is {SECRET}").returncode == 0
    assert mv("remember", "--type", "config", "The lab opens at nine").returncode == 0
    memory = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert mv("rewrite", "memory", input=memory + "\nA line added by hand.\n").returncode == 0
    summary = f"met Ana; Door code for the lab is {SECRET}; fixed the sink"
    assert mv("summary", "2026-01-05", summary).returncode == 0
    assert mv("index").returncode == 0
    assert {"MEMORY.md", "catalog/2026.tsv", "daily/2026-01-05.md"} <= set(_holding(layout.root))
    return layout


def _purge(root: Path, kill_after: int = 0, count: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **HASH_ENV, "MEMVAULT_VAULT": str(root), "KILL_AFTER": str(kill_after),
           "KILL_COUNT": str(count or "")}  # fmt: skip
    env.pop("MEMVAULT_CRASH_AT", None)
    return subprocess.run([sys.executable, "-c", KILLER, "forget", "door", "--purge"], env=env, cwd="/",
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _writes(planted: Layout, tmp_path: Path) -> int:
    """How many fsyncs and renames a purge of this vault makes, counted on a copy."""
    copy, count = tmp_path / "counted", tmp_path / "count"
    shutil.copytree(planted.root, copy)
    assert _purge(copy, count=count).returncode == 0
    assert _holding(copy) == []
    return len(count.read_text().split())


def _killed_then_finished(planted: Layout, tmp_path: Path, at: int) -> None:
    vault = tmp_path / f"killed-{at}"
    shutil.copytree(planted.root, vault)
    killed = _purge(vault, kill_after=at)
    assert killed.returncode == -signal.SIGKILL, (at, killed.stderr)
    again = run_cli(Layout(vault.resolve()), "forget", "door", "--purge")
    assert again.returncode == 0, (at, again.stderr)
    assert "none left" in again.stdout
    assert _holding(vault) == [], at
    assert "The lab opens at nine" in (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert "met Ana; fixed the sink" in (vault / "catalog" / "2026.tsv").read_text(encoding="utf-8")


def test_a_purge_killed_at_its_writes_leaves_no_byte_once_finished(planted, tmp_path):
    """Three kills: after the mark's temp file is synced (before its rename), mid-way (a day's summary
    and the catalog) and near the end (the index)."""
    writes = _writes(planted, tmp_path)
    assert writes >= 12
    for at in (1, (writes * 3 + 4) // 5, writes - 2):
        _killed_then_finished(planted, tmp_path, at)
    tally("crash", 3)


@pytest.mark.reliability_full
def test_a_purge_killed_at_each_of_its_writes_leaves_no_byte_once_finished(planted, tmp_path):
    writes = _writes(planted, tmp_path)
    for at in range(1, writes + 1):
        _killed_then_finished(planted, tmp_path, at)
    tally("crash", writes)


def test_a_purge_says_none_left_only_when_no_file_holds_the_text(planted, tmp_path):
    """A temp file of a save still running (its process alive) holds the text: memvault may not move
    it, so the purge says where the text still is instead of "none left", and the next purge, once
    that process is gone, finishes."""
    writer = subprocess.Popen(["sleep", "600"])
    try:
        leftover = planted.root / f".MEMORY.md.{writer.pid}.tmp"
        leftover.write_bytes((planted.root / "MEMORY.md").read_bytes())
        first = run_cli(planted, "forget", "door", "--purge")
        assert first.returncode != 0 and "none left" not in first.stdout, first.stdout
        assert first.stderr.count("\n") == 1 and leftover.name in first.stderr, first.stderr
        assert SECRET not in (planted.root / "MEMORY.md").read_text(encoding="utf-8")
    finally:
        writer.kill()
        writer.wait()
    again = run_cli(planted, "forget", "door", "--purge")
    assert again.returncode == 0 and "none left" in again.stdout, again.stderr
    assert _holding(planted.root) == []


def test_a_purge_names_the_copies_its_rules_leave_and_finishes(layout):
    """A longer entry that tells the text is another entry: its copy in the trash stays, and the purge,
    done, says where it is (a person's to remove) instead of leaving it unsaid."""
    mv = lambda *args, **kw: run_cli(layout, *args, **kw)  # noqa: E731
    assert mv("init", "--lang", "en").returncode == 0
    assert mv("remember", "--type", "config", f"Door code for the lab is {SECRET}, Sam has a key").returncode == 0
    assert mv("forget", "--match", "Sam has a key").returncode == 0  # into the trash
    assert mv("remember", "--type", "config", "--key", "door", f"Door code for the lab is {SECRET}").returncode == 0
    purged = mv("forget", "door", "--purge")
    assert purged.returncode == 0 and "none left" in purged.stdout, purged.stderr
    (kept,) = [p for p in _holding(layout.root)]
    assert kept.startswith(".trash/entries/") and kept in purged.stderr, purged.stderr
    assert not (layout.root / ".memvault" / "purging.json").exists()
