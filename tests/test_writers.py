"""One writer a server collection (issue 31, `indexer.lease`): a second writer is refused while the first
one's lease is live, takes the collection once it is released or lapsed, and then brings the collection in
step with its own vault; tested through qdrant-client's local mode and real `memvault index` processes."""

from __future__ import annotations

import json
import logging
import socket
import time

import pytest

from memvault.indexer.config import IndexConfig
from memvault.indexer.embedders import load_embedder
from memvault.indexer.lease import MARKER
from memvault.indexer.opening import open_index
from memvault.indexer.reconcile import reconcile
from memvault.indexer.sparse import query_vector
from memvault.indexer.vectors import StoreLocked
from memvault.indexer.verify import disagreements
from memvault.vault.paths import Layout
from tests.conftest import run_process, write_notes

A_NOTES = {"MEMORY.md": "# Memory\n\n## Facts\n\n- Ada keeps bees on the roof.\n",
           "daily/2026-11-01.md": "# 2026-11-01\n\n## Notes\n\n- The kayak trip moved to Saturday.\n"}  # fmt: skip
B_NOTES = {"MEMORY.md": "# Memory\n\n## Facts\n\n- Bob restores old radios.\n"}


@pytest.fixture(scope="module")
def model():
    return load_embedder("hash-384")


@pytest.fixture
def vaults(tmp_path):
    made = []
    for name, notes in (("a", A_NOTES), ("b", B_NOTES)):
        (tmp_path / name).mkdir()
        layout = Layout((tmp_path / name).resolve())
        write_notes(layout, notes)
        made.append(layout)
    return made, IndexConfig(qdrant_url=f"local:{tmp_path / 'qdrant'}")


def _paths(index):
    """The notes the collection holds points of."""
    store = index.vector_store()
    points = store.client.retrieve(store.collection, sorted(store.ids()), with_payload=["path"])
    return {p.payload["path"] for p in points}


def _marker(store, **payload):
    """The lease marker as another writer left it (the injected fault: a writer on another machine)."""
    m = store._m
    store.client.upsert(store.collection, [m.PointStruct(id=MARKER, vector={}, payload=payload)])


def test_a_writer_that_takes_a_collection_brings_it_in_step_with_its_vault(vaults, model, caplog):
    (a, b), config = vaults
    with open_index(a, config, embedder=model) as index:
        reconcile(index)
        assert _paths(index) == {"MEMORY.md", "daily/2026-11-01.md"}
    with caplog.at_level(logging.WARNING, logger="memvault"), open_index(b, config, embedder=model) as index:
        reconcile(index)  # a's lease was released: b takes the collection, and it holds b's notes alone
        assert _paths(index) == {"MEMORY.md"} and disagreements(index) == []
        store = index.vector_store()
        assert store.bm25(query_vector(index.tokenizer("bees roof")), 5) == []  # a's points are gone
        assert len(store.bm25(query_vector(index.tokenizer("radios")), 5)) == 1
    assert f"last written by {socket.gethostname()}:{a.root}" in caplog.text
    with open_index(a, config, embedder=model) as index:  # and back: a's manifest did not know b had written
        reconcile(index)
        assert _paths(index) == {"MEMORY.md", "daily/2026-11-01.md"} and disagreements(index) == []


def test_a_live_lease_refuses_a_second_writer_and_a_lapsed_one_does_not(vaults, model):
    (a, b), config = vaults
    with open_index(a, config, embedder=model) as index:
        reconcile(index)
        store = index.vector_store()
        for expires, refusal in ((time.time() + 600, "kept in step by elsewhere"), (0.0, "lease had lapsed")):
            _marker(store, writer="elsewhere:/srv/vault", pid=7, expires=expires)  # taken (and left) meanwhile
            store.lease.renewed = 0.0  # as if a lease's worth of time had passed: its next write renews it
            with pytest.raises(StoreLocked, match=refusal):  # and stops, before it deletes the other's points
                store.delete(["00000000-0000-0000-0000-000000000001"])
        _marker(store, writer="elsewhere:/srv/vault", pid=7, expires=time.time() + 600)
    with pytest.raises(StoreLocked, match=r"kept in step by elsewhere:/srv/vault \(process 7\)"):
        open_index(b, config, embedder=model)
    with open_index(a, config, embedder=model, writable=False) as reader:  # readers take no lease
        _marker(reader.vector_store(), writer="elsewhere:/srv/vault", pid=7, expires=time.time() - 1)
    with open_index(b, config, embedder=model) as index:  # lapsed: taken, and the collection made b's
        reconcile(index)
        assert _paths(index) == {"MEMORY.md"} and disagreements(index) == []


def test_a_writer_killed_mid_run_keeps_others_out_until_it_runs_again(vaults, tmp_path, user_root):
    (a, b), config = vaults
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MEMVAULT_EMBEDDER": "hash-384",
           "MEMVAULT_USER_VAULT": str(user_root), "MEMVAULT_QDRANT_URL": config.qdrant_url}  # fmt: skip

    def index(layout, **extra):
        return run_process(["--vault", str(layout.root), "index", "--json"], {**env, **extra}, tmp_path, None, 60)

    killed = index(a, MEMVAULT_CRASH_AT="after-upsert")
    assert killed.returncode == -9  # SIGKILL after its first upsert: the lease is left live
    refused = index(b)
    assert refused.returncode == 7 and refused.stdout == "" and refused.stderr.count("\n") == 1
    assert f"kept in step by {socket.gethostname()}:{a.root}" in refused.stderr
    again = index(a)  # the same writer (host and vault) takes its own lease back at once
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["files_failed"] == 0
    taken = index(b)  # released at a's end: b may write now
    assert taken.returncode == 0 and "bringing it in step with this vault" in taken.stderr
    found = run_process(["search", "--json", "--mode", "bm25", "bees roof radios"], env, tmp_path / "b", None, 60)
    hits = json.loads(found.stdout)["hits"]
    assert [h["text"] for h in hits] == ["- Bob restores old radios."]
