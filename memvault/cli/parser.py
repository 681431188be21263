"""The whole command line: every command's parser, each added by the module that handles it."""

from __future__ import annotations

import argparse
from importlib.metadata import version
from typing import NoReturn

from memvault.cli.common import Handler, common_options


class Parser(argparse.ArgumentParser):
    """A usage mistake is one line, like every other error; the whole usage is one `--help` away."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"memvault: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    from memvault.cli.daemon import add_daemon_commands
    from memvault.cli.days import add_day_commands
    from memvault.cli.entries import add_entry_commands
    from memvault.cli.exchange import add_exchange_commands
    from memvault.cli.extract import add_extract_commands
    from memvault.cli.generic import add_generic_commands
    from memvault.cli.hooks import add_hook_commands
    from memvault.cli.index import add_index_arguments, cmd_index
    from memvault.cli.notes import add_note_commands
    from memvault.cli.search import add_search_commands

    common = common_options()
    parser = Parser(prog="memvault", parents=[common], description="A local-first memory vault.")
    parser.add_argument("--version", action="version", version=f"memvault {version('memvault')}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    add_note_commands(add)
    add_entry_commands(add)
    add_day_commands(add)
    add_extract_commands(add)
    add_exchange_commands(add)
    add_index_arguments(add("index", cmd_index, "bring the index up to date with the notes (incremental)"))
    add_search_commands(add)
    add_daemon_commands(add)
    add_hook_commands(add)
    add_generic_commands(add)
    return parser
