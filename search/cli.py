"""The `memvault` command: thin wrappers over the library, errors as one line each."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

from search.fusion import WEIGHTS
from vault.errors import MemvaultError, UsageError
from vault.paths import Layout, parse_date, resolve_vault

Handler = Callable[[argparse.Namespace, Layout], int]
INTERNAL_ERROR = 70


def _read_text_arg(text: str | None) -> str:
    """The entry from the argument, or from stdin when it is omitted or `-`."""
    if text is None or text == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no text given: pass it as an argument or pipe it on stdin")
        return sys.stdin.read()
    return text


def cmd_init(args: argparse.Namespace, layout: Layout) -> int:
    from vault.memory_file import init_vault

    created = init_vault(layout, args.lang)
    for path in created:
        print(f"created {path}")
    if not created:
        print(f"vault already initialised at {layout.root}")
    return 0


def cmd_note(args: argparse.Namespace, layout: Layout) -> int:
    from search.client import request
    from vault.daily import append_daily

    text = _read_text_arg(args.text)
    day = parse_date(args.date) if args.date else None  # validated here, before any daemon sees it
    reply = request(layout, {"op": "note", "text": text, "date": args.date, "section": args.section})
    rel = reply["path"] if reply else layout.relative(append_daily(layout, text, day=day, section=args.section))
    print(f"noted in {rel}" + (" (indexed by the daemon)" if reply else ""))
    return 0


def cmd_remember(args: argparse.Namespace, layout: Layout) -> int:
    from search.client import request
    from vault.memory_file import remember

    text = _read_text_arg(args.text)
    reply = request(layout, {"op": "remember", "text": text, "section": args.section, "type": args.type})
    if reply is None:
        saved = remember(layout, text, section=args.section, kind=args.type)
        reply = {
            "path": layout.relative(saved.path),
            "section": saved.section,
            "created_section": saved.created_section,
        }
    if reply["created_section"]:
        print(f"section '{reply['section']}' did not exist in MEMORY.md: created it", file=sys.stderr)
    where = reply["path"] + (f" § {reply['section']}" if reply["section"] != "daily" else "")
    print(f"remembered in {where}")
    return 0


def cmd_show(args: argparse.Namespace, layout: Layout) -> int:
    from vault.fileio import read_note
    from vault.notes import parse_note
    from vault.paths import note_path

    path = note_path(layout, args.ref)
    text = read_note(path, args.ref).text
    problem = parse_note(layout.relative(path), text).problem
    if problem:
        print(f"memvault: warning: {problem}", file=sys.stderr)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_sections(args: argparse.Namespace, layout: Layout) -> int:
    from vault.memory_file import list_sections

    sections = list_sections(layout)
    if not sections:
        print("no sections: run `memvault init` first", file=sys.stderr)
        return 1
    width = max(len(s.title) for s in sections)
    for section in sections:
        print(f"{section.title:<{width}}  {section.items}")
    return 0


def cmd_rewrite(args: argparse.Namespace, layout: Layout) -> int:
    from vault.memory_file import rewrite
    from vault.paths import note_path

    path = note_path(layout, args.ref)
    if args.file == "-":
        text = _read_text_arg(None)
    else:
        try:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{args.file}: cannot read the new content ({exc})") from None
    kept = rewrite(layout, path, text)
    print(f"rewrote {layout.relative(path)}" + (f"; previous version kept in {kept}" if kept else ""))
    return 0


def cmd_index(args: argparse.Namespace, layout: Layout) -> int:
    from indexer.index import Index, IndexConfig
    from indexer.reconcile import ReconcileStats, reconcile
    from search.client import request

    reply = request(layout, {"op": "ping"})
    if reply is not None:
        if args.embedder or args.qdrant_url or args.tokenizer:
            raise UsageError(
                "a daemon owns this index: stop it (memvault daemon stop) to change embedder, tokenizer or store"
            )
        stats = ReconcileStats(
            **request(layout, {"op": "reindex", "rebuild": args.rebuild}, timeout=24 * 3600)["stats"]
        )
    else:
        config = IndexConfig.from_env(args.embedder, args.qdrant_url, args.tokenizer, root=layout.root)
        with Index(layout, config, load_bm25=False) as index:  # indexing never searches
            if args.rebuild:
                index.rebuild()
            problems: list[str] = []
            stats = reconcile(index, progress=not args.json, problems=problems)
        for problem in problems:
            print(f"memvault: warning: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(stats.as_dict()))
    else:
        print(
            f"{stats.files_changed} of {stats.files_scanned} files changed, {stats.chunks_embedded} chunks embedded, "
            f"{stats.chunks_deleted} deleted, {stats.files_failed} failed, in {stats.seconds:.2f}s"
        )
    return 0


def cmd_status(args: argparse.Namespace, layout: Layout) -> int:
    from indexer.status import vault_status
    from search.client import request

    reply = request(layout, {"op": "status"}, timeout=30)
    status = reply["status"] if reply else vault_status(layout)
    if args.json:
        print(json.dumps(status, ensure_ascii=False))
        return 0
    for key in (
        "vault",
        "files_on_disk",
        "files_indexed",
        "files_pending",
        "files_failed",
        "chunks",
        "embedder",
        "store",
        "index_bytes",
        "last_reconcile",
    ):
        print(f"{key:<15} {status[key]}")
    for failure in status["failures"]:
        print(f"failed          {failure['reason']}")
    return 0


def _search_defaults(args: argparse.Namespace) -> dict:
    """The search flags under their public names: the keys of batch lines and socket requests."""
    return {
        "mode": args.mode, "limit": args.limit, "per_doc": args.per_doc, "threshold": args.threshold,
        "depth": args.depth, "rrf_k": args.rrf_k, "w_vector": args.w_vector, "w_bm25": args.w_bm25,
        "from": args.date_from, "to": args.date_to, "kind": args.kind, "section": args.section,
        "tag": args.tag, "path": args.path,
    }  # fmt: skip


def cmd_search(args: argparse.Namespace, layout: Layout) -> int:
    # through a daemon this path imports only the socket client and the renderer: no model, Qdrant or jieba
    from search.batch import local_answer, options_from, run_batch
    from search.client import remote_answer, request
    from search.hits import SearchResult
    from search.render import print_human, print_json

    defaults = {k: v for k, v in _search_defaults(args).items() if v is not None}
    if args.batch:
        if not args.json:
            raise UsageError("--batch writes JSON lines: add --json")
        try:
            lines = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise UsageError(f"{args.batch}: cannot read ({exc.strerror})") from None
        with lines:
            remote = remote_answer(layout)
            if remote is not None:
                return 1 if run_batch(lines, defaults, remote, sys.stdout) else 0
            from search.engine import Searcher

            with Searcher.open(layout) as searcher:
                if searcher.reason:
                    print(f"memvault: answering with substring search: {searcher.reason}", file=sys.stderr)
                return 1 if run_batch(lines, defaults, local_answer(searcher), sys.stdout) else 0
    if not args.query:
        raise UsageError("give a query, or --batch FILE.jsonl")
    query = " ".join(args.query)
    reply = request(layout, {"op": "search", "query": query, **defaults})
    if reply is not None:
        result = SearchResult.from_reply(reply)
    else:
        from search.engine import Searcher

        with Searcher.open(layout) as searcher:
            result = searcher.search(query, options_from(defaults))
    if result.reason:
        print(f"memvault: answered by {result.source} search: {result.reason}", file=sys.stderr)
    (print_json if args.json else print_human)(result, sys.stdout)
    return 0


def cmd_daemon(args: argparse.Namespace, layout: Layout) -> int:
    from search import service

    if args.action == "run":
        import logging

        from indexer.index import IndexConfig

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
        config = IndexConfig.from_env(args.embedder, args.qdrant_url, args.tokenizer, root=layout.root)
        service.run(layout, config, debounce=args.debounce, rescan=args.rescan)
        return 0
    if args.action == "start":
        extra = ["--debounce", str(args.debounce), "--rescan", str(args.rescan)]
        extra += ["--embedder", args.embedder] if args.embedder else []
        extra += ["--tokenizer", args.tokenizer] if args.tokenizer else []
        extra += ["--qdrant-url", args.qdrant_url] if args.qdrant_url else []
        print(f"daemon started (pid {service.start(layout, extra)}) for {layout.root}")
        return 0
    if args.action == "stop":
        pid = service.stop(layout)
        print(f"daemon stopped (pid {pid})" if pid else "no daemon running")
        return 0
    if args.action == "install-service":
        path, how = service.install_service(layout)
        print(f"wrote {path}\nenable it with: {how}")
        return 0
    status = service.status(layout)
    if args.json:
        print(json.dumps(status, ensure_ascii=False))
    else:
        for key, value in status.items():
            if key != "failures":
                print(f"{key:<20} {value}")
    return 0 if status["running"] else 3


def build_parser() -> argparse.ArgumentParser:
    from indexer.filters import KINDS
    from search.hits import MODES
    from vault.memory_file import SAVE_TYPES
    from vault.templates import DAILY_SECTIONS, LANGS

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--vault", default=argparse.SUPPRESS, help="vault folder (else $MEMVAULT_VAULT, else ./memory)")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    parser = argparse.ArgumentParser(prog="memvault", parents=[common], description="A local-first memory vault.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    p = add("init", cmd_init, "create daily/ and MEMORY.md (never overwrites)")
    p.add_argument("--lang", choices=LANGS, default="zh", help="section names in Chinese or English")

    p = add("note", cmd_note, "append an entry to today's daily note")
    p.add_argument("text", nargs="?", help="the entry (default: read stdin)")
    p.add_argument("--date", help="another day, YYYY-MM-DD")
    p.add_argument("--section", choices=list(DAILY_SECTIONS), default="conversation")

    p = add("remember", cmd_remember, "append an entry to a MEMORY.md section")
    p.add_argument("text", nargs="?", help="the entry (default: read stdin)")
    p.add_argument("--section", help="section title (created if missing)")
    p.add_argument("--type", choices=SAVE_TYPES, help="save type, mapped to its section or today's note")

    p = add("show", cmd_show, "print a note: a date, 'memory', or a vault-relative path")
    p.add_argument("ref", nargs="?", default="today")

    add("sections", cmd_sections, "list MEMORY.md sections with their item counts")

    p = add("rewrite", cmd_rewrite, "replace a whole note, keeping the old one in .trash/")
    p.add_argument("ref", help="a date, 'memory', or a vault-relative path")
    p.add_argument("--file", default="-", help="new content (default: stdin)")

    p = add("index", cmd_index, "bring the index up to date with the notes (incremental)")
    p.add_argument("--rebuild", action="store_true", help="drop all derived data and index everything")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.add_argument(
        "--embedder",
        help="minilm-l6-int8, use-m3, e5-small-q4, hash-384 or fastembed:<model> (changing it rebuilds)",
    )
    p.add_argument(
        "--tokenizer", help="BM25 tokenizer: search|lcut, +stop, +stem (e.g. lcut+stop+stem; changing it re-tokenises)"
    )
    p.add_argument("--qdrant-url", help="a Qdrant server or cluster instead of the embedded store ($QDRANT_API_KEY)")

    p = add("search", cmd_search, "hybrid search (vector + BM25, fused by RRF); substring when no index")
    p.add_argument("query", nargs="*", help="the query")
    p.add_argument("--mode", choices=MODES, default="hybrid")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--per-doc", type=int, default=3, help="at most this many hits per note (0: no cap)")
    p.add_argument("--threshold", type=float, help="drop hits scoring below this")
    p.add_argument("--depth", type=int, help="candidates per retriever (default: max(20, limit))")
    p.add_argument("--rrf-k", type=int, default=60)
    p.add_argument("--w-vector", type=float, help=f"RRF weight of the vector ranks (default {WEIGHTS['vector']})")
    p.add_argument("--w-bm25", type=float, help=f"RRF weight of the BM25 ranks (default {WEIGHTS['bm25']})")
    p.add_argument("--from", dest="date_from", help="notes dated on or after YYYY-MM-DD")
    p.add_argument("--to", dest="date_to", help="notes dated on or before YYYY-MM-DD")
    p.add_argument("--kind", action="append", choices=KINDS, help="daily, memory or other (repeatable)")
    p.add_argument("--section", help="only chunks under this ## section")
    p.add_argument("--tag", help="only notes with this frontmatter tag")
    p.add_argument("--path", help="only notes under this vault-relative prefix")
    p.add_argument("--json", action="store_true", help="one JSON object: query, source, reason, hits")
    p.add_argument("--batch", metavar="FILE.jsonl", help="one query object per line ('-' for stdin)")

    p = add("daemon", cmd_daemon, "the background indexer: run | start | stop | status | install-service")
    p.add_argument("action", choices=["run", "start", "stop", "status", "install-service"])
    p.add_argument("--debounce", type=float, default=1.5, help="seconds a path must be quiet before indexing")
    p.add_argument("--rescan", type=float, default=300.0, help="seconds between full reconcile scans")
    p.add_argument("--embedder", help="embedding model for the index it owns")
    p.add_argument("--tokenizer", help="BM25 tokenizer for the index it owns")
    p.add_argument("--qdrant-url", help="a Qdrant server instead of the embedded store")
    p.add_argument("--json", action="store_true")

    p = add("status", cmd_status, "files on disk against what is indexed")
    p.add_argument("--json", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    try:
        return args.handler(args, resolve_vault(getattr(args, "vault", None)))
    except MemvaultError as exc:
        if debug:
            raise
        print(f"memvault: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `memvault ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        if debug:
            raise
        print(f"memvault: internal error: {type(exc).__name__}: {exc} (rerun with --debug)", file=sys.stderr)
        return INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
