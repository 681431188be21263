"""The CLI command `ui`: the memory panel in a browser (`memvault.web`), for this vault and the user's."""

from __future__ import annotations

import argparse
import signal
import sys

from memvault.api import Vault
from memvault.cli.common import Add, vault_there


def cmd_ui(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.scopes import Scopes
    from memvault.web.running import forget_record, record, running_url

    vault_there(vault.root)
    serving = None if args.port or args.new else running_url(vault.layout)
    if serving is not None:  # one panel per vault: the one running already is opened again
        print(f"memvault panel for {vault.root}: open {serving}", flush=True)
        print("(a panel already serves this vault; --new starts another)", file=sys.stderr, flush=True)
        return 0

    from memvault.web.app import serve  # Starlette, Uvicorn and Jinja: only when a panel starts

    def ready(url: str) -> None:
        record(vault.layout, url)
        print(f"memvault panel for {vault.root}: open {url}", flush=True)
        print("(it listens on 127.0.0.1 only; Ctrl-C stops it)", file=sys.stderr, flush=True)

    # Uvicorn stops on SIGTERM, then raises it again under the handler found: this one, so the record
    # below is removed (the default handler would end the process before any `finally`)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        with Scopes(vault) as scopes:
            serve(scopes, args.port, ready)
    finally:
        forget_record(vault.layout)
    return 0


def add_commands(add: Add) -> None:
    p = add("ui", cmd_ui, "the memory panel: see, edit and forget entries, and what a prompt is given, in a browser")
    p.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one)")
    p.add_argument("--new", action="store_true", help="start a panel even when one already serves this vault")
