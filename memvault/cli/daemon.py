"""The CLI commands of the background indexer and the agents' door: `daemon`, `status`, `mcp`."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any

from memvault.api import Vault
from memvault.cli.common import Add

STATUS_KEYS = ("vault", "files_on_disk", "files_indexed", "files_pending", "files_failed", "chunks", "embedder",
               "store", "index_bytes", "last_reconcile")  # fmt: skip


DAEMON_IDLE_S = 120.0  # `mcp --daemon-idle`: how long a daemon a session started outlives the last holder


def cmd_status(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.scopes import Scopes
    from memvault.verbs.entries import Overview

    status = vault.status()
    with Scopes(vault) as scopes:  # both scopes, as the MCP tool shows them
        memory = {name: v.run(Overview()).to_json() for name, v in scopes.read("all")}
    if args.json:
        print(json.dumps({**status, "memory": memory}, ensure_ascii=False))
        return 0
    for key in STATUS_KEYS:
        print(f"{key:<15} {status[key]}")
    vectors = status.get("vectors") or {}
    if vectors:
        left = f"; {vectors['rate_per_s']} chunks/s, {vectors['eta_s']} s left" if vectors.get("rate_per_s") else ""
        print(f"{'vectors':<15} {vectors['embedded']} of {vectors['total']} embedded{left}")
    cache = status.get("embedding_cache") or {}
    if cache:
        print(f"{'embed cache':<15} {cache['vectors']} vectors, {cache['bytes']:,} bytes (memvault cache clear)")
    for failure in status["failures"]:
        print(f"failed          {failure['reason']}")
    for name, m in memory.items():
        at = f"[{name}] "
        latest = f" (the latest {m['latest_summary_chars']} characters)" if m["summaries"] else ""
        print(f"{'entries':<15} {at}{m['current']} current ({m['keyed']} keyed), {m['superseded']} superseded; "
              f"{m['summaries']} conversation summaries{latest}; {m['review']} proposals to review")  # fmt: skip
        print(f"{'stable block':<15} {at}{m['stable_entries']} entries, {m['stable_chars']} characters in every prompt")
        print(f"{'recalled':<15} {at}{m['recalled']} entries, {m['recalls']} times, by searches the daemon served")
        last = f", the last at {m['last_recall_error_at']}: {m['last_recall_error']}" if m["recall_errors"] else ""
        print(f"{'recall errors':<15} {at}{m['recall_errors']}{last}")
        changed = f"; MEMORY.md last changed {m['memory_updated']}" if m.get("memory_updated") else ""
        print(f"{'notes':<15} {at}{m.get('daily_notes', 0)} daily notes, {m.get('sections', 0)} sections{changed}")
    return 0


def cmd_mcp(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.mcp.server import serve

    if not args.http:
        serve(vault, args.daemon_idle)
        return 0
    from memvault.mcp.http import token

    token()  # refused in one line before any daemon starts

    def ready(url: str) -> None:
        print(f"memvault MCP for {vault.root}: {url} (Authorization: Bearer $MEMVAULT_MCP_TOKEN)", flush=True)

    # Uvicorn stops on SIGTERM, then raises it again: under this handler the daemon holds are let go
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    serve(vault, args.daemon_idle, (args.host, args.port), ready)
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
        for label, value in readable(status):
            print(f"{label:<20} {value}")
    return 0 if status["running"] else 3


TIMES = ("last_event", "last_full_reconcile")  # epoch seconds in the JSON, local times for people
SPREAD = ("usage",)  # a group whose members are lines of their own


def readable(status: dict[str, Any]) -> list[tuple[str, str]]:
    """`daemon status` for a person: labels in words, yes/no, times as local ISO times, a group's members
    on their lines, every daemon error on one. The JSON keeps the values as they are, for programs."""
    rows: list[tuple[str, str]] = []
    for key, value in status.items():
        if key == "failures":
            rows += [("failed", f"{f['path']}: {f['reason']}") for f in value]
        elif key == "errors":
            rows += [("error", str(e)) for e in value] or [("errors", "none")]
        elif key == "vectors" and isinstance(value, dict) and "total" in value:
            rate = f", {value['rate_per_s']} chunks/s, {value['eta_s']} s left" if value.get("rate_per_s") else ""
            rows.append(("vectors", f"{value.get('embedded', 0)} of {value['total']} embedded, "
                                    f"{value.get('waiting', 0)} waiting{rate}"))  # fmt: skip
        elif key in SPREAD and isinstance(value, dict):
            rows += [(name.replace("_", " "), _said(v)) for name, v in value.items()]
        else:
            rows.append((key.replace("_", " "), _said(value, key in TIMES, key == "uptime")))
    return rows


def _said(value: Any, time: bool = False, seconds: bool = False) -> str:
    import datetime as dt

    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if time and isinstance(value, (int, float)):
        return dt.datetime.fromtimestamp(value).astimezone().isoformat(timespec="seconds")
    if seconds and isinstance(value, (int, float)):
        return f"{value:g} s"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_said(v)}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        return ", ".join(_said(v) for v in value) or "none"
    return str(value)


def add_commands(add: Add) -> None:
    mcp = add("mcp", cmd_mcp, "serve the vault to an agent over MCP (stdio, or --http); starts the daemon when "
              "none runs")  # fmt: skip
    mcp.add_argument("--http", action="store_true",
                     help="streamable HTTP at http://HOST:PORT/mcp instead of stdio; every request needs "
                     "Authorization: Bearer $MEMVAULT_MCP_TOKEN")  # fmt: skip
    mcp.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8765, help="with --http: the port (default 8765; 0: any free one)")
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
    p.add_argument(
        "--qdrant-url", default=argparse.SUPPRESS, metavar="URL", help="a Qdrant server instead of the embedded store"
    )
    p.add_argument("--json", action="store_true")

    p = add("status", cmd_status, "files on disk against what is indexed")
    p.add_argument("--json", action="store_true")
