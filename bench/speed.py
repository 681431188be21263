"""`python -m bench speed`: indexing and search speed through the real CLI and daemon, in one run.

Every comparison is a ratio of figures measured in this same run; each
figure carries its number of runs and min / median / p95 / max, since
absolute times drift on shared machines.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MEMVAULT = str(Path(sys.executable).parent / "memvault")
EN = (
    "deploy",
    "budget",
    "kernel",
    "garden",
    "invoice",
    "sprint",
    "latency",
    "vector",
    "backup",
    "meeting",
    "release",
    "tomato",
    "cluster",
    "ticket",
    "migration",
    "coffee",
    "review",
    "roadmap",
    "bicycle",
    "server",
)
ENTRIES = 6  # list items per section of a generated note
ZH = ("向量", "数据库", "会议", "预算", "部署", "花园", "咖啡", "迁移", "发布", "服务器", "备份", "延迟", "路线图")


def _sentence(rnd: random.Random) -> str:
    if rnd.random() < 0.35:
        return "".join(rnd.choice(ZH) for _ in range(rnd.randint(6, 14))) + "。"
    words = [rnd.choice(EN) for _ in range(rnd.randint(8, 16))]
    return " ".join(words).capitalize() + "."


def generate_vault(root: Path, files: int, sections: int, seed: int = 7) -> None:
    """A deterministic vault: daily notes of mixed Chinese and English, and a MEMORY.md."""
    rnd = random.Random(seed)
    (root / "daily").mkdir(parents=True, exist_ok=True)
    start = dt.date(2020, 1, 1)
    for i in range(files):
        day = start + dt.timedelta(days=i % 3650)
        name = f"daily/{day.isoformat()}.md" if i < 3650 else f"notes/{i // 1000:03}/n{i}.md"
        body = [f"# {day.isoformat()}"]
        for s in range(sections):
            body.append(f"\n## Topic {s}\n")
            body.extend(f"- {_sentence(rnd)} {_sentence(rnd)}" for _ in range(ENTRIES))
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(body) + "\n", encoding="utf-8")
    memory = ["# 长期记忆"] + [
        f"\n## Section {s}\n" + "\n".join(f"- {_sentence(rnd)}" for _ in range(8)) for s in range(5)
    ]
    (root / "MEMORY.md").write_text("\n".join(memory) + "\n", encoding="utf-8")


def spread(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {"runs": len(values), "min": round(ordered[0], 4), "median": round(statistics.median(ordered), 4),
            "p95": round(p95, 4), "max": round(ordered[-1], 4)}  # fmt: skip


def run(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, str, int]:
    """Wall seconds, stdout and peak RSS (KiB, from the child's own rusage) of one CLI process."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen([MEMVAULT, *args], stdout=out, stderr=err, env={**os.environ, **(env or {})}, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"memvault {' '.join(args[:4])}: {err.read().strip()[-400:]}")
        return seconds, out.read(), usage.ru_maxrss


def _du(path: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def _bytes_per_chunk(state: Path) -> dict[str, float]:
    """Disk bytes per indexed chunk of the manifest, the embedding cache (in the manifest until its
    own file, `embeddings.sqlite`) and the vector store."""
    db = sqlite3.connect(f"file:{state / 'manifest.sqlite'}?mode=ro", uri=True, timeout=10)
    try:
        chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] or 1
        tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        inline_cache = (
            db.execute("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE '%embed_cache%'").fetchone()[0]
            if "embed_cache" in tables
            else 0
        )
    finally:
        db.close()
    manifest = sum(_du(p) if p.is_dir() else p.lstat().st_blocks * 512 for p in state.glob("manifest.sqlite*"))
    cache = sum(p.lstat().st_blocks * 512 for p in state.glob("embeddings.sqlite*")) + (inline_cache or 0)
    return {"manifest_bytes_per_chunk": round((manifest - (inline_cache or 0)) / chunks),
            "embed_cache_bytes_per_chunk": round(cache / chunks),
            "vector_store_bytes_per_chunk": round(_du(state / "vectors") / chunks)}  # fmt: skip


def index_block(vault: Path, embedder: str | None, compare_embedder: bool) -> dict[str, Any]:
    flag = ["--embedder", embedder] if embedder else []
    full_s, out, full_rss = run(["--vault", str(vault), "index", "--json", *flag])
    full = json.loads(out)
    again = [run(["--vault", str(vault), "index", "--json"]) for _ in range(3)]
    result: dict[str, Any] = {
        "files": full["files_scanned"], "chunks_embedded": full["chunks_embedded"],
        "full_index_s": round(full_s, 2), "index_chunks_per_s": round(full["chunks_embedded"] / full_s, 1),
        "index_peak_rss_mib": round(full_rss / 1024, 1),
        "no_change_reindex_s": spread([s for s, _, _ in again]),
        "no_change_files_changed": max(json.loads(o)["files_changed"] for _, o, _ in again),
        "store_bytes": _du(vault / ".memvault"),
        **_bytes_per_chunk(vault / ".memvault"),
    }  # fmt: skip
    if compare_embedder:
        # in a child of its own, so the model's memory never inflates this process (and the RSS of
        # the CLI children forked from it)
        probe = subprocess.run(
            [sys.executable, "-m", "bench.embed_alone", str(vault), embedder or ""],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        result["embedder_alone_chunks_per_s"] = float(probe.stdout.strip())
        result["pipeline_over_embedder"] = round(
            result["index_chunks_per_s"] / result["embedder_alone_chunks_per_s"], 3
        )
    return result


def no_change_block(vault: Path, files: int, runs: int) -> dict[str, Any]:
    """A no-change `memvault index` of a small vault, the whole process as a person or a hook runs it,
    against a process that only walks the vault (`vault.scan.scan_vault`), run in turns."""
    generate_vault(vault, files, sections=1, seed=files)
    run(["--vault", str(vault), "index", "--json", "--embedder", "hash-384"])
    code = ("import sys; from pathlib import Path; from memvault.vault.paths import Layout; "
            "from memvault.vault.scan import scan_vault; "
            "list(scan_vault(Layout(Path(sys.argv[1]).resolve())))")  # fmt: skip
    walk = [sys.executable, "-c", code, str(vault)]
    index_s, walk_s, changed = [], [], []
    for _ in range(runs):
        seconds, out, _ = run(["--vault", str(vault), "index", "--json"])
        index_s.append(seconds)
        changed.append(json.loads(out)["files_changed"])
        started = time.perf_counter()
        subprocess.run(walk, check=True)
        walk_s.append(time.perf_counter() - started)
    return {"files": files, "no_change_reindex_s": spread(index_s), "walk_alone_s": spread(walk_s),
            "no_change_files_changed": max(changed)}  # fmt: skip


def fresh_block(vault: Path, runs: int) -> dict[str, Any]:
    """With no daemon: a save through the CLI, then a search for its words; a line appended as an
    editor would, then a search for it. Each a whole process; how long, and whether the search found it."""
    day = next(iter(sorted((vault / "daily").glob("*.md"))))

    def search(word: str) -> tuple[float, bool]:
        seconds, out, _ = run(["--vault", str(vault), "search", word, "--mode", "bm25", "--json"])
        return seconds, any(word in h["text"] for h in json.loads(out)["hits"])

    save_s, after_save, after_edit = [], [], []
    for i in range(runs):
        save_s.append(run(["--vault", str(vault), "note", f"Decided on the freshsave{i}q plan"])[0])
        after_save.append(search(f"freshsave{i}q"))
        with open(day, "a", encoding="utf-8") as fh:
            fh.write(f"- an editor's line about freshedit{i}q\n")
        after_edit.append(search(f"freshedit{i}q"))
    return {"save_s": spread(save_s), "search_after_save_s": spread([s for s, _ in after_save]),
            "found_after_save": sum(f for _, f in after_save),
            "search_after_edit_s": spread([s for s, _ in after_edit]),
            "found_after_edit": sum(f for _, f in after_edit), "runs": runs}  # fmt: skip


def _manifest_sha(vault: Path, rel: str) -> str | None:
    db = sqlite3.connect(f"file:{vault / '.memvault' / 'manifest.sqlite'}?mode=ro", uri=True, timeout=10)
    try:
        row = db.execute("SELECT sha256 FROM files WHERE path=?", (rel,)).fetchone()
        return row[0] if row else None
    finally:
        db.close()


def daemon_block(vault: Path, queries: list[str], edits: int, cold_runs: int, warm_runs: int) -> dict[str, Any]:
    from memvault.daemon.client import connect

    run(["--vault", str(vault), "daemon", "start"])
    pid = int((vault / ".memvault" / "daemon.pid").read_text())
    result: dict[str, Any] = {}
    try:
        target = next(p for p in sorted(vault.rglob("*.md")) if ".memvault" not in p.parts)
        rel = target.relative_to(vault).as_posix()
        latencies = []
        for i in range(edits):
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"\n- edit number {i} marker{i}x\n")
            want = hashlib.sha256(target.read_bytes()).hexdigest()
            started = time.perf_counter()
            while _manifest_sha(vault, rel) != want:
                time.sleep(0.02)
            latencies.append(time.perf_counter() - started)
            time.sleep(0.2)
        result["edit_to_searchable_s"] = spread(latencies)
        conn = connect(vault_layout(vault), timeout=120)
        rtt = []
        for q in (queries * (100 // len(queries) + 1))[:100]:
            started = time.perf_counter()
            assert conn.call({"op": "search", "query": q})["ok"]
            rtt.append(time.perf_counter() - started)
        conn.close()
        result["socket_query_s"] = spread(rtt)
        one_vault = ["--vault", str(vault), "search", "--scope", "project", "--json"]
        warm = [run([*one_vault, q])[0] for q in queries[:warm_runs]]
        result["cli_search_via_daemon_s"] = spread(warm)
        status = Path(f"/proc/{pid}/status").read_text()
        rss = {
            k: int(v.split()[0])
            for k, v in (line.split(":", 1) for line in status.splitlines())
            if k in ("VmHWM", "VmRSS")
        }
        result["daemon_rss_mib"] = round(rss["VmRSS"] / 1024, 1)
        result["daemon_peak_rss_mib"] = round(rss["VmHWM"] / 1024, 1)
    finally:
        run(["--vault", str(vault), "daemon", "stop"])
    cold = [run(["--vault", str(vault), "search", "--scope", "project", "--json", q]) for q in queries[:cold_runs]]
    result["cli_search_cold_s"] = spread([s for s, _, _ in cold])
    result["cold_search_peak_rss_mib"] = round(max(r for _, _, r in cold) / 1024, 1)
    result["cold_over_daemon_median"] = round(
        result["cli_search_cold_s"]["median"] / result["cli_search_via_daemon_s"]["median"], 2
    )
    return result


def vault_layout(vault: Path):
    from memvault.vault.paths import Layout

    return Layout(vault.resolve())


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench speed")
    parser.add_argument("--files", type=int, default=1000, help="generated vault size (real model)")
    parser.add_argument(
        "--source", type=Path, help="a folder of notes to copy instead of generating (e.g. SciFact docs)"
    )
    parser.add_argument("--queries", type=Path, help="queries.jsonl to search with (default: generated words)")
    parser.add_argument(
        "--large", default="10000,100000", help="chunk counts for the stand-in embedder runs ('' to skip)"
    )
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--cold", type=int, default=20)
    parser.add_argument("--server", action="store_true",
                        help="each stand-in vault through a server collection too (bench/speed_server.py)")  # fmt: skip
    parser.add_argument("--server-cold", type=int, default=5,
                        help="with --server: cold searches per mode, embedded and server in turns")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for the test suite")
    parser.add_argument("--workdir", type=Path, help="keep vaults here instead of a temp folder")
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.large, args.edits, args.cold, args.server_cold = 40, "300", 3, 3, 2
    work = args.workdir or Path(tempfile.mkdtemp(prefix="memvault-speed-"))
    report: dict[str, Any] = {"quick": args.quick, "runs": {}}
    rnd = random.Random(3)
    queries = [" ".join(rnd.sample(EN, 2)) for _ in range(50)] + [rnd.choice(ZH) + rnd.choice(ZH) for _ in range(50)]
    if args.queries:
        lines = [json.loads(x) for x in args.queries.read_text(encoding="utf-8").splitlines() if x.strip()]
        queries = [q.get("text") or q.get("query") for q in lines][:100]
    try:
        main_vault = work / "main"
        if args.source:
            (main_vault / "docs").mkdir(parents=True)
            for f in sorted(args.source.glob("*.md")):
                shutil.copyfile(f, main_vault / "docs" / f.name)
        else:
            generate_vault(main_vault, args.files, sections=1)
        report["runs"]["real_model"] = {
            "index": index_block(main_vault, None, compare_embedder=True),
            "daemon": daemon_block(main_vault, queries, args.edits, args.cold, warm_runs=args.cold),
        }
        small = 40 if args.quick else 200
        report["runs"][f"no_change_{small}_files"] = {
            "note": "a whole `memvault index` process that finds nothing changed, beside one that only walks",
            "index": no_change_block(work / f"small-{small}", small, runs=3 if args.quick else 10),
        }
        report["runs"][f"fresh_{small}_files"] = {
            "note": "no daemon: a CLI save, or an editor's appended line, then a search for its words",
            "after_write": fresh_block(work / f"small-{small}", runs=3 if args.quick else 10),
        }
        for size in [int(x) for x in args.large.split(",") if x]:
            vault = work / f"standin-{size}"
            sections = 5 if size >= 50_000 else 1
            # each entry is a unit of its own (issue 26): a note holds sections x ENTRIES chunks
            generate_vault(vault, max(1, size // (sections * ENTRIES)), sections=sections, seed=size)
            report["runs"][f"stand_in_{size}_chunks"] = {
                "note": "vectors from the hash-384 stand-in embedder (feature hashing), not the model",
                "index": index_block(vault, "hash-384", compare_embedder=False),
                "daemon": daemon_block(vault, queries, edits=args.edits, cold_runs=args.cold, warm_runs=args.cold),
            }
            if args.server:
                from bench.speed_server import server_block

                block = server_block(vault, queries, "hash-384", args.server_cold)
                report["runs"][f"stand_in_{size}_chunks"]["server"] = block
            done = {f"stand_in_{size}_chunks": report["runs"][f"stand_in_{size}_chunks"]}
            print(json.dumps(done), file=sys.stderr, flush=True)  # partial results survive a stop
            shutil.rmtree(vault, ignore_errors=True)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return report


def table(report: dict[str, Any]) -> str:
    lines = ["| run | measure | value |", "|---|---|---|"]
    for name, blocks in report["runs"].items():
        for block, figures in blocks.items():
            if not isinstance(figures, dict):
                continue
            for key, value in figures.items():
                shown = (f"median {value['median']} (min {value['min']}, p95 {value['p95']}, max {value['max']}, "
                         f"{value['runs']} runs)") if isinstance(value, dict) else value  # fmt: skip
                lines.append(f"| {name} | {block}.{key} | {shown} |")
    return "\n".join(lines)
