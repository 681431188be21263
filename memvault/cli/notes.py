"""The CLI commands on whole notes: `init`, `show`, `rewrite`."""

from __future__ import annotations

import argparse
import sys

from memvault.api import Vault
from memvault.cli.common import Add, read_text_arg
from memvault.vault.errors import UsageError


def cmd_init(args: argparse.Namespace, vault: Vault) -> int:
    created = vault.init(args.lang)
    for path in created:
        print(f"created {path}")
    if not created:
        print(f"vault already initialised at {vault.root}")
    return 0


def cmd_show(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.vault.catalog import retired_copy
    from memvault.vault.fileio import read_note
    from memvault.vault.notes import parse_note

    path = vault.note_path(args.ref)
    name = vault.layout.relative(path)
    kept = None if path.exists() else retired_copy(vault.layout, path)
    if kept is not None:  # a day retention took out of daily/: the catalog lists it, its note is in the trash
        print(f"memvault: {name} was retired by retention; shown from {vault.layout.relative(kept)}", file=sys.stderr)
    text = read_note(kept or path, args.ref, layout=vault.layout).text
    problem = parse_note(name, text).problem
    if problem:
        print(f"memvault: warning: {problem}", file=sys.stderr)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_rewrite(args: argparse.Namespace, vault: Vault) -> int:
    path = vault.note_path(args.ref)
    if args.file == "-":
        text = read_text_arg(None)
    else:
        try:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{args.file}: cannot read the new content ({exc})") from None
    kept = vault.rewrite(args.ref, text)
    print(f"rewrote {vault.layout.relative(path)}" + (f"; previous version kept in {kept}" if kept else ""))
    return 0


def add_commands(add: Add) -> None:
    from memvault.vault.templates import LANGS

    p = add("init", cmd_init, "create daily/ and MEMORY.md (never overwrites)")
    p.add_argument("--lang", choices=LANGS, help="section names in Chinese or English (default: the locale's)")

    p = add("show", cmd_show, "print a note: a date, 'memory', or a vault-relative path")
    p.add_argument("ref", nargs="?", default="today")

    p = add("rewrite", cmd_rewrite, "replace a whole note, keeping the old one in .trash/")
    p.add_argument("ref", help="a date, 'memory', or a vault-relative path")
    p.add_argument("--file", default="-", help="new content (default: stdin)")
