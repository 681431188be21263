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
import sqlite3
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.datasets import DATA, SETS, Unit, _qrels, script_paths
from bench.metrics import doc_metrics, mean
from bench.quality import MEMVAULT, copy_vault, index
from memvault.indexer.embed_cache import EmbedCache
from memvault.indexer.embedders import DEFAULT_EMBEDDER as EMBEDDER
from memvault.indexer.embedders import SCRIPT_BIAS
from memvault.search.fusion import cap_per_doc, first_near
from memvault.vault.cjk import cjk_share, script_of

Key = tuple[str, int, int, str]  # path, lines and snippet: a chunk (a long line is cut into several chunks)
Ranked = list[tuple[Key, float]]
ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
DELTAS = (0.0, 0.05, 0.09)  # cosine added to a chunk in the other script than the query's
HEADLINE = "ndcg@10"
# sets whose notes are named by their script: the dense retriever is also asked per script (a filter on
# the path), as an engine that retrieves per script would; elsewhere the per-script lists are cut from
# the one dense list
SCRIPT_PATHS = {"xquad": {"cjk": "docs/zh-", "latin": "docs/en-"}}


# --- what is asked and read once per set -------------------------------------------------------


def _prepare(unit: Unit, vault: Path) -> dict[str, Any]:
    """Copy the unit's notes unless the kept vault already holds them, then index (a no-op when kept).
    The work folder's pooled embedding cache seeds a new vault's and takes in what it embedded: the
    mixed vaults share most of their notes with one another."""
    marker = vault / ".memvault"
    pool = vault.parent.parent / "embeddings.sqlite"
    if not marker.exists():
        copy_vault(unit, vault)
        if pool.exists():
            marker.mkdir()
            _merge_cache(pool, marker / "embeddings.sqlite")
    summary, seconds = index(vault)
    _merge_cache(marker / "embeddings.sqlite", pool)
    return {"index_s": seconds, "chunks": summary.get("chunks"), "embedded": summary.get("chunks_embedded")}


def _merge_cache(source: Path, target: Path) -> None:
    """Every vector of `source`'s embedding cache that `target`'s lacks."""
    if not source.exists():
        return
    EmbedCache(target).close()  # the file and its table, as the indexer makes them
    db = sqlite3.connect(target)
    try:
        db.execute("ATTACH DATABASE ? AS src", (str(source),))
        db.execute("INSERT OR IGNORE INTO embed_cache SELECT * FROM src.embed_cache")
        db.commit()
    finally:
        db.close()


def _ask(unit: Unit, vault: Path, depth: int, scripts: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Per query: the BM25 and dense lists (depth each, no per-document cap), the engine's hybrid, and
    with `scripts` (script -> path prefix) a dense list per script."""
    batch = vault.parent / f"{vault.name}-queries.jsonl"
    plain = {"limit": depth, "per_doc": 0, "dates": "off", "depth": depth}
    with open(batch, "w", encoding="utf-8") as fh:
        for qid, text, _ in unit.queries:
            for mode in ("bm25", "vector"):
                fh.write(json.dumps({"id": f"{mode}|{qid}", "query": text, "mode": mode, **plain}) + "\n")
            for script, prefix in (scripts or {}).items():
                line = {"id": f"vector-{script}|{qid}", "query": text, "mode": "vector", "path": prefix, **plain}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
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
        source = "vector" if mode.startswith("vector") else mode
        lists[qid][mode] = [
            [h["path"], h["start_line"], h["end_line"], h["snippet"], h["scores"].get(source, h["score"])]
            for h in answer["hits"]
        ]
    return lists


def _scripts(vault: Path, keys: set[Key]) -> dict[Key, str]:
    """Each chunk's script, read from its note's lines: 'cjk' when most of its letters are CJK."""
    files: dict[str, list[str]] = {}
    out = {}
    for path, start, end, snippet in keys:
        if path not in files:
            files[path] = (vault / path).read_text(encoding="utf-8").splitlines()
        text = "\n".join(files[path][start - 1 : end])
        out[(path, start, end, snippet)] = script_of(text)
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
        lists = _ask(unit, vault, depth, SCRIPT_PATHS.get(name) or script_paths(name))
        keys = {tuple(h[:4]) for q in lists.values() for hits in q.values() for h in hits}
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


@dataclass
class Q:
    """One query's candidates: BM25's list, the dense list, the dense list per script, each chunk's
    script and the query's."""

    bm25: Ranked
    vector: Ranked
    by_script: dict[str, Ranked]
    scripts: dict[Key, str]
    script: str

    def other(self, key: Key) -> bool:
        return self.scripts.get(key, "latin") != self.script


Fusion = Callable[[Q], list[Key]]


def _order(scores: dict[Key, float]) -> list[Key]:
    return sorted(scores, key=lambda k: (-scores[k], k))


def _rrf(ranks: Sequence[tuple[dict[Key, float], float]], k: int = 60, sign: int = 1) -> list[Key]:
    """`sign=-1`: the second ranking holds negated ranks (so that `_per_script` keeps the best)."""
    scores: dict[Key, float] = defaultdict(float)
    for n, (ranking, weight) in enumerate(ranks):
        for key, rank in ranking.items():
            scores[key] += weight / (k + (-rank if sign < 0 and n else rank))
    return _order(scores)


def _neg_ranks(items: Ranked) -> dict[Key, float]:
    return {key: -float(r) for r, (key, _) in enumerate(items, start=1)}


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


def _crosslingual(q: Q, delta: float, depth: int) -> Ranked:
    """One dense list from the plain list and the per-script ones, the other script's cosines raised by
    `delta` (the model's same-language bias): the best Chinese sentence competes with the English ones
    on a corrected cosine, not from below the hundredth English near-miss."""
    best: dict[Key, float] = {}
    for items in (q.vector, *q.by_script.values()):
        for key, score in items:
            best[key] = score + (delta if q.other(key) else 0.0)
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]


def _xl_rrf(q: Q, alpha: float, delta: float, impute: bool) -> list[Key]:
    """RRF over the cross-lingual dense list; with `impute`, a chunk in the other script (which BM25
    cannot match) takes its dense rank for the BM25 rank it could never get."""
    dense = _crosslingual(q, delta, len(q.vector) or 100)
    ranks_v = _ranks(dense)
    ranks_b = _ranks(q.bm25)
    if impute:
        ranks_b = {**{k: r for k, r in ranks_v.items() if q.other(k)}, **ranks_b}
    return _rrf([(ranks_b, 1 - alpha), (ranks_v, alpha)])


def _xl_minmax(q: Q, alpha: float, delta: float, impute: bool) -> list[Key]:
    dense = _minmax(_crosslingual(q, delta, len(q.vector) or 100))
    bm = _minmax(q.bm25)
    if impute:
        bm = {**{k: v for k, v in dense.items() if q.other(k)}, **bm}
    return _convex(bm, dense, alpha, (0.0, 0.0))


def _xl_zscore(q: Q, alpha: float, delta: float) -> list[Key]:
    dense, bm = _zscore(_crosslingual(q, delta, len(q.vector) or 100)), _zscore(q.bm25)
    return _convex(bm, dense, alpha, (_zfloor(bm), _zfloor(dense)))


def _agreeing(q: Q, alpha: float) -> list[Key]:
    """Query-adaptive: the dense share moves with how much the two top-20 lists agree (alpha when they
    share half), on min-max scores over the cross-script dense list."""
    top_b, top_v = {k for k, _ in q.bm25[:20]}, {k for k, _ in q.vector[:20]}
    overlap = len(top_b & top_v) / 20
    share = min(0.9, max(0.1, alpha + 0.4 * (overlap - 0.5)))
    return _xl_minmax(q, share, 0.05, False)


def _per_script(q: Q, normalise: Callable[[Ranked], dict[Key, float]]) -> dict[Key, float]:
    """Each script's own dense list normalised on its own, so each script's best is 1: no bias to calibrate."""
    out: dict[Key, float] = {}
    for items in q.by_script.values():
        for key, value in normalise(items).items():
            out[key] = max(value, out.get(key, value))
    return out


def _engine(q: Q, bias_when: Callable[[Q], bool] | None = None, alpha: float = 0.5) -> list[Key]:
    """The engine's default (z-scores at equal weights over BM25 and the dense list across scripts, the
    other script's cosines raised by the model's measured bias for the query's script); `bias_when`:
    raise them only for the queries it admits (else the other script competes on its raw cosine);
    `alpha`: another dense share."""
    bias = SCRIPT_BIAS.get(EMBEDDER, {}).get(q.script, 0.0)
    if bias_when is not None and not bias_when(q):
        bias = 0.0
    return _xl_zscore(q, alpha, bias)


def _first_near(q: Q, keys: list[Key], k: int) -> list[Key]:
    """The engine's guard (`search.fusion.first_near`) with "near" as a retriever's top `k` in the query's
    own script (BM25, or the dense list of that script)."""
    near = {key for key, _ in q.bm25[:k]} | {key for key, _ in q.by_script.get(q.script, [])[:k]}
    return first_near(keys, near.__contains__)


def _own_weak(q: Q, floor: float) -> bool:
    """Nothing in the query's own script reaches the relevance floor: the other script may be raised."""
    own = q.by_script.get(q.script, [])
    return not own or own[0][1] < floor


def guarded() -> dict[str, Fusion]:
    """The engine's fusion and its guards (issue 28), by name."""
    out: dict[str, Fusion] = {"engine-sim": _engine}
    for k in (1, 2, 3, 5, 10):
        out[f"first-near {k}"] = lambda q, k=k: _first_near(q, _engine(q), k)
    for a in ALPHAS:  # the dense share moved too
        out[f"engine-sim {a}"] = lambda q, a=a: _engine(q, alpha=a)
        for k in (1, 3):
            out[f"first-near {k} {a}"] = lambda q, a=a, k=k: _first_near(q, _engine(q, alpha=a), k)
    for floor in (0.80, 0.84, 0.88):
        weak = lambda q, f=floor: _own_weak(q, f)  # noqa: E731
        out[f"bias-if-weak {floor}"] = lambda q, w=weak: _engine(q, w)
        out[f"bias-if-weak {floor} + first-near 3"] = lambda q, w=weak: _first_near(q, _engine(q, w), 3)
    return out


def candidates() -> dict[str, Fusion]:
    """Every fusion measured, by name; alpha is the dense retriever's share."""
    out: dict[str, Fusion] = dict(guarded())
    for delta in DELTAS:  # the dense retriever alone, across scripts
        out[f"xl-dense d{delta}"] = lambda q, d=delta: [k for k, _ in _crosslingual(q, d, len(q.vector) or 100)]
    for a in ALPHAS:
        out[f"rrf {a}"] = lambda q, a=a: _rrf([(_ranks(q.bm25), 1 - a), (_ranks(q.vector), a)])
        out[f"lang-rrf {a}"] = lambda q, a=a: _rrf([(_ranks(q.bm25), 1 - a), (_lang_ranks(q.vector, q.scripts), a)])
        out[f"minmax {a}"] = lambda q, a=a: _convex(_minmax(q.bm25), _minmax(q.vector), a, (0.0, 0.0))
        out[f"lang-minmax {a}"] = lambda q, a=a: _convex(
            _minmax(q.bm25), _by_script(q.vector, q.scripts, _minmax), a, (0.0, 0.0)
        )
        out[f"ps-minmax {a}"] = lambda q, a=a: _convex(_minmax(q.bm25), _per_script(q, _minmax), a, (0.0, 0.0))
        out[f"ps-rrf {a}"] = lambda q, a=a: _rrf([(_ranks(q.bm25), 1 - a), (_per_script(q, _neg_ranks), a)], sign=-1)
        out[f"tmm {a}"] = lambda q, a=a: _convex(_theoretical(q.bm25, 0.0), _theoretical(q.vector, -1.0), a, (0.0, 0.0))

        def z(q: Q, a: float = a, lang: bool = False) -> list[Key]:
            bz, vz = _zscore(q.bm25), (_by_script(q.vector, q.scripts, _zscore) if lang else _zscore(q.vector))
            return _convex(bz, vz, a, (_zfloor(bz), _zfloor(vz)))

        out[f"zscore {a}"] = z
        out[f"lang-zscore {a}"] = lambda q, a=a, z=z: z(q, a, True)
        out[f"adaptive {a}"] = lambda q, a=a: _agreeing(q, a)
        for delta in DELTAS:
            out[f"xl-zscore d{delta} {a}"] = lambda q, a=a, d=delta: _xl_zscore(q, a, d)
            for impute in (False, True):
                tag = f"{'+imp' if impute else ''} d{delta}"
                out[f"xl-rrf{tag} {a}"] = lambda q, a=a, d=delta, i=impute: _xl_rrf(q, a, d, i)
                out[f"xl-minmax{tag} {a}"] = lambda q, a=a, d=delta, i=impute: _xl_minmax(q, a, d, i)
    return out


# --- scoring ---------------------------------------------------------------------------------


def _headline_rows(name: str, rows: list[tuple[int | None, dict[str, float]]]) -> dict[str, float]:
    """LoCoMo's headline is categories 1-4 (5 is adversarial: no answer in the conversation)."""
    kept = [m for c, m in rows if not name.startswith("locomo") or c in (1, 2, 3, 4)]
    return {**mean(kept), "n": len(kept)}


def _monolingual(qid: str, qrels: dict[str, dict[str, float]]) -> tuple[str, dict[str, float]]:
    """XQuAD-R as a vault whose other language lacks the answer: the Chinese sentences of the question's
    paragraph are taken out of every list, and only the English answer is relevant. A fusion that lifts
    the other script blindly pays for it here."""
    english = {d: g for d, g in qrels[qid].items() if d.startswith("en-")}
    paragraph = next(iter(english)).split("s")[0].removeprefix("en-")  # en-p000s03 -> p000
    return f"docs/zh-{paragraph}", english


def score_set(
    data: dict[str, Any], fusions: dict[str, Fusion], mono: bool = False, cut: int = 0
) -> dict[str, dict[str, float]]:
    """Mean metrics of every fusion, of BM25 and dense alone, and of the engine's hybrid, on one set
    (`mono`: XQuAD-R with the answer in English only, see `_monolingual`)."""
    name = data["set"]
    units = SETS[name](0)
    qrels = _qrels(DATA / "xquad_r_bilingual" / "qrels.tsv") if mono else {}
    rows: dict[str, list] = defaultdict(list)
    for unit, got in zip(units, data["units"], strict=True):
        scripts = {(p, s, e, n): script for p, s, e, n, script in got["scripts"]}
        for qid, _text, cat, query_cjk in got["queries"]:
            lists = got["lists"][qid]
            judge = unit.judge
            if mono:
                dropped, english = _monolingual(qid, qrels)
                lists = {m: [h for h in hits if not h[0].startswith(dropped)] for m, hits in lists.items()}

                def judge(qid: str, hits: list[dict[str, Any]], english: dict[str, float] = english) -> dict:
                    ranked = [h["path"].removeprefix("docs/").removesuffix(".md") for h in hits]
                    return doc_metrics(ranked, english)

            def ranked_list(mode: str, lists: dict = lists) -> Ranked:
                items = [((p, s, e, n), score) for p, s, e, n, score in lists.get(mode, [])]
                return items[:cut] if cut else items

            bm, vec = ranked_list("bm25"), ranked_list("vector")
            by_script = {m.removeprefix("vector-"): ranked_list(m) for m in lists if m.startswith("vector-")}
            if not by_script:  # cut from the one dense list
                by_script = defaultdict(list)
                for key, score in vec:
                    by_script[scripts.get(key, "latin")].append((key, score))
            q = Q(bm, vec, dict(by_script), scripts, "cjk" if query_cjk else "latin")
            ranked = {"bm25": [k for k, _ in bm], "vector": [k for k, _ in vec]}
            ranked["engine hybrid"] = [(p, s, e, n) for p, s, e, n, _ in lists["hybrid"]]
            for label, fuse in fusions.items():
                ranked[label] = fuse(q)
            for label, keys in ranked.items():
                kept = cap_per_doc(((key, key[0]) for key in keys), unit.per_doc, 100)
                hits = [{"path": p, "start_line": s, "end_line": e} for p, s, e, _ in kept]
                rows[label].append((cat, judge(qid, hits)))
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
    parser.add_argument("--cut", type=int, default=20,
                        help="fuse each list's top N (search's default depth: 20; 0: all `--depth`)")  # fmt: skip
    parser.add_argument("--collect-only", action="store_true", help="index and read the lists, score nothing")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    data = {name: collect(name, args.work, args.depth) for name in args.sets.split(",")}
    if args.collect_only:
        return {"sets": {}, "collected": list(data)}
    fusions = candidates()
    scores = {name: score_set(d, fusions, cut=args.cut) for name, d in data.items()}
    if "xquad" in data:
        scores["xquad-mono"] = score_set(data["xquad"], fusions, mono=True, cut=args.cut)
    labels = [label for label in fusions if not label.startswith("xl-dense")]  # fusions only
    loso = leave_one_out(scores, labels) if len(scores) > 1 else {}
    return {"depth": args.depth, "cut": args.cut, "scores": scores, "loso": loso}


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
