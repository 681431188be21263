"""A vault that cannot be written: a save is refused in one line naming the note (or the vault, when its
lock cannot be made) and why, exit code 4 as for a note that cannot be read; never an internal error
naming a temp file. Run as an unprivileged user (as root a folder's mode denies nothing)."""

from __future__ import annotations

import datetime as dt
import shutil

from tests.reliability.conftest import one_line, run_cli


def test_a_note_whose_folder_cannot_be_written_is_one_line_naming_it(world_layout):
    layout, user = world_layout
    assert run_cli(layout, "init", "--lang", "en", user=user).returncode == 0
    assert run_cli(layout, "note", "first", user=user).returncode == 0
    today = layout.daily_note(dt.date.today())
    before = today.read_bytes()
    (layout.root / "daily").chmod(0o555)
    try:
        refused = run_cli(layout, "note", "second", user=user)
    finally:
        (layout.root / "daily").chmod(0o755)
    assert refused.returncode == 4 and one_line(refused.stderr), refused
    assert f"daily/{today.name}" in refused.stderr and "cannot be written" in refused.stderr, refused.stderr
    assert "Permission denied" in refused.stderr and ".tmp" not in refused.stderr
    assert today.read_bytes() == before and sorted(p.name for p in today.parent.iterdir()) == [today.name]


def test_a_vault_whose_lock_cannot_be_made_is_one_line_naming_it(world_layout):
    layout, user = world_layout
    assert run_cli(layout, "init", "--lang", "en", user=user).returncode == 0
    before = layout.memory_md.read_bytes()
    shutil.rmtree(layout.state_dir, ignore_errors=True)  # derived data: its folder (and the lock) made again
    folders = [layout.root, layout.root / "daily"]
    for folder in folders:
        folder.chmod(0o555)
    try:
        refused = run_cli(layout, "remember", "--section", "Team", "Ana owns billing", user=user)
        index = run_cli(layout, "index", user=user)
    finally:
        for folder in folders:
            folder.chmod(0o755)
    assert refused.returncode == 4 and one_line(refused.stderr), refused
    assert str(layout.root) in refused.stderr and "cannot be written" in refused.stderr, refused.stderr
    assert "internal error" not in refused.stderr and layout.memory_md.read_bytes() == before
    assert index.returncode == 4 and one_line(index.stderr) and str(layout.root) in index.stderr, index
