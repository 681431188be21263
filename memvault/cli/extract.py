"""The CLI command that learns from conversations: `extract` (`review`, `approve` and `reject` are served by
translation, `memvault.cli.generic`)."""

from __future__ import annotations

import argparse
import json
import sys

from memvault.api import Vault
from memvault.cli.common import Add
from memvault.vault.errors import UsageError

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
    reply = vault.run(Extract(text, args.file, args.title, args.id))
    for warning in reply.warnings:
        print(f"memvault: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False))
        return 0
    where = f"summarised {reply.messages} messages in {reply.path}" if reply.path else f"read {reply.messages} messages"
    print(f"{where}; {len(reply.proposals)} proposals in the review queue")
    for p in reply.proposals:
        print(f"  {p['id']}  {p['kind']:<10} seen {p['seen']}x  {p['text']}")
    return 0


def add_commands(add: Add) -> None:
    p = add("extract", cmd_extract, "summarise a conversation into today's note; its lasting statements go to review")
    p.add_argument("file", help="CONVERSATION.json: [{role, content}], JSON lines, {messages: [...]}, or a Claude "
                   "Code transcript ('-': stdin)")  # fmt: skip
    p.add_argument("--title", help="the conversation's title: it heads the summary")
    p.add_argument("--id", help="the conversation's id, kept on the summary as [conversation:: ID]")
    p.add_argument("--json", action="store_true")
