"""The CLI commands that read the index: `search` (its flags are `memvault.search.option_table.OPTIONS`)
and `events`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memvault.cli.common import Add, server_options
from memvault.vault.errors import UsageError
from memvault.vault.places import READ_SCOPES

if TYPE_CHECKING:
    from memvault.api import Vault


def _search_defaults(args: argparse.Namespace) -> dict[str, Any]:
    """The search flags given, under their public names: the keys of batch lines and socket requests."""
    from memvault.search.option_table import OPTIONS

    return {o.name: v for o in OPTIONS if (v := getattr(args, o.attr)) is not None}


def cmd_search(args: argparse.Namespace, vault: Vault) -> int:
    # a search a running daemon answers is printed by `memvault.cli.via_daemon` before this is imported
    from memvault.render import print_result
    from memvault.scopes import Scopes
    from memvault.verbs.query import Search

    defaults = _search_defaults(args)
    if args.batch:
        if not args.json:
            raise UsageError("--batch writes JSON lines: add --json")
        try:
            lines = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise UsageError(f"{args.batch}: cannot read ({exc.strerror})") from None
        from memvault.batch import run_batch

        with lines, Scopes(vault) as scopes:  # a batch reads one vault: the project's, or --scope user
            target = scopes.one("user" if args.scope == "user" else None)[1]
            return 1 if run_batch(target, lines, defaults, sys.stdout) else 0
    if not args.query and args.tag:  # `search --tag T` alone: the entries so tagged
        from memvault.cli.entries import cmd_list

        return cmd_list(args, vault)
    if not args.query:
        raise UsageError("give a query, or --batch FILE.jsonl")
    with Scopes(vault) as scopes:
        answer = scopes.search_json(Search.from_json(search_request(args)), args.scope)
    print_result(answer, args.json, sys.stdout, sys.stderr)
    return 0


def search_request(args: argparse.Namespace) -> dict[str, Any]:
    """The socket request (less its "op") of the query and flags given: what `Search.from_json` reads."""
    return {**_search_defaults(args), "query": " ".join(args.query)}


def cmd_events(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.render import print_event

    events = vault.follow(args.since) if args.follow else vault.events(args.since)
    for event in events:
        print_event(event, args.json, sys.stdout)
    return 0


def add_search_options(p: argparse.ArgumentParser) -> None:
    """Every search option as a flag, from its one declaration; unset flags stay None, so the
    defaults are `SearchOptions`' (and the daemon's), never a copy of them."""
    from memvault.search.option_table import OPTIONS

    for o in OPTIONS:
        default = f" (default {o.default})" if o.default is not None and f"default {o.default}" not in o.help else ""
        given: dict[str, Any] = {"type": o.kind} if o.kind in (int, float) else {}  # (else the text as given)
        given |= {"action": "append"} if o.many else {}
        p.add_argument(o.flag, dest=o.attr, choices=o.choices or None, metavar=o.metavar, help=o.help + default,
                       **given)  # fmt: skip


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", nargs="*", help="the query")
    add_search_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object: query, source, reason, hits")
    p.add_argument("--batch", metavar="FILE.jsonl", help="one query object per line ('-' for stdin)")
    p.add_argument("--scope", choices=READ_SCOPES, default="all", help="the project vault, the user vault, or both")
    server_options(p)


def add_commands(add: Add) -> None:
    add_search_arguments(add("search", cmd_search, "hybrid search (dense + BM25, fused); substring when no index"))

    p = add("events", cmd_events, "what the daemon saw and did: file-changed, file-indexed, memory-updated, ...")
    p.add_argument("--follow", action="store_true", help="keep printing events as they happen (Ctrl-C stops)")
    p.add_argument("--since", type=int, default=0, help="only events after this seq")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
