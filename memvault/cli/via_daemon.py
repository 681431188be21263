"""`memvault search` when running daemons serve every vault it reads: sent and printed, from the one parse
of the command line, before the rest of the CLI (and the library behind it) is imported.

The whole CLI path builds a `Vault` and `Scopes`, and with them dataclasses, pathlib and the verb layer:
40 ms of imports in a client whose daemon answers in 5 (issue 30). This one reads the same flags
(`cli.search.add_search_arguments`), finds the same vaults (`vault.places.read_roots`), sends the request
`Search.from_json` would read, merges the answers as `Scopes` does (`memvault.answers`) and prints them as
the whole path does (`memvault.render.print_result`). It takes the plain case only: a query, and a daemon
that answers a ping for every vault of the scope. Anything else, an error reply included, goes to the
whole CLI, which says what is wrong in its own words (a search is a read: asking twice changes nothing).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from memvault.cli.common import reader_left
from memvault.cli.search import search_request
from memvault.daemon.connection import REPLY_TIMEOUT_S, Connection, answering, socket_file
from memvault.vault.places import read_roots, user_root, vault_root


def daemon_search(args: argparse.Namespace) -> int | None:
    """The exit code of a search the vaults' daemons answered (its hits printed), or None."""
    project = vault_root(getattr(args, "vault", None))
    sockets = (socket_file(root) for root in (project, user_root()))
    if args.batch or not args.query or not any(os.path.exists(s) for s in sockets):
        return None  # no daemon can answer: neither the vault named (else the default one) nor the user vault's
    if not os.path.isdir(project):
        return None
    named = read_roots(project, user_root(), args.scope)
    connections: list[tuple[str, Connection]] = []
    try:
        for name, root in named:
            conn = answering(socket_file(root), lambda why: print(f"memvault: {why}", file=sys.stderr))
            if conn is None:
                return None
            connections.append((name, conn))
        answers = [(name, _search(conn, search_request(args))) for name, conn in connections]
    except ValueError:  # a reply that is not JSON: not a daemon this client can talk to
        return None
    finally:
        for _, conn in connections:
            conn.close()
    if not answers or any(answer is None for _, answer in answers):
        return None
    from memvault.answers import merge_answers
    from memvault.render import print_result
    from memvault.search.option_table import DEFAULTS

    try:
        answer = merge_answers(answers, args.limit or DEFAULTS["limit"])  # type: ignore[arg-type]
    except (KeyError, TypeError, AttributeError):  # not the reply this client knows: the whole CLI says what
        return None
    try:
        print_result(answer, args.json, sys.stdout, sys.stderr)
    except BrokenPipeError:
        return reader_left()
    return 0


def _search(conn: Connection, request: dict[str, Any]) -> dict[str, Any] | None:
    reply = conn.call({"op": "search", **request}, timeout=REPLY_TIMEOUT_S)
    if not isinstance(reply, dict) or not reply.pop("ok", False):
        return None
    return reply
