"""`python -m bench quality [--sets a,b] [--quick [N]]`, `python -m bench speed [--quick] [...]` and
`python -m bench matrix [...]`;
tables on stdout, full figures as JSON in bench/results/."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    sub = parser.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality", help="retrieval quality on ../shared/bench")
    q.add_argument("--sets", default="scifact,locomo,cmrc")
    q.add_argument("--quick", type=int, nargs="?", const=30, default=0, help="sample N queries per set (default 30)")
    q.add_argument("--modes", default="bm25,vector,hybrid,substring")
    sub.add_parser("speed", help="index, reindex, edit-to-searchable, query latency and RSS (see bench/speed.py)")
    sub.add_parser("matrix", help="embedders x modes and tokenizer variants on every set (see bench/matrix.py)")
    args, rest = parser.parse_known_args(argv)
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    machine = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    if args.what == "speed":
        from bench.speed import main as speed_main
        from bench.speed import table as speed_table

        report = speed_main(rest)
        report["machine"] = machine
        (RESULTS / f"speed-{stamp}.json").write_text(json.dumps(report, indent=2))
        print(speed_table(report))
        return 0
    if args.what == "matrix":
        from bench.matrix import main as matrix_main
        from bench.matrix import table as matrix_table

        report = matrix_main(rest)
        report["machine"] = machine
        (RESULTS / f"matrix-{stamp}.json").write_text(json.dumps(report, indent=2))
        print(matrix_table(report))
        return 0
    if rest:
        parser.error(f"unrecognised arguments: {' '.join(rest)}")
    from bench.quality import main as quality_main
    from bench.quality import table

    report = quality_main(args.sets.split(","), args.quick, tuple(args.modes.split(",")))
    report["machine"] = machine
    (RESULTS / f"quality-{stamp}.json").write_text(json.dumps(report, indent=2))
    print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
