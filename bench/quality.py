"""`python -m bench quality`: nDCG@10, Recall@10/100 and MRR@10 per set and mode, in one run,
through the real CLI: `memvault index`, then `memvault search --batch --json` on a fresh temp vault.

With `--server`, each vault is also indexed into a server collection (qdrant-client's local mode, the
client API a Qdrant server speaks) and its queries asked from a folder with no vault and no local index
(`memvault --qdrant-url URL search`), each run labelled "<label> server" beside the embedded default's.
That vault's embedding cache is seeded from the embedded one's (one model, one text: one vector), so the
model runs once."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.datasets import SETS, Unit
from bench.metrics import mean

MEMVAULT = str(Path(sys.executable).parent / "memvault")
MODES = ("bm25", "vector", "hybrid", "substring")
# named sets of runs for `--search-options NAME` (or give a JSON object of label -> search options)
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "time": {  # issue 15: each time feature alone against the plain hybrid, one index per vault
        "hybrid": {"mode": "hybrid", "dates": "off"},
        "decay 30": {"mode": "hybrid", "dates": "off", "decay": 30},
        "decay 365": {"mode": "hybrid", "dates": "off", "decay": 365},
        "mmr 0.7": {"mode": "hybrid", "dates": "off", "mmr": 0.7},
        "mmr 0.5": {"mode": "hybrid", "dates": "off", "mmr": 0.5},
        "dates boost": {"mode": "hybrid", "dates": "boost"},
        "dates filter": {"mode": "hybrid", "dates": "filter"},
    },
}


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([MEMVAULT, *args], capture_output=True, text=True, cwd=cwd)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"memvault {' '.join(args[:3])} failed: {result.stderr.strip()[-500:]}")
    return result


def copy_vault(unit: Unit, vault: Path) -> None:
    shutil.rmtree(vault, ignore_errors=True)
    for src, rel in unit.files:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, vault / rel)


def index(vault: Path, *flags: str) -> tuple[dict[str, Any], float]:
    """`memvault index --json` with flags; the summary and the wall seconds."""
    started = time.perf_counter()
    summary = json.loads(_run(["--vault", str(vault), "index", "--json", *flags]).stdout)
    return summary, time.perf_counter() - started


def ask(unit: Unit, vault: Path | str, runs: dict[str, dict[str, Any]], tmp: Path) -> tuple[dict[str, list], float]:
    """One `search --batch` for every (label, options) in runs x every query; judged rows per label. `vault`
    a URL: the server collection's, asked from a folder with no vault."""
    batch = tmp / "queries.jsonl"
    with open(batch, "w", encoding="utf-8") as fh:
        for qid, text, _ in unit.queries:  # query-major: repeated queries hit the engine's query-vector cache
            for label, options in runs.items():
                line = {"id": f"{label}|{qid}", "query": text, "limit": 100, "per_doc": unit.per_doc, **options}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    started = time.perf_counter()
    if isinstance(vault, str):
        (nowhere := tmp / "no-vault").mkdir(exist_ok=True)
        out = _run(["--qdrant-url", vault, "search", "--batch", str(batch), "--json"], nowhere)
    else:
        out = _run(["--vault", str(vault), "search", "--batch", str(batch), "--json"])
    search_s = time.perf_counter() - started
    category = {qid: cat for qid, _, cat in unit.queries}
    rows: dict[str, list[tuple[int | None, dict[str, float]]]] = defaultdict(list)
    for line in out.stdout.splitlines():
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{unit.name}: {answer}")
        label, qid = answer["id"].split("|", 1)
        rows[label].append((category[qid], unit.judge(qid, answer["hits"])))
    return rows, search_s


def run_unit(unit: Unit, runs: dict[str, dict[str, Any]], tmp: Path, kept: Path | None = None,
             server: bool = False) -> dict[str, Any]:  # fmt: skip
    """Index the unit's vault once and ask every run's queries of that one index; `kept`: a vault
    folder kept from an earlier run (`--keep`), copied into only when it has no index yet. `server`:
    the same through a server collection too (the module's docstring)."""
    vault = kept or tmp / "vault"
    if kept is None or not (kept / ".memvault").exists():
        copy_vault(unit, vault)
    summary, index_s = index(vault)
    rows, search_s = ask(unit, vault, runs, tmp)
    out = {"rows": rows, "index": summary, "index_s": index_s, "search_s": search_s, "queries": len(unit.queries)}
    if server:
        served = vault.with_name(vault.name + "-server")
        store = served.with_name(served.name + ".qdrant")
        if kept is None or not (served / ".memvault").exists():
            shutil.rmtree(store, ignore_errors=True)
            copy_vault(unit, served)
            (served / ".memvault").mkdir(mode=0o700)
            shutil.copyfile(vault / ".memvault" / "embeddings.sqlite", served / ".memvault" / "embeddings.sqlite")
        url = f"local:{store}"
        out["server_index"], out["server_index_s"] = index(served, "--qdrant-url", url)
        server_rows, out["server_search_s"] = ask(unit, url, runs, tmp)
        rows.update({f"{label} server": r for label, r in server_rows.items()})
    return out


def summarise(name: str, labels: list[str], per_label: dict[str, list]) -> dict[str, Any]:
    """Mean metrics per label; LoCoMo split into categories 1-4 (the headline) and 5 (adversarial),
    and each of 1 (multi-hop), 2 (temporal), 3 (open-domain) and 4 (single-hop)."""
    summary: dict[str, Any] = {}
    for label in labels:
        rows = per_label[label]
        if name.startswith("locomo"):
            groups = {"cat1-4": {1, 2, 3, 4}, **{f"cat{c}": {c} for c in (1, 2, 3, 4)}, "cat5": {5}}
            summary[label] = {
                group: {**mean([m for c, m in rows if c in cats]), "n": sum(c in cats for c, _ in rows)}
                for group, cats in groups.items()
            }
        else:
            summary[label] = {**mean([m for _, m in rows]), "n": len(rows)}
    return summary


def main(
    sets: list[str],
    quick: int | dict[str, int],
    modes: tuple[str, ...],
    runs: dict[str, dict[str, Any]] | None = None,
    keep: Path | None = None,
    server: bool = False,
) -> dict[str, Any]:
    """Every set x every run (a mode each, unless `runs` names search options per label); `quick` is
    one sample size for all sets or one per set (a set not named is read in full). `keep`: index into
    `keep/<set>/<n>` and keep it (the default model takes half an hour over SciFact), full sets only."""
    if keep and quick:
        raise ValueError("--keep holds full sets' indexes: leave out --quick")
    runs = runs or {mode: {"mode": mode} for mode in modes}
    report: dict[str, Any] = {"quick": quick, "modes": modes, "runs": runs, "server": server, "sets": {}}
    labels = [*runs, *(f"{label} server" for label in runs if server)]
    with tempfile.TemporaryDirectory(prefix="memvault-quality-") as tmp:
        for name in sets:
            per_mode: dict[str, list[tuple[int | None, dict[str, float]]]] = defaultdict(list)
            timing = {"index_s": 0.0, "search_s": 0.0, "chunks_embedded": 0, "queries": 0}
            units = SETS[name](quick.get(name, 0) if isinstance(quick, dict) else quick)
            for n, unit in enumerate(units):
                result = run_unit(unit, runs, Path(tmp), keep / name / str(n) if keep else None, server)
                for mode, rows in result["rows"].items():
                    per_mode[mode].extend(rows)
                timing["index_s"] += result["index_s"]
                timing["search_s"] += result["search_s"]
                timing["chunks_embedded"] += result["index"]["chunks_embedded"]
                timing["queries"] += result["queries"]
                for key in ("server_index_s", "server_search_s"):
                    timing[key] = timing.get(key, 0.0) + result.get(key, 0.0)
            summary = summarise(name, labels, per_mode)
            report["sets"][name] = {"metrics": summary, "timing": timing}
            print(f"# {name} done: {timing}", file=sys.stderr)
            print(table({"sets": {name: report["sets"][name]}}), file=sys.stderr)  # partial results survive a stop
    return report


def table(report: dict[str, Any]) -> str:
    lines = [
        "| set | mode | nDCG@10 | R@10 | R@100 | MRR@10 | other language in top 10 | lines@10 | queries |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, data in report["sets"].items():
        for mode, metrics in data["metrics"].items():
            groups = metrics.items() if name.startswith("locomo") else [("", metrics)]
            for label, m in groups:
                if not m.get("n"):
                    continue
                set_name = f"{name} {label}".strip()
                other = f"{m['other@10']:.3f}" if "other@10" in m else ""
                read = f"{m['lines@10']:.1f}" if "lines@10" in m else ""
                lines.append(
                    f"| {set_name} | {mode} | {m['ndcg@10']:.3f} | {m['recall@10']:.3f} | {m['recall@100']:.3f} "
                    f"| {m['mrr@10']:.3f} | {other} | {read} | {m['n']} |"
                )
    return "\n".join(lines)
