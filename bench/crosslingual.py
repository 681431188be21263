"""`python -m bench crosslingual [--embedders a,b]`: how much lower a multilingual model scores the
same fact written in the other script, for each embedder.

Our own 24 question / answer pairs in English and Chinese (`bench/data/crosslingual_pairs.jsonl`,
written for this, not taken from a benchmark set): for each question, the cosine to its answer in
the question's language minus the cosine to the same answer translated. The median of that gap is
the model's same-language bias, the cosine search adds to a note in the other script than the
query's (`indexer.embedders.SCRIPT_BIAS`), so the calibration never saw the sets it is judged on.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from memvault.indexer.embedders import load_embedder

PAIRS = Path(__file__).resolve().parent / "data" / "crosslingual_pairs.jsonl"


def gaps(name: str) -> dict[str, Any]:
    embedder = load_embedder(name)
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    answers = {lang: embedder.embed_passages([r[f"a_{lang}"] for r in rows]) for lang in ("en", "zh")}
    out: dict[str, Any] = {}
    for lang, other in (("en", "zh"), ("zh", "en")):
        queries = np.stack([embedder.embed_query(r[f"q_{lang}"]) for r in rows])
        own = np.einsum("ij,ij->i", queries, answers[lang])
        theirs = np.einsum("ij,ij->i", queries, answers[other])
        # does the answer in the other script still beat every other answer in the question's own?
        cross = queries @ answers[lang].T
        np.fill_diagonal(cross, -np.inf)
        gap = own - theirs
        out[f"{lang} questions"] = {
            "median gap": float(np.median(gap)),
            "quartiles": [float(q) for q in statistics.quantiles(gap.tolist(), n=4)],
            "translated answer above every wrong same-script answer": float(np.mean(theirs > cross.max(axis=1))),
            "n": len(rows),
        }
    return out


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench crosslingual")
    parser.add_argument("--embedders", default="e5-small-q4")
    args = parser.parse_args(argv)
    return {"embedders": {name: gaps(name) for name in args.embedders.split(",")}}


def table(report: dict[str, Any]) -> str:
    lines = ["| embedder | questions | median gap | quartiles | translation above wrong answers | n |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for name, rows in report["embedders"].items():
        for label, r in rows.items():
            q = ", ".join(f"{x:.3f}" for x in r["quartiles"])
            lines.append(f"| {name} | {label} | {r['median gap']:.3f} | {q} | "
                         f"{r['translated answer above every wrong same-script answer']:.2f} | {r['n']} |")  # fmt: skip
    return "\n".join(lines)
