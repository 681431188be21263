"""The indexer with the real model, real Qdrant Edge and real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from memvault.indexer import deferred
from memvault.indexer.config import IndexConfig
from memvault.indexer.embed_cache import EmbedCache
from memvault.indexer.embedders import DEFAULT_EMBEDDER, load_embedder
from memvault.indexer.filters import FilterSpec
from memvault.indexer.manifest import SCHEMA_VERSION, IndexUnavailable, Manifest, cache_path
from memvault.indexer.opening import open_index
from memvault.indexer.quickcheck import record
from memvault.indexer.reconcile import reconcile
from memvault.indexer.tokenizer import DEFAULT as DEFAULT_TOKENIZER
from memvault.indexer.tokenizer import Tokenizer, tokenize
from memvault.indexer.vectors import StoreLocked
from memvault.indexer.verify import disagreements
from memvault.vault.cjk import cjk_share
from memvault.vault.errors import UsageError
from tests.conftest import write_notes

NOTES = {
    "MEMORY.md": "# 长期记忆\n\n## 用户偏好\n\n- 回答尽量简洁，先给结论。\n\n"
    "## 系统配置\n\n- The default vault lives in ./memory.\n",
    "daily/2026-11-01.md": "# 2026-11-01\n\n## 对话记录\n\n- 讨论了向量数据库的选型，决定使用嵌入式引擎。\n\n"
    "## Notes\n\nThe cat sat on the mat.\n\nQdrant Edge opens in a fraction of a second.\n",
    "projects/alpha.md": "---\ntags: [alpha]\n---\n# Alpha\n\nAlpha ships on Friday.\n\n"
    "## Risks\n\nThe build server is slow.\n",
}


def _scores(index, tokens):
    return dict(index.bm25_top(tokens, 1000))


class CountingEmbedder:
    """The real model, counting what it is asked to embed."""

    def __init__(self, inner, name: str | None = None):
        self.inner, self.name, self.dim = inner, name or inner.name, inner.dim
        self.passages: list[str] = []

    def embed_passages(self, texts):
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.fixture(scope="session")
def model():
    return load_embedder()


@pytest.fixture
def vault(layout):
    write_notes(layout, NOTES)
    return layout


def _open(layout, model, name=None, **config):
    return open_index(layout, IndexConfig(**config), embedder=CountingEmbedder(model, name))


def test_first_index_then_no_change_reads_nothing_and_embeds_nothing(vault, model):
    with _open(vault, model) as index:
        stats = reconcile(index)
        assert stats.files_changed == 3 and stats.files_failed == 0
        assert stats.chunks_embedded == len(index.embedder.passages) > 0
        assert disagreements(index) == []
    opened: list[str] = []

    def audit(event, args):
        if event == "open" and isinstance(args[0], str | bytes | os.PathLike):
            opened.append(os.fsdecode(args[0]))

    with _open(vault, model) as index:
        sys.addaudithook(audit)  # cannot be removed; it only appends while `opened` is referenced
        stats = reconcile(index)
        reads = [p for p in opened if p.startswith(str(vault.root)) and p.endswith(".md")]
        opened.clear()
        assert (stats.files_changed, stats.chunks_embedded, index.embedder.passages) == (0, 0, [])
        assert reads == []


def test_editing_one_paragraph_re_embeds_exactly_that_chunk(vault, model):
    with _open(vault, model) as index:
        reconcile(index)
    note = vault.root / "daily/2026-11-01.md"
    note.write_text(note.read_text(encoding="utf-8").replace("on the mat", "on the red mat"), encoding="utf-8")
    with _open(vault, model) as index:
        stats = reconcile(index)
        assert stats.files_changed == 1
        assert len(index.embedder.passages) == 1 and "red mat" in index.embedder.passages[0]
        assert disagreements(index) == []


def test_an_older_chunkers_index_embeds_again_only_the_entries_under_a_dated_heading(vault, model, monkeypatch):
    """Chunker c7 embeds an entry without its heading path's dates (`vault.model.dense_context`): an index
    built by c6 re-chunks every note once and embeds again only what now reads differently."""
    import memvault.indexer.opening as opening
    import memvault.vault.chunking as chunking
    import memvault.vault.model as notes_model

    def with_dates(context: str, text: str) -> str:  # c6's vector_text
        return f"{context}\n{text}" if context else text

    monkeypatch.setattr(notes_model, "vector_text", with_dates)
    monkeypatch.setattr(chunking, "vector_text", with_dates)
    monkeypatch.setattr(opening, "CHUNKER_VERSION", "c6")
    with _open(vault, model) as index:
        reconcile(index)
        assert "2026-11-01 > 对话记录\n- 讨论了向量数据库的选型，决定使用嵌入式引擎。" in index.embedder.passages
    monkeypatch.undo()
    with _open(vault, model) as index:
        reconcile(index)
        assert index.embedder.passages == ["对话记录\n- 讨论了向量数据库的选型，决定使用嵌入式引擎。"]
        assert index.manifest.get_meta("chunker") == chunking.VERSION and disagreements(index) == []


def test_inserting_a_line_at_the_top_re_embeds_nothing_but_moves_lines(vault, model):
    with _open(vault, model) as index:
        reconcile(index)
        before = index.manifest.get_chunks(index.manifest.chunk_ids("projects/alpha.md"))
    note = vault.root / "projects/alpha.md"
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("---\n# Alpha", "---\nA line above the title.\n\n# Alpha"), encoding="utf-8")
    with _open(vault, model) as index:
        stats = reconcile(index)
        after = index.manifest.get_chunks(index.manifest.chunk_ids("projects/alpha.md"))
        assert stats.files_changed == 1
        assert index.embedder.passages == ["A line above the title."]
        for chunk_id, old in before.items():
            assert after[chunk_id].start_line == old.start_line + 2
            assert index.payloads([chunk_id])[chunk_id]["start_line"] == old.start_line + 2
        assert disagreements(index) == []


def test_delete_and_rename_leave_no_stale_points_or_postings(vault, model):
    with _open(vault, model) as index:
        reconcile(index)
        old_ids = set(index.manifest.chunk_ids("projects/alpha.md"))
    (vault.root / "projects/alpha.md").rename(vault.root / "projects/beta.md")
    (vault.root / "MEMORY.md").unlink()
    with _open(vault, model) as index:
        stats = reconcile(index)
        assert stats.chunks_embedded == 0  # a rename re-embeds nothing: same contents, cached
        assert stats.chunks_deleted >= len(old_ids)
        assert not old_ids & index.vectors.ids()
        assert not old_ids & set(index.manifest.chunk_paths())
        assert not index.bm25_top(tokenize("回答尽量简洁"), 10)
        assert set(index.manifest.chunk_paths().values()) == {"projects/beta.md", "daily/2026-11-01.md"}
        assert disagreements(index) == []


def test_vector_search_finds_the_right_note(vault, model):
    with _open(vault, model) as index:
        reconcile(index)
        hits = index.vectors.search(model.embed_query("a kitten resting on a rug"), 3)
        top = index.manifest.get_chunks([hits[0][0]])[hits[0][0]]
        assert "cat sat on the mat" in top.text


def test_changed_embedder_triggers_a_clean_rebuild(vault, model, caplog):
    with _open(vault, model) as index:
        reconcile(index)
    with _open(vault, model, name="minilm-variant") as index:
        assert index.rebuilt
        stats = reconcile(index)
        assert stats.files_changed == 3 and stats.chunks_embedded == len(index.manifest.chunk_ids())
        assert index.manifest.get_meta("embedder") == "minilm-variant"
        assert disagreements(index) == []
    assert f"embedder changed from {model.name} to minilm-variant" in caplog.text


def test_bm25_is_restored_without_retokenising_and_rebuilt_on_tokenizer_change(vault, model, monkeypatch):
    with _open(vault, model) as index:
        assert index.manifest.get_meta("tokenizer") == DEFAULT_TOKENIZER.version
    with _open(vault, model, tokenizer="search") as index:  # plain: no stemming
        reconcile(index)
        scores = _scores(index, index.tokenizer("向量 数据库 cats"))
    calls = []
    real_call = Tokenizer.__call__
    monkeypatch.setattr(Tokenizer, "__call__", lambda self, text: calls.append(text) or real_call(self, text))
    with _open(vault, model) as index:
        assert _scores(index, real_call(index.tokenizer, "向量 数据库 cats")) == scores
    assert calls == []
    # another variant re-tokenises the stored text (no re-embedding) and is recorded for readers
    with _open(vault, model, tokenizer="lcut+stop+stem") as index:
        assert len(calls) == len(index.manifest.chunk_ids())
        assert index.manifest.get_meta("tokenizer") == "t2:lcut+stop+stem"
    with open_index(vault, IndexConfig(tokenizer="search"), embedder=model, writable=False) as reader:
        assert reader.tokenizer == Tokenizer("lcut", stop=True, stem=True)  # a reader never re-cuts
        stemmed = _scores(reader, real_call(reader.tokenizer, "向量 数据库 cats"))
        assert stemmed.keys() > scores.keys()  # "cats" now finds "The cat sat on the mat"
    # an index from before tokenizer variants is re-tokenised by the next writer, refused by readers
    with _open(vault, model) as index:
        index.manifest.set_meta("tokenizer", "t1:jieba-search+lower-words")
    with pytest.raises(IndexUnavailable):
        open_index(vault, embedder=model, writable=False)
    calls.clear()
    with _open(vault, model) as index:
        assert len(calls) == len(index.manifest.chunk_ids())
        assert index.tokenizer == DEFAULT_TOKENIZER


def test_tokenizer_variants_cut_as_named():
    text = "The studies of 向量数据库 are running; 我们的研究"
    assert Tokenizer.named("search")(text) == tokenize(text)
    assert "数据库" in tokenize(text) and "数据" in tokenize(text)  # search mode adds sub-words
    assert Tokenizer.named("lcut")(text).count("数据") == 0
    assert Tokenizer.named("lcut+stop+stem")(text) == ["studi", "向量", "数据库", "run", "研究"]
    assert Tokenizer.named("search+stop")(text)[:1] == ["studies"]
    for bad in ("porter", "lcut+stem+stem", "search+stop+x", ""):
        with pytest.raises(UsageError):
            Tokenizer.named(bad)
    assert cjk_share("向量数据库 cat") == 5 / 8 and cjk_share("vector db") == 0.0 and cjk_share("2026!") == 0.0


def test_bad_files_are_failed_with_reasons_and_the_rest_indexed(vault, cli):
    (vault.root / "binary.md").write_bytes(b"\x00\x01\x02PK")
    (vault.root / "gbk.md").write_bytes("中文".encode("gbk"))
    result = cli("index", "--json")
    assert result.returncode == 0, result.stderr
    import json

    stats = json.loads(result.stdout)
    assert set(stats) == {
        "files_scanned",
        "files_changed",
        "files_failed",
        "chunks_embedded",
        "chunks_deleted",
        "chunks_waiting",
        "seconds",
    }
    assert (stats["files_scanned"], stats["files_changed"], stats["files_failed"]) == (5, 3, 2)
    assert stats["chunks_waiting"] == 0  # `index` embeds what it indexed before it returns
    assert "binary.md: binary file" in result.stderr and "gbk.md: not valid UTF-8" in result.stderr
    status = json.loads(cli("status", "--json").stdout)
    assert status["files_on_disk"] == 5 and status["files_indexed"] == 3 and status["files_failed"] == 2
    assert [f["path"] for f in status["failures"]] == ["binary.md", "gbk.md"]
    assert status["files_pending"] == 0 and status["chunks"] > 0 and status["index_bytes"] > 0
    assert status["embedder"] == DEFAULT_EMBEDDER and status["store"].startswith("qdrant-edge:")
    (vault.root / "gbk.md").write_text("now fixed", encoding="utf-8")
    status = json.loads(cli("status", "--json").stdout)
    assert status["files_pending"] == 1
    again = json.loads(cli("index", "--json").stdout)
    assert (again["files_changed"], again["files_failed"]) == (1, 1)


def test_second_owner_is_refused_fast(vault, model, cli_process):
    with _open(vault, model):
        with pytest.raises(StoreLocked):
            open_index(vault, embedder=model)
        result = cli_process("index")  # the other owner is another process
        assert result.returncode == 7 and "open in another memvault process" in result.stderr


def test_qdrant_client_backend(vault, model, tmp_path):
    url = f"local:{tmp_path / 'qdrant'}"
    with _open(vault, model, qdrant_url=url) as index:
        assert index.vectors.description.startswith("qdrant:")
        reconcile(index)
        assert disagreements(index) == []
        hits = index.vectors.search(model.embed_query("kitten on a rug"), 2)
        assert "cat sat" in index.manifest.get_chunks([hits[0][0]])[hits[0][0]].text
    (vault.root / "MEMORY.md").unlink()
    with _open(vault, model, qdrant_url=url) as index:
        stats = reconcile(index)
        assert stats.chunks_embedded == 0 and stats.chunks_deleted > 0
        assert disagreements(index) == []


def test_embedding_cache_is_capped_least_recently_used_first(tmp_path):
    cache = EmbedCache(tmp_path / "embeddings.sqlite")
    vec = np.ones(4, dtype=np.float32)
    cache.put("m", {"a": vec, "b": vec}, cap=3)
    cache.get("m", ["a"])  # a is now the most recent
    cache.put("m", {"c": vec, "d": vec}, cap=3)
    assert set(cache.get("m", ["a", "b", "c", "d"])) == {"a", "c", "d"}


def test_foreign_schema_is_recreated(tmp_path):
    path = tmp_path / "m.sqlite"
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO meta VALUES ('schema', '0')")
    db.commit()
    db.close()
    manifest = Manifest(path)
    assert manifest.created and manifest.get_meta("schema") == SCHEMA_VERSION and manifest.files() == {}


def test_a_first_format_manifest_is_rebuilt_and_its_cached_vectors_kept(tmp_path, caplog):
    import sqlite3

    path = tmp_path / "manifest.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO meta VALUES ('schema', '1')")
    db.execute("CREATE TABLE embed_cache (model TEXT, content_hash TEXT, vector BLOB, used REAL)")
    db.execute("INSERT INTO embed_cache VALUES ('m', 'h1', ?, 1.0)", (np.arange(4, dtype=np.float32).tobytes(),))
    db.commit()
    db.close()
    manifest = Manifest(path)
    assert manifest.created and manifest.get_meta("schema") == SCHEMA_VERSION
    assert "index format changed" in caplog.text and "1 cached vectors kept" in caplog.text
    kept = EmbedCache(cache_path(path)).get("m", ["h1"])
    assert kept["h1"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_second_format_index_is_rebuilt_from_its_cached_vectors_with_each_chunk_s_script(vault, model, caplog):
    """Schema 2 had no chunk script (issue 18), schema 3 kept a row per posting and its store's
    vectors in RAM (issue 17): the next writer rebuilds both from the notes, asks the model for
    nothing (every vector is cached), and the store's points can be filtered by script."""
    (vault.root / "daily/2026-11-02.md").write_text("# 周一\n\n我们决定把数据库迁移到 Postgres。\n", encoding="utf-8")
    with _open(vault, model) as index:
        reconcile(index)
        index.manifest.set_meta("schema", "2")
    edge_config = vault.state_dir / "vectors" / "edge_config.json"
    edge_config.write_text(edge_config.read_text().replace('"memory":"cold"', '"memory":"cached"'))
    with pytest.raises(IndexUnavailable, match="index format changed; run `memvault index`"):
        Manifest(vault.state_dir / "manifest.sqlite", create=False)  # a reader leaves it to the next writer
    with _open(vault, model) as index:
        stats = reconcile(index)
        assert "index format changed" in caplog.text and "missing while a vector store exists" not in caplog.text
        assert stats.files_changed == 4 and index.embedder.passages == [] and disagreements(index) == []
        assert index.manifest.has_script("cjk") and index.manifest.has_script("latin")
        query = index.embedder.embed_query("database migration")
        found = {s: [cid for cid, _ in index.vector_top(query, 50, FilterSpec(script=s))] for s in ("cjk", "latin")}
        rows = index.chunk_rows([*found["cjk"], *found["latin"]])
        assert len(rows) == len(index.manifest.chunk_ids())  # every point is in exactly one script
        assert all((cjk_share(rows[cid].text) >= 0.5) == (s == "cjk") for s, ids in found.items() for cid in ids)
        assert "daily/2026-11-02.md" in {rows[cid].path for cid in found["cjk"]}
    assert '"memory":"cold"' in edge_config.read_text()  # the store was made again, in today's layout


def test_a_chunk_gone_while_the_model_ran_leaves_no_vector_in_the_cache(vault, model):
    """The daemon runs the model without its lock: a note deleted (or purged) meanwhile must not
    have its text's vector stored, in the vector store or in the cache."""
    note = vault.root / "daily/2026-11-03.md"
    note.write_text("# 2026-11-03\n\nThe launch code is zebra-quokka-42.\n", encoding="utf-8")
    with _open(vault, model) as index:
        reconcile(index, embed=False)
        secret = [r for r in index.waiting() if "zebra" in r.text]
        have = index.cached_vectors(secret)
        fresh = index.embed_texts(secret, have)  # the model's part, done without the lock
        assert secret and fresh
        note.unlink()
        reconcile(index, embed=False)
        assert index.store_vectors(secret, have, fresh) == 0
        assert index.cache.get(index.embedder.name, [r.content_hash for r in secret]) == {}
        others = index.waiting()
        index.store_vectors(others, index.cached_vectors(others), index.embed_texts(others, {}))
        assert disagreements(index) == []


@pytest.mark.parametrize("point", ["after-embed", "after-upsert", "after-delete", "mid-manifest:2"])
def test_sigkill_mid_index_is_repaired_by_the_next_index(vault, cli, cli_process, point):
    assert cli("index").returncode == 0
    (vault.root / "MEMORY.md").unlink()
    note = vault.root / "daily/2026-11-01.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA new closing paragraph.\n", encoding="utf-8")
    for i in range(3):
        (vault.root / f"new/n{i}.md").parent.mkdir(exist_ok=True)
        (vault.root / f"new/n{i}.md").write_text(f"# New {i}\n\nfresh note number {i}\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in vault.root.rglob("*.md")}
    crashed = cli_process("index", env={"MEMVAULT_CRASH_AT": point})
    assert crashed.returncode == -9, crashed.stderr
    assert cli("index").returncode == 0
    assert {p: p.read_bytes() for p in vault.root.rglob("*.md")} == before
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from memvault.indexer.opening import open_index;"
            "from memvault.indexer.verify import disagreements; from memvault.vault.paths import Layout;"
            "from pathlib import Path;"
            "i = open_index(Layout(Path(sys.argv[1]))); print(disagreements(i)); i.close()",
            str(vault.root),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.stdout.strip() == "[]", check.stderr


def _store_files(layout):
    edge = layout.state_dir / "vectors"
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in edge.rglob("*") if p.is_file()}


def test_a_small_edit_leaves_the_store_alone_and_its_vectors_follow(vault, model):
    """`indexer.deferred`: an edit with no daemon writes text and postings only; a reader never ranks
    a point the edit made stale; the next writer to open the store deletes those and stores the rest."""
    with _open(vault, model) as index:
        reconcile(index)
        cat = next(r for r in index.chunk_rows(index.chunk_ids("daily/2026-11-01.md")).values() if "cat" in r.text)
        alpha = set(index.chunk_ids("projects/alpha.md"))
    record(vault)  # as `memvault index` notes the stores it closed sound: a store changed since is opened
    before = _store_files(vault)
    note = vault.root / "daily/2026-11-01.md"
    note.write_text(note.read_text(encoding="utf-8").replace("The cat sat on the mat.", "The dog slept by the door."))
    (vault.root / "projects/alpha.md").unlink()
    with open_index(vault, IndexConfig(), embedder=CountingEmbedder(model), defer=True) as index:
        stats = reconcile(index)
        assert index.vectors is None and index.embedder.passages == []
        assert (stats.files_changed, stats.chunks_waiting, stats.chunks_embedded) == (1, 1, 0)
        assert [r.id for r in index.waiting()] == [cat.id] and "dog" in index.waiting()[0].text
    assert _store_files(vault) == before  # not opened, not flushed

    with open_index(vault, writable=False) as reader:
        stale = deferred.unstored(reader.manifest.db)
        assert stale == alpha | {cat.id}
        query = model.embed_query("The cat sat on the mat. Alpha ships on Friday.")
        raw = {cid for cid, _ in reader.vector_store().search(query, 10)}
        ranked = reader.vector_top(query, 10)
        assert stale <= raw  # the store still holds them, and the reader ranks none of them
        assert not stale & {cid for cid, _ in ranked}
        assert len(ranked) == len(reader.manifest.embedded_ids()) < len(raw)

    with _open(vault, model) as index:  # a writer that opens the store: the stale points go first
        assert deferred.unstored(index.manifest.db) == set() and index.manifest.waiting_count() == 1
        assert index.embed_waiting() == 1 and len(index.embedder.passages) == 1 and "dog" in index.embedder.passages[0]
        assert disagreements(index) == []


def test_an_edit_indexed_with_no_daemon_is_found_by_meaning_at_the_next_search(vault, cli):
    assert cli("index").returncode == 0
    note = vault.root / "daily/2026-11-01.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n- 周末去海边看了日出，风很大。\n", encoding="utf-8")
    indexed = json.loads(cli("index", "--json").stdout)
    assert (indexed["files_changed"], indexed["chunks_waiting"]) == (1, 1)
    assert json.loads(cli("index", "--json").stdout)["chunks_waiting"] == 1  # no change: still quick, still said
    found = json.loads(cli("search", "--mode", "vector", "--json", "周末去海边看日出").stdout)
    assert "日出" in found["hits"][0]["text"]
    assert json.loads(cli("index", "--json").stdout)["chunks_waiting"] == 0


def test_sigkill_in_a_deferred_pass_is_repaired_by_the_next_index(vault, cli, cli_process):
    assert cli("index").returncode == 0
    (vault.root / "MEMORY.md").unlink()
    note = vault.root / "daily/2026-11-01.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA new closing paragraph.\n", encoding="utf-8")
    before = _store_files(vault)
    crashed = cli_process("index", env={"MEMVAULT_CRASH_AT": "mid-manifest"})
    assert crashed.returncode == -9, crashed.stderr
    assert _store_files(vault) == before  # the crashed pass was a deferred one
    assert cli("index").returncode == 0
    with open_index(vault) as index:
        assert disagreements(index) == [] and deferred.unstored(index.manifest.db) == set()
