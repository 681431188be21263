"""Readers with only a URL (issue 31): a search from a process that has no vault and no local index is
answered from the server collection its vault's writer keeps, through qdrant-client's local mode (the
client API a Qdrant server speaks)."""

from __future__ import annotations

import json

import pytest

from memvault.indexer.config import IndexConfig
from memvault.indexer.embedders import load_embedder
from memvault.indexer.opening import open_index
from memvault.indexer.reconcile import reconcile
from memvault.indexer.remote import RemoteIndex
from memvault.indexer.vectors import StoreError
from memvault.search.engine import Searcher
from memvault.search.options import build_options
from memvault.vault.paths import Layout
from tests.conftest import run_process, write_notes

NOTES = {
    "MEMORY.md": "# Memory\n\n## Preferences\n\n- Ada drinks green tea in the morning.\n"
    "- Bob takes his coffee black.\n\n## Setup\n\n- The default vault lives in ./memory.\n",
    "daily/2026-11-01.md": "# 2026-11-01\n\n## Conversation\n\n- Ada: is the kayak trip still on?\n"
    "- Bob: the kayak trip moved to Saturday, the lake is calmer then.\n\n## Notes\n\n"
    "Qdrant Edge opens in a fraction of a second.\n",
    "daily/2026-11-03.md": "# 2026-11-03\n\n## Notes\n\n- The release of version two slipped to December.\n"
    "- Carol reviewed the parser changes.\n",
    "projects/alpha.md": "# Alpha\n\nAlpha ships on Friday.\n\n## Risks\n\nThe build server is slow.\n",
}
QUERIES = ("kayak trip Saturday", "green tea", "build server slow", "release December", "coffee")


@pytest.fixture(scope="module")
def model():
    return load_embedder("hash-384")


@pytest.fixture
def served(layout, model, tmp_path):
    """The vault indexed into a local-mode collection by its writer, which has closed it again."""
    write_notes(layout, NOTES)
    config = IndexConfig(qdrant_url=f"local:{tmp_path / 'qdrant'}")
    with open_index(layout, config, embedder=model) as index:
        reconcile(index)
    return layout, config


def _hits(searcher, query, **options):
    result = searcher.search(query, build_options(**options))
    return result, [(h.path, h.start_line, h.end_line, h.text) for h in result.hits]


def test_a_reader_with_no_vault_ranks_as_the_vaults_own_search(served, model, tmp_path):
    layout, config = served
    options = [{"mode": m} for m in ("hybrid", "bm25", "vector")] + [
        {"kind": ["daily"]}, {"date_from": "2026-11-02"}, {"path": "MEMORY.md"}, {"mmr": 0.5}, {"decay": 30.0}
    ]  # fmt: skip
    with Searcher(layout, open_index(layout, config, embedder=model, writable=False)) as own:
        mine = {(q, i): _hits(own, q, **o) for q in QUERIES for i, o in enumerate(options)}
    nowhere = Layout(tmp_path / "no-vault-here")
    with Searcher(nowhere, RemoteIndex.open(config, embedder=model)) as remote:
        theirs = {(q, i): _hits(remote, q, **o) for q in QUERIES for i, o in enumerate(options)}
    assert not nowhere.root.exists()  # nothing written where the reader stands
    for key, (result, hits) in theirs.items():
        own_result, own_hits = mine[key]
        assert result.source == own_result.source != "substring", key
        assert "no local index" in (result.reason or ""), key
        assert hits and hits[0] == own_hits[0], key  # the same first hit, its lines and text
        assert {h[:3] for h in hits} == {h[:3] for h in own_hits}, key
        if options[key[1]].get("mode") == "vector":  # one model, one exact search: the same order
            assert hits == own_hits, key
        for path, start, end, text in hits:  # every text is its note's lines as indexed
            assert text == "\n".join(NOTES[path].split("\n")[start - 1 : end]), key


def test_joins_and_corrections_are_answered_from_the_collection(served, model, tmp_path):
    layout, config = served
    from memvault import Vault

    with Vault(layout.root, config) as vault:  # the newer fact, written by the verb an agent calls
        vault.correct("Bob takes his coffee with oat milk now.", match="coffee black")
    with open_index(layout, config, embedder=model) as index:
        reconcile(index)
    with Searcher(Layout(tmp_path / "elsewhere"), RemoteIndex.open(config, embedder=model)) as remote:
        result, hits = _hits(remote, "kayak trip", mode="bm25")
        _, coffee = _hits(remote, "coffee black", mode="bm25")
    path, start, end, text = hits[0]  # the question and its reply are one hit, as in the vault's own search
    assert (path, end - start) == ("daily/2026-11-01.md", 1) and "is the kayak trip still on?" in text
    assert "moved to Saturday" in text and result.hits[0].unit == "entries"
    texts = [t for *_, t in coffee]
    fix = next(i for i, t in enumerate(texts) if "[corrects::" in t)  # the correction right above the old fact
    assert "coffee black" in texts[fix + 1] and "superseded::" in texts[fix + 1]


def test_a_reader_refuses_a_collection_it_cannot_read(served, model, tmp_path):
    _, config = served
    with pytest.raises(StoreError, match="no such collection"):
        RemoteIndex.open(IndexConfig(qdrant_url=config.qdrant_url, collection="another"), embedder=model)
    with pytest.raises(StoreError, match="built with hash-384"):
        RemoteIndex.open(config, embedder=load_embedder("minilm-l6-int8"))


def _search(env, cwd, *args):
    done = run_process(["search", "--json", *args], env, cwd, None, 60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_cli_searches_a_server_from_a_folder_with_no_vault(layout, tmp_path, user_root):
    """`memvault --qdrant-url URL search`: edits and deletes indexed by the writer reach the reader."""
    write_notes(layout, NOTES)
    url = f"local:{tmp_path / 'qdrant'}"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MEMVAULT_EMBEDDER": "hash-384",
           "MEMVAULT_USER_VAULT": str(user_root)}  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def index():
        done = run_process(["--vault", str(layout.root), "index", "--qdrant-url", url], env, tmp_path, None, 60)
        assert done.returncode == 0, done.stderr

    def top(query, *args):
        answer = _search(env, elsewhere, "--qdrant-url", url, query, *args)
        assert answer["source"] != "substring" and "no local index" in answer["reason"], answer
        return [(h["path"], h["text"]) for h in answer["hits"]]

    index()
    assert top("kayak trip Saturday")[0][0] == "daily/2026-11-01.md"
    path, text = top("Alpha ships Friday", "--mode", "bm25")[0]
    assert path == "projects/alpha.md" and "Alpha ships on Friday." in text
    (layout.root / "daily" / "2026-11-03.md").write_text("# 2026-11-03\n\n## Notes\n\n- The canoe is repaired.\n")
    (layout.root / "projects" / "alpha.md").unlink()
    index()
    assert top("canoe repaired", "--mode", "bm25")[0] == ("daily/2026-11-03.md", "- The canoe is repaired.")
    assert not top("release December slipped", "--mode", "bm25")
    assert not [h for h in top("Alpha ships Friday") if h[0] == "projects/alpha.md"]
    done = run_process(["--qdrant-url", url, "--collection", "nope", "search", "tea"], env, elsewhere, None, 60)
    assert (done.returncode, done.stdout) == (7, "") and done.stderr.count("\n") == 1 and "nope" in done.stderr
    done = run_process(["--qdrant-url", url, "note", "hello"], env, elsewhere, None, 60)
    assert done.returncode == 2 and "--qdrant-url is an option of search" in done.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == []  # no vault and no index made where it ran


def test_a_reader_with_only_a_url_says_in_one_line_when_the_server_goes_away(served, model, tmp_path, monkeypatch):
    from qdrant_client.http.exceptions import ResponseHandlingException

    def unreachable(*args, **kwargs):  # the fault a server gone away raises; local mode has no connection
        raise ResponseHandlingException(ConnectionRefusedError(111, "Connection refused"))

    _, config = served
    with Searcher(Layout(tmp_path / "no-vault-here"), RemoteIndex.open(config, embedder=model)) as remote:
        assert remote.search("green tea").hits
        monkeypatch.setattr(remote.index.store.client, "query_points", unreachable)
        with pytest.raises(StoreError, match=r"qdrant:local:.*: cannot reach Qdrant \(.*Connection refused"):
            remote.search("green tea")
