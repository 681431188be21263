"""`memvault index` when no note changed: answered before the rest of the CLI is imported.

`unchanged_index` reads the one parse of the command line (`memvault.cli.parser.parse`, which built the
parser of `index` alone) and asks `memvault.indexer.quickcheck`, which only walks the vault. `--rebuild`
or any change leaves the command to the full pass, which also prints through `print_indexed`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from memvault.cli.common import reader_left

if TYPE_CHECKING:
    from memvault.api import Vault
    from memvault.cli.common import Add


def add_index_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rebuild", action="store_true", help="drop all derived data and index everything")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.add_argument(
        "--embedder",
        help="minilm-l6-int8, use-m3, e5-small-q4, hash-384 or fastembed:<model> (changing it rebuilds)",
    )
    p.add_argument(
        "--tokenizer", help="BM25 tokenizer: search|lcut, +stop, +stem (e.g. lcut+stop+stem; changing it re-tokenises)"
    )
    p.add_argument(
        "--qdrant-url",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="a Qdrant server or cluster instead of the embedded store ($QDRANT_API_KEY)",
    )


def print_indexed(stats: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(stats))
    else:
        print(
            f"{stats['files_changed']} of {stats['files_scanned']} files changed, "
            f"{stats['chunks_embedded']} chunks embedded, {stats['chunks_deleted']} deleted, "
            f"{stats['files_failed']} failed, in {stats['seconds']:.2f}s"
        )
        if waiting := stats.get("chunks_waiting"):
            what, it = ("1 chunk waits for its vector", "it") if waiting == 1 else (
                f"{waiting} chunks wait for their vectors", "them")  # fmt: skip
            print(f"{what} (BM25 finds {it} now): a running daemon embeds {it} in the background (`memvault status` "
                  "shows how far it is), else the next search by meaning does")  # fmt: skip


def unchanged_index(args: argparse.Namespace) -> int | None:
    """The exit code of a `memvault index` that found nothing changed (its figures printed), or None."""
    if args.rebuild:
        return None
    from memvault.indexer.quickcheck import unchanged
    from memvault.vault.paths import resolve_vault

    try:
        layout = resolve_vault(getattr(args, "vault", None))
    except (OSError, RuntimeError):
        return None  # the full pass says what is wrong
    stats = unchanged(layout, args.embedder, args.tokenizer, getattr(args, "qdrant_url", None))
    if stats is None:
        return None
    try:
        print_indexed(stats, args.json)
    except BrokenPipeError:
        return reader_left()
    return 0


def add_commands(add: Add) -> None:
    add_index_arguments(add("index", cmd_index, "bring the index up to date with the notes (incremental)"))


def cmd_index(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.index import Reindex

    reply = vault.run(Reindex(args.rebuild, None, args.embedder, args.tokenizer, getattr(args, "qdrant_url", None)))
    for problem in reply.problems:
        print(f"memvault: warning: {problem}", file=sys.stderr)
    print_indexed(reply.stats, args.json)
    return 0
