"""The exchange commands of the `memvault` CLI: `import FILE` and `export`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from memvault.api import Vault
from memvault.cli.common import Add
from memvault.scopes import READ_SCOPES, Scopes
from memvault.vault.guards import check_section_name
from memvault.vault.scopes import SCOPES
from memvault.vault.templates import IMPORTED_SECTION


def cmd_import(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.vault.exchange import read_import
    from memvault.verbs.exchange import Import

    path = os.path.abspath(args.file)
    check_section_name(args.section)
    read_import(path, args.file)  # a malformed file is refused here, before anything (a user vault) is created
    with Scopes(vault) as scopes:
        name, target = scopes.save(args.scope)
        if scopes.created_user:
            print(f"created the user vault at {target.root}", file=sys.stderr)
        reply = target.run(Import(path, args.section))
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False))
        return 0
    for title in reply.created_sections:
        print(f"section '{title}' did not exist in MEMORY.md: created it", file=sys.stderr)
    where = "; ".join(f"{rel} {n:,}" for rel, n in reply.paths.items())
    where = f" ({where})" if len(reply.paths) <= 5 else f" ({len(reply.paths)} notes)"
    print(f"imported {reply.imported:,}" + (where if reply.imported else "")
          + f", skipped {reply.skipped:,} already in the vault or repeated in the file, refused {len(reply.refused):,}"
          + (f" (user vault {target.root})" if name == "user" else "")
          + (f", {reply.summaries:,} days' summaries" if reply.summaries else "")
          + (" (indexed by the daemon)" if reply.indexed else ""))  # fmt: skip
    for refused in reply.refused:
        print(f"  item {refused['index']}: {refused['reason']}")
    return 0


def cmd_export(args: argparse.Namespace, vault: Vault) -> int:
    with Scopes(vault) as scopes:
        document = scopes.export(args.scope, args.conversation)
    if args.format == "kinetaios":
        from memvault.vault.kinetaios import kinetaios_document

        print(json.dumps(kinetaios_document(document["entries"]), ensure_ascii=False))
    elif args.format == "json":
        print(json.dumps(document, ensure_ascii=False))
    else:
        entries = document.pop("entries")
        print(json.dumps(document, ensure_ascii=False))  # the header line says what follows
        for entry in entries:
            print(json.dumps(entry, ensure_ascii=False))
    return _partial(document["skipped"])


def _partial(skipped: list[str]) -> int:
    """A backup that misses notes is written as far as it goes, and says so: one line, and the exit code of a
    note that cannot be read, so a script taking it for whole learns otherwise."""
    if not skipped:
        return 0
    from memvault.vault.errors import NoteReadError

    sys.stdout.flush()
    print(f"memvault: error: the export is partial: {len(skipped)} note(s) could not be read and are not in it: "
          + "; ".join(" ".join(why.split()) for why in skipped), file=sys.stderr)  # fmt: skip
    return NoteReadError.exit_code


def add_commands(add: Add) -> None:
    p = add("import", cmd_import, "import memories: a KinetAios export, a JSON list of strings, or memvault's export")
    p.add_argument("file", help="the JSON (or memvault JSON-lines) file")
    p.add_argument(
        "--section",
        default=IMPORTED_SECTION,
        help=f"MEMORY.md section for memories without a place of their own (default {IMPORTED_SECTION})",
    )
    p.add_argument("--scope", choices=SCOPES, default="project", help="the vault to import into (default project)")
    p.add_argument("--json", action="store_true", help="one JSON object: imported, skipped, refused, paths")

    p = add("export", cmd_export, "every entry with its text, section, key, tags, place and day, as JSON")
    p.add_argument("--scope", choices=READ_SCOPES, default="all", help="the project vault, the user vault, or both")
    p.add_argument("--conversation", metavar="ID", help="only the entries of this conversation ([conversation:: ID])")
    p.add_argument("--format", choices=("json", "jsonl", "kinetaios"), default="json",
                   help="one JSON document, a header line and one entry per line, or KinetAios's "
                        "{version, exportedAt, memories} (which `import` reads)")  # fmt: skip
