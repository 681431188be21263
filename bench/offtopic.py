"""`python -m bench offtopic`: which signal tells "nothing relevant here", in English and in Chinese.

An agent asks memvault about something it never saw; the answer should say so. Each question is
asked of a vault that holds its answer (`answerable`) or of one that does not (`foreign`):

- English, LoCoMo: per conversation, its own category 1-4 questions, and the next conversation's.
- Chinese, CMRC 2018: a vault of the passages of N questions and 5N others; those N questions, and
  N questions whose passages are not in it.

Per question (in-process through `Vault.run`, the index open between queries) the hybrid search as
`context` asks it (no floor, `RECALL_ITEMS` hits), its hits' cosines (`scores.vector`, as the floor
sees them, the other script's lifted by the model's script bias) and their BM25 ranks. Each rule
below is a number per question, "relevant" at or above a threshold; balanced accuracy is the mean
of the answerable share judged relevant and the foreign share judged not. A threshold is chosen on
one language and scored on the other too (`cross`), since a rule that only holds where it was
fitted is what the vaults we do not have would show.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets import DATA, Unit, _jsonl, _qrels, cmrc, locomo
from bench.quality import copy_vault, index
from memvault import Vault
from memvault.indexer.embedders import DEFAULT_EMBEDDER
from memvault.search.options import build_options
from memvault.vault.cjk import script_of
from memvault.verbs.context import Context
from memvault.verbs.prompt_recall import RECALL_ITEMS
from memvault.verbs.query import Search

LANGS = ("en", "zh")


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench offtopic")
    p.add_argument("--convs", type=int, default=3, help="LoCoMo conversations (English)")
    p.add_argument("--n", type=int, default=40, help="questions of each kind per vault")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", type=Path, help="index into DIR and keep it for the next run")
    return p.parse_args(argv)


def english(convs: int, n: int, seed: int) -> list[tuple[Unit, list[dict[str, Any]]]]:
    every = locomo(0)
    rnd = random.Random(seed)
    out = []
    for i, unit in enumerate(every[:convs]):
        own = [q for q in unit.queries if q[2] != 5]
        other = [q for q in every[(i + 1) % len(every)].queries if q[2] != 5]
        qs = [{"id": qid, "text": t, "kind": "answerable"} for qid, t, _ in rnd.sample(own, min(n, len(own)))]
        qs += [{"id": f"foreign:{qid}", "text": t, "kind": "foreign"} for qid, t, _ in rnd.sample(other, n)]
        out.append((unit, qs))
    return out


def chinese(n: int, seed: int) -> list[tuple[Unit, list[dict[str, Any]]]]:
    (unit,) = cmrc(n, seed)
    held = {Path(rel).stem for _, rel in unit.files}
    qrels = _qrels(DATA / "zh_cmrc2018" / "qrels.tsv")
    asked = {qid for qid, _, _ in unit.queries}
    elsewhere = [(str(q["_id"]), q["text"]) for q in _jsonl(DATA / "zh_cmrc2018" / "queries.jsonl")
                 if q["_id"] not in asked and q["text"].strip() and qrels.get(q["_id"])
                 and not set(qrels[q["_id"]]) & held]  # fmt: skip
    qs = [{"id": qid, "text": t, "kind": "answerable"} for qid, t, _ in unit.queries]
    qs += [
        {"id": f"foreign:{qid}", "text": t, "kind": "foreign"} for qid, t in random.Random(seed).sample(elsewhere, n)
    ]
    return [(unit, qs)]


def record(vault: Vault, qs: list[dict[str, Any]]) -> None:
    for q in qs:
        result = vault.run(Search(q["text"], build_options(mode="hybrid", limit=RECALL_ITEMS)))
        q["source"] = result.source
        q["cosines"] = [h.scores.get("vector") for h in result.hits]
        q["bm25_ranks"] = [h.ranks.get("bm25") for h in result.hits]
        q["vector_ranks"] = [h.ranks.get("vector") for h in result.hits]
        q["scripts"] = [script_of(h.text) for h in result.hits]
        floored = vault.run(Search(q["text"], build_options(mode="hybrid", limit=RECALL_ITEMS, min_similarity="auto")))
        q["auto_passed"] = floored.floor["passed"] if floored.floor else None
        q["tier"] = vault.run(Context(q["text"])).tier
        raw = vault.run(Search(q["text"], build_options(mode="vector", limit=RECALL_ITEMS)))
        q["raw_cosines"] = [h.scores["vector"] for h in raw.hits]  # the model's own, no script lifted
        q["raw_scripts"] = [script_of(h.text) for h in raw.hits]


# rules: a number per question, "relevant" when it reaches the threshold -------------------------------


def _dense(q: dict[str, Any]) -> list[float]:
    return sorted((c for c in q["cosines"] if c is not None), reverse=True)


def _nth(k: int) -> Callable[[dict[str, Any]], float]:
    return lambda q: _dense(q)[k - 1] if len(_dense(q)) >= k else -1.0


def _margin(k: int) -> Callable[[dict[str, Any]], float]:
    def margin(q: dict[str, Any]) -> float:
        c = _dense(q)
        return c[0] - c[min(k, len(c)) - 1] if c else -1.0

    return margin


def _zscore(q: dict[str, Any]) -> float:
    c = np.asarray(_dense(q))
    return float((c[0] - c[1:].mean()) / (c[1:].std() + 1e-6)) if len(c) > 2 else -1.0


def _agree(k: int) -> Callable[[dict[str, Any]], float]:
    """How many hits both retrievers rank in their top k."""

    def agree(q: dict[str, Any]) -> float:
        both = zip(q["bm25_ranks"], q["vector_ranks"], strict=True)
        return float(sum(b is not None and v is not None and b <= k and v <= k for b, v in both))

    return agree


def _top1_agree(q: dict[str, Any]) -> float:
    """Both retrievers' first hit is the same chunk."""
    return float(any(b == 1 and v == 1 for b, v in zip(q["bm25_ranks"], q["vector_ranks"], strict=True)))


def _raw(k: int, script: str | None = None) -> Callable[[dict[str, Any]], float]:
    """The k-th cosine of the model's own ranking, of the query's script only when `script` is "own"."""

    def raw(q: dict[str, Any]) -> float:
        own = script_of(q["text"])
        c = [c for c, s in zip(q["raw_cosines"], q["raw_scripts"], strict=True) if script is None or s == own]
        return c[k - 1] if len(c) >= k else -1.0

    return raw


RULES: dict[str, Callable[[dict[str, Any]], float]] = {
    "shipped: a hit passes search's auto floor": lambda q: float(bool(q["auto_passed"])),
    "shipped: context answers from a search tier": lambda q: float(q["tier"] != "recent"),
    "shipped: context answers dense": lambda q: float(q["tier"] == "dense"),
    "raw cosine top1": _raw(1),
    "raw cosine top3": _raw(3),
    "own-script cosine top1": _raw(1, "own"),
    "own-script cosine top3": _raw(3, "own"),
    "cosine top1": _nth(1),
    "cosine top3": _nth(3),
    "margin top1-top3": _margin(3),
    "margin top1-top12": _margin(12),
    "z top1 over the rest": _zscore,
    "both in top3": _agree(3),
    "both in top5": _agree(5),
    "both in top10": _agree(10),
    "same first hit": _top1_agree,
}


def balanced(values: list[tuple[str, float]], threshold: float) -> float:
    ans = [v >= threshold for k, v in values if k == "answerable"]
    foreign = [v < threshold for k, v in values if k == "foreign"]
    return (float(np.mean(ans)) + float(np.mean(foreign))) / 2


def best_threshold(values: list[tuple[str, float]]) -> tuple[float, float]:
    candidates = sorted({v for _, v in values})
    scored = [(balanced(values, t), t) for t in candidates]
    best = max(s for s, _ in scored)
    tied = [t for s, t in scored if s == best]
    return tied[len(tied) // 2], best


def evaluate(by_lang: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, rule in RULES.items():
        values = {lang: [(q["kind"], rule(q)) for q in qs] for lang, qs in by_lang.items()}
        row: dict[str, Any] = {}
        for fit in (*LANGS, "both"):
            fitted = values[fit] if fit != "both" else [v for vs in values.values() for v in vs]
            t, _ = best_threshold(fitted)
            row[f"fit {fit}"] = {
                "threshold": round(t, 4),
                **{lang: round(balanced(values[lang], t), 3) for lang in LANGS},
            }
        out[name] = row
    return out


def main(argv: list[str]) -> dict[str, Any]:
    args = parse(argv)
    started = time.perf_counter()
    plan = {"en": english(args.convs, args.n, args.seed), "zh": chinese(args.n, args.seed)}
    by_lang: dict[str, list[dict[str, Any]]] = {lang: [] for lang in LANGS}
    with tempfile.TemporaryDirectory(prefix="memvault-offtopic-") as tmp:
        root = args.keep or Path(tmp)
        for lang, units in plan.items():
            for unit, qs in units:
                path = root / unit.name.replace("/", "-")
                if not (path / ".memvault").exists():
                    copy_vault(unit, path)
                summary, index_s = index(path, "--embedder", DEFAULT_EMBEDDER)
                with Vault(path) as vault:
                    record(vault, qs)
                by_lang[lang] += qs
                print(f"# {unit.name}: {len(qs)} questions, {summary.get('chunks_embedded')} chunks embedded, "
                      f"{index_s:.0f} s index", file=sys.stderr)  # fmt: skip
    return {"embedder": DEFAULT_EMBEDDER, "convs": args.convs, "n": args.n, "seed": args.seed,
            "rules": evaluate(by_lang), "seconds": round(time.perf_counter() - started),
            "questions": by_lang}  # fmt: skip


def table(report: dict[str, Any]) -> str:
    n = {lang: len(qs) for lang, qs in report["questions"].items()}
    out = [f"# {report['embedder']}: balanced accuracy of 'nothing relevant', questions {n}, {report['seconds']} s", "",
           "| rule | fit on | threshold | en | zh |", "|---|---|---|---|---|"]  # fmt: skip
    for name, row in report["rules"].items():
        for fit, cell in row.items():
            out.append(
                f"| {name} | {fit.removeprefix('fit ')} | {cell['threshold']} | {cell['en']:.3f} | {cell['zh']:.3f} |"
            )
    return "\n".join(out)
