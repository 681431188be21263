"""A person's editor saving a note while memvault writes it: memvault never writes over a version it
did not read. Its change is applied again to what the editor saved, so neither side loses a line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from memvault.vault.fileio import read_note, update_note
from memvault.vault.memory_file import init_vault
from memvault.vault.saving import NewEntry, save_batch
from tests.reliability.conftest import tally

EDITOR = """
import os, sys, time
path, stop, saves = sys.argv[1], sys.argv[2], 0
while not os.path.exists(stop):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    head, sep, rest = text.partition("\\n\\n")
    tmp = path + ".editor~"
    with open(tmp, "w", encoding="utf-8") as fh:  # an editor's save: a new file renamed over the note
        fh.write(f"{head}{sep}<!-- editor save {saves} -->\\n{rest}")
    os.replace(tmp, path)
    saves += 1
    time.sleep(0.005)
print(saves)
"""


def _editor_saves(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".editor~")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def test_an_editor_save_between_read_and_write_is_kept_and_the_change_applied_to_it(layout):
    init_vault(layout, "en")
    path, calls = layout.memory_md, []

    def change(current):
        calls.append(current.text)
        if len(calls) == 1:  # the person saves while memvault holds the old version
            _editor_saves(path, current.text + "- typed in the editor\n")
        return current.text + "- written by memvault\n"

    update_note(layout, path, change)
    text = read_note(path).text
    assert "- typed in the editor" in text and "- written by memvault" in text
    assert len(calls) == 2 and "typed in the editor" in calls[1]


def test_a_batch_save_meanwhile_an_editor_save_keeps_both(layout):
    init_vault(layout, "en")
    path, saved = layout.memory_md, []

    def on_add(body, added):
        if not saved:
            saved.append(True)
            text = read_note(path).text
            _editor_saves(path, text.replace("## User Preferences\n", "## User Preferences\n\n- by hand\n"))
        return body

    done = save_batch(layout, path, [NewEntry("imported fact", "Imported")], "- ", lambda: "", on_add=on_add)
    text = read_note(path).text
    assert done.statuses == ["added"] and "- by hand" in text and "imported fact" in text


def test_no_editor_save_is_lost_under_a_stream_of_memvault_writes(layout, cli, tmp_path):
    """An editor saving MEMORY.md every few milliseconds, by temp file and rename, while memvault
    remembers and forgets by key: every editor save stays (each one's marker is there). The editor's own
    saves may drop memvault's entries (it saves what it read, as a person's editor does), so a forget may
    find nothing; a write refused because the note kept changing is one line, never a lost save."""
    assert cli("init", "--lang", "en").returncode == 0
    stop = tmp_path / "stop"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(layout.memory_md), str(stop)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        time.sleep(0.1)
        for i in range(12):
            done = [cli("remember", f"fact number {i}", "--section", "Facts", "--key", f"fact-{i % 4}")]
            if i % 4 == 3:
                done.append(cli("forget", f"fact-{i % 4}"))
            for run in done:
                assert run.returncode == 0 or "chang" in run.stderr or "no entry" in run.stderr, run.stderr
    finally:
        stop.touch()
        saves = int(editor.communicate(timeout=60)[0])
    text = layout.memory_md.read_text(encoding="utf-8")
    lost = [n for n in range(saves) if f"<!-- editor save {n} -->" not in text]
    tally("editor saves under memvault writes", saves)
    assert saves > 20 and not lost, f"{len(lost)} of {saves} editor saves lost: {lost[:10]}"


def test_a_new_note_on_a_file_system_without_hard_links(layout, monkeypatch):
    """Where hard links are refused (FAT, some network shares; a fault made here by refusing them), a new
    note is still written, and one that appeared meanwhile is still never written over."""
    import errno as errnos

    from memvault.vault import fileio

    def no_links(src, dst):
        raise OSError(errnos.EPERM, "Operation not permitted")

    monkeypatch.setattr(fileio.os, "link", no_links)
    path = layout.root / "daily" / "2026-01-02.md"
    path.parent.mkdir(parents=True)
    fileio.atomic_write(path, b"# new\n", fileio.ABSENT)
    assert path.read_bytes() == b"# new\n"
    try:
        fileio.atomic_write(path, b"# again\n", fileio.ABSENT)
        raise AssertionError("wrote over a note that exists")
    except fileio.ChangedMeanwhile:
        pass
    assert path.read_bytes() == b"# new\n" and not list(path.parent.glob(".*.tmp"))
