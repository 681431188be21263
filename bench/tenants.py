"""`python -m bench tenants [--sets locomo,scifact] [--work DIR]`: a collection per vault against one
collection for every vault with a tenant field (issue 31's choice of tenancy on a Qdrant server).

Each vault of the sets (LoCoMo: ten conversations, each a vault of its own) is indexed by memvault into a
collection of its own (qdrant-client's local mode, the stand-in embedder: BM25 is the half a shared
collection changes, since a point's cosine to the query does not depend on the other points). Their points
are then copied into one collection, each with its vault's name in a `tenant` field (a keyword index, as
Qdrant's payload partitioning keeps it). Every vault's questions are asked of its own collection and of the
shared one filtered to its tenant, by the collection's BM25 (the unit's term-frequency part from memvault,
the idf Qdrant's, over whatever the collection holds), top 100, and judged as `bench quality` judges the
units themselves (no joins: the same on both sides). The shared collection also weighs every unit by its
own vault's unit length, as it was written: a writer to a shared collection would weigh by one length.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench.datasets import SETS, Unit
from bench.metrics import mean
from bench.quality import MEMVAULT, copy_vault
from memvault.indexer.sparse import query_vector
from memvault.indexer.tokenizer import Tokenizer
from memvault.indexer.vectors import BM25, DENSE

COLLECTION = "memvault"
HIT = ["path", "start_line", "end_line"]


def _own(unit: Unit, vault: Path, store: Path) -> None:
    """The vault indexed into a collection of its own by memvault's writer."""
    copy_vault(unit, vault)
    env = {**os.environ, "MEMVAULT_EMBEDDER": "hash-384"}
    subprocess.run([MEMVAULT, "--vault", str(vault), "index", "--qdrant-url", f"local:{store}"],
                   env=env, check=True, capture_output=True)  # fmt: skip


def _client(store: Path) -> Any:
    from qdrant_client import QdrantClient

    return QdrantClient(path=str(store))


def _copy_into(shared: Any, store: Path, tenant: str) -> str:
    """Every unit point of `store`'s collection into `shared`, tagged; returns the collection's tokenizer."""
    from qdrant_client import models as m

    client = _client(store)
    try:
        tokenizer = client.get_collection(COLLECTION).config.metadata["tokenizer"]
        offset = None
        while True:
            points, offset = client.scroll(COLLECTION, limit=512, offset=offset, with_payload=True, with_vectors=True)
            batch = [m.PointStruct(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{tenant}/{p.id}")), vector=p.vector,
                                   payload={**p.payload, "tenant": tenant})
                     for p in points if p.payload and "path" in p.payload]  # fmt: skip
            if batch:
                shared.upsert(COLLECTION, batch)
            if offset is None:
                return tokenizer
    finally:
        client.close()


def _make_shared(shared: Any, dim: int = 384) -> None:
    from qdrant_client import models as m

    shared.create_collection(
        COLLECTION,
        vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.COSINE)},
        sparse_vectors_config={BM25: m.SparseVectorParams(modifier=m.Modifier.IDF)},
    )
    shared.create_payload_index(COLLECTION, "tenant", m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD,
                                                                          is_tenant=True))  # fmt: skip


def _ask(client: Any, unit: Unit, tokenizer: Tokenizer, tenant: str | None) -> list[dict[str, float]]:
    from qdrant_client import models as m

    flt = None if tenant is None else m.Filter(must=[m.FieldCondition(key="tenant", match=m.MatchValue(value=tenant))])
    rows = []
    for qid, text, _ in unit.queries:
        indices, values = query_vector(tokenizer(text))
        points = client.query_points(COLLECTION, query=m.SparseVector(indices=indices, values=values), using=BM25,
                                     query_filter=flt, limit=100, with_payload=HIT).points  # fmt: skip
        hits, seen = [], set()
        for p in points:
            if unit.per_doc and p.payload["path"] in seen:
                continue  # judged by document: its best unit stands for it
            seen.add(p.payload["path"])
            hits.append(dict(p.payload))
        rows.append(unit.judge(qid, hits))
    return rows


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench tenants")
    parser.add_argument("--sets", default="locomo,scifact")
    parser.add_argument("--work", type=Path, help="keep the vaults and collections here (default: a temp folder)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="memvault-tenants-"))
    units = [(name, unit) for name in args.sets.split(",") for unit in SETS[name](0)]
    try:
        shared = _client(work / "shared")
        new_shared = not shared.collection_exists(COLLECTION)
        if new_shared:
            _make_shared(shared)
        tokenizers: dict[str, str] = {}
        for _name, unit in units:  # a kept --work folder: what it holds is reused, what it lacks is made
            store = work / "own" / unit.name.replace("/", "-")
            built = not store.exists()
            if built:
                _own(unit, work / "vaults" / unit.name.replace("/", "-"), store)
            if built or new_shared:
                tokenizers[unit.name] = _copy_into(shared, store, unit.name)
            else:
                own = _client(store)
                try:
                    tokenizers[unit.name] = own.get_collection(COLLECTION).config.metadata["tokenizer"]
                finally:
                    own.close()
        report: dict[str, Any] = {"sets": {}, "points_shared": shared.count(COLLECTION).count}
        for name, unit in units:
            tokenizer = Tokenizer.from_version(tokenizers[unit.name])
            assert tokenizer is not None
            own = _client(work / "own" / unit.name.replace("/", "-"))
            try:
                rows = {"own collection": _ask(own, unit, tokenizer, None)}
            finally:
                own.close()
            rows["shared, filtered to its tenant"] = _ask(shared, unit, tokenizer, unit.name)
            for label, found in rows.items():
                report["sets"].setdefault(name, {}).setdefault(label, []).extend(found)
        shared.close()
        report["sets"] = {name: {label: {**mean(rows), "n": len(rows)} for label, rows in by_label.items()}
                          for name, by_label in report["sets"].items()}  # fmt: skip
        return report
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def table(report: dict[str, Any]) -> str:
    lines = [f"points in the shared collection: {report['points_shared']}", "",
             "| set | collection | nDCG@10 | R@10 | R@100 | queries |", "|---|---|---|---|---|---|"]  # fmt: skip
    for name, labels in report["sets"].items():
        for label, m in labels.items():
            lines.append(f"| {name} | {label} | {m['ndcg@10']:.3f} | {m['recall@10']:.3f} | {m['recall@100']:.3f} "
                         f"| {m['n']} |")  # fmt: skip
    return "\n".join(lines)
