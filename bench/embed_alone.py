"""`python -m bench.embed_alone VAULT [EMBEDDER]`: chunks per second of the bare embedder on the
unique chunks of a vault (what `memvault index` embedded), printed as one number."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from memvault.indexer.embedders import load_embedder
from memvault.vault.chunking import chunk_note
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout
from memvault.vault.scan import scan_vault


def main(vault: str, embedder: str | None) -> None:
    texts: dict[str, str] = {}
    for entry in scan_vault(Layout(Path(vault).resolve())):
        note = parse_note(entry.rel, entry.path.read_text(encoding="utf-8"))
        for chunk in chunk_note(note):
            texts.setdefault(chunk.content_hash, chunk.text)
    model = load_embedder(embedder or None)
    model.embed_passages(["warm up"])
    started = time.perf_counter()
    model.embed_passages(list(texts.values()))
    print(round(len(texts) / (time.perf_counter() - started), 1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
