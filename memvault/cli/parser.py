"""The command line: every command's parser, each added by the module that handles it.

A run builds only the parser of the command it names (`command_named`): a search imports the
search commands' module and nothing of the others (nor their verbs). `--help`, a mistake, or a
command not named first gets the whole parser, so usage and errors are as they always were.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from typing import Any, NoReturn

from memvault.cli.common import Formatter, Handler, common_options, server_options

# the module under memvault.cli whose `add_commands` adds each hand-made command, in the order
# `--help` lists them; the other commands are the verbs `memvault.verbs.VERBS` serves to the CLI
# by translation (`memvault.cli.generic`). A command is made by hand where it does more than
# translate: a file or stdin read (note, remember, import, extract, summary), an entry and its new
# text given as one list of words (correct), a confirmation asked for
# (clear, retention), both vaults merged (list, search, status), what no verb is (init, show,
# rewrite, daemon, mcp, hooks, ui), or a run answered before the library loads (index, search)
AREAS: dict[str, tuple[str, ...]] = {
    "notes": ("init", "show", "rewrite"),
    "entries": ("note", "remember", "list", "correct", "clear"),
    "days": ("summary", "retention"),
    "extract": ("extract",),
    "exchange": ("import", "export"),
    "index": ("index",),
    "search": ("search", "events"),
    "context": ("context",),
    "daemon": ("mcp", "daemon", "status"),
    "hooks": ("hook", "hooks"),
    "ui": ("ui",),
}


class Parser(argparse.ArgumentParser):
    """A usage mistake is one line, like every other error; the whole usage is one `--help` away."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)  # the subcommands' parsers are made by this class too
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"memvault: error: {message} (see `{self.prog} --help`)\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A choice mistyped (`serch`, `daemon stauts`) is answered with the nearest one, when one is near,
        instead of the whole list of choices."""
        choices = action.choices
        if choices is None or value in choices or not isinstance(value, str):
            return super()._check_value(action, value)
        import difflib  # (only for a mistake: every run checks its command's name here)

        near = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.6)
        if not near:
            return super()._check_value(action, value)
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}; did you mean {near[0]!r}?")


class _Version(argparse.Action):
    """`--version`, reading the installed version only when asked (importlib.metadata costs 11 ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        import sys
        from importlib.metadata import version

        print(f"memvault {version('memvault')}", file=sys.stdout)
        parser.exit()


def command_named(argv: Sequence[str]) -> str | None:
    """The command `argv` names, when it names one first (after the common options); else None."""
    words = iter(argv)
    for word in words:
        if word == "--vault":
            next(words, None)
        elif word.startswith("--vault=") or word == "--debug":
            continue
        elif word.startswith("-"):
            return None  # --help, --version, an abbreviation or a mistake: the whole parser answers
        else:
            return word
    return None


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The command line, parsed once (`SystemExit` for `--help` and mistakes, said in one line): by the
    parser of the command it names first, else by the whole one."""
    return build_parser(command_named(argv)).parse_args(argv)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of `command` alone when it is one, else of every command. A hand-made command's
    parser imports its own module alone: not the verb table, which the other commands come from."""
    in_area = any(command in names for names in AREAS.values())
    generic: list[str] = []
    if not in_area:
        from memvault.verbs import served_by

        generic = served_by("cli")
    known = in_area or command in generic
    common = common_options()
    parser = Parser(prog="memvault", parents=[common], description="A local-first memory vault.")
    parser.add_argument("--version", action=_Version)
    server_options(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        if known and name != command:  # the area's other commands: their options go nowhere
            return argparse.ArgumentParser(add_help=False, formatter_class=Formatter)  # (not shutil's width)
        # (typeshed ties a parser's parents to its own class; argparse takes any parser)
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)  # type: ignore[list-item]
        p.set_defaults(handler=handler)
        return p

    for area, names in AREAS.items():
        if not known or command in names:
            importlib.import_module(f"memvault.cli.{area}").add_commands(add)
    if not known or command in generic:
        from memvault.cli.generic import add_generic_commands

        add_generic_commands(add, command if known else None)
    return parser
