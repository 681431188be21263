"""The multilingual embedders with their real shipped weights, alone and behind the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memvault.indexer.embedders import load_embedder
from memvault.indexer.embedders.base import EmbedderError

PASSAGES = [
    "向量数据库用于存储嵌入向量并进行相似度搜索。",
    "今天中午吃了牛肉面，味道很好。",
    "The cat sat on the mat all afternoon.",
    "Qdrant Edge opens in a fraction of a second.",
]
SAME_LANGUAGE = {
    "哪个数据库存储向量？": 0,
    "中午吃了什么": 1,
    "where did the cat sit": 2,
    "how fast does Qdrant open": 3,
}


@pytest.mark.parametrize(("name", "dim"), [("use-m3", 512), ("e5-small-q4", 384)])
def test_multilingual_embedder_ranks_the_right_passage_in_both_languages(name, dim):
    model = load_embedder(name, threads=1)
    vectors = model.embed_passages(PASSAGES)
    assert vectors.shape == (4, dim) and model.dim == dim and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for query, expected in SAME_LANGUAGE.items():
        scores = vectors @ model.embed_query(query)
        assert int(scores.argmax()) == expected, (query, scores)
    # embedding order must not depend on the length-sorted batching
    reversed_vectors = model.embed_passages(PASSAGES[::-1])
    assert np.allclose(reversed_vectors[::-1], vectors, atol=1e-5)


def test_use_crosses_languages():
    model = load_embedder("use-m3", threads=1)
    vectors = model.embed_passages(PASSAGES)
    assert int((vectors @ model.embed_query("猫坐在哪里")).argmax()) == 2
    assert int((vectors @ model.embed_query("which database stores vectors")).argmax()) == 0


def test_unknown_embedder_is_a_clear_error():
    with pytest.raises(EmbedderError, match="use-m3"):
        load_embedder("no-such-model")


def _two_days(layout, second: str) -> None:
    daily = layout.root / "daily"
    daily.mkdir()
    (daily / "2026-11-01.md").write_text("# 2026-11-01\n\n- 讨论了向量数据库的选型。\n", encoding="utf-8")
    (daily / "2026-11-02.md").write_text(f"# 2026-11-02\n\n- {second}\n", encoding="utf-8")


def test_index_with_another_embedder_rebuilds_and_search_uses_it(layout, cli):
    _two_days(layout, "中午吃了牛肉面。")
    assert cli("index", "--embedder", "hash-384").returncode == 0
    switched = cli("index", "--embedder", "use-m3", "--tokenizer", "lcut+stop", "--json")
    assert switched.returncode == 0, switched.stderr
    assert "embedder changed from hash-384 to use-m3" in switched.stderr
    assert json.loads(switched.stdout)["chunks_embedded"] == 2
    status = json.loads(cli("status", "--json").stdout)
    assert status["embedder"] == "use-m3"
    found = json.loads(cli("search", "午饭吃的什么面", "--mode", "vector", "--json").stdout)
    assert found["source"] == "vector" and found["hits"][0]["path"] == "daily/2026-11-02.md"
    bad = cli("index", "--tokenizer", "porter")
    assert bad.returncode == 2 and "unknown tokenizer" in bad.stderr and "Traceback" not in bad.stderr


def test_hybrid_skips_an_english_only_model_for_chinese_queries(layout, cli):
    _two_days(layout, "Lunch was beef noodles.")
    assert cli("index", "--embedder", "minilm-l6-int8").returncode == 0
    chinese = json.loads(cli("search", "向量数据库", "--json").stdout)
    assert chinese["source"] == "bm25" and "does not cover CJK" in chinese["reason"]
    assert chinese["hits"][0]["path"] == "daily/2026-11-01.md"
    english = json.loads(cli("search", "what was for lunch", "--json").stdout)
    assert english["source"] == "hybrid" and english["reason"] is None
    assert cli("index", "--embedder", "use-m3").returncode == 0
    multilingual = json.loads(cli("search", "向量数据库", "--json").stdout)
    assert multilingual["source"] == "hybrid" and multilingual["hits"][0]["path"] == "daily/2026-11-01.md"
