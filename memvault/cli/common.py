"""What every command of the CLI shares: the options taken before or after a command's name, the text
of an entry from an argument or stdin, and a quiet end when the reader of stdout leaves."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from memvault.vault.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from memvault.api import Vault

Handler = Callable[[argparse.Namespace, "Vault"], int]
Add = Callable[[str, Handler, str], argparse.ArgumentParser]  # a command's name, handler and help -> its parser


class Formatter(argparse.HelpFormatter):
    """argparse's own, as wide as `shutil.get_terminal_size` says ($COLUMNS, else the terminal, else
    80) without importing shutil: argparse makes one for every argument added, and shutil with the
    compressors it imports cost each command's start 2.4 ms."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def common_options() -> argparse.ArgumentParser:
    """The options every command takes, before or after its name."""
    common = argparse.ArgumentParser(add_help=False, formatter_class=Formatter)
    common.add_argument("--vault", default=argparse.SUPPRESS,
                        help="vault folder (else $MEMVAULT_VAULT, else the project's memory/: here, at the git "
                        "root, or at a worktree's main repository)")  # fmt: skip
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return common


def server_options(p: argparse.ArgumentParser) -> None:
    """`--qdrant-url` and `--collection` of a search that reads a server's collection, before the command's
    name or after it; unset they stay unset (the vault's settings, `vault.config`, decide)."""
    p.add_argument("--qdrant-url", default=argparse.SUPPRESS, metavar="URL",
                   help="search a Qdrant server's collection: no local index or vault needed ($MEMVAULT_QDRANT_URL; "
                        "the API key from $QDRANT_API_KEY)")  # fmt: skip
    p.add_argument("--collection", default=argparse.SUPPRESS, help="its collection (default memvault; "
                   "$MEMVAULT_COLLECTION)")  # fmt: skip


def read_text_arg(text: str | None) -> str:
    """The entry from the argument, or from stdin when it is omitted or `-`."""
    if text is None or text == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no text given: pass it as an argument or pipe it on stdin")
        return sys.stdin.read()
    return text


def reader_left() -> int:
    """`memvault ... | head`: the reader left; say nothing more."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 141


def vault_there(root: Path) -> None:
    """A vault folder that does not exist is a mistyped --vault or $MEMVAULT_VAULT, refused in one line,
    not a new vault made by the first save (nor a search that answers nothing, or the user vault's)."""
    if not root.is_dir():
        raise UsageError(f"{root}: no vault there (check --vault or $MEMVAULT_VAULT); create one with `memvault init`")
