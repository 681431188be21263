"""The day commands of the `memvault` CLI made by hand: `summary` (a leading date or the text, else stdin)
and `retention` (which asks for --dry-run or --apply, never guessing); `catalog` and `recent` are table
verbs (`memvault.cli.generic`)."""

from __future__ import annotations

import argparse

from memvault.api import Vault
from memvault.cli.common import Add, read_text_arg
from memvault.vault.errors import UsageError
from memvault.vault.paths import names_a_day


def cmd_summary(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.days import Summary

    words = list(args.args)
    day = words.pop(0) if words and names_a_day(words[0]) and len(words) > 1 else None
    text = read_text_arg(" ".join(words) if words else None)
    reply = vault.run(Summary(text, day))
    print(f"summary of {reply.path} set" + (" (indexed by the daemon)" if reply.indexed else ""))
    return 0


def cmd_retention(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.days import Retention

    if args.apply == args.dry_run:
        raise UsageError("say --dry-run (show what would move) or --apply (move it)")
    reply = vault.run(Retention(args.apply, args.days))
    verb = "would move" if reply.dry_run else "moved"
    print(f"{verb} {len(reply.moved)} daily notes older than {reply.days} days to the trash")
    for rel in reply.moved:
        print(f"  {rel}")
    if reply.kept:
        print(f"kept {len(reply.kept)} old days without a summary (memvault summary DATE TEXT, then again):")
        for rel in reply.kept:
            print(f"  {rel}")
    if reply.holding:
        print(f"kept {len(reply.holding)} old days holding the current version of a fact (a key, a correction):")
        for rel in reply.holding:
            print(f"  {rel}")
    return 0


def add_commands(add: Add) -> None:
    p = add("summary", cmd_summary, "set a day's one-line summary (frontmatter index; past days too)")
    p.add_argument("args", nargs="*", metavar="[DATE] TEXT", help="the day (default today), then the summary")

    p = add("retention", cmd_retention, "move daily notes older than retention_days to the trash (opt-in)")
    p.add_argument("--dry-run", action="store_true", help="show what would move")
    p.add_argument("--apply", action="store_true", help="move them")
    p.add_argument("--days", type=int, help="this many days instead of memvault.toml's retention_days")
