"""One install serves every project (issue 47): with no vault named, a command, the hooks and the MCP
server use the project vault of their folder (a hook: of its session's `cwd`), found as git finds a
repository: `memory/` here, at the repository's root, or at a worktree's main repository. Real git
repositories and worktrees; the hook run as Claude Code runs it, with recorded payloads."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from memvault.hooks.settings import EVENTS
from memvault.vault.places import main_repository_root, project_vault
from tests.conftest import run_main
from tests.reliability.conftest import HASH_ENV

NO_VAULT = {**HASH_ENV, "MEMVAULT_VAULT": ""}  # none named: the folder decides


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})  # fmt: skip


def _repo(path: Path, fact: str | None) -> Path:
    """A git repository with a commit, its vault holding `fact` (None: no vault)."""
    (path / "src").mkdir(parents=True)
    (path / "src" / "app.py").write_text("print('hi')\n")
    _git("init", "-q", "-b", "main", cwd=path)
    _git("add", ".", cwd=path)
    _git("commit", "-q", "-m", "first", cwd=path)
    if fact is not None:
        (path / "memory").mkdir()
        (path / "memory" / "MEMORY.md").write_text(f"# Memory\n\n## Preferences\n\n- {fact}\n")
    return path


def _cli(*args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None):
    import os

    return run_main(args, {**os.environ, **NO_VAULT, **(env or {})}, cwd, input, 120)


def _hook(event: str, cwd: Path, runs_in: Path, **extra: str):
    payload = {"session_id": "s1", "transcript_path": str(runs_in / "none.jsonl"), "cwd": str(cwd),
               "hook_event_name": event, **extra}  # fmt: skip
    return _cli("hook", "claude-code", cwd=runs_in, input=json.dumps(payload))


def test_a_subfolder_a_worktree_and_a_folder_without_a_vault(tmp_path: Path) -> None:
    main = _repo(tmp_path / "shop", "Uses Postgres 16")
    assert project_vault(str(main / "src")) == str(main / "memory")  # from a subfolder: the repository's
    _git("worktree", "add", "-q", "-b", "feature", str(tmp_path / "shop-feature"), cwd=main)
    feature = tmp_path / "shop-feature"
    assert main_repository_root(str(feature)) == str(main.resolve())
    assert project_vault(str(feature / "src")) == str(main / "memory")  # no vault of its own: the main one's
    (feature / "memory").mkdir()
    (feature / "memory" / "MEMORY.md").write_text("# Memory\n")
    assert project_vault(str(feature / "src")) == str(feature / "memory")  # its branch carries one: that one
    bare = _repo(tmp_path / "other", None)
    assert project_vault(str(bare / "src")) == str(bare / "memory")  # none: where `init` makes it
    assert main_repository_root(str(tmp_path)) == str(tmp_path)  # no repository at all


def test_one_hook_command_serves_each_sessions_project(tmp_path: Path, user_root: Path) -> None:
    shop = _repo(tmp_path / "shop", "Shop prefers tabs over spaces")
    blog = _repo(tmp_path / "blog", "Blog prefers British spelling")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for repo, fact, other in ((shop, "tabs over spaces", "British"), (blog, "British spelling", "tabs")):
        start = _hook("SessionStart", repo / "src", runs_in=elsewhere, source="startup")
        assert start.returncode == 0, start.stderr
        given = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
        assert fact in given and other not in given
    _git("worktree", "add", "-q", "-b", "feature", str(tmp_path / "shop-feature"), cwd=shop)
    in_worktree = _hook("SessionStart", tmp_path / "shop-feature" / "src", runs_in=elsewhere, source="startup")
    assert "tabs over spaces" in json.loads(in_worktree.stdout)["hookSpecificOutput"]["additionalContext"]
    _cli("daemon", "stop", cwd=shop)
    _cli("daemon", "stop", cwd=blog)
    bare = _repo(tmp_path / "scratch", None)
    assert _hook("SessionStart", bare, runs_in=elsewhere, source="startup").stdout == ""  # nothing to read
    _cli("--vault", str(user_root), "init", "--lang", "en", cwd=elsewhere)
    _cli("--vault", str(user_root), "remember", "Likes short answers", "--section", "Preferences", cwd=elsewhere)
    start = _hook("SessionStart", bare, runs_in=elsewhere, source="startup")
    assert "Likes short answers" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    _cli("--vault", str(user_root), "daemon", "stop", cwd=elsewhere)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    ended = _hook("SessionEnd", bare, runs_in=elsewhere, transcript_path=str(transcript), reason="exit")
    assert ended.returncode == 0 and not (bare / "memory").exists()  # a project without a vault gets none


@pytest.mark.parametrize("where", ["--project", "--settings"])
def test_install_without_a_vault_writes_the_following_command_and_uninstall_restores(tmp_path: Path,
                                                                                      where: str) -> None:  # fmt: skip
    repo = _repo(tmp_path / "shop", "Shop prefers tabs over spaces")
    settings = repo / ".claude" / "settings.json" if where == "--project" else tmp_path / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text('{\n  "model": "opus"\n}\n')
    before = settings.read_bytes()
    args = ["--project"] if where == "--project" else ["--settings", str(settings)]
    done = _cli("hooks", "install", "claude-code", *args, cwd=repo / "src")
    assert done.returncode == 0, done.stderr
    commands = [h["command"] for groups in json.loads(settings.read_text())["hooks"].values() for g in groups
                for h in g["hooks"]]  # fmt: skip
    assert len(commands) == len(EVENTS) and all("--vault" not in shlex.split(c) for c in commands)  # no path pinned
    assert _cli("hooks", "install", "claude-code", *args, cwd=repo).stdout.startswith("already installed")
    gone = _cli("hooks", "uninstall", "claude-code", *args, cwd=repo)
    assert gone.returncode == 0 and settings.read_bytes() == before, gone.stdout
    mcp = _cli("hooks", "mcp-config", "claude-code", cwd=repo)
    assert mcp.returncode == 0 and "--vault" not in mcp.stdout and mcp.stdout.rstrip().endswith(" mcp")
