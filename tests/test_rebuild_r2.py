"""`index --rebuild` into a server collection, killed at any point, is finished by the next writer: the
next `index`, or the next daemon start, leaves every chunk's point in the collection. Through
qdrant-client's local mode (`local:DIR`) and real `memvault` processes killed at crash points."""

from __future__ import annotations

import json
import signal

import pytest

from memvault.indexer.config import IndexConfig
from memvault.indexer.lease import MARKER
from memvault.indexer.opening import open_index
from memvault.indexer.verify import disagreements
from tests.conftest import write_notes
from tests.reliability.conftest import ask, run_cli, running_daemon, settle

NOTES = {f"notes/n{i:03}.md": f"# Note {i}\n\n- fact {i} about kayak{i}\n- the river {i} runs north\n"
         for i in range(40)}  # fmt: skip
# before the collection is cleared, after it is, and twice while it is filled again
POINTS = ["rebuild-marked", "rebuild-cleared", "after-upsert:1", "mid-manifest:1"]


@pytest.fixture
def server(layout, tmp_path):
    write_notes(layout, NOTES)
    url = f"local:{tmp_path / 'qdrant'}"
    env = {"MEMVAULT_QDRANT_URL": url}
    first = run_cli(layout, "index", "--json", env=env, process=True)
    assert first.returncode == 0, first.stderr
    return env, IndexConfig(embedder="hash-384", qdrant_url=url)


def _points(config):
    """The collection's points (the writer lease's marker aside), read with no memvault in between."""
    from qdrant_client import QdrantClient

    client = QdrantClient(path=config.qdrant_url.removeprefix("local:"))
    try:
        return client.count(config.collection, exact=True).count - bool(client.retrieve(config.collection, [MARKER]))
    finally:
        client.close()


def _in_step(layout, config) -> None:
    with open_index(layout, config) as index:
        chunks = index.manifest.chunk_count()
        assert chunks == 2 * len(NOTES) and index.manifest.waiting_count() == 0
        assert disagreements(index) == []
    assert _points(config) == chunks


@pytest.mark.parametrize("point", POINTS)
def test_a_rebuild_killed_midway_is_finished_by_the_next_index(layout, server, point):
    env, config = server
    killed = run_cli(layout, "index", "--rebuild", env={**env, "MEMVAULT_CRASH_AT": point}, process=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    again = run_cli(layout, "index", "--json", env=env, process=True)
    assert again.returncode == 0, again.stderr
    _in_step(layout, config)


def test_a_rebuild_killed_after_clearing_is_finished_by_the_next_daemon(layout, server):
    env, config = server
    killed = run_cli(layout, "index", "--rebuild", env={**env, "MEMVAULT_CRASH_AT": "rebuild-cleared"}, process=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _points(config) == 0  # every point gone, while the manifest still lists them all
    status = json.loads(run_cli(layout, "status", "--json", env=env).stdout)
    assert status["vectors"]["waiting"] == status["vectors"]["total"] > 0  # not "all embedded"
    with running_daemon(layout, env=env):
        settle(layout)
        assert ask(layout, {"op": "verify"}, timeout=120)["disagreements"] == []
    _in_step(layout, config)


def test_a_writer_refills_a_collection_that_lost_points_behind_its_manifest(layout, server):
    """Points gone from the collection for whatever reason (an operator, a restored snapshot): the
    writer's next open counts them against its manifest and puts the missing ones back."""
    env, config = server
    from qdrant_client import QdrantClient

    client = QdrantClient(path=config.qdrant_url.removeprefix("local:"))
    try:
        ids = [p.id for p in client.scroll(config.collection, limit=30, with_payload=False)[0] if str(p.id) != MARKER]
        client.delete(config.collection, points_selector=ids)
    finally:
        client.close()
    assert _points(config) == 2 * len(NOTES) - len(ids)
    again = run_cli(layout, "index", "--json", env=env, process=True)
    assert again.returncode == 0, again.stderr
    _in_step(layout, config)
