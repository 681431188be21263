"""Editors that save in place (truncate, then write) and systems without an atomic swap, while memvault
writes the same note: no editor save and no line of the note is lost (issue 43).

Each test makes the race happen at a known moment: an editor process truncates the note and holds it
open while memvault writes, or a rename-style save lands at memvault's first rename. Without the
exchange (macOS, some network and FUSE file systems) or without leases, the paths a laptop takes are
run here by `MEMVAULT_FS_LACKS`, which is how such a file system's refusal is made on Linux.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvault.vault import swap
from memvault.vault.fileio import read_note, update_note
from memvault.vault.memory_file import init_vault
from memvault.vault.paths import Layout
from tests.reliability.conftest import run_cli, wait_for

IN_PLACE = r"""
import sys, time
path, pause = sys.argv[1], float(sys.argv[2])
with open(path, "rb") as fh:
    data = fh.read()
with open(path, "wb") as fh:  # the truncate (which waits while memvault holds a lease on the note)
    print("truncated", flush=True)  # the note is empty from here to the write
    time.sleep(pause)
    fh.write(data + b"- typed in place\n")
"""
ENTRIES = 40


def _seeded(layout: Layout) -> Path:
    init_vault(layout, "en")
    path = layout.memory_md
    path.write_text(path.read_text(encoding="utf-8") + "".join(f"- old fact {i}\n" for i in range(ENTRIES)))
    return path


def _in_place_editor(path: Path, pause: float, truncated: bool = True) -> subprocess.Popen[str]:
    """The editor started; with `truncated`, once it has truncated the note, else once its truncating open
    is under way (waiting on memvault's lease, where the system grants one)."""
    editor = subprocess.Popen([sys.executable, "-c", IN_PLACE, str(path), str(pause)], stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    if truncated:
        assert editor.stdout is not None and editor.stdout.readline().strip() == "truncated"
    else:
        wait_for(lambda: _waits_on_a_lease(editor.pid), 30, 0.005)
    return editor


def _waits_on_a_lease(pid: int) -> bool:
    with open(f"/proc/{pid}/wchan", encoding="ascii") as fh:
        return "break_lease" in fh.read()


def _assert_all_kept(path: Path) -> None:
    text = read_note(path).text
    missing = [i for i in range(ENTRIES) if f"- old fact {i}\n" not in text]
    assert not missing, f"{len(missing)} of {ENTRIES} entries lost: {text!r}"
    assert "- typed in place" in text and "- written by memvault" in text, text


@pytest.mark.parametrize("lacks", ["", "exchange", "lease", "exchange,lease"])
def test_an_in_place_save_started_while_memvault_writes_is_kept(layout, monkeypatch, lacks):
    """The editor opens the note to truncate it after memvault read it and before memvault's version is
    in place, and writes it a moment later. The note must end with every entry, the editor's line and
    memvault's, whatever the system lacks: the editor's write never goes into a version memvault
    displaced (with a lease, its open waits until memvault has put the note back and let go)."""
    monkeypatch.setenv("MEMVAULT_FS_LACKS", lacks)
    path, editors = _seeded(layout), []

    def change(current):
        if not editors:
            leased = "lease" not in lacks
            editors.append(_in_place_editor(path, 0.1, truncated=not leased))
        return current.text + "- written by memvault\n"

    update_note(layout, path, change)
    editors[0].wait(timeout=30)
    _assert_all_kept(path)
    assert not list(path.parent.glob(".MEMORY.md.*"))


def test_a_read_of_the_truncated_note_is_never_trusted(layout, monkeypatch):
    """memvault reads the note while the editor holds it truncated (empty): what it read is not what the
    editor is saving, so it is neither written back with memvault's change nor counted as the note."""
    path = _seeded(layout)
    editor = _in_place_editor(path, 0.4)
    seen = []

    def change(current):
        seen.append(current.text)
        return current.text + "- written by memvault\n"

    update_note(layout, path, change)
    editor.wait(timeout=30)
    _assert_all_kept(path)
    assert "" not in seen and "- typed in place" in seen[-1]


@pytest.mark.parametrize("lacks", ["exchange", "exchange,lease"])
def test_without_the_exchange_a_rename_save_at_memvaults_rename_is_kept(layout, monkeypatch, lacks):
    """Where no atomic swap exists, a rename-style save landing at the moment memvault renames is kept:
    the editor's version is the note afterwards, with memvault's change applied to it again."""
    monkeypatch.setenv("MEMVAULT_FS_LACKS", lacks)
    path = _seeded(layout)
    real_rename, real_replace, saved = os.rename, os.replace, []

    def editor_saves_first(real):
        def renamed(src, dst, *args, **kwargs):
            if not saved and Path(path) in (Path(src), Path(dst)):
                saved.append(True)
                tmp = path.with_name("MEMORY.md.editor~")
                tmp.write_text(read_note(path).text + "- typed in the editor\n", encoding="utf-8")
                real_replace(tmp, path)
            return real(src, dst, *args, **kwargs)

        return renamed

    monkeypatch.setattr(os, "rename", editor_saves_first(real_rename))
    monkeypatch.setattr(os, "replace", editor_saves_first(real_replace))
    update_note(layout, path, lambda current: current.text + "- written by memvault\n")
    monkeypatch.undo()
    text = read_note(path).text
    assert saved and "- typed in the editor" in text and "- written by memvault" in text, text
    assert all(f"- old fact {i}\n" in text for i in range(ENTRIES))


@pytest.mark.parametrize("lacks", ["exchange", "exchange,lease"])
def test_without_the_exchange_a_save_in_the_gap_before_memvaults_link_is_kept(layout, monkeypatch, lacks):
    """The name is absent only between memvault's rename aside and its link: a save creating the note
    there stays, and memvault applies its change again to that version."""
    monkeypatch.setenv("MEMVAULT_FS_LACKS", lacks)
    path = _seeded(layout)
    real_link, saved = os.link, []

    def editor_saves_in_the_gap(src, dst, *args, **kwargs):
        if not saved and Path(dst) == Path(path):
            assert not os.path.lexists(path)
            aside = next(path.parent.glob(".MEMORY.md.*.aside"))
            saved.append(True)
            path.write_text(aside.read_text(encoding="utf-8") + "- typed in the gap\n", encoding="utf-8")
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", editor_saves_in_the_gap)
    update_note(layout, path, lambda current: current.text + "- written by memvault\n")
    monkeypatch.undo()
    text = read_note(path).text
    assert saved and "- typed in the gap" in text and "- written by memvault" in text, text
    assert all(f"- old fact {i}\n" in text for i in range(ENTRIES))
    assert not list(path.parent.glob(".MEMORY.md.*"))


def test_a_write_killed_with_the_note_aside_is_put_back_by_the_next(layout):
    """Without the exchange, the note is renamed aside for a moment; a writer killed right then leaves it
    there, and the next write puts it back before writing: nothing of the note is lost."""
    path = _seeded(layout)
    before = path.read_bytes()
    env = {"MEMVAULT_FS_LACKS": "exchange"}
    killed = run_cli(layout, "remember", "first fact", "--section", "Facts", process=True,
                     env={**env, "MEMVAULT_CRASH_AT": "note-aside"})  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    assert not path.exists() and len(list(path.parent.glob(".MEMORY.md.*.aside"))) == 1
    done = run_cli(layout, "remember", "second fact", "--section", "Facts", process=True, env=env)
    assert done.returncode == 0, done.stderr
    text = path.read_bytes()
    assert text.startswith(before.split(b"\n- old fact 0")[0]) and b"second fact" in text
    assert all(f"- old fact {i}\n".encode() in text for i in range(ENTRIES))
    assert not list(path.parent.glob(".MEMORY.md.*"))


def test_a_program_holding_the_note_open_for_writing_is_waited_for_then_refused_in_one_line(layout, monkeypatch):
    """A program that keeps the note open for writing (no save ever ends) is never written under: the
    write is refused, with the reason, and the note is as the program holds it."""
    monkeypatch.setattr(swap, "HOLD_WAIT", 0.3)
    path = _seeded(layout)
    before = path.read_bytes()
    with open(path, "ab"):
        done = run_cli(layout, "remember", "a fact", "--section", "Facts")
    assert done.returncode != 0 and "held open for writing" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before
