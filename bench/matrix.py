"""`python -m bench matrix`: embedders x {vector, hybrid} and tokenizer variants x bm25, on every set, in one run.

Per vault (through the real CLI, as `bench quality` does):
1. tokenizers: index once with the `hash-384` stand-in (BM25 does not depend on
   the dense model), then for each variant `memvault index --tokenizer T`, which
   re-tokenises the stored text only, and a bm25 batch;
2. embedders: for each, `memvault index --embedder E --tokenizer HT` (a full
   rebuild, timed: that is the end-to-end index throughput), then vector and
   hybrid at each weight pair (of `--fusion`, default the search default), and bm25 once.
Sets run in the order given, so a stopped run still has whole sets.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.datasets import SETS
from bench.quality import ask, copy_vault, index, summarise
from memvault.indexer.tokenizer import DEFAULT as DEFAULT_TOKENIZER
from memvault.search.fusion import FUSION, FUSIONS

EMBEDDERS = "minilm-l6-int8,use-m3,e5-small-q4"
TOKENIZERS = "search,search+stem,search+stop,search+stop+stem,lcut,lcut+stem,lcut+stop,lcut+stop+stem"
WEIGHTS = "0.7:0.3,0.6:0.4,0.5:0.5,0.4:0.6,0.3:0.7,0.2:0.8"


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench matrix")
    p.add_argument("--sets", default="cmrc,locomo,scifact,xquad")
    p.add_argument("--quick", type=int, nargs="?", const=30, default=0, help="sample N queries per set")
    p.add_argument("--embedders", default=EMBEDDERS)
    p.add_argument("--tokenizers", default=TOKENIZERS, help="variants for the bm25 rows ('' to skip)")
    p.add_argument("--hybrid-tokenizer", default="", help="tokenizer of the embedder indexes (default: the default)")
    p.add_argument("--weights", default=WEIGHTS, help="w_vector:w_bm25 pairs for the hybrid rows")
    p.add_argument("--fusion", default=FUSION, choices=FUSIONS, help="the hybrid rows' fusion")
    return p.parse_args(argv)


def run_set(name: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    embedders = [e for e in args.embedders.split(",") if e]
    tokenizers = [t for t in args.tokenizers.split(",") if t]
    weights = [tuple(float(x) for x in pair.split(":")) for pair in args.weights.split(",") if pair]
    tok_flags = ["--tokenizer", args.hybrid_tokenizer or DEFAULT_TOKENIZER.name]  # variants are sticky: reset
    per_label: dict[str, list] = defaultdict(list)  # insertion order is the table's row order
    speed: dict[str, dict[str, float]] = defaultdict(lambda: {"chunks_embedded": 0, "index_s": 0.0, "search_s": 0.0})
    vault = tmp / "vault"
    for unit in SETS[name](args.quick):
        copy_vault(unit, vault)
        for tok in tokenizers:
            index(vault, "--embedder", "hash-384", "--tokenizer", tok)
            rows, search_s = ask(unit, vault, {f"bm25 [{tok}]": {"mode": "bm25"}}, tmp)
            speed[f"tokenizer {tok}"]["search_s"] += search_s
            for label, found in rows.items():
                per_label[label].extend(found)
        for number, embedder in enumerate(embedders):
            summary, index_s = index(vault, "--embedder", embedder, *tok_flags)
            runs: dict[str, dict[str, Any]] = {f"{embedder} vector": {"mode": "vector"}}
            for wv, wb in weights:
                runs[f"{embedder} hybrid {wv:g}/{wb:g}"] = {"mode": "hybrid", "w_vector": wv, "w_bm25": wb,
                                                            "fusion": args.fusion}  # fmt: skip
            if number == 0:
                runs["bm25 (hybrid tokenizer)"] = {"mode": "bm25"}
            rows, search_s = ask(unit, vault, runs, tmp)
            for label, found in rows.items():
                per_label[label].extend(found)
            cost = speed[embedder]
            cost["chunks_embedded"] += summary["chunks_embedded"]
            cost["index_s"] += index_s
            cost["search_s"] += search_s
    for cost in speed.values():
        if cost["index_s"]:
            cost["chunks_per_s"] = round(cost["chunks_embedded"] / cost["index_s"], 2)
    return {"metrics": summarise(name, list(per_label), per_label), "speed": dict(speed)}


def main(argv: list[str]) -> dict[str, Any]:
    args = parse(argv)
    report: dict[str, Any] = {"quick": args.quick, "args": vars(args), "sets": {}}
    with tempfile.TemporaryDirectory(prefix="memvault-matrix-") as tmp:
        for name in args.sets.split(","):
            report["sets"][name] = run_set(name, args, Path(tmp))
            print(table({"sets": {name: report["sets"][name]}}), file=sys.stderr, flush=True)  # survives a stop
    return report


def table(report: dict[str, Any]) -> str:
    """nDCG@10 and R@10 per row label, and index throughput per embedder."""
    lines = ["| set | run | nDCG@10 | R@10 | R@100 | other language in top 10 | queries |", "|---" * 7 + "|"]
    speed = ["| set | embedder | chunks embedded | index s | chunks/s | search s |", "|---|---|---|---|---|---|"]
    for name, data in report["sets"].items():
        for label, metrics in data["metrics"].items():
            groups = [("cat1-4", metrics["cat1-4"])] if name == "locomo" else [("", metrics)]
            for group, m in groups:
                if m.get("n"):
                    lines.append(
                        f"| {f'{name} {group}'.strip()} | {label} | {m['ndcg@10']:.3f} | {m['recall@10']:.3f} "
                        f"| {m['recall@100']:.3f} | {m.get('other@10', float('nan')):.3f} | {m['n']} |"
                    )
        for what, cost in data["speed"].items():
            if cost.get("index_s"):
                speed.append(
                    f"| {name} | {what} | {cost['chunks_embedded']} | {cost['index_s']:.1f} "
                    f"| {cost['chunks_per_s']} | {cost['search_s']:.1f} |"
                )
    return "\n".join(lines) + "\n\n" + "\n".join(speed)
