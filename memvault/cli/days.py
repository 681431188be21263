"""The day commands of the `memvault` CLI: `summary`, `catalog`, `recent`, `retention`."""

from __future__ import annotations

import argparse
import json
import sys

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


def cmd_catalog(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.days import Catalog

    reply = vault.run(Catalog(args.year))
    for line in reply.repaired:
        print(f"memvault: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False))
        return 0
    for lines in reply.years.values():
        for line in lines:
            print(f"{line['date']}\t{line.get('summary', '')}")
    return 0


def cmd_recent(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.days import Recent

    days = vault.run(Recent(args.count)).days
    if args.json:
        print(json.dumps({"days": days}, ensure_ascii=False))
        return 0
    if not days:
        print("no daily notes yet")
    for d in days:
        counts = (f"{d['conversations']} conversations, {d['tasks_done']} tasks done, {d['todos']} todos, "
                  f"{d['discoveries']} discoveries, {d['words']} words")  # fmt: skip
        print(f"{d['date']}  {counts}" + (f"\n    {d['summary']}" if d["summary"] else ""))
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

    p = add("catalog", cmd_catalog, "the yearly catalog: one line per day, its date and its summary")
    p.add_argument("year", nargs="?", type=int, help="one year (default: every year)")
    p.add_argument("--json", action="store_true")

    p = add("recent", cmd_recent, "the latest daily notes with their figures and summary, newest first")
    p.add_argument("count", nargs="?", type=int, default=7, help="how many days (default 7)")
    p.add_argument("--json", action="store_true")

    p = add("retention", cmd_retention, "move daily notes older than retention_days to the trash (opt-in)")
    p.add_argument("--dry-run", action="store_true", help="show what would move")
    p.add_argument("--apply", action="store_true", help="move them")
    p.add_argument("--days", type=int, help="this many days instead of memvault.toml's retention_days")
