"""The entry commands of the `memvault` CLI made by hand: saving (`note`, `remember`), listing,
correcting and clearing, in the project vault or the user vault (`--scope`, else the routing rule of
`memvault.vault.scopes`); `forget`, `restore` and `trash` are table verbs (`memvault.cli.generic`)."""

from __future__ import annotations

import argparse
import json
import sys

from memvault.api import Vault
from memvault.cli.common import Add, read_text_arg
from memvault.scopes import READ_SCOPES, Scopes
from memvault.vault.errors import UsageError
from memvault.vault.scopes import SCOPES
from memvault.verbs.notes import Note, Remember, Saved


def _saved(done: str, reply: Saved, where: str, key: str | None) -> str:
    """What a save did, in one line."""
    if reply.status == "unchanged":
        return f"already remembered in {where}"
    if reply.status == "merged":
        return f"already remembered in {where}; the entry now has this save's tags and key too"
    if reply.status == "updated":
        return f"updated the entry with key {key} in {where}; the old one is in .trash/entries/{reply.trashed}.md"
    if reply.status == "superseded":
        return f"{done} in {where}; it supersedes {reply.superseded}, the entry with key {key} (now marked superseded)"
    return f"{done} in {where}"


def _saving(args: argparse.Namespace, vault: Vault, request: Note | Remember) -> tuple[Saved, str]:
    """Run a save in the vault it routes to; returns the reply and how to name that vault."""
    with Scopes(vault) as scopes:
        reply = scopes.saved(request, args.scope)
        if scopes.created_user:
            print(f"created the user vault at {scopes.user_layout.root}", file=sys.stderr)
        return reply, f" (user vault {scopes.user_layout.root})" if reply.scope == "user" else ""


def cmd_note(args: argparse.Namespace, vault: Vault) -> int:
    reply, where = _saving(args, vault, Note(read_text_arg(args.text), args.date, args.section, args.key, args.tag))
    print(_saved("noted", reply, reply.path + where, args.key) + (" (indexed by the daemon)" if reply.indexed else ""))
    return 0


def cmd_remember(args: argparse.Namespace, vault: Vault) -> int:
    request = Remember(read_text_arg(args.text), args.section, args.type, args.key, args.tag, args.importance,
                       args.context, args.consequences)  # fmt: skip
    reply, where = _saving(args, vault, request)
    if reply.created_section:
        print(f"section '{reply.section}' did not exist in MEMORY.md: created it", file=sys.stderr)
    print(_saved("remembered", reply, reply.path + (f" § {reply.section}" if reply.section != "daily" else "") + where,
                 args.key))  # fmt: skip
    return 0


def _one(args: argparse.Namespace, vault: Vault, key: str | None = None) -> Vault:
    """The vault an entry verb works in: `--scope`, else the user vault for a `user_` key."""
    with Scopes(vault) as scopes:
        return scopes.one(args.scope, key)[1]


def cmd_list(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.render import print_entries

    with Scopes(vault) as scopes:  # `search --tag` has no --key
        reply = scopes.entries(args.section, args.tag, getattr(args, "key", None), args.scope,
                               getattr(args, "unused_since", None), getattr(args, "conversation", None),
                               getattr(args, "importance", None))  # fmt: skip
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False))
    else:
        print_entries(reply.entries, reply.tags, sys.stdout)
    return 0


def cmd_correct(args: argparse.Namespace, vault: Vault) -> int:
    words = list(args.args)
    what = None if args.match is not None else (words.pop(0) if words else None)
    if what is None and args.match is None:
        raise UsageError("name the entry to correct: KEY, ID, PATH:LINE or --match TEXT, then the new text")
    if len(words) > 1:
        raise UsageError("give the new text as one argument (quote it), or on stdin")
    from memvault.verbs.entries import Correct

    request = Correct(read_text_arg(words[0] if words else None), what, args.match, args.tag)
    reply = _one(args, vault, what).run(request)
    done = "already written" if reply.status == "unchanged" else "written"
    told = f"; the old fact's clause struck in the summary of {', '.join(reply.summaries)}" if reply.summaries else ""
    print(f"corrected {reply.old_path}:{reply.old_line} (now marked superseded); the correction is {done} in "
          f"{reply.path}{told}")  # fmt: skip
    return 0


def cmd_clear(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.verbs.entries import Clear

    vault = _one(args, vault)
    yes = args.yes
    if not yes and sys.stdin is not None and sys.stdin.isatty():  # a person at a terminal types the confirmation
        preview = vault.run(Clear(args.section, args.all, dry_run=True))
        answer = input(f"move {preview.count} entries of {', '.join(preview.paths) or 'no note'} to the trash? "
                       "type yes: ")  # fmt: skip
        if answer.strip().lower() != "yes":
            raise UsageError("not cleared")
        yes = True
    reply = vault.run(Clear(args.section, args.all, yes))
    if not reply.count:
        print("nothing to clear")
        return 0
    print(f"moved {reply.count} entries of {', '.join(reply.paths)} to the trash (memvault restore {reply.batch})")
    return 0


SAVE_SCOPE = (
    "the project vault, or the user vault (default: user for a user_ key or a #user, #preference, "
    "#profile or #personal tag)"
)
ONE_SCOPE = "the project vault, or the user vault (default: user for a user_ key)"


def add_commands(add: Add) -> None:
    from memvault.vault.templates import DAILY_SECTIONS, SAVE_TYPES

    p = add("note", cmd_note, "append an entry to today's daily note")
    p.add_argument("text", nargs="?", help="the entry (default: read stdin)")
    p.add_argument("--date", help="another day, YYYY-MM-DD (an existing past day is frozen: see correct)")
    p.add_argument("--section", choices=list(DAILY_SECTIONS), default="conversation")
    p.add_argument("--key", help="name the entry: a later save with this key replaces it in place")
    p.add_argument("--tag", action="append", help="add #TAG to the entry (repeatable)")
    p.add_argument("--scope", choices=SCOPES, help=SAVE_SCOPE)

    p = add("remember", cmd_remember, "append an entry to a MEMORY.md section")
    p.add_argument("text", nargs="?", help="the entry (default: read stdin)")
    p.add_argument("--section", help="section title (created if missing)")
    p.add_argument("--type", choices=SAVE_TYPES, help="save type, mapped to its section or today's note")
    p.add_argument("--key", help="name the entry: a later save with this key replaces it, in any section")
    p.add_argument("--tag", action="append", help="add #TAG to the entry (repeatable)")
    p.add_argument("--importance", type=int, choices=range(1, 6), metavar="1-5",
                   help="how important it is ([importance:: N]); 4 or 5 keep it in every prompt's stable "
                   "block")  # fmt: skip
    p.add_argument("--context", help="a decision's context, written as a line of it (an ADR's shape, seed 003)")
    p.add_argument("--consequences", help="a decision's consequences, written as a line of it")
    p.add_argument("--scope", choices=SCOPES, help=SAVE_SCOPE)

    p = add("list", cmd_list, "list entries (list items) with their key and tags, and a count per tag")
    p.add_argument("--section", help="only entries under this ## section")
    p.add_argument("--tag", help="only entries with this tag (#tag in the item, or the note's frontmatter tags)")
    p.add_argument("--key", help="only the entry with this key ([key:: NAME] in the item)")
    p.add_argument("--json", action="store_true", help='one JSON object: {"entries": [...], "tags": {tag: count}}')
    p.add_argument("--scope", choices=READ_SCOPES, default="all", help="the project vault, the user vault, or both")
    p.add_argument("--unused-since", metavar="DATE", help="only entries no daemon-served search returned since")
    p.add_argument("--conversation", metavar="ID", help="only the entries of this conversation ([conversation:: ID])")
    p.add_argument("--importance", type=int, choices=range(1, 6), metavar="1-5",
                   help="only the entries of this importance or more ([importance:: N])")  # fmt: skip

    p = add("correct", cmd_correct, "correct an entry: the new text goes to today's note, the old is marked superseded")
    p.add_argument(
        "args", nargs="*", metavar="OLD NEW_TEXT", help="the old entry (KEY, ID or PATH:LINE), then the new text"
    )
    p.add_argument("--match", help="name the old entry by a piece of its text instead")
    p.add_argument("--tag", action="append", help="add #TAG to the correction (the old entry's tags are kept)")
    p.add_argument("--scope", choices=SCOPES, help=ONE_SCOPE)

    p = add("clear", cmd_clear, "move every entry of a MEMORY.md section, or of every note, to the trash")
    scope = p.add_mutually_exclusive_group(required=True)
    scope.add_argument("--section", help="a MEMORY.md section: its entries go, its heading stays")
    scope.add_argument("--all", action="store_true", help="every entry of every note (headings stay)")
    p.add_argument("--yes", action="store_true", help="do it without asking (else a typed confirmation)")
    p.add_argument("--scope", choices=SCOPES, help="the project vault (default) or the user vault")
