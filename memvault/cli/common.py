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


def common_options() -> argparse.ArgumentParser:
    """The options every command takes, before or after its name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--vault", default=argparse.SUPPRESS, help="vault folder (else $MEMVAULT_VAULT, else ./memory)")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return common


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
