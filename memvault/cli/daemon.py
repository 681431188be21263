"""The CLI commands of the background indexer and the agents' door: `daemon`, `status`, `mcp`."""

from __future__ import annotations

import argparse
import json
import sys

from memvault.api import Vault
from memvault.cli.common import Add

STATUS_KEYS = ("vault", "files_on_disk", "files_indexed", "files_pending", "files_failed", "chunks", "embedder",
               "store", "index_bytes", "last_reconcile")  # fmt: skip


DAEMON_IDLE_S = 120.0  # `mcp --daemon-idle`: how long a daemon a session started outlives the last holder


def cmd_status(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.entries import Overview

    status = vault.status()
    memory = vault.run(Overview()).to_json()
    if args.json:
        print(json.dumps({**status, "memory": memory}, ensure_ascii=False))
        return 0
    for key in STATUS_KEYS:
        print(f"{key:<15} {status[key]}")
    vectors = status.get("vectors") or {}
    if vectors:
        left = f"; {vectors['rate_per_s']} chunks/s, {vectors['eta_s']} s left" if vectors.get("rate_per_s") else ""
        print(f"{'vectors':<15} {vectors['embedded']} of {vectors['total']} embedded{left}")
    for failure in status["failures"]:
        print(f"failed          {failure['reason']}")
    m = memory
    print(f"{'entries':<15} {m['current']} current ({m['keyed']} keyed), {m['superseded']} superseded; "
          f"{m['summaries']} conversation summaries; {m['review']} proposals to review")  # fmt: skip
    print(f"{'stable block':<15} {m['stable_entries']} entries, {m['stable_chars']} characters in every prompt")
    print(f"{'recalled':<15} {m['recalled']} entries, {m['recalls']} times, by searches the daemon served")
    return 0


def cmd_mcp(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.mcp.server import serve

    serve(vault, args.daemon_idle)
    return 0


def _run(args: argparse.Namespace, vault: Vault) -> int:
    import logging

    from memvault.daemon import server
    from memvault.indexer.config import IndexConfig
    from memvault.vault.config import load_settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    settings = load_settings(vault.root, embedder=args.embedder, qdrant_url=getattr(args, "qdrant_url", None),
                             tokenizer=args.tokenizer, debounce=args.debounce, rescan=args.rescan)  # fmt: skip
    server.run(vault.layout, IndexConfig.from_settings(settings), settings.debounce, settings.rescan, args.idle_exit)
    return 0


def cmd_daemon(args: argparse.Namespace, vault: Vault) -> int:
    if args.action == "run":
        return _run(args, vault)
    if args.action == "start":
        extra = ["--debounce", str(args.debounce)] if args.debounce is not None else []
        extra += ["--rescan", str(args.rescan)] if args.rescan is not None else []
        extra += ["--idle-exit", str(args.idle_exit)] if args.idle_exit is not None else []
        extra += ["--embedder", args.embedder] if args.embedder else []
        extra += ["--tokenizer", args.tokenizer] if args.tokenizer else []
        extra += ["--qdrant-url", args.qdrant_url] if getattr(args, "qdrant_url", None) else []
        print(f"daemon started (pid {vault.start_daemon(extra)}) for {vault.root}")
        return 0
    if args.action == "stop":
        pid = vault.stop_daemon()
        print(f"daemon stopped (pid {pid})" if pid else "no daemon running")
        return 0
    if args.action == "install-service":
        path, how = vault.install_service()
        print(f"wrote {path}\nenable it with: {how}")
        return 0
    status = vault.daemon_status()
    if args.json:
        print(json.dumps(status, ensure_ascii=False))
    else:
        for key, value in status.items():
            if key != "failures":
                print(f"{key:<20} {value}")
    return 0 if status["running"] else 3


def add_commands(add: Add) -> None:
    mcp = add("mcp", cmd_mcp, "serve the vault to an agent over MCP (stdio); starts the daemon when none runs")
    mcp.add_argument("--daemon-idle", type=float, default=DAEMON_IDLE_S, metavar="SECONDS",
                     help="a daemon this session starts stops this long after no session holds it and no "
                          "request came (default %(default)g)")  # fmt: skip

    p = add("daemon", cmd_daemon, "the background indexer: run | start | stop | status | install-service")
    p.add_argument("action", choices=["run", "start", "stop", "status", "install-service"])
    p.add_argument("--debounce", type=float, help="seconds a path must be quiet before indexing (default 1.5)")
    p.add_argument("--rescan", type=float, help="seconds between full reconcile scans (default 300)")
    p.add_argument(
        "--idle-exit",
        type=float,
        metavar="SECONDS",
        help="stop after this long with no request and no client holding it (as an MCP session does)",
    )
    p.add_argument("--embedder", help="embedding model for the index it owns")
    p.add_argument("--tokenizer", help="BM25 tokenizer for the index it owns")
    p.add_argument("--qdrant-url", default=argparse.SUPPRESS, metavar="URL",
                   help="a Qdrant server instead of the embedded store")
    p.add_argument("--json", action="store_true")

    p = add("status", cmd_status, "files on disk against what is indexed")
    p.add_argument("--json", action="store_true")
