"""`python -m bench speed --server`: a stand-in vault through a server collection too (issue 31).

qdrant-client's local mode (`--qdrant-url local:DIR`, the client API a Qdrant server speaks) stands
in for the server, since none runs here. A copy of the vault the embedded default indexed (its notes
as the daemon block left them, no state folder, nothing seeded) is indexed into a fresh local-mode
folder with the same embedder; then a no-change `index --qdrant-url` of it; then cold searches, each a
whole process, in turns: the embedded default on its own vault, then a reader with only the URL in an
empty folder (`memvault --qdrant-url local:DIR search`), in `--mode bm25` and in the default mode
(hybrid). Local mode loads the whole collection at every open and scores a sparse query in Python
over every point, so the server's cold runs are few (`--server-cold`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from bench.speed import _du, run, spread

MODES = {"bm25": ["--mode", "bm25"], "hybrid": []}  # hybrid: the default mode, no flag


def _search(where: list[str], query: list[str], cwd: Path | None = None) -> tuple[float, dict[str, Any], int]:
    """One cold `search --json` process of the project's vault alone: wall seconds, answer, peak RSS (KiB)."""
    seconds, out, rss = run([*where, "search", "--scope", "project", "--json", *query], cwd=cwd)
    return seconds, json.loads(out), rss


def _first(answer: dict[str, Any]) -> tuple[str, int] | None:
    return (answer["hits"][0]["path"], answer["hits"][0]["start_line"]) if answer["hits"] else None


def server_block(vault: Path, queries: list[str], embedder: str, cold_runs: int) -> dict[str, Any]:
    """The figures of the module's docstring for `vault`, indexed with `embedder` by the embedded
    default already (its figures are the caller's)."""
    served = vault.with_name(vault.name + "-server")
    store = vault.with_name(vault.name + ".qdrant")
    nowhere = vault.with_name(vault.name + "-no-vault")
    for path in (served, store, nowhere):
        shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(vault, served, ignore=shutil.ignore_patterns(".memvault"))
    nowhere.mkdir()
    url = f"local:{store}"
    try:
        full_s, out, full_rss = run(["--vault", str(served), "index", "--json", "--embedder", embedder,
                                     "--qdrant-url", url])  # fmt: skip
        full = json.loads(out)
        again = [run(["--vault", str(served), "index", "--json", "--qdrant-url", url]) for _ in range(3)]
        result: dict[str, Any] = {
            "url": "local:<folder> (qdrant-client's local mode)", "embedder": embedder,
            "files": full["files_scanned"], "chunks_embedded": full["chunks_embedded"],
            "full_index_s": round(full_s, 2), "index_chunks_per_s": round(full["chunks_embedded"] / full_s, 1),
            "index_peak_rss_mib": round(full_rss / 1024, 1),
            "no_change_reindex_s": spread([s for s, _, _ in again]),
            "no_change_files_changed": max(json.loads(o)["files_changed"] for _, o, _ in again),
            "local_mode_folder_bytes": _du(store), "writer_state_bytes": _du(served / ".memvault"),
            "embedded_store_bytes": _du(vault / ".memvault"),
            "embedded_chunks": json.loads(run(["--vault", str(vault), "status", "--json"])[1])["chunks"],
        }  # fmt: skip
        for mode, flag in MODES.items():
            times: dict[str, list[float]] = {"embedded": [], "server": []}
            rss: list[int] = []
            same_first, with_hits = 0, 0
            for i in range(cold_runs):  # in turns: embedded, server, embedded, server ...
                query = [*flag, queries[i % len(queries)]]
                seconds, mine, _ = _search(["--vault", str(vault)], query)
                times["embedded"].append(seconds)
                seconds, theirs, peak = _search(["--qdrant-url", url], query, nowhere)
                times["server"].append(seconds)
                rss.append(peak)
                if theirs["source"] != mine["source"] or "no local index" not in (theirs.get("reason") or ""):
                    raise RuntimeError(f"{mode}: the server's answer is not a reader's: {theirs.get('reason')}")
                with_hits += bool(theirs["hits"])
                same_first += _first(mine) is not None and _first(mine) == _first(theirs)
            result[f"{mode}_cold_embedded_s"] = spread(times["embedded"])
            result[f"{mode}_cold_server_s"] = spread(times["server"])
            result[f"{mode}_server_over_embedded_median"] = round(
                result[f"{mode}_cold_server_s"]["median"] / result[f"{mode}_cold_embedded_s"]["median"], 2
            )
            result[f"{mode}_cold_server_peak_rss_mib"] = round(max(rss) / 1024, 1)
            result[f"{mode}_server_queries_with_hits"] = with_hits
            result[f"{mode}_same_first_hit"] = same_first
        if any(nowhere.iterdir()):
            raise RuntimeError(f"the reader wrote into {nowhere}: {sorted(p.name for p in nowhere.iterdir())}")
        return result
    finally:
        for path in (served, store, nowhere):
            shutil.rmtree(path, ignore_errors=True)
