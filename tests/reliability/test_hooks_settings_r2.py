"""`hooks install` and `uninstall` where the settings file's folder cannot be written: one line naming the
file and the reason, the usage/IO exit code, the file left as it was. Run as an unprivileged user (as root
a folder's mode denies nothing)."""

from __future__ import annotations

import json
import os
import shlex

from tests.reliability.conftest import one_line, run_cli


def test_a_settings_folder_that_cannot_be_written_is_one_line(world_layout):
    layout, user = world_layout
    assert run_cli(layout, "init", "--lang", "en", user=user).returncode == 0
    folder = layout.root.parent / "claude"  # the test's own (root's) folder: nobody cannot write in it
    folder.mkdir()
    plain, installed = folder / "plain.json", folder / "installed.json"
    plain.write_text(json.dumps({"model": "opus"}) + "\n", encoding="utf-8")
    ours = shlex.join(["memvault", "--vault", str(layout.root), "hook", "claude-code"])  # as an install left it
    group = {"hooks": [{"type": "command", "command": ours, "timeout": 20}]}
    installed.write_text(json.dumps({"hooks": {"UserPromptSubmit": [group]}}) + "\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in (plain, installed)}
    for path in before:
        os.chmod(path, 0o666)  # the file itself may be written, not its folder (a replace needs that)
    if user is None:
        folder.chmod(0o555)
    try:
        for action, path in (("install", plain), ("uninstall", installed), ("install", folder / "sub" / "s.json")):
            refused = run_cli(layout, "hooks", action, "claude-code", "--settings", str(path), user=user)
            assert refused.returncode == 2 and one_line(refused.stderr), (action, refused)
            assert str(path) in refused.stderr and "Permission denied" in refused.stderr, refused.stderr
            assert "internal error" not in refused.stderr
    finally:
        folder.chmod(0o755)
    assert {p: p.read_bytes() for p in before} == before
