"""The other script's notes ranked on cosines less each script's mean (`indexer.embedders.means`,
`search.scripts.other_top`): what a note says, not how far its words are from the query's language."""

from __future__ import annotations

import numpy as np
import pytest

from memvault.indexer.config import IndexConfig
from memvault.indexer.embedders import load_embedder
from memvault.indexer.embedders.means import centred_cosines, query_means, script_means
from memvault.indexer.filters import FilterSpec
from memvault.indexer.opening import open_index
from memvault.indexer.reconcile import reconcile
from memvault.indexer.remote import RemoteIndex
from memvault.search.scripts import other_top
from tests.conftest import search_json, write_notes

ENGLISH = ["The billing service sends invoices every Monday.", "We picked MongoDB for the chat service.",
           "The team retro is on Thursday afternoons.", "Our on-call rotation changes every week.",
           "The mobile app is written in Kotlin.", "Staging is reset every night."]  # fmt: skip
# Chinese notes, some naming English products: to the model those read closer to English whatever they say
CHINESE = ["前端改用 Vite 构建，速度快了很多。", "项目文档统一放在 Confluence 和 GitHub Wiki 上。",
           "CI 用 GitHub Actions，缓存放在 S3。", "Grafana 的告警发到 Slack 的 #ops 频道。",
           "Kubernetes 集群升级到 1.29 版本。", "API 网关用 Kong，限流每秒一千次。", "周末团队去爬山，天气很好。",
           "办公室的咖啡机坏了，周三修好。", "年会定在十二月二十日。", "计费服务的数据库备份保留三十天。",
           "张伟负责支付网关的值班。", "新人入职要先读编码规范。", "客户投诉主要集中在退款太慢。",
           "我们决定明年招三个后端工程师。", "服务器机房在北京亦庄。"]  # fmt: skip
QUERY = "What did the team do on Saturday?"
ANSWER = "notes/zh06.md"  # the weekend hike; the raw cosines put a note naming Grafana and Slack first


@pytest.fixture(scope="module")
def model():
    return load_embedder()


def _notes() -> dict[str, str]:
    return {f"notes/en{i:02d}.md": f"{t}\n" for i, t in enumerate(ENGLISH)} | {
        f"notes/zh{i:02d}.md": f"{t}\n" for i, t in enumerate(CHINESE)
    }


def _expected(model) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The Chinese notes in their centred order, and their raw and centred cosines, from the model."""
    means = script_means(model.name)
    assert means is not None and means["latin"].shape == means["cjk"].shape == (model.dim,)
    vectors, query = model.embed_passages(CHINESE), model.embed_query(QUERY)
    raw, centred = vectors @ query, centred_cosines(vectors, query, means["latin"], means["cjk"])
    assert f"notes/zh{int(np.argmax(raw)):02d}.md" != ANSWER
    return [f"notes/zh{i:02d}.md" for i in np.argsort(-centred)], raw, centred


def _ranked(index, model) -> list[tuple[str, float]]:
    found, _ = other_top(index, model.embed_query(QUERY), "latin", "cjk", 20, FilterSpec(script="cjk"))
    paths = {cid: p["path"] for cid, p in index.payloads([cid for cid, _ in found]).items()}
    return [(paths[cid], score) for cid, score in found]


def _check(ranked: list[tuple[str, float]], order: list[str], raw: np.ndarray) -> None:
    assert [path for path, _ in ranked] == order
    for path, score in ranked:  # the score stays the raw cosine: the relevance floor reads it
        assert score == pytest.approx(raw[int(path[-5:-3])], abs=0.005)


def test_the_other_scripts_notes_come_in_the_order_of_their_centred_cosines(layout, cli, model):
    write_notes(layout, _notes())
    assert cli("index").returncode == 0
    order, raw, _ = _expected(model)
    with open_index(layout, writable=False) as index:
        _check(_ranked(index, model), order, raw)
    hits = search_json(cli, "--limit", "40", "--per-doc", "0", QUERY)["hits"]
    chinese = [h["path"] for h in hits if h["path"].startswith("notes/zh")]
    assert chinese[0] == order[0] == ANSWER


def test_a_reader_with_only_a_server_collection_ranks_the_other_script_alike(layout, model, tmp_path):
    write_notes(layout, _notes())
    config = IndexConfig(qdrant_url=f"local:{tmp_path / 'qdrant'}")
    with open_index(layout, config, embedder=model) as index:
        reconcile(index)
    order, raw, _ = _expected(model)
    with RemoteIndex.open(config, embedder=model) as remote:
        _check(_ranked(remote, model), order, raw)


def test_a_model_with_no_measured_means_keeps_its_raw_order():
    assert script_means("hash-384") is None and script_means("no-such-model") is None
    assert query_means("hash-384") is None and query_means("no-such-model") is None
    e5 = query_means("e5-small-q4")  # the mean prompts `context` reads a note's lead against
    assert e5 is not None and e5["latin"].shape == e5["cjk"].shape == (384,)
