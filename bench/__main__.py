"""`python -m bench quality [--sets a,b] [--quick [N|set=N,...]] [--search-options JSON|time] [--server]`,
`python -m bench speed [--quick] [...]`, `python -m bench matrix [...]`,
`python -m bench recall [--quick [N]] [...]`, `python -m bench fusion [...]`,
`python -m bench throughput [--quick] [...]`, `python -m bench tokens [--sets cmrc,xquad]`,
`python -m bench agent [--split dev|test|all] [--in-process]`,
`python -m bench startup [--memvault LABEL=PATH ...] [--qmd PATH]`, `python -m bench tenants [--sets a,b]`;
tables on stdout, full figures as JSON in bench/results/."""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _quick(text: str) -> int | dict[str, int]:
    if "=" not in text:
        return int(text)
    return {name.strip(): int(n) for name, n in (part.split("=", 1) for part in text.split(","))}


def _runs(text: str) -> dict[str, dict[str, Any]]:
    from bench.quality import PRESETS

    if text in PRESETS:
        return PRESETS[text]
    runs = json.loads(text)
    if not isinstance(runs, dict) or not all(isinstance(v, dict) for v in runs.values()):
        raise argparse.ArgumentTypeError('give {"label": {search options}, ...} or a preset name')
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    sub = parser.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality", help="retrieval quality on ../shared/bench")
    q.add_argument("--sets", default="scifact,locomo,cmrc")
    q.add_argument("--quick", type=_quick, nargs="?", const=30, default=0,
                   help="N queries per set (default 30), or per set: scifact=200,cmrc=300 (others: all)")  # fmt: skip
    q.add_argument("--modes", default="bm25,vector,hybrid,substring")
    q.add_argument("--search-options", type=_runs, metavar="JSON|NAME",
                   help='runs instead of modes: {"label": {search options}, ...} or a preset (time)')  # fmt: skip
    q.add_argument("--keep", type=Path, metavar="DIR", help="index into DIR/<set>/<n> and keep it for the next run")
    q.add_argument(
        "--server",
        action="store_true",
        help="each run through a server collection too (local mode), asked with no local index",
    )
    sub.add_parser("speed", help="index, reindex, edit-to-searchable, query latency and RSS (see bench/speed.py)")
    sub.add_parser("matrix", help="embedders x modes and tokenizer variants on every set (see bench/matrix.py)")
    sub.add_parser("recall", help="relevance floor and context recall on LoCoMo (see bench/recall.py)")
    sub.add_parser("fill", help="a new vault's first minutes: first answers, recall as vectors fill (bench/fill.py)")
    sub.add_parser("fusion", help="fusion functions on the same candidates, chosen leave-one-set-out (bench/fusion.py)")
    sub.add_parser("agent", help="what an agent is given each turn, through the hook (see bench/agent.py)")
    sub.add_parser("panel", help="the memory panel's pages on a vault of 10,000 entries (see bench/panel.py)")
    sub.add_parser("offtopic", help='which signal tells "nothing relevant", English and Chinese (bench/offtopic.py)')
    sub.add_parser("means", help="each script's mean vector per model, from dictionary words (bench/means.py)")
    sub.add_parser("crosslingual", help="each model's same-language bias on our EN/ZH pairs (bench/crosslingual.py)")
    sub.add_parser("startup", help="CLI commands as whole processes, memvault and qmd in turns (bench/startup.py)")
    sub.add_parser("tokens", help="jieba's tokens from the prepared words and the whole dictionary (bench/tokens.py)")
    sub.add_parser("tenants", help="a collection per vault against one shared with a tenant field (bench/tenants.py)")
    sub.add_parser("throughput", help="default embedder's chunks/s under runtime settings (see bench/throughput.py)")
    args, rest = parser.parse_known_args(argv)
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    machine = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    if args.what == "quality":
        if rest:
            parser.error(f"unrecognised arguments: {' '.join(rest)}")
        from bench import quality as module

        report = module.main(
            args.sets.split(","), args.quick, tuple(args.modes.split(",")), args.search_options, args.keep, args.server
        )
    else:  # the others parse their own flags
        module = importlib.import_module(f"bench.{args.what}")
        report = module.main(rest)
    report["machine"] = machine
    name = "recall.json" if args.what == "recall" else f"{args.what}-{stamp}.json"
    (RESULTS / name).write_text(json.dumps(report, indent=2))
    print(module.table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
