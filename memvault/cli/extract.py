"""The CLI commands that learn from conversations: `extract`, `review`, `approve`, `reject`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from memvault.cli.common import Add
from memvault.vault.errors import UsageError

if TYPE_CHECKING:
    from memvault.api import Vault

MAX_CONVERSATION_BYTES = 50 << 20


def cmd_extract(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.extract import Extract

    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, "rb") as fh:
                data = fh.read(MAX_CONVERSATION_BYTES + 1)
            if len(data) > MAX_CONVERSATION_BYTES:
                raise UsageError(f"{args.file}: over {MAX_CONVERSATION_BYTES >> 20} MiB; split the conversation")
            text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{args.file}: cannot read it as UTF-8 text ({exc})") from None
    reply = vault.run(Extract(text, args.file))
    for warning in reply.warnings:
        print(f"memvault: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False))
        return 0
    print(f"summarised {reply.messages} messages in {reply.path}; {len(reply.proposals)} proposals in the review queue")
    for p in reply.proposals:
        print(f"  {p['id']}  {p['kind']:<10} seen {p['seen']}x  {p['text']}")
    return 0


def cmd_review(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.extract import Review

    proposals = vault.run(Review()).proposals
    if args.json:
        print(json.dumps({"proposals": proposals}, ensure_ascii=False))
        return 0
    if not proposals:
        print("the review queue is empty")
    for p in proposals:
        print(f"{p['id']}  {p['kind']:<10} seen {p['seen']}x  last {p['last']}  {p['text']}")
    return 0


def cmd_approve(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.extract import Approve

    reply = vault.run(Approve(args.id, args.section, args.key))
    done = "already remembered" if reply.status == "unchanged" else "remembered"
    print(f"{done} in {reply.path} § {reply.section}; {reply.id} is off the review queue")
    return 0


def cmd_reject(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.extract import Reject

    print(f"rejected {vault.run(Reject(args.id)).id}: it is in the trash")
    return 0


def add_extract_commands(add: Add) -> None:
    p = add("extract", cmd_extract, "summarise a conversation into today's note; its lasting statements go to review")
    p.add_argument("file", help="CONVERSATION.json: [{role, content}], JSON lines, or {messages: [...]} ('-': stdin)")
    p.add_argument("--json", action="store_true")

    p = add("review", cmd_review, "the proposed facts waiting in REVIEW.md, with how often each was seen")
    p.add_argument("--json", action="store_true")

    p = add("approve", cmd_approve, "write a proposed fact to MEMORY.md (guards, keys and dedupe apply)")
    p.add_argument("id", help="the proposal's id (see memvault review)")
    p.add_argument("--section", help="this MEMORY.md section instead of the one its kind goes to")
    p.add_argument("--key", help="name the entry: a later save with this key replaces it")

    p = add("reject", cmd_reject, "drop a proposed fact (it goes to the trash)")
    p.add_argument("id", help="the proposal's id (see memvault review)")
