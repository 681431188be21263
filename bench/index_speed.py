"""`python -m bench.index_speed`: `memvault index` on a folder of notes, against the bare embedder.

Copies the notes into a temp vault (the data is never copied into the
project), runs the real CLI for a full index and a no-change reindex, and
in the same run times the embedder alone on the very chunks the index
embedded, so the ratio between the two is the pipeline's overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from indexer.embedder import load_embedder
from vault.chunking import chunk_note
from vault.notes import parse_note

MEMVAULT = str(Path(sys.executable).parent / "memvault")
DEFAULT_DOCS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "scifact" / "docs"


def _du(path: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in path.rglob("*") if p.is_file() or p.is_symlink())


def _index(vault: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    cmd = [MEMVAULT, "--vault", str(vault), "index", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.index_speed", description=__doc__)
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--limit", type=int, default=0, help="only the first N notes (0: all)")
    args = parser.parse_args(argv)
    files = sorted(args.docs.glob("*.md"))[: args.limit or None]
    with tempfile.TemporaryDirectory(prefix="memvault-bench-") as tmp:
        vault = Path(tmp) / "vault"
        (vault / "docs").mkdir(parents=True)
        for f in files:
            shutil.copyfile(f, vault / "docs" / f.name)
        full_s, full = _index(vault)
        again_s, again = _index(vault)
        size = _du(vault / ".memvault")
        parts = {p.name: _du(p) if p.is_dir() else p.stat().st_size for p in (vault / ".memvault").iterdir()}
        # the embedder alone, on the same unique chunk texts, in this same run
        texts = {}
        for f in sorted((vault / "docs").glob("*.md")):
            for chunk in chunk_note(parse_note(f"docs/{f.name}", f.read_text(encoding="utf-8"))):
                texts.setdefault(chunk.content_hash, chunk.text)
        embedder = load_embedder()
        embedder.embed_passages(["warm up"])
        started = time.perf_counter()
        embedder.embed_passages(list(texts.values()))
        embed_s = time.perf_counter() - started
    rows = {
        "files": len(files),
        "chunks_embedded": full["chunks_embedded"],
        "full_index_s": round(full_s, 2),
        "index_chunks_per_s": round(full["chunks_embedded"] / full_s, 1),
        "embedder_alone_s": round(embed_s, 2),
        "embedder_chunks_per_s": round(len(texts) / embed_s, 1),
        "pipeline_vs_embedder": round((full["chunks_embedded"] / full_s) / (len(texts) / embed_s), 3),
        "no_change_reindex_s": round(again_s, 2),
        "no_change_reconcile_s": again["seconds"],
        "no_change_files_changed": again["files_changed"],
        "store_bytes": size,
        "store_parts": parts,
        "cpu_count": os.cpu_count(),
    }
    print("| measure | value |\n|---|---|")
    for key, value in rows.items():
        print(f"| {key} | {value} |")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
