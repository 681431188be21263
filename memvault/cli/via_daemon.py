"""`memvault search` when running daemons serve every vault it reads: parsed, sent and printed before
the rest of the CLI (and the library behind it) is imported.

The whole CLI path builds a `Vault` and `Scopes`, and with them dataclasses, pathlib and the verb layer:
40 ms of imports in a client whose daemon answers in 5 (issue 30). This one reads the same flags
(`cli.search.add_search_arguments`), finds the same vaults (`vault.places.read_roots`), sends the request
`Search.from_json` would read, merges the answers as `Scopes` does (`memvault.answers`) and prints them as
the whole path does (`memvault.render.print_result`). It takes the plain case only: a query, and a daemon
that answers a ping for every vault of the scope. Anything else, an error reply included, goes to the
whole CLI, which says what is wrong in its own words (a search is a read: asking twice changes nothing).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from memvault.cli.common import parse_one, reader_left
from memvault.cli.search import add_search_arguments, search_request
from memvault.daemon.connection import PING_TIMEOUT_S, REPLY_TIMEOUT_S, Connection, NotOurs, socket_file
from memvault.vault.places import read_roots, user_root, vault_root


def daemon_search(argv: list[str]) -> int | None:
    """The exit code of a search the vaults' daemons answered (its hits printed), or None."""
    if _no_socket(argv):
        return None
    args = parse_one(argv, "search", add_search_arguments)
    if args is None or args.batch or not args.query:
        return None
    project = vault_root(getattr(args, "vault", None))
    if not os.path.isdir(project):
        return None
    named = read_roots(project, user_root(), args.scope)
    connections: list[tuple[str, Connection]] = []
    try:
        for name, root in named:
            conn = _answering(root)
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


def _no_socket(argv: list[str]) -> bool:
    """No daemon can answer: neither the vault the last `--vault X` (or `--vault=X`) names, else the
    default one, nor the user vault has a socket. Known before the parser is built, which a search with no
    daemon would pay twice (2.7 ms); it only decides whether to try (an abbreviated `--va` is left to it)."""
    named = None
    for i, arg in enumerate(argv):
        if arg == "--vault" and i + 1 < len(argv):
            named = argv[i + 1]
        elif arg.startswith("--vault="):
            named = arg.partition("=")[2]
        elif arg.startswith("--va"):
            return False
    return not any(os.path.exists(socket_file(root)) for root in (vault_root(named), user_root()))


def _answering(root: str) -> Connection | None:
    """A connection to the vault's daemon once it answered a ping (a hung one is skipped fast); one another
    user's process serves is refused before the query is sent, in one line, and the search runs here."""
    try:
        conn = Connection(socket_file(root), PING_TIMEOUT_S)
    except NotOurs as exc:
        print(f"memvault: {exc}", file=sys.stderr)
        return None
    except OSError:  # none listens: no socket, or a dead daemon's
        return None
    reply = conn.call({"op": "ping"}, timeout=PING_TIMEOUT_S)
    if not isinstance(reply, dict) or not reply.get("ok"):  # hung, or refused at the door ("busy")
        conn.close()
        return None
    return conn


def _search(conn: Connection, request: dict[str, Any]) -> dict[str, Any] | None:
    reply = conn.call({"op": "search", **request}, timeout=REPLY_TIMEOUT_S)
    if not isinstance(reply, dict) or not reply.pop("ok", False):
        return None
    return reply
