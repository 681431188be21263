"""The commands of the verbs the CLI serves by translation (`memvault.verbs.VERBS`, door "cli"): each
request field is an argument (a required one positional, the rest flags), `--scope` picks the vault,
and the reply prints as its `human()` text, or as JSON with `--json`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from functools import partial
from typing import Any

from memvault.api import Vault
from memvault.cli.common import Add
from memvault.protocol import Request, offered


def cmd_verb(request_type: type[Request], args: argparse.Namespace, vault: Vault) -> int:
    from memvault.scopes import Scopes
    from memvault.verbs import VERBS

    given = {f.name: getattr(args, f.name) for f in offered(request_type)}
    request = request_type(**{k: v for k, v in given.items() if v is not None})
    route = VERBS[request_type.op].route
    with Scopes(vault) as scopes:
        reply = scopes.one(args.scope, getattr(request, route) if route else None)[1].run(request)
    for line in reply.notes():
        print(f"memvault: {line}", file=sys.stderr)
    said = json.dumps(reply.to_json(), ensure_ascii=False, default=str) if args.json else reply.human()
    if said:
        print(said)
    return 0


def _add_field(p: argparse.ArgumentParser, f: dataclasses.Field[Any], hint: Any) -> None:
    help_text = f.metadata.get("help")
    required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    kinds = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    kind = kinds[0]
    typed: dict[str, Any] = {"type": kind} if kind in (int, float) else {}  # (else the text as given)
    if required:
        p.add_argument(f.name, help=help_text, **typed)
    elif f.metadata.get("positional"):  # an optional one a person types without its name (`recent 30`)
        p.add_argument(f.name, nargs="?", default=None, help=help_text, **typed)
    elif kind is bool:
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, action="store_true", default=None, help=help_text)
    elif typing.get_origin(kind) is list:
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, action="append", help=help_text)
    else:
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, help=help_text, **typed)


def add_generic_commands(add: Add, only: str | None = None) -> None:
    """The commands of the verbs served by translation; `only`: that one alone (its module alone imported)."""
    from memvault.protocol import summary
    from memvault.vault.scopes import SCOPES
    from memvault.verbs import VERBS, served_by, verb

    for op in [only] if only else served_by("cli"):
        request_type, _ = verb(op)
        help_text = summary(request_type)
        p = add(op, partial(cmd_verb, request_type), help_text[:1].lower() + help_text[1:])
        hints = typing.get_type_hints(request_type)
        for f in offered(request_type):
            _add_field(p, f, hints[f.name])
        p.add_argument("--json", action="store_true", help="the reply as one JSON object")
        said = ("the project vault or the user vault (default: the one holding the key, else user for a user_ key)"
                if VERBS[op].route else "the project vault (default) or the user vault")  # fmt: skip
        p.add_argument("--scope", choices=SCOPES, help=said)
