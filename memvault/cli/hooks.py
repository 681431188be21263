"""The CLI commands of the automatic loop: `hook` (what a host runs on each event) and `hooks`
(install, uninstall, mcp-config); the work is in `memvault.hooks`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.api import Vault
from memvault.cli.common import Add, vault_there
from memvault.vault.errors import UsageError
from memvault.vault.paths import Layout
from memvault.vault.places import ENV_VAR, env, repository_root, user_root

if TYPE_CHECKING:
    from memvault.hooks.settings import Changed

HOOK_FAILED = 1  # Claude Code shows a hook's stderr and goes on; 2 would block the user's prompt


def cmd_hook(args: argparse.Namespace, vault: Vault) -> int:
    """Never in the agent's way: whatever goes wrong is one line on stderr and exit 1, which the host
    shows and passes by (a memvault usage error's exit 2 would block the prompt)."""
    from memvault.hooks.claude_code import payload_of, session_root
    from memvault.verbs.context import DEFAULT_BUDGET

    if args.host == "codex":
        from memvault.hooks.codex import handle
    elif args.host == "cursor":
        from memvault.hooks.cursor import handle
    else:
        from memvault.hooks.claude_code import handle

    try:
        payload = payload_of(sys.stdin.read())
        if args.host == "cursor":
            from memvault.hooks.cursor import normalized

            payload = normalized(payload)
        if getattr(args, "vault", None) or env(ENV_VAR):  # a vault named: that one, whatever the session's folder
            answer = handle(_existing(vault), payload, args.budget or DEFAULT_BUDGET)
        elif (root := session_root(payload)) is None:
            answer = None  # no vault for this session's project, and nothing to read: nothing is made
        else:
            with Vault(root) as followed:
                answer = handle(followed, payload, args.budget or DEFAULT_BUDGET)
    except Exception as exc:  # a hook must not fail the host's turn, whatever went wrong
        print(f"memvault: hook: {exc}", file=sys.stderr)
        return HOOK_FAILED
    if answer is not None:
        print(json.dumps(answer, ensure_ascii=False))
    return 0


def _existing(vault: Vault) -> Vault:
    vault_there(vault.layout.root)
    return vault


def cmd_hooks(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.hooks import settings
    from memvault.hooks.mcp_config import mcp_config

    # no vault named: the hooks and the MCP server follow each session's project (`vault_root` from its
    # folder), and what install did is kept in the user vault's state
    follow = not (getattr(args, "vault", None) or env(ENV_VAR))
    if args.action == "mcp-config":
        sys.stdout.write(mcp_config(None if follow else _existing(vault).layout, args.host))
        return 0
    host = settings.HOSTS.get(args.host)
    if host is None:
        raise UsageError(f"{args.host!r}: hooks are for {' and '.join(settings.HOSTS)} (use `hooks mcp-config "
                         f"{args.host}` for MCP)")  # fmt: skip
    path = settings.settings_path(Path(repository_root(os.getcwd())) if args.project else None, args.settings, host)
    layout = Layout(Path(user_root())) if follow else vault.layout
    if args.action == "install":
        done = settings.install(layout if follow else _existing(vault).layout, path, args.budget, follow, host)
        if not (done.added or done.updated):
            print(f"already installed in {path}")
            return 0
        did = " and ".join(f"{what} {n} hooks" for what, n in (("added", done.added), ("updated", done.updated)) if n)
        print(f"{did} {'to' if done.added else 'in'} {path}{_kept(done)}")
        return 0
    done = settings.uninstall(layout, path, follow, host)
    if not (done.removed or done.restored):
        print(f"no memvault hooks in {path}")
        return 0
    back = ": it is as it was before install" if done.restored else ""
    print(f"removed {done.removed} hooks from {path}{back}{_kept(done)}")
    return 0


def _kept(done: Changed) -> str:
    return f" (the version before is kept in {done.kept})" if done.kept else ""


def add_commands(add: Add) -> None:
    p = add("hook", cmd_hook, "answer one hook event of an agent's host (its JSON payload on stdin)")
    p.add_argument("host", choices=["claude-code", "codex", "cursor"])
    p.add_argument("--budget", type=int, help="characters of memory blocks (default 4000)")

    p = add("hooks", cmd_hooks, "add memvault's hooks to an agent's host settings, take them out, or print "
            "its MCP set-up")  # fmt: skip
    p.add_argument("action", choices=["install", "uninstall", "mcp-config"])
    p.add_argument("host", help="claude-code, codex or cursor")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--project", action="store_true",
                       help="this repository's .claude/settings.json (.codex/hooks.json, .cursor/hooks.json), at "
                       "its root (the folder holding .git)")  # fmt: skip
    where.add_argument("--settings", type=Path,
                       help="this settings file (default ~/.claude/settings.json, ~/.codex/hooks.json or "
                       "~/.cursor/hooks.json)")  # fmt: skip
    p.add_argument("--budget", type=int, help="characters of memory blocks the hooks give (default 4000)")
