"""The CLI command `context`: the memory blocks an agent puts in its prompt (`memvault.verbs.context`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from memvault.cli.common import Add, read_text_arg

if TYPE_CHECKING:
    from memvault.api import Vault


def cmd_context(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.scopes import Scopes

    query = " ".join(args.query) if args.query else None
    if query == "-":
        query = read_text_arg(None)
    with Scopes(vault) as scopes:
        blocks = scopes.context(query, args.budget, args.scope, explain=args.explain)
    if args.json:
        print(json.dumps(blocks, ensure_ascii=False))
        return 0
    sys.stdout.write(blocks["text"])
    if args.explain:  # for the person, on stderr: stdout stays the blocks a prompt gets
        _explain(blocks)
    for name, reason in blocks["reasons"].items():  # the blocks are for a prompt; the person is told here
        label = f" [{name}]" if len(blocks["reasons"]) > 1 or name != "project" else ""
        print(f"memvault: recall{label} answered from the notes' text, not the index: {reason}", file=sys.stderr)
    return 0


def _explain(blocks: dict[str, Any]) -> None:
    for scope, why in blocks.get("why", {}).items():
        print(f"why [{scope}]: {blocks['tiers'].get(scope)}: {why}", file=sys.stderr)
    for item in blocks["recall"]:
        print(f"given {item['source']}: {item.get('found_by') or ''} score {item.get('score')}", file=sys.stderr)
    for item in blocks.get("left_out", []):
        place = f"{item['path']}#L{item.get('start_line', item.get('line'))}"
        print(f"left out {place}: {item['why']}: {' '.join(item['text'].split())[:80]}", file=sys.stderr)


def add_commands(add: Add) -> None:
    from memvault.scopes import READ_SCOPES
    from memvault.verbs.context import DEFAULT_BUDGET

    p = add("context", cmd_context, "the memory an agent puts in its prompt: core entries, then recall for a query")
    p.add_argument("query", nargs="*", help="the agent's last user messages ('-': stdin); none: the stable block only")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                   help=f"characters for both blocks (default {DEFAULT_BUDGET})")  # fmt: skip
    p.add_argument("--scope", choices=READ_SCOPES, default="all", help="the project vault, the user vault, or both")
    p.add_argument("--json", action="store_true", help="the same as data: text, stable, recall, tier")
    p.add_argument("--explain", action="store_true",
                   help="also why recall answered as it did, each item's score and retrievers, what was left out "
                   "and why (on stderr; in the JSON as why and left_out); the blocks are the same")  # fmt: skip
