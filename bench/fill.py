"""`python -m bench fill`: a new vault's first minutes with the default model, through a real daemon.

The SciFact documents are copied into an empty vault and `memvault daemon start` is run on it. From
that moment the bench measures the seconds to the first BM25 answer, to the first hybrid answer
(once the first vectors are in) and to the end of the first pass (every document in BM25), then every
`--every` seconds asks a fixed sample of the SciFact questions in hybrid mode and records recall@10
and nDCG@10 beside the share of chunks embedded, until every vector is in or `--minutes` have passed.
BM25 alone on the same sample, after the first pass, is the floor the curve starts from; the last
row is what the finished index gives.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.datasets import DATA, _doc_set
from bench.metrics import mean
from bench.speed import run


def _call(conn: Any, request: dict[str, Any]) -> dict[str, Any]:
    reply = conn.call(request)
    if not reply or not reply.get("ok"):
        raise RuntimeError(f"{request['op']} failed: {reply and reply.get('error')}")
    return reply


def _ask(conn: Any, text: str, mode: str) -> dict[str, Any]:
    return _call(conn, {"op": "search", "query": text, "mode": mode, "limit": 10, "per_doc": 1})


def _sample(layout: Any, unit: Any, mode: str) -> dict[str, float]:
    with _connect(layout) as conn:  # a connection per sample: the daemon lets idle clients go
        rows = [unit.judge(qid, _ask(conn, text, mode)["hits"]) for qid, text, _ in unit.queries]
    figures = mean(rows)
    return {"recall@10": round(figures["recall@10"], 4), "ndcg@10": round(figures["ndcg@10"], 4)}


@contextlib.contextmanager
def _connect(layout: Any) -> Iterator[Any]:
    from memvault.daemon.client import connect

    conn = connect(layout, timeout=600)
    try:
        yield conn
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench fill")
    parser.add_argument("--queries", type=int, default=100, help="SciFact questions in the sample")
    parser.add_argument("--docs", choices=("all", "sample"), default="all",
                        help="every document, or the sample's own and ten others per question")  # fmt: skip
    parser.add_argument("--every", type=float, default=120.0, help="seconds between recall samples")
    parser.add_argument("--minutes", type=float, default=60.0, help="stop sampling after this long")
    args = parser.parse_args(argv)
    from memvault.vault.paths import Layout

    (unit,) = _doc_set("scifact", DATA / "scifact", args.queries, seed=5)
    if args.docs == "all":
        unit.files = _doc_set("scifact", DATA / "scifact", 0, seed=5)[0].files
    work = Path(tempfile.mkdtemp(prefix="memvault-fill-"))
    vault = work / "vault"
    report: dict[str, Any] = {"docs": len(unit.files), "queries": len(unit.queries), "samples": []}
    try:
        for source, target in unit.files:
            (vault / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, vault / target)
        started = time.perf_counter()
        run(["--vault", str(vault), "daemon", "start"])
        report["daemon_start_s"] = round(time.perf_counter() - started, 2)
        layout = Layout(vault.resolve())
        probe = random.Random(1).choice(unit.queries)[1]
        with _connect(layout) as conn:
            while not _ask(conn, probe, "bm25")["hits"]:
                time.sleep(0.2)
            report["first_bm25_answer_s"] = round(time.perf_counter() - started, 2)
            while not _call(conn, {"op": "status"})["status"]["vectors"]["embedded"]:
                time.sleep(0.2)
            answer = _ask(conn, probe, "hybrid")  # the first answer with the dense retriever in it
            assert answer["source"] == "hybrid", answer
            report["first_hybrid_answer_s"] = round(time.perf_counter() - started, 2)
            while _call(conn, {"op": "status"})["status"]["last_full_reconcile"] is None:
                time.sleep(0.2)  # the floor is BM25 over every document, once the first pass is through
            report["bm25_pass_s"] = round(time.perf_counter() - started, 2)
        print({k: v for k, v in report.items() if k != "samples"}, flush=True)
        report["bm25_alone"] = _sample(layout, unit, "bm25")
        while True:
            with _connect(layout) as conn:
                vectors = _call(conn, {"op": "status"})["status"]["vectors"]
            row = {"s": round(time.perf_counter() - started, 1), "embedded": vectors["embedded"],
                   "total": vectors["total"], **_sample(layout, unit, "hybrid")}  # fmt: skip
            report["samples"].append(row)
            print(row, flush=True)
            if not vectors["waiting"] or time.perf_counter() - started > 60 * args.minutes:
                break
            time.sleep(args.every)
        report["all_vectors_s"] = round(time.perf_counter() - started, 1) if not vectors["waiting"] else None
    finally:
        run(["--vault", str(vault), "daemon", "stop"])
        shutil.rmtree(work, ignore_errors=True)
    return report


def table(report: dict[str, Any]) -> str:
    lines = [f"SciFact, {report['docs']} documents, {report['queries']} questions, default model:",
             f"- daemon start answered after {report['daemon_start_s']} s; first BM25 answer at "
             f"{report['first_bm25_answer_s']} s; first hybrid answer at "
             f"{report['first_hybrid_answer_s']} s; every document in BM25 at {report.get('bm25_pass_s')} s",
             f"- BM25 alone: recall@10 {report['bm25_alone']['recall@10']}, nDCG@10 {report['bm25_alone']['ndcg@10']}",
             "", "| seconds | chunks embedded | hybrid recall@10 | hybrid nDCG@10 |", "|---|---|---|---|"]  # fmt: skip
    for row in report["samples"]:
        lines.append(f"| {row['s']} | {row['embedded']} of {row['total']} | {row['recall@10']} | {row['ndcg@10']} |")
    return "\n".join(lines)
