"""`python -m bench fusion [--sets a,b] [--work DIR] [--depth N]`: fusion functions compared on the
same candidates, and the rule that picks the default checked leave-one-set-out.

Each set is indexed once through the real CLI in a work folder that is kept (a second run reuses its
index: the default model takes half an hour over SciFact), then every query's BM25 and dense top
`depth` lists are read with `search --batch --json`. Every candidate fusion is scored offline on those
same lists, so the candidates differ in nothing but the fusion. The engine's own hybrid is asked too,
and the row of the candidate it implements must match it (a check of the simulation).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.datasets import SETS, Unit
from bench.metrics import mean
from bench.quality import MEMVAULT, copy_vault, index
from vault.cjk import cjk_share

Key = tuple[str, int, int]  # path, start line, end line: a chunk, named as hits name it
Ranked = list[tuple[Key, float]]
ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
HEADLINE = "ndcg@10"


# --- what is asked and read once per set -------------------------------------------------------


def _prepare(unit: Unit, vault: Path) -> dict[str, Any]:
    """Copy the unit's notes unless the kept vault already holds them, then index (a no-op when kept)."""
    marker = vault / ".memvault"
    if not marker.exists():
        copy_vault(unit, vault)
    summary, seconds = index(vault)
    return {"index_s": seconds, "chunks": summary.get("chunks"), "embedded": summary.get("chunks_embedded")}


def _ask(unit: Unit, vault: Path, depth: int) -> dict[str, dict[str, Any]]:
    """Per query: the BM25 and dense lists (depth each, no per-document cap) and the engine's hybrid."""
    batch = vault.parent / f"{vault.name}-queries.jsonl"
    plain = {"limit": depth, "per_doc": 0, "dates": "off", "depth": depth}
    with open(batch, "w", encoding="utf-8") as fh:
        for qid, text, _ in unit.queries:
            for mode in ("bm25", "vector"):
                fh.write(json.dumps({"id": f"{mode}|{qid}", "query": text, "mode": mode, **plain}) + "\n")
            line = {"id": f"hybrid|{qid}", "query": text, "mode": "hybrid", "limit": 100, "per_doc": unit.per_doc,
                    "dates": "off", "depth": depth}  # fmt: skip
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    out = subprocess.run(
        [MEMVAULT, "--vault", str(vault), "search", "--batch", str(batch), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    lists: dict[str, dict[str, Any]] = defaultdict(dict)
    for line in out.stdout.splitlines():
        answer = json.loads(line)
        mode, qid = answer["id"].split("|", 1)
        lists[qid][mode] = [
            [h["path"], h["start_line"], h["end_line"], h["scores"].get(mode, h["score"])] for h in answer["hits"]
        ]
    return lists


def _scripts(vault: Path, keys: set[Key]) -> dict[Key, str]:
    """Each chunk's script, read from its note's lines: 'cjk' when most of its letters are CJK."""
    files: dict[str, list[str]] = {}
    out = {}
    for path, start, end in keys:
        if path not in files:
            files[path] = (vault / path).read_text(encoding="utf-8").splitlines()
        text = "\n".join(files[path][start - 1 : end])
        out[(path, start, end)] = "cjk" if cjk_share(text) >= 0.5 else "latin"
    return out


def collect(name: str, work: Path, depth: int) -> dict[str, Any]:
    """The set's lists, from the work folder's cache when it holds them at this depth."""
    cache = work / f"{name}-lists-{depth}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    units = []
    for n, unit in enumerate(SETS[name](0)):
        vault = work / name / str(n)
        prep = _prepare(unit, vault)
        lists = _ask(unit, vault, depth)
        keys = {tuple(h[:3]) for q in lists.values() for mode in ("bm25", "vector") for h in q[mode]}
        scripts = _scripts(vault, keys)  # type: ignore[arg-type]
        print(f"# {name}/{n}: {prep}, {len(lists)} queries", file=sys.stderr)
        units.append({
            "queries": [[qid, text, cat, cjk_share(text) >= 0.5] for qid, text, cat in unit.queries],
            "lists": lists,
            "scripts": [[*k, s] for k, s in scripts.items()],
            "prep": prep,
        })  # fmt: skip
    data = {"set": name, "depth": depth, "units": units}
    cache.write_text(json.dumps(data, ensure_ascii=False))
    return data


# --- the fusion functions --------------------------------------------------------------------

Fusion = Callable[[Ranked, Ranked, dict[Key, str], bool], list[Key]]


def _order(scores: dict[Key, float]) -> list[Key]:
    return sorted(scores, key=lambda k: (-scores[k], k))


def _rrf(ranks: Sequence[tuple[dict[Key, int], float]], k: int = 60) -> list[Key]:
    scores: dict[Key, float] = defaultdict(float)
    for ranking, weight in ranks:
        for key, rank in ranking.items():
            scores[key] += weight / (k + rank)
    return _order(scores)


def _ranks(items: Ranked) -> dict[Key, int]:
    return {key: r for r, (key, _) in enumerate(items, start=1)}


def _lang_ranks(items: Ranked, scripts: dict[Key, str]) -> dict[Key, int]:
    """Dense ranks counted within each script: the best Chinese chunk ranks first beside the best English one."""
    seen: dict[str, int] = defaultdict(int)
    out = {}
    for key, _ in items:
        seen[scripts.get(key, "latin")] += 1
        out[key] = seen[scripts.get(key, "latin")]
    return out


def _minmax(items: Ranked) -> dict[Key, float]:
    if not items:
        return {}
    lo, hi = min(s for _, s in items), max(s for _, s in items)
    return {k: (s - lo) / (hi - lo) if hi > lo else 1.0 for k, s in items}


def _zscore(items: Ranked) -> dict[Key, float]:
    if len(items) < 2:
        return {k: 0.0 for k, _ in items}
    values = [s for _, s in items]
    mu, sd = statistics.fmean(values), statistics.pstdev(values) or 1.0
    return {k: (s - mu) / sd for k, s in items}


def _theoretical(items: Ranked, lowest: float) -> dict[Key, float]:
    """Bruch et al.'s TMM: from the retriever's theoretical minimum to the best score seen."""
    if not items:
        return {}
    hi = max(s for _, s in items)
    return {k: (s - lowest) / (hi - lowest) if hi > lowest else 1.0 for k, s in items}


def _by_script(items: Ranked, scripts: dict[Key, str], normalise: Callable[[Ranked], dict[Key, float]]):
    groups: dict[str, Ranked] = defaultdict(list)
    for key, score in items:
        groups[scripts.get(key, "latin")].append((key, score))
    out: dict[Key, float] = {}
    for group in groups.values():
        out.update(normalise(group))
    return out


def _convex(bm: dict[Key, float], vec: dict[Key, float], alpha: float, missing: tuple[float, float]) -> list[Key]:
    scores = {k: alpha * vec.get(k, missing[1]) + (1 - alpha) * bm.get(k, missing[0]) for k in set(bm) | set(vec)}
    return _order(scores)


def _zfloor(values: dict[Key, float]) -> float:
    return min(values.values(), default=0.0)


def candidates() -> dict[str, Fusion]:
    """Every fusion measured, by name; alpha is the dense retriever's share."""
    out: dict[str, Fusion] = {}
    for a in ALPHAS:
        out[f"rrf {a}"] = lambda b, v, s, q, a=a: _rrf([(_ranks(b), 1 - a), (_ranks(v), a)])
        out[f"lang-rrf {a}"] = lambda b, v, s, q, a=a: _rrf([(_ranks(b), 1 - a), (_lang_ranks(v, s), a)])
        out[f"minmax {a}"] = lambda b, v, s, q, a=a: _convex(_minmax(b), _minmax(v), a, (0.0, 0.0))
        out[f"lang-minmax {a}"] = lambda b, v, s, q, a=a: _convex(_minmax(b), _by_script(v, s, _minmax), a, (0.0, 0.0))
        out[f"tmm {a}"] = lambda b, v, s, q, a=a: _convex(_theoretical(b, 0.0), _theoretical(v, -1.0), a, (0.0, 0.0))

        def z(b: Ranked, v: Ranked, s: dict[Key, str], q: bool, a: float = a, lang: bool = False) -> list[Key]:
            bz, vz = _zscore(b), (_by_script(v, s, _zscore) if lang else _zscore(v))
            return _convex(bz, vz, a, (_zfloor(bz), _zfloor(vz)))

        out[f"zscore {a}"] = z
        out[f"lang-zscore {a}"] = lambda b, v, s, q, a=a, z=z: z(b, v, s, q, a, True)
    return out


# --- scoring ---------------------------------------------------------------------------------


def _cap(keys: list[Key], per_doc: int, limit: int = 100) -> list[Key]:
    seen: dict[str, int] = defaultdict(int)
    out = []
    for key in keys:
        if per_doc and seen[key[0]] >= per_doc:
            continue
        seen[key[0]] += 1
        out.append(key)
        if len(out) >= limit:
            break
    return out


def _headline_rows(name: str, rows: list[tuple[int | None, dict[str, float]]]) -> dict[str, float]:
    """LoCoMo's headline is categories 1-4 (5 is adversarial: no answer in the conversation)."""
    kept = [m for c, m in rows if name != "locomo" or c in (1, 2, 3, 4)]
    return {**mean(kept), "n": len(kept)}


def score_set(data: dict[str, Any], fusions: dict[str, Fusion]) -> dict[str, dict[str, float]]:
    """Mean metrics of every fusion, of BM25 and dense alone, and of the engine's hybrid, on one set."""
    name = data["set"]
    units = SETS[name](0)
    rows: dict[str, list] = defaultdict(list)
    for unit, got in zip(units, data["units"], strict=True):
        scripts = {(p, s, e): script for p, s, e, script in got["scripts"]}
        for qid, _text, cat, query_cjk in got["queries"]:
            lists = got["lists"][qid]
            bm = [((p, s, e), score) for p, s, e, score in lists["bm25"]]
            vec = [((p, s, e), score) for p, s, e, score in lists["vector"]]
            ranked = {"bm25": [k for k, _ in bm], "vector": [k for k, _ in vec]}
            ranked["engine hybrid"] = [(p, s, e) for p, s, e, _ in lists["hybrid"]]
            for label, fuse in fusions.items():
                ranked[label] = fuse(bm, vec, scripts, query_cjk)
            for label, keys in ranked.items():
                hits = [{"path": p, "start_line": s, "end_line": e} for p, s, e in _cap(keys, unit.per_doc)]
                rows[label].append((cat, unit.judge(qid, hits)))
    return {label: _headline_rows(name, r) for label, r in rows.items()}


def leave_one_out(scores: dict[str, dict[str, dict[str, float]]], labels: list[str]) -> dict[str, Any]:
    """Pick by the worst margin over the sets it sees (hybrid minus the better single retriever, nDCG@10),
    score the pick on the set it did not see; and the pick on all sets, the default's rule."""

    def margin(label: str, name: str) -> float:
        s = scores[name]
        return s[label][HEADLINE] - max(s["bm25"][HEADLINE], s["vector"][HEADLINE])

    def pick(names: list[str]) -> str:
        def rule(label: str) -> tuple[float, float]:
            margins = [margin(label, n) for n in names]
            return min(margins), statistics.fmean(margins)

        return max(labels, key=rule)

    names = list(scores)
    folds = {}
    for held in names:
        seen = [n for n in names if n != held]
        chosen = pick(seen)
        folds[held] = {"chosen": chosen, "margin": margin(chosen, held), HEADLINE: scores[held][chosen][HEADLINE]}
    overall = pick(names)
    return {"folds": folds, "chosen": overall, "margins": {n: margin(overall, n) for n in names}}


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench fusion")
    parser.add_argument("--sets", default="xquad,cmrc,locomo,scifact")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "memvault-bench" / "fusion",
                        help="kept vaults and their lists (reused by the next run)")  # fmt: skip
    parser.add_argument("--depth", type=int, default=100, help="candidates read from each retriever")
    parser.add_argument("--collect-only", action="store_true", help="index and read the lists, score nothing")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    data = {name: collect(name, args.work, args.depth) for name in args.sets.split(",")}
    if args.collect_only:
        return {"sets": {}, "collected": list(data)}
    fusions = candidates()
    scores = {name: score_set(d, fusions) for name, d in data.items()}
    labels = list(fusions)
    return {"depth": args.depth, "scores": scores, "loso": leave_one_out(scores, labels) if len(scores) > 1 else {}}


def table(report: dict[str, Any]) -> str:
    scores = report.get("scores") or {}
    if not scores:
        return "collected: " + ", ".join(report.get("collected", []))
    names = list(scores)
    lines = ["| fusion | " + " | ".join(names) + " | worst margin |", "|---|" + "---|" * (len(names) + 1)]
    first = scores[names[0]]
    for label in first:
        cells = [f"{scores[n][label][HEADLINE]:.3f}" for n in names]
        worst = min(
            scores[n][label][HEADLINE] - max(scores[n]["bm25"][HEADLINE], scores[n]["vector"][HEADLINE]) for n in names
        )
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {worst:+.3f} |")
    loso = report.get("loso")
    if loso:
        lines.append("")
        lines.append(f"chosen on all sets: {loso['chosen']} (margins " +
                     ", ".join(f"{n} {m:+.3f}" for n, m in loso["margins"].items()) + ")")  # fmt: skip
        for held, fold in loso["folds"].items():
            lines.append(
                f"held out {held}: chose {fold['chosen']}, nDCG@10 {fold[HEADLINE]:.3f}, margin {fold['margin']:+.3f}"
            )
    if "other@10" in scores.get("xquad", {}).get("bm25", {}):
        x = scores["xquad"]
        lines.append("")
        lines.append("xquad Chinese answer in the top 10: " + ", ".join(
            f"{label} {x[label]['other@10']:.3f}" for label in ("bm25", "vector", "engine hybrid")
        ))  # fmt: skip
    return "\n".join(lines)
