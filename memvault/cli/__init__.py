"""The `memvault` command: thin wrappers over the library, errors as one line each.

Importing this package imports little: a no-change `memvault index` is answered by `memvault.cli.index`
before the rest of the CLI (and the library behind it) is imported. Each area's commands live in the
module of that area (`entries`, `days`, `search`, ...); `parser` puts them together.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memvault.cli.common import reader_left
from memvault.vault.errors import MemvaultError, UsageError

if TYPE_CHECKING:
    import logging

    from memvault.indexer.config import IndexConfig

INTERNAL_ERROR = 70


_REPORTS: list[logging.Handler] = []  # made on first use: a no-change `index` never imports logging


def _report_to_stderr() -> None:
    """Library code reports what it found and fixed (a rebuilt store, a changed model) on the `memvault`
    logger; a command shows each as one line, on the `sys.stderr` of its run (a test's, in process).
    Until something imports `logging` nothing can log, so a command the daemon answers, which imports
    none of the library, never pays for it (9 ms): the handler is set up as `logging` is first imported."""
    if "logging" in sys.modules:
        _report()
    elif not any(isinstance(f, _WhenLogging) for f in sys.meta_path):
        sys.meta_path.insert(0, _WhenLogging())


class _WhenLogging:
    """An import hook that, once `logging` has been imported, sets up the report and leaves."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "logging":
            return None
        from importlib.machinery import PathFinder

        sys.meta_path.remove(self)
        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _report()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _report() -> None:
    import logging

    if not _REPORTS:
        _REPORTS.append(logging.StreamHandler())
        _REPORTS[0].setFormatter(logging.Formatter("memvault: %(message)s"))
    handler = _REPORTS[0]
    handler.setStream(sys.stderr)  # type: ignore[attr-defined]
    logger = logging.getLogger("memvault")
    if handler not in logger.handlers:
        logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False


# `init` makes the vault; `hooks` checks for itself (uninstall works with the vault gone); `hook`
# answers a missing vault as it answers every failure, without blocking the host's prompt
NO_VAULT_NEEDED = ("init", "hooks", "hook")


def _server_reader(args: Any) -> IndexConfig | None:
    """A search's `--qdrant-url` and `--collection` over the vault's settings; with a server given (here, in
    $MEMVAULT_QDRANT_URL or the vault's memvault.toml), a search needs no vault: with no local index the
    server's collection answers it (`indexer.remote`). None for every other command."""
    given = {k: v for k in ("qdrant_url", "collection") if (v := getattr(args, k, None))}
    if args.command != "search":
        if given.keys() - ({"qdrant_url"} if args.command in ("index", "daemon") else set()):
            raise UsageError(f"--{next(iter(given)).replace('_', '-')} is an option of search (index and daemon "
                             "take --qdrant-url)")  # fmt: skip
        return None
    from memvault.indexer.config import IndexConfig
    from memvault.vault.config import load_settings
    from memvault.vault.paths import resolve_vault

    root = resolve_vault(getattr(args, "vault", None)).root
    return IndexConfig.from_settings(load_settings(root if root.is_dir() else None, **given))


# commands a run may answer before the library is imported, from the one parse of `argv`: a no-change
# `index` (the walk answers) and a search the vaults' daemons answer; None from one leaves it to the rest
EARLY = {"index": "memvault.cli.index:unchanged_index", "search": "memvault.cli.via_daemon:daemon_search"}


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # answered before the whole parser (every command's) is built: 0.35 s -> 0.12 s here
        from importlib.metadata import version

        print(f"memvault {version('memvault')}")
        return 0
    from memvault.cli.parser import parse

    try:
        args = parse(argv)
    except SystemExit as exc:  # --help, or a usage mistake (already said in one line)
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    if args.command in EARLY:
        import importlib

        module, function = EARLY[args.command].split(":")
        try:
            done = getattr(importlib.import_module(module), function)(args)
        except KeyboardInterrupt:
            return 130
        if done is not None:
            return int(done)
    from memvault.api import Vault

    debug = getattr(args, "debug", False)
    if args.command != "daemon" or args.action != "run":
        _report_to_stderr()
    try:
        config = _server_reader(args)
        if args.command not in NO_VAULT_NEEDED and not (config and config.qdrant_url):
            from memvault.cli.common import vault_there
            from memvault.vault.paths import resolve_vault

            vault_there(resolve_vault(getattr(args, "vault", None)).root)
        with Vault(getattr(args, "vault", None), config, progress=args.command == "index" and not args.json) as vault:
            return args.handler(args, vault)
    except MemvaultError as exc:
        if debug:
            raise
        print(f"memvault: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return reader_left()
    except Exception as exc:
        if debug:
            raise
        print(f"memvault: internal error: {type(exc).__name__}: {exc} (rerun with --debug)", file=sys.stderr)
        return INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
