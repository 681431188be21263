"""A joined hit holds only entries that answer the query (issue 44): a neighbour joins on its own words
or on a cosine within `JOIN_COSINE` of its lead's, not on the relevance floor alone, which every entry
of a small section reaches. A real vault, the real default model, the CLI in this process."""

from __future__ import annotations

import json

from tests.conftest import search_json, write_notes

MEMORY = """# Long-term Memory

## Configuration

- The test Redis runs on port 6380 in docker compose [key:: redis-port] <!-- saved 2026-12-04 -->
- Backups are kept for 30 days in the S3 bucket mv-backups [key:: backups] <!-- saved 2026-12-04 -->
- Backups are restored once a month as a drill <!-- saved 2026-12-04 -->
- CI runs on GitHub Actions with two workers and a 20 minute timeout <!-- saved 2026-12-04 -->
- The public API is rate limited to 120 requests per minute per key <!-- saved 2026-12-04 -->

## Services

- The staging Redis listens on port 6390 <!-- saved 2026-12-04 -->
- The office plants are watered on Fridays <!-- saved 2026-12-04 -->
- The production Redis listens on port 6379 <!-- saved 2026-12-04 -->
"""


def _ok(result):
    assert result.returncode == 0, result.stderr
    return result


def _vault(layout, cli, memory: str = MEMORY) -> None:
    _ok(cli("init", "--lang", "en"))
    layout.memory_md.write_text(memory, encoding="utf-8")
    _ok(cli("index"))


def test_a_joined_hit_holds_only_entries_that_answer_the_query(layout, cli):
    """The backup retention and the CI runners are neighbours, not one answer: asked how long backups are
    kept, the hit is the two backup entries (each holds a word of the query), not the Redis port, the CI
    or the rate limit beside them, whose cosines reach the model's relevance floor as most entries of a
    vault do (before, one hit held the backups, the CI and the rate limit)."""
    _vault(layout, cli)
    hits = search_json(cli, "--min-similarity", "auto", "how long do we keep backups?")["hits"]
    first = hits[0]
    assert (first["unit"], first["start_line"], first["end_line"]) == ("entries", 6, 7), hits
    assert len(first["entries"]) == 2 and first["text"].count("\n") == 1
    others = ("6380", "GitHub Actions", "120 requests")
    assert not any(o in h["text"] for h in hits if "Backups" in h["text"] for o in others), hits
    recalled = json.loads(_ok(cli("context", "--json", "how long do we keep backups?")).stdout)
    backups = [item for item in recalled["recall"] if "Backups" in item["text"]]
    assert backups and not any(o in item["text"] for item in backups for o in others), recalled


def test_a_neighbour_joins_on_its_words_or_a_cosine_near_its_leads():
    from memvault.search.join import JOIN_COSINE, answers_beside

    cosines = {"lead": 0.90, "near": 0.90 - JOIN_COSINE + 0.001, "band": 0.85, "low": 0.70}
    answers = answers_beside(lambda cid: cid == "worded", cosines, 0.82)
    assert answers("near", "lead") and not answers("band", "lead")  # above the floor, but far below the lead
    assert answers("worded", "lead") and not answers("low", "lead") and not answers("unranked", "lead")
    assert answers("band", "unranked")  # a lead with no cosine (BM25's alone): the floor decides


CONFIG = [
    "Staging database is Postgres 15 on db-staging.internal port 5433 [key:: staging-db]",
    "Backups are kept for 30 days in the S3 bucket mv-backups [key:: backups]",
    "CI runs on GitHub Actions with two workers and a 20 minute timeout [key:: ci]",
    "The public API is rate limited to 120 requests per minute per key [key:: api-rate]",
    "On-call rotation changes every Monday at 10:00 UTC [key:: oncall]",
]
CHINESE = [
    "订单消息队列用 RabbitMQ，不用 Kafka [key:: zh-queue]",
    "移动端用 Flutter 开发，一套代码两个平台 [key:: zh-mobile]",
    "今年的云服务预算是每月八万元 [key:: zh-budget]",
    "生产环境部署在上海区域的 Kubernetes 集群 [key:: zh-region]",
]


def test_the_other_scripts_neighbours_join_on_their_words_alone(layout, cli):
    """Issue 44: a Chinese question about the order queue was given the five English config entries
    glued into one hit: the other script's cosines are their places in their half (`search.scripts`),
    alike across a section, so each came within the join band of its neighbour's. They join on the
    query's words now, as any neighbour may."""
    write_notes(layout, {"MEMORY.md": "# Memory\n\n## Configuration\n\n" + "".join(f"- {c}\n" for c in CONFIG)
                         + "\n## 架构\n\n" + "".join(f"- {c}\n" for c in CHINESE)})  # fmt: skip
    assert cli("index").returncode == 0
    for question in ("订单消息用什么队列？", "移动端用什么框架？"):
        found = json.loads(cli("search", "--json", question).stdout)
        glued = [
            h
            for h in found["hits"]
            if h["unit"] == "entries" and not any("\u4e00" <= ch <= "\u9fff" for ch in h["text"])
        ]
        assert glued == [], (question, [h["entries"] for h in glued])


def test_no_neighbour_joins_across_scripts_on_a_cosine_or_a_lone_digit():
    """Issue 44: "fix the typo in line 3" was given an English licence note joined to a Chinese lead, which
    ranked for the 3 of "Vue 3": the neighbour joined on its own cosine beside a lead whose cosine is a
    place in its half, and a lone digit counted as a query word."""
    from memvault.search.join import answers_beside, content_words

    assert content_words(["fix", "typo", "line", "3", "the", "版本"]) == {"fix", "typo", "line", "版本"}
    cosines = {"en-lead": 0.86, "en-next": 0.85, "zh-lead": 0.86}
    joins = answers_beside(lambda cid: False, cosines, 0.82, lambda cid: cid.startswith("zh"))
    assert joins("en-next", "en-lead")  # one script: the cosine band still joins
    assert not joins("en-next", "zh-lead")  # beside a lead of the other script: only its own words would
    assert answers_beside(lambda cid: True, cosines, 0.82, lambda cid: True)("en-next", "zh-lead")
