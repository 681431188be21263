from __future__ import annotations

import os

from tests.conftest import run_main


def test_vault_resolution_order(tmp_path, cli):
    flag, env_dir, cwd = tmp_path / "flag", tmp_path / "env", tmp_path / "cwd"
    cwd.mkdir()
    assert cli("init", env={"MEMVAULT_VAULT": str(env_dir)}).returncode == 0
    assert (env_dir / "MEMORY.md").exists()
    assert cli("--vault", str(flag), "init", env={"MEMVAULT_VAULT": str(env_dir)}).returncode == 0
    assert (flag / "MEMORY.md").exists()
    assert cli("init", "--vault", str(flag / "after")).returncode == 0  # after the verb too
    assert (flag / "after" / "MEMORY.md").exists()
    env = {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}
    result = run_main(["init"], env, cwd, None, 60)
    assert result.returncode == 0, result.stderr
    assert (cwd / "memory" / "MEMORY.md").exists()


def test_errors_are_one_line_without_traceback_unless_debug(layout, cli):
    result = cli("show", "../x.md")
    assert result.returncode == 2
    assert result.stderr.startswith("memvault: error: ../x.md:") and result.stderr.count("\n") == 1
    debug = cli("--debug", "show", "../x.md")
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_note_without_text_or_stdin(layout, cli):
    result = cli("note", input="")
    assert result.returncode != 0 and "empty entry" in result.stderr


def test_show_memory_and_sections_before_init(layout, cli):
    result = cli("show", "memory")
    assert result.returncode == 4 and "MEMORY.md: no such note" not in result.stdout
    assert "no such note" in result.stderr
    assert cli("sections").returncode == 1
