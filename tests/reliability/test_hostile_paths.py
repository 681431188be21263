"""Nothing lost (issue 25), hostile paths: symlinks out of the vault, files that are not regular files,
a `.memvault` that is not a folder, leftover temp files. Every path memvault reads or writes resolves
inside the vault and is a regular file, else one line names it; nothing outside is read or changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memvault.vault.paths import Layout
from tests.reliability.conftest import ask, one_line, running_daemon

SECRET = "# outside\n\n- the outside file's secret line\n"


def _outside(layout: Layout, name: str = "outside.md") -> Path:
    target = layout.root.parent / name
    target.write_text(SECRET, encoding="utf-8")
    return target


def _refused(result, name: str) -> None:
    assert result.returncode != 0, result.stdout
    assert one_line(result.stderr) and name in result.stderr, result.stderr
    assert "secret" not in result.stdout + result.stderr


def _trash_files(layout: Layout) -> list[Path]:
    return [p for p in layout.trash_dir.rglob("*") if p.is_file()] if layout.trash_dir.exists() else []


def test_memory_md_symlinked_out_is_neither_read_nor_copied(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    outside = _outside(layout)
    layout.memory_md.unlink()
    layout.memory_md.symlink_to(outside)
    for args in (("show", "memory"), ("show", "MEMORY.md"), ("remember", "--type", "config", "kept in the vault"),
                 ("rewrite", "memory"), ("sections",)):  # fmt: skip
        _refused(cli(*args, input="- new text\n"), "MEMORY.md")
    assert layout.memory_md.is_symlink() and outside.read_text(encoding="utf-8") == SECRET
    assert _trash_files(layout) == []


def test_memory_md_symlinked_out_is_refused_by_the_socket_and_mcp(layout, cli):
    from mcp.server.mcpserver.exceptions import ToolError

    from memvault.api import Vault
    from memvault.mcp.tools import MemoryTools

    assert cli("init", "--lang", "en").returncode == 0
    layout.memory_md.unlink()
    layout.memory_md.symlink_to(_outside(layout))
    with running_daemon(layout):
        reply = ask(layout, {"op": "get", "path": "memory"})
        assert reply is not None and not reply["ok"], reply
        assert "MEMORY.md" in str(reply) and "secret" not in str(reply)
    vault = Vault(layout.root)
    try:
        with pytest.raises(ToolError) as refused:
            MemoryTools(vault).memory_get("memory")
    finally:
        vault.close()
    assert "MEMORY.md" in str(refused.value) and "secret" not in str(refused.value)


def test_review_md_symlinked_out_is_neither_read_nor_written(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    outside = _outside(layout)
    (layout.root / "REVIEW.md").symlink_to(outside)
    _refused(cli("review"), "REVIEW.md")
    assert outside.read_text(encoding="utf-8") == SECRET


def test_trash_symlinked_out_gets_no_copy(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "--key", "k1", "first version").returncode == 0
    before = layout.memory_md.read_bytes()
    elsewhere = layout.root.parent / "elsewhere"
    elsewhere.mkdir()
    layout.trash_dir.symlink_to(elsewhere)
    _refused(cli("rewrite", "memory", input="- replaced\n"), ".trash")
    _refused(cli("remember", "--type", "config", "--key", "k1", "second version"), ".trash")
    _refused(cli("forget", "--match", "first version"), ".trash")
    assert list(elsewhere.rglob("*")) == [] and layout.memory_md.read_bytes() == before
    assert os.path.islink(layout.trash_dir)
