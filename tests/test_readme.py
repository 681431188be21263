"""The command table (docs/getting-started.md, under "## Using it"; README.md links to it) and the parser
agree: every command has a row, and every row names a command the parser has."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from memvault.cli.parser import build_parser

GETTING_STARTED = Path(__file__).resolve().parents[1] / "docs" / "getting-started.md"


def _parser_commands() -> set[str]:
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def _table_commands(text: str) -> dict[str, list[str]]:
    """Each command the table names, with the rows that name it. A row's first cell holds one or more
    code spans (`memvault review`, `approve ID`, `reject ID`; `forget --match TEXT`): the first word of
    each, after `memvault`, is a command."""
    section = text.split("\n## Using it\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `memvault ")]
    named: dict[str, list[str]] = {}
    for row in rows:
        first_cell = re.split(r"(?<!\\)\|", row)[1]
        for span in re.findall(r"`([^`]+)`", first_cell):
            words = span.split()
            if words[0] == "memvault":
                words = words[1:]
            named.setdefault(words[0], []).append(row)
    return named


def test_the_table_parser_reads_a_row_of_several_commands():
    row = "| `memvault review`, `approve ID [--section S]`, `reject ID` | the queue \\| and more |\n"
    other = "| `memvault forget K` or `forget --match T` | x |\n"
    text = f"# x\n\n## Using it\n\n| command | what |\n|---|---|\n{row}{other}## Next\n\n| `memvault nope` | x |\n"
    assert sorted(_table_commands(text)) == ["approve", "forget", "reject", "review"]


def test_every_command_has_a_row_in_the_table_and_every_row_a_command():
    named = _table_commands(GETTING_STARTED.read_text(encoding="utf-8"))
    commands = _parser_commands()
    assert len(named) >= 10, "the command table under '## Using it' was not found"
    missing = sorted(commands - named.keys())
    unknown = {name: rows for name, rows in named.items() if name not in commands}
    assert not missing, f"commands with no row in docs/getting-started.md's table under '## Using it': {missing}"
    assert not unknown, f"docs/getting-started.md's table names commands the parser lacks: {unknown}"
