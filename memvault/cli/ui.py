"""The CLI command `ui`: the memory panel in a browser (`memvault.web`), for this vault and the user's."""

from __future__ import annotations

import argparse
import sys

from memvault.api import Vault
from memvault.cli.common import Add, vault_there


def cmd_ui(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.scopes import Scopes
    from memvault.web.app import serve

    vault_there(vault.root)

    def ready(url: str) -> None:
        print(f"memvault panel for {vault.root}: open {url}", flush=True)
        print("(it listens on 127.0.0.1 only; Ctrl-C stops it)", file=sys.stderr, flush=True)

    with Scopes(vault) as scopes:
        serve(scopes, args.port, ready)
    return 0


def add_commands(add: Add) -> None:
    p = add("ui", cmd_ui, "the memory panel: see, edit and forget entries, and what a prompt is given, in a browser")
    p.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one)")
