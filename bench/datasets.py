"""The evaluation sets in `../shared/bench`, read in place (never copied into the project).

Each set is a list of units: the notes that make one vault, the queries
asked of it, and how a query's hits are judged.
"""

from __future__ import annotations

import csv
import json
import os
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.metrics import doc_metrics, span_metrics

DATA = Path(os.environ.get("MEMVAULT_BENCH_DATA") or Path(__file__).resolve().parents[2] / "shared" / "bench")
Judge = Callable[[str, list[dict[str, Any]]], dict[str, float]]


@dataclass
class Unit:
    """One vault to index: files to copy (source, vault-relative target) and the queries to ask."""

    name: str
    files: list[tuple[Path, str]]
    queries: list[tuple[str, str, int | None]]  # id, text, category
    judge: Judge
    per_doc: int  # 1 when judged by document, 0 (no cap) when judged by line


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _qrels(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(dict)
    with open(path, encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            out[row["query-id"]][row["corpus-id"]] = float(row["score"])
    return out


def _doc_set(name: str, folder: Path, quick: int, seed: int, other: str = "", judged: str = "") -> list[Unit]:
    """A set judged by document; `other`: the prefix of the other language's documents, whose share of
    queries with one of them in the top 10 is reported as `other@10`; `judged`: the prefix of the only
    documents a query is judged on (its answers of another prefix are not in the vault)."""
    qrels = {
        q: {d: g for d, g in docs.items() if d.startswith(judged)} for q, docs in _qrels(folder / "qrels.tsv").items()
    }
    queries = [
        (str(q.get("_id", q.get("id"))), q.get("text") or q.get("query"), None)
        for q in _jsonl(folder / "queries.jsonl")
    ]
    queries = [q for q in queries if qrels.get(q[0]) and q[1] and q[1].strip()]  # CMRC has 2 empty questions
    docs = sorted(folder.glob("docs/*.md"))
    if quick:
        rnd = random.Random(seed)
        queries = rnd.sample(queries, min(quick, len(queries)))
        needed = {f"{d}.md" for q in queries for d in qrels[q[0]]}
        others = [d for d in docs if d.name not in needed]
        docs = [d for d in docs if d.name in needed] + rnd.sample(others, min(len(others), 10 * quick))

    def judge(qid: str, hits: list[dict[str, Any]]) -> dict[str, float]:
        ranked = [h["path"].removeprefix("docs/").removesuffix(".md") for h in hits]
        metrics = doc_metrics(ranked, qrels[qid])
        if other:
            wanted = {d for d, g in qrels[qid].items() if g > 0 and d.startswith(other)}
            metrics["other@10"] = float(bool(wanted & set(ranked[:10]))) if wanted else 0.0
        return metrics

    return [Unit(name, [(d, f"docs/{d.name}") for d in docs], queries, judge, per_doc=1)]


def scifact(quick: int = 0, seed: int = 1) -> list[Unit]:
    return _doc_set("scifact", DATA / "scifact", quick, seed)


def cmrc(quick: int = 0, seed: int = 1) -> list[Unit]:
    return _doc_set("cmrc2018", DATA / "zh_cmrc2018", quick, seed)


def xquad(quick: int = 0, seed: int = 1) -> list[Unit]:
    """English questions over English and Chinese sentences: `other@10` is the Chinese answer in the top 10."""
    return _doc_set("xquad", DATA / "xquad_r_bilingual", quick, seed, other="zh-")


def xquad_zh(quick: int = 0, seed: int = 1) -> list[Unit]:
    """English questions whose answer is in Chinese alone: the vault holds every Chinese sentence, and the
    English ones of the paragraphs not asked about (odd ones), so an English question's best English notes
    are near-misses on its article, never its answer; only the even paragraphs' questions are asked, each
    judged on its Chinese answer. A search that leans on its own script's best notes to rank the other's
    must not be led astray here."""
    folder = DATA / "xquad_r_bilingual"
    asked = {str(q["_id"]) for q in _jsonl(folder / "queries.jsonl") if q["metadata"]["paragraph"] % 2 == 0}
    unit = _doc_set("xquad-zh", folder, quick, seed, other="zh-", judged="zh-")[0]
    files = [f for f in unit.files if f[0].name.startswith("zh-") or int(f[0].name[4:7]) % 2 == 1]
    return [Unit(unit.name, files, [q for q in unit.queries if q[0] in asked], unit.judge, unit.per_doc)]


def locomo(quick: int = 0, seed: int = 1) -> list[Unit]:
    units = []
    convs = sorted(p.name for p in (DATA / "locomo" / "vaults").iterdir())
    for conv in convs[:1] if quick else convs:
        root = DATA / "locomo" / "vaults" / conv / "memory"
        ev = DATA / "locomo" / "eval" / conv
        lines: dict[str, tuple[str, int]] = {}
        with open(ev / "dia_index.tsv", encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                lines[row["dia_id"]] = (row["path"].removeprefix("memory/"), int(row["line"]))
        turns = {qid: [lines[d] for d in dias if d in lines] for qid, dias in _qrels(ev / "qrels_turn.tsv").items()}
        queries = [
            (q["id"], q["query"], int(q["category"])) for q in _jsonl(ev / "queries.jsonl") if turns.get(q["id"])
        ]
        if quick:
            queries = random.Random(seed).sample(queries, min(quick, len(queries)))

        def judge(qid: str, hits: list[dict[str, Any]], turns: dict = turns) -> dict[str, float]:
            return span_metrics([(h["path"], h["start_line"], h["end_line"]) for h in hits], turns[qid])

        files = [(p, p.relative_to(root).as_posix()) for p in sorted(root.rglob("*.md"))]
        units.append(Unit(f"locomo/{conv}", files, queries, judge, per_doc=0))
    return units


EXTRA = "extra/"  # where a mixed vault's notes in the other script are


def script_paths(name: str) -> dict[str, str] | None:
    """For a mixed vault: the folder of each script's notes, so that the dense retriever can be asked once
    per script, as the engine asks it (`search.scripts.dense_top`)."""
    if "+" not in name:
        return None
    base = "daily/" if name.startswith("locomo") else "docs/"
    return {"cjk": EXTRA, "latin": base} if "+zh" in name else {"latin": EXTRA, "cjk": base}


def _mixed(name: str, base: list[Unit], extra: Path, share: float, seed: int) -> list[Unit]:
    """`base`'s vaults with notes in the other script added (documents of the `extra` set, which answer
    none of base's queries), `share` of each vault's files in all: a monolingual question over a
    mixed vault, judged as in its own set (issue 28: the fusion must rank it as it would without them)."""
    pool = sorted(extra.glob("docs/*.md"))
    random.Random(seed).shuffle(pool)  # one order for every share: a smaller share's notes are in a larger's
    out = []
    for unit in base:
        n = round(len(unit.files) * share / (1 - share))
        added = [(d, f"{EXTRA}{d.name}") for d in pool[:n]]  # (a folder of their own: see `script_paths`)
        out.append(Unit(f"{name}/{unit.name}", unit.files + added, unit.queries, unit.judge, unit.per_doc))
    return out


def _small(unit: Unit, queries: int, others: int, seed: int, qrels: dict[str, dict[str, float]]) -> Unit:
    """A document set cut to `queries` questions, their documents and `others` x as many besides."""
    rnd = random.Random(seed)
    asked = rnd.sample(unit.queries, min(queries, len(unit.queries)))
    needed = {f"{d}.md" for q in asked for d in qrels[q[0]]}
    rest = [f for f in unit.files if f[0].name not in needed]
    files = [f for f in unit.files if f[0].name in needed] + rnd.sample(rest, min(len(rest), others * len(needed)))
    return Unit(unit.name, files, asked, unit.judge, unit.per_doc)


def mixed_sets(seed: int = 1) -> dict[str, Callable[..., list[Unit]]]:
    """The mixed-script vaults made from the shared sets (none of them is a set of its own): Chinese
    questions over Chinese passages with English abstracts added, the reverse, and a LoCoMo
    conversation with Chinese passages among its daily notes; each at two shares of the other script."""
    zh, en = DATA / "zh_cmrc2018", DATA / "scifact"

    def cmrc_small(_quick: int = 0, _seed: int = 1) -> list[Unit]:
        return [_small(cmrc()[0], 150, 2, seed, _qrels(zh / "qrels.tsv"))]

    def scifact_small(_quick: int = 0, _seed: int = 1) -> list[Unit]:
        return [_small(scifact()[0], 150, 2, seed, _qrels(en / "qrels.tsv"))]

    def locomo_one(_quick: int = 0, _seed: int = 1) -> list[Unit]:
        return locomo()[:1]

    def made(name: str, base: Callable[..., list[Unit]], extra: Path, share: float) -> Callable[..., list[Unit]]:
        return lambda _quick=0, _seed=1: _mixed(name, base(), extra, share, seed)

    sets: dict[str, Callable[..., list[Unit]]] = {}
    for share in (0.2, 0.5):
        for label, base, extra, other in (("cmrc", cmrc_small, en, "en"), ("scifact", scifact_small, zh, "zh"),
                                          ("locomo", locomo_one, zh, "zh")):  # fmt: skip
            name = f"{label}+{other}{round(share * 100)}"
            sets[name] = made(name, base, extra, share)
    return sets


SETS = {"scifact": scifact, "locomo": locomo, "cmrc": cmrc, "xquad": xquad, "xquad-zh": xquad_zh, **mixed_sets()}
