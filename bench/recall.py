"""`python -m bench recall`: the relevance floor and the recall of `memvault context`, on LoCoMo.

LoCoMo's category-5 questions have no answer in the conversation: the recall cascade should not
answer them from dense hits, and should answer the others (categories 1-4) from them.

Per conversation (a fresh temp vault, indexed through the real CLI as `bench quality` does, with
e5-small-q4), in-process through `Vault.run` (the index stays open between queries):

1. floor calibration: every question's dense hits as the cascade asks for them (vector mode,
   `RECALL_ITEMS`, the default per-document cap) with no floor: their cosines (`scores.vector`).
   At a floor F dense answers when at least `DENSE_AT_LEAST` of them reach F. For each candidate F:
   the share of category-5 questions dense does not answer, the share of answerable ones it does,
   and their mean (balanced accuracy); the proposed floor maximises it.
2. context recall at a budget: with the proposed floor set in-process, `memvault context` (the
   `<memory-context>` block alone, rendered by `memvault.verbs.context.render`), against plain hybrid
   `search` top-k whose snippets are rendered into the same block the same way. An evidence turn
   (the dia ids `bench quality` judges by, mapped to their note and line by `dia_index.tsv`) counts
   as recalled when an item's path is its note (`note`, at any line), when an item's line range
   covers its line (`span`), and when its text is in the block (`text`). The context also runs with
   the floor at -1 (always dense) and 2 (never dense), so the recall at every candidate floor
   follows from the tier each question would get there.
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets import DATA, _qrels, locomo
from bench.quality import copy_vault, index
from memvault import Vault
from memvault.indexer import embedders
from memvault.search.options import build_options
from memvault.verbs.context import Context, Contexted, render
from memvault.verbs.prompt_recall import QUERY_CHARS, RECALL_ITEMS
from memvault.verbs.query import Search

EMBEDDER = "e5-small-q4"
# the rule the floor was calibrated under: dense answered when this many hits reached it (until issue 44,
# where a prompt is given hits only when one shows it answers it: `memvault.search.recall.answers`)
DENSE_AT_LEAST = 3
BUDGET = 2000
SEARCH_K = RECALL_ITEMS
PERCENTILES = (5, 10, 25, 50, 75, 90, 95)
KINDS = ("answerable", "cat5")
ALL_KINDS = (*KINDS, "foreign")  # foreign: another conversation's answerable questions, nothing relevant here
FORCED = {"always-dense": -1.0, "never-dense": 2.0}
_COMMENT = re.compile(r"<!--.*?-->")


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench recall")
    p.add_argument("--quick", type=int, nargs="?", const=50, default=0,
                   help="the first conversation only, N questions of each kind (default 50)")  # fmt: skip
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--floors", default="0.70:0.95:0.01", help="candidate floors FROM:TO:STEP")
    p.add_argument("--floor", type=float, help="measure the context at this floor instead of the proposed one")
    p.add_argument("--budget", type=int, default=BUDGET)
    p.add_argument("--search-k", type=int, default=SEARCH_K, help="hybrid hits offered to the search baseline")
    return p.parse_args(argv)


def candidate_floors(spec: str) -> list[float]:
    start, stop, step = (float(x) for x in spec.split(":"))
    return [round(start + i * step, 4) for i in range(round((stop - start) / step) + 1)]


def evidence(conv: str) -> dict[str, list[dict[str, Any]]]:
    """Each question's evidence turns: dia id, note path (vault-relative), line and the line's text."""
    root = DATA / "locomo" / "vaults" / conv / "memory"
    where: dict[str, tuple[str, int]] = {}
    with open(DATA / "locomo" / "eval" / conv / "dia_index.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            where[row["dia_id"]] = (row["path"].removeprefix("memory/"), int(row["line"]))
    lines: dict[str, list[str]] = {}
    out: dict[str, list[dict[str, Any]]] = {}
    for qid, dias in _qrels(DATA / "locomo" / "eval" / conv / "qrels_turn.tsv").items():
        turns = []
        for dia in dias:
            if dia not in where:
                continue
            path, line = where[dia]
            if path not in lines:
                lines[path] = (root / path).read_text(encoding="utf-8").split("\n")
            text = " ".join(_COMMENT.sub("", lines[path][line - 1]).split()).removeprefix("- ")
            turns.append({"dia": dia, "path": path, "line": line, "text": text})
        out[qid] = list({(t["path"], t["line"]): t for t in turns}.values())
    return out


def questions(quick: int, seed: int) -> list[tuple[Any, list[dict[str, Any]]]]:
    """(unit, questions) per conversation; a question is {id, text, kind, evidence}."""
    every = locomo(0)
    units = every[:1] if quick else every
    out = []
    for n, unit in enumerate(units):
        conv = unit.name.split("/", 1)[1]
        other = every[(n + 1) % len(every)]
        foreign = [{"id": f"foreign:{qid}", "text": text, "kind": "foreign", "evidence": []}
                   for qid, text, cat in other.queries if cat != 5]  # fmt: skip
        ev = evidence(conv)
        qs = [{"id": qid, "text": text, "kind": "cat5" if cat == 5 else "answerable", "evidence": ev[qid]}
              for qid, text, cat in unit.queries]  # fmt: skip
        if quick:
            rnd = random.Random(seed)
            picked = set()
            for kind in KINDS:
                ids = [q["id"] for q in qs if q["kind"] == kind]
                picked |= set(rnd.sample(ids, min(quick, len(ids))))
            qs = [q for q in qs if q["id"] in picked]
            foreign = rnd.sample(foreign, min(quick, len(foreign)))
        out.append((unit, qs + foreign))
    return out


def _item(hit: Any) -> dict[str, Any]:
    return {"path": hit.path, "start_line": hit.start_line, "end_line": hit.end_line, "text": hit.snippet.strip()}


def _pieces(text: str, size: int = 40) -> list[str]:
    """Aligned pieces of a line: a snippet cuts a long line to a 240-character window, which holds one whole."""
    return [text[i : i + size] for i in range(0, max(1, len(text) - size + 1), size)] if text else []


def _covers(item: dict[str, Any], turn: dict[str, Any]) -> bool:
    return item["path"] == turn["path"] and item["start_line"] <= turn["line"] <= item["end_line"]


def judge(blocks: dict[str, Any], turns: list[dict[str, Any]]) -> dict[str, float]:
    """Evidence recall of the `<memory-context>` lines of a rendered context."""
    items = blocks["recall"]
    lines = blocks["text"].split("<memory-context", 1)[-1] if "<memory-context" in blocks["text"] else ""
    flat = " ".join(lines.split())
    paths = {i["path"] for i in items}
    n = len(turns)
    return {
        "note": sum(t["path"] in paths for t in turns) / n,
        "span": sum(any(_covers(i, t) for i in items) for t in turns) / n,
        "text": sum(any(p in flat for p in _pieces(t["text"])) for t in turns) / n,
        "items": len(items),
        "chars": sum(len(x) + 1 for x in lines.split("\n")[1:-2]),
    }


def calibrate_unit(vault: Vault, qs: list[dict[str, Any]], search_k: int) -> None:
    """Each question's dense cosines as the cascade sees them, and its plain hybrid hits."""
    for q in qs:
        text = q["text"].strip()[-QUERY_CHARS:]
        dense = vault.run(Search(text, build_options(mode="vector", limit=RECALL_ITEMS)))
        q["dense_source"] = dense.source
        q["cosines"] = [h.scores.get("vector") for h in dense.hits]
        if q["kind"] == "foreign":
            continue
        hybrid = vault.run(Search(text, build_options(mode="hybrid", limit=search_k)))
        q["hybrid_items"] = [_item(h) for h in hybrid.hits]


def context_unit(vault: Vault, qs: list[dict[str, Any]], floors: dict[str, float], budget: int) -> None:
    """The context's tier and evidence recall at each floor, and the search baseline in the same block."""
    for label, floor in floors.items():
        embedders.RELEVANCE_FLOORS[EMBEDDER] = {**embedders.RELEVANCE_FLOORS.get(EMBEDDER, {}), "latin": floor}
        for q in qs:
            if q["kind"] == "foreign" and label != "used":
                continue
            reply = vault.run(Context(q["text"]))
            if q["kind"] == "foreign":
                q["context"] = {label: {"tier": reply.tier}}
                continue
            blocks = render([("project", reply)], budget)
            q.setdefault("context", {})[label] = {"tier": reply.tier, **judge(blocks, q["evidence"])}
            if "search" not in q:
                baseline = Contexted(reply.stable, q["hybrid_items"], "hybrid")
                q["search"] = judge(render([("project", baseline)], budget), q["evidence"])


def answers_dense(q: dict[str, Any], floor: float) -> bool:
    return q["dense_source"] == "vector" and sum(c is not None and c >= floor for c in q["cosines"]) >= DENSE_AT_LEAST


def calibration(qs: list[dict[str, Any]], floors: list[float]) -> dict[str, Any]:
    by = {k: [q for q in qs if q["kind"] == k] for k in ALL_KINDS}
    dist = {}
    for kind, rows in by.items():
        for rank in (1, DENSE_AT_LEAST):
            vals = [q["cosines"][rank - 1] for q in rows if len(q["cosines"]) >= rank]
            pct = np.percentile(vals, PERCENTILES) if vals else []
            dist[f"{kind} top{rank}"] = {f"p{p}": round(float(v), 4) for p, v in zip(PERCENTILES, pct, strict=False)}
    table = []
    for f in floors:
        share = {k: float(np.mean([answers_dense(q, f) for q in rows])) if rows else 0.0 for k, rows in by.items()}
        row = {"floor": f, "cat5_not_dense": 1 - share["cat5"], "answerable_dense": share["answerable"],
               "foreign_not_dense": 1 - share["foreign"]}  # fmt: skip
        row["balanced"] = (row["cat5_not_dense"] + row["answerable_dense"]) / 2
        row["balanced_foreign"] = (row["foreign_not_dense"] + row["answerable_dense"]) / 2
        table.append(row)
    best = max(r["balanced"] for r in table)
    tied = [r["floor"] for r in table if r["balanced"] == best]
    flat = {f"within_{d}": [min(r["floor"] for r in table if r["balanced"] >= best - d),
                            max(r["floor"] for r in table if r["balanced"] >= best - d)]
            for d in (0.005, 0.01, 0.02)}  # fmt: skip

    def top(kind: str, rank: int) -> list[float]:
        return [q["cosines"][rank - 1] for q in by[kind] if len(q["cosines"]) >= rank]

    auc = {f"answerable over {neg}, top{rank}": _auc(top("answerable", rank), top(neg, rank))
           for neg in ("cat5", "foreign") for rank in (1, DENSE_AT_LEAST)}  # fmt: skip
    best_foreign = max(table, key=lambda r: r["balanced_foreign"])
    return {"percentiles": dist, "auc": auc, "floors": table, "best_balanced": best,
            "proposed": tied[len(tied) // 2], "tied": tied, "flat": flat,
            "best_foreign": {k: best_foreign[k] for k in ("floor", "balanced_foreign")}}  # fmt: skip


def _auc(pos: list[float], neg: list[float]) -> float | None:
    """P(an answerable question's cosine > a category-5 one's), ties half."""
    if not pos or not neg:
        return None
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return round(float((p > n).mean() + 0.5 * (p == n).mean()), 4)


def recall_summary(qs: list[dict[str, Any]], floors: list[float], shipped: float, used: float) -> dict[str, Any]:
    ans = [q for q in qs if q["kind"] == "answerable"]
    keys = ("note", "span", "text", "items", "chars")

    def mean(rows: list[dict[str, float]]) -> dict[str, float]:
        return {k: round(float(np.mean([r[k] for r in rows])), 4) for k in keys} if rows else {}

    def at(q: dict[str, Any], f: float) -> dict[str, Any]:
        return q["context"]["always-dense" if answers_dense(q, f) else "never-dense"]

    tiers = {k: dict(Counter(q["context"]["used"]["tier"] for q in qs if q["kind"] == k)) for k in ALL_KINDS}
    cat5 = [q for q in qs if q["kind"] == "cat5"]
    foreign = [q for q in qs if q["kind"] == "foreign"]
    mismatched = [q["id"] for q in qs if (q["context"]["used"]["tier"] == "dense") != answers_dense(q, used)]
    return {
        "floor": used, "shipped_floor": shipped, "budget": None, "n_answerable": len(ans), "n_cat5": len(cat5),
        "n_foreign": len(foreign),
        "context": mean([q["context"]["used"] for q in ans]),
        "search": mean([q["search"] for q in ans]),
        "context_always_dense": mean([q["context"]["always-dense"] for q in ans]),
        "context_never_dense": mean([q["context"]["never-dense"] for q in ans]),
        "context_at_shipped_floor": mean([at(q, shipped) for q in ans]),
        "context_by_floor": {f: mean([at(q, f) for q in ans]) for f in floors},
        "tiers": tiers,
        "cat5_not_dense": round(sum(q["context"]["used"]["tier"] != "dense" for q in cat5) / len(cat5), 4)
        if cat5 else None,
        "foreign_not_dense": round(sum(q["context"]["used"]["tier"] != "dense" for q in foreign) / len(foreign), 4)
        if foreign else None,
        "tier_differs_from_calibration": mismatched,
    }  # fmt: skip


def main(argv: list[str]) -> dict[str, Any]:
    args = parse(argv)
    floors = candidate_floors(args.floors)
    shipped = embedders.relevance_floor(EMBEDDER)
    own = embedders.RELEVANCE_FLOORS.get(EMBEDDER)
    started = time.perf_counter()
    timing: dict[str, float] = {"index_s": 0.0, "calibrate_s": 0.0, "context_s": 0.0, "chunks_embedded": 0}
    units = questions(args.quick, args.seed)
    with tempfile.TemporaryDirectory(prefix="memvault-recall-") as tmp:
        vaults = []
        for unit, qs in units:
            path = Path(tmp) / unit.name.replace("/", "-")
            copy_vault(unit, path)
            summary, index_s = index(path, "--embedder", EMBEDDER)
            timing["index_s"] += index_s
            timing["chunks_embedded"] += summary["chunks_embedded"]
            t0 = time.perf_counter()
            with Vault(path) as vault:
                calibrate_unit(vault, qs, args.search_k)
            timing["calibrate_s"] += time.perf_counter() - t0
            vaults.append((path, qs))
            print(f"# {unit.name}: {len(qs)} questions, {summary['chunks_embedded']} chunks, {index_s:.0f} s index",
                  file=sys.stderr)  # fmt: skip
        everything = [q for _, qs in vaults for q in qs]
        calib = calibration(everything, floors)
        used = args.floor if args.floor is not None else calib["proposed"]
        t0 = time.perf_counter()
        try:
            for path, qs in vaults:
                with Vault(path) as vault:
                    context_unit(vault, qs, {"used": used, **FORCED}, args.budget)
        finally:
            embedders.RELEVANCE_FLOORS.pop(EMBEDDER, None)
            if own is not None:
                embedders.RELEVANCE_FLOORS[EMBEDDER] = own
        timing["context_s"] = time.perf_counter() - t0
    recall = recall_summary(everything, floors, shipped, used)
    recall["budget"] = args.budget
    timing["total_s"] = time.perf_counter() - started
    per_question = [{k: q.get(k) for k in ("id", "kind", "cosines", "context", "search")} for q in everything]
    return {"embedder": EMBEDDER, "quick": args.quick, "seed": args.seed, "search_k": args.search_k,
            "conversations": [u.name for u, _ in units], "calibration": calib, "recall": recall,
            "timing": {k: round(v, 1) for k, v in timing.items()}, "questions": per_question}  # fmt: skip


def table(report: dict[str, Any]) -> str:
    c, r = report["calibration"], report["recall"]
    out = [f"# {EMBEDDER} on {', '.join(report['conversations'])}: {r['n_answerable']} answerable, "
           f"{r['n_cat5']} category-5, {r['n_foreign']} foreign questions; timing {report['timing']}", "",
           "| cosine | " + " | ".join(f"p{p}" for p in PERCENTILES) + " |",
           "|---|" + "---|" * len(PERCENTILES)]  # fmt: skip
    out += [f"| {k} | " + " | ".join(f"{v:.3f}" for v in d.values()) + " |" for k, d in c["percentiles"].items()]
    out += ["", f"AUC: {c['auc']}", "",
            "| floor | cat5 not dense | answerable dense | balanced | foreign not dense | balanced (foreign) "
            "| context note / span / text |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for row in c["floors"]:
        m = r["context_by_floor"][row["floor"]]
        cells = [f"{row[k]:.3f}" for k in ("cat5_not_dense", "answerable_dense", "balanced", "foreign_not_dense",
                                           "balanced_foreign")]  # fmt: skip
        out.append(f"| {row['floor']:.2f} | " + " | ".join(cells) + f" | {m['note']:.3f} / {m['span']:.3f} "
                   f"/ {m['text']:.3f} |")  # fmt: skip
    out += ["", f"proposed floor {c['proposed']} (balanced {c['best_balanced']:.3f}, tied {c['tied']}); "
            f"flat: {c['flat']}; best against foreign: {c['best_foreign']}", "",
            f"| answerable, budget {r['budget']} | note | span | text | items | chars |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    rows = [(f"context, floor {r['floor']}", r["context"]), (f"hybrid search top-{report['search_k']}", r["search"]),
            ("context, always dense", r["context_always_dense"]), ("context, never dense", r["context_never_dense"]),
            (f"context, shipped floor {r['shipped_floor']}", r["context_at_shipped_floor"])]  # fmt: skip
    for label, m in rows:
        cells = [f"{m[k]:.3f}" for k in ("note", "span", "text")] + [f"{m['items']:.1f}", f"{m['chars']:.0f}"]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += ["", f"tiers at floor {r['floor']}: {r['tiers']}; category 5 not dense: {r['cat5_not_dense']}; "
            f"foreign not dense: {r['foreign_not_dense']}; "
            f"tier differs from the calibration: {len(r['tier_differs_from_calibration'])}"]  # fmt: skip
    return "\n".join(out)
