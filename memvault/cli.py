"""The `memvault` command: thin wrappers over the library, errors as one line each.

Importing this module imports little: a no-change `memvault index` is answered by
`memvault.cli_index` before the rest of the CLI (and the library behind it) is imported.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from memvault.cli_index import add_index_arguments, common_options, print_indexed, reader_left, unchanged_index
from vault.errors import MemvaultError, UsageError

if TYPE_CHECKING:
    from memvault.api import Vault
    from memvault.cli_entries import Handler

INTERNAL_ERROR = 70


def cmd_init(args: argparse.Namespace, vault: Vault) -> int:
    created = vault.init(args.lang)
    for path in created:
        print(f"created {path}")
    if not created:
        print(f"vault already initialised at {vault.root}")
    return 0


def cmd_show(args: argparse.Namespace, vault: Vault) -> int:
    from vault.fileio import read_note
    from vault.notes import parse_note

    path = vault.note_path(args.ref)
    text = read_note(path, args.ref).text
    problem = parse_note(vault.layout.relative(path), text).problem
    if problem:
        print(f"memvault: warning: {problem}", file=sys.stderr)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_sections(args: argparse.Namespace, vault: Vault) -> int:
    sections = vault.sections()
    if not sections:
        print("no sections: run `memvault init` first", file=sys.stderr)
        return 1
    width = max(len(s.title) for s in sections)
    for section in sections:
        print(f"{section.title:<{width}}  {section.items}")
    return 0


def cmd_rewrite(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.cli_entries import read_text_arg

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


def cmd_index(args: argparse.Namespace, vault: Vault) -> int:
    from memvault import verbs

    reply = vault.run(verbs.Reindex(args.rebuild, None, args.embedder, args.tokenizer, args.qdrant_url))
    for problem in reply.problems:
        print(f"memvault: warning: {problem}", file=sys.stderr)
    print_indexed(reply.stats, args.json)
    return 0


def cmd_status(args: argparse.Namespace, vault: Vault) -> int:
    status = vault.status()
    if args.json:
        print(json.dumps(status, ensure_ascii=False))
        return 0
    keys = ("vault", "files_on_disk", "files_indexed", "files_pending", "files_failed", "chunks", "embedder", "store",
            "index_bytes", "last_reconcile")  # fmt: skip
    for key in keys:
        print(f"{key:<15} {status[key]}")
    vectors = status.get("vectors") or {}
    if vectors:
        left = f"; {vectors['rate_per_s']} chunks/s, {vectors['eta_s']} s left" if vectors.get("rate_per_s") else ""
        print(f"{'vectors':<15} {vectors['embedded']} of {vectors['total']} embedded{left}")
    for failure in status["failures"]:
        print(f"failed          {failure['reason']}")
    return 0


def _search_defaults(args: argparse.Namespace) -> dict[str, Any]:
    """The search flags under their public names: the keys of batch lines and socket requests."""
    flags = {
        "mode": args.mode, "limit": args.limit, "per_doc": args.per_doc, "threshold": args.threshold,
        "depth": args.depth, "rrf_k": args.rrf_k, "w_vector": args.w_vector, "w_bm25": args.w_bm25,
        "from": args.date_from, "to": args.date_to, "kind": args.kind, "section": args.section,
        "tag": args.tag, "path": args.path, "min_similarity": args.min_similarity, "decay": args.decay,
        "mmr": args.mmr, "dates": args.dates, "fusion": args.fusion,
    }  # fmt: skip
    return {k: v for k, v in flags.items() if v is not None}


def cmd_search(args: argparse.Namespace, vault: Vault) -> int:
    # through a daemon this path imports only the socket client and the renderer: no model, Qdrant or jieba
    from memvault import verbs
    from memvault.cli_entries import cmd_list
    from memvault.render import print_human, print_json
    from memvault.scopes import Scopes

    defaults = _search_defaults(args)
    if args.batch:
        if not args.json:
            raise UsageError("--batch writes JSON lines: add --json")
        try:
            lines = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise UsageError(f"{args.batch}: cannot read ({exc.strerror})") from None
        from memvault.batch import run_batch

        with lines, Scopes(vault) as scopes:  # a batch reads one vault: the project's, or --scope user
            target = scopes.one("user" if args.scope == "user" else None)[1]
            return 1 if run_batch(target, lines, defaults, sys.stdout) else 0
    if not args.query and args.tag:  # `search --tag T` alone: the entries so tagged
        return cmd_list(args, vault)
    if not args.query:
        raise UsageError("give a query, or --batch FILE.jsonl")
    with Scopes(vault) as scopes:
        result = scopes.search_result(verbs.Search.from_json({**defaults, "query": " ".join(args.query)}), args.scope)
    if result.reason:
        print(f"memvault: answered by {result.source} search: {result.reason}", file=sys.stderr)
    if result.dates and not args.json:
        d = result.dates
        how = "no note is dated then, not used" if d["applied"] == "none" else f"notes dated then: {d['applied']}"
        print(f"memvault: read {', '.join(map(repr, d['words']))} as {d['from']}..{d['to']} ({how})", file=sys.stderr)
    if result.floor and not result.hits:
        print(f"memvault: nothing relevant: none of {result.floor['candidates']} candidates reached the similarity "
              f"floor {result.floor['min_similarity']}", file=sys.stderr)  # fmt: skip
    (print_json if args.json else print_human)(result, sys.stdout)
    return 0


def cmd_context(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.cli_entries import read_text_arg
    from memvault.scopes import Scopes

    query = " ".join(args.query) if args.query else None
    if query == "-":
        query = read_text_arg(None)
    with Scopes(vault) as scopes:
        blocks = scopes.context(query, args.budget, args.scope)
    if args.json:
        print(json.dumps(blocks, ensure_ascii=False))
    else:
        sys.stdout.write(blocks["text"])
    return 0


def cmd_events(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.render import print_event

    events = vault.follow(args.since) if args.follow else vault.events(args.since)
    for event in events:
        print_event(event, args.json, sys.stdout)
    return 0


def cmd_mcp(args: argparse.Namespace, vault: Vault) -> int:
    from memvault.mcp_server import serve

    serve(vault)
    return 0


def cmd_daemon(args: argparse.Namespace, vault: Vault) -> int:
    if args.action == "run":
        import logging

        from indexer.config import IndexConfig
        from memvault.daemon import server
        from vault.config import load_settings

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
        settings = load_settings(vault.root, embedder=args.embedder, qdrant_url=args.qdrant_url,
                                 tokenizer=args.tokenizer, debounce=args.debounce, rescan=args.rescan)  # fmt: skip
        server.run(vault.layout, IndexConfig.from_settings(settings), settings.debounce, settings.rescan)
        return 0
    if args.action == "start":
        extra = ["--debounce", str(args.debounce)] if args.debounce is not None else []
        extra += ["--rescan", str(args.rescan)] if args.rescan is not None else []
        extra += ["--embedder", args.embedder] if args.embedder else []
        extra += ["--tokenizer", args.tokenizer] if args.tokenizer else []
        extra += ["--qdrant-url", args.qdrant_url] if args.qdrant_url else []
        print(f"daemon started (pid {vault.start_daemon(extra)}) for {vault.root}")
        return 0
    if args.action == "stop":
        pid = vault.stop_daemon()
        print(f"daemon stopped (pid {pid})" if pid else "no daemon running")
        return 0
    if args.action == "install-service":
        path, how = vault.install_service()
        print(f"wrote {path}\nenable it with: {how}")
        return 0
    status = vault.daemon_status()
    if args.json:
        print(json.dumps(status, ensure_ascii=False))
    else:
        for key, value in status.items():
            if key != "failures":
                print(f"{key:<20} {value}")
    return 0 if status["running"] else 3


class _Parser(argparse.ArgumentParser):
    """A usage mistake is one line, like every other error; the whole usage is one `--help` away."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"memvault: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    from indexer.filters import KINDS
    from memvault.cli_days import add_day_commands
    from memvault.cli_entries import add_entry_commands
    from memvault.cli_exchange import add_exchange_commands
    from memvault.cli_extract import add_extract_commands
    from memvault.scopes import READ_SCOPES
    from search.fusion import FUSION, FUSIONS, WEIGHTS
    from search.hits import MODES
    from search.options import DATES
    from vault.templates import LANGS

    common = common_options()
    parser = _Parser(prog="memvault", parents=[common], description="A local-first memory vault.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    p = add("init", cmd_init, "create daily/ and MEMORY.md (never overwrites)")
    p.add_argument("--lang", choices=LANGS, default="zh", help="section names in Chinese or English")

    add_entry_commands(add)
    add_day_commands(add)
    add_extract_commands(add)
    add_exchange_commands(add)

    p = add("show", cmd_show, "print a note: a date, 'memory', or a vault-relative path")
    p.add_argument("ref", nargs="?", default="today")

    add("sections", cmd_sections, "list MEMORY.md sections with their item counts")

    p = add("rewrite", cmd_rewrite, "replace a whole note, keeping the old one in .trash/")
    p.add_argument("ref", help="a date, 'memory', or a vault-relative path")
    p.add_argument("--file", default="-", help="new content (default: stdin)")

    add_index_arguments(add("index", cmd_index, "bring the index up to date with the notes (incremental)"))

    p = add("search", cmd_search, "hybrid search (dense + BM25, fused); substring when no index")
    p.add_argument("query", nargs="*", help="the query")
    p.add_argument("--mode", choices=MODES, default="hybrid")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--per-doc", type=int, default=3, help="at most this many hits per note (0: no cap)")
    p.add_argument("--threshold", type=float, help="drop hits scoring below this")
    p.add_argument("--min-similarity", help="relevance floor: drop hits whose cosine to the query is lower than this, "
                   "or than the model's calibrated floor (auto)")  # fmt: skip
    p.add_argument("--depth", type=int, help="candidates per retriever (default: max(20, limit))")
    p.add_argument("--fusion", choices=FUSIONS, help="how the dense and BM25 rankings combine: zscore or minmax "
                   "(each retriever's scores normalised over its own list, then weighed) or rrf (reciprocal "
                   f"ranks); default {FUSION}")  # fmt: skip
    p.add_argument("--rrf-k", type=int, default=60)
    p.add_argument("--w-vector", type=float, help=f"weight of the dense ranking (default {WEIGHTS['vector']})")
    p.add_argument("--w-bm25", type=float, help=f"weight of the BM25 ranking (default {WEIGHTS['bm25']})")
    p.add_argument("--from", dest="date_from", help="notes dated on or after YYYY-MM-DD")
    p.add_argument("--to", dest="date_to", help="notes dated on or before YYYY-MM-DD")
    p.add_argument("--kind", action="append", choices=KINDS, help="daily, memory or other (repeatable)")
    p.add_argument("--section", help="only chunks under this ## section")
    p.add_argument("--tag", help="only notes with this frontmatter tag")
    p.add_argument("--path", help="only notes under this vault-relative prefix")
    p.add_argument("--decay", type=float, metavar="DAYS", help="daily-note hits lose half their score every DAYS "
                   "days older than the newest daily note (MEMORY.md and other notes never decay)")  # fmt: skip
    p.add_argument("--mmr", type=float, metavar="LAMBDA", help="diversify the hits: 1 is the fused order, lower "
                   "trades relevance for hits unlike those above them (0..1)")  # fmt: skip
    p.add_argument("--dates", choices=DATES, help="date words in the query ('last week', '2023年5月'): auto, "
                   "boost the notes dated then, filter to them, or off (default auto: boost)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="one JSON object: query, source, reason, hits")
    p.add_argument("--batch", metavar="FILE.jsonl", help="one query object per line ('-' for stdin)")
    p.add_argument("--scope", choices=READ_SCOPES, default="all", help="the project vault, the user vault, or both")

    p = add("context", cmd_context, "the memory an agent puts in its prompt: core entries, then recall for a query")
    p.add_argument("query", nargs="*", help="the agent's last user messages ('-': stdin); none: the stable block only")
    p.add_argument("--budget", type=int, default=4000, help="characters for both blocks (default 4000)")
    p.add_argument("--scope", choices=READ_SCOPES, default="all", help="the project vault, the user vault, or both")
    p.add_argument("--json", action="store_true", help="the same as data: text, stable, recall, tier")

    p = add("events", cmd_events, "what the daemon saw and did: file-changed, file-indexed, memory-updated, ...")
    p.add_argument("--follow", action="store_true", help="keep printing events as they happen (Ctrl-C stops)")
    p.add_argument("--since", type=int, default=0, help="only events after this seq")
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    add("mcp", cmd_mcp, "serve the vault to an agent over MCP (stdio); starts the daemon when none runs")

    p = add("daemon", cmd_daemon, "the background indexer: run | start | stop | status | install-service")
    p.add_argument("action", choices=["run", "start", "stop", "status", "install-service"])
    p.add_argument("--debounce", type=float, help="seconds a path must be quiet before indexing (default 1.5)")
    p.add_argument("--rescan", type=float, help="seconds between full reconcile scans (default 300)")
    p.add_argument("--embedder", help="embedding model for the index it owns")
    p.add_argument("--tokenizer", help="BM25 tokenizer for the index it owns")
    p.add_argument("--qdrant-url", help="a Qdrant server instead of the embedded store")
    p.add_argument("--json", action="store_true")

    p = add("status", cmd_status, "files on disk against what is indexed")
    p.add_argument("--json", action="store_true")
    return parser


def _report_to_stderr() -> None:
    """Library code reports what it found and fixed (a rebuilt store, a changed model) on the `memvault`
    logger; a command shows each as one line."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memvault: %(message)s"))
    logger = logging.getLogger("memvault")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    done = unchanged_index(argv)  # a no-change `index`: the walk answers, before anything else is imported
    if done is not None:
        return done
    from memvault.api import Vault

    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    if args.handler is not cmd_daemon or args.action != "run":
        _report_to_stderr()
    try:
        with Vault(getattr(args, "vault", None), progress=args.handler is cmd_index and not args.json) as vault:
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
