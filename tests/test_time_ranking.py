"""Ranking that knows dates, end to end through the CLI on real notes and a real index (the `hash-384`
stand-in embedder, for speed): decay, MMR, and date words in the query."""

from __future__ import annotations

import datetime as dt
import json

import jsonschema
import pytest

from memvault.search.dates import read_dates
from memvault.search.hits import RESULT_SCHEMA
from memvault.search.options import SearchOptions, build_options, options_from
from memvault.vault.errors import UsageError
from tests.conftest import write_notes


@pytest.fixture(autouse=True)
def stand_in_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash-384")


def _search(cli, *args: str) -> dict:
    result = cli("search", "--json", *args)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    jsonschema.validate(data, RESULT_SCHEMA)
    return data


def _indexed(layout, cli, notes: dict[str, str]) -> None:
    write_notes(layout, notes)
    result = cli("index")
    assert result.returncode == 0, result.stderr


FACT = "- The release checklist lives in the ops wiki under deployments.\n"


def test_decay_puts_an_old_daily_hit_below_a_new_one_and_never_touches_memory(layout, cli):
    _indexed(layout, cli, {
        "daily/2026-01-01.md": f"# 2026-01-01\n\n{FACT}",  # the same text: the same relevance
        "daily/2026-06-01.md": f"# 2026-06-01\n\n{FACT}",
        "MEMORY.md": f"# Memory\n\n## Solutions\n\n{FACT}",
        "projects/ops.md": f"# Ops\n\n{FACT}",
    })  # fmt: skip
    plain = {h["path"]: h["score"] for h in _search(cli, "release checklist wiki")["hits"]}
    decayed = _search(cli, "release checklist wiki", "--decay", "30")["hits"]
    order = [h["path"] for h in decayed]
    assert order.index("daily/2026-06-01.md") < order.index("daily/2026-01-01.md")
    scores = {h["path"]: h["score"] for h in decayed}
    # ages count from the newest daily note: it keeps its score, the older one loses 151 days' worth
    assert scores["daily/2026-06-01.md"] == plain["daily/2026-06-01.md"]
    assert scores["daily/2026-01-01.md"] == pytest.approx(plain["daily/2026-01-01.md"] * 0.5 ** (151 / 30), abs=2e-6)
    assert scores["MEMORY.md"] == plain["MEMORY.md"] and scores["projects/ops.md"] == plain["projects/ops.md"]
    assert [h["score"] for h in decayed] == sorted((h["score"] for h in decayed), reverse=True)  # re-sorted


def _day_note(day: str, topics: list[str]) -> str:
    return f"# {day}\n\n" + "".join(f"## {t}\n\n- {t}\n\n" for t in topics)


def test_mmr_lambda_one_is_the_fused_order_and_a_low_lambda_spreads_hits(layout, cli):
    same = [f"Kubernetes cluster upgrade notes part {i}: drained the nodes and upgraded the cluster" for i in range(6)]
    _indexed(layout, cli, {
        "daily/2026-03-01.md": _day_note("2026-03-01", same),  # six near copies of one story
        "daily/2026-03-02.md": _day_note("2026-03-02", ["Upgrade of the billing database to a new cluster"]),
        "daily/2026-03-03.md": _day_note("2026-03-03", ["Kubernetes ingress certificates renewed"]),
        "daily/2026-03-04.md": _day_note("2026-03-04", ["Cluster costs reviewed with finance"]),
    })  # fmt: skip
    query = ("Kubernetes cluster upgrade", "--per-doc", "0", "--limit", "4")
    plain = _search(cli, *query)["hits"]
    assert [h["path"] for h in plain].count("daily/2026-03-01.md") >= 3  # one day fills the list
    assert _search(cli, *query, "--mmr", "1")["hits"] == plain
    diverse = _search(cli, *query, "--mmr", "0.3")["hits"]
    assert len({h["path"] for h in diverse}) > len({h["path"] for h in plain})
    assert diverse[0] == plain[0]  # the best hit stays first


TODAY = dt.date(2026, 12, 2)  # a Wednesday
DATE_CASES = [
    ("what did I do yesterday", "2026-12-01", "2026-12-01"),
    ("notes from today", "2026-12-02", "2026-12-02"),
    ("the plan from last week", "2026-11-23", "2026-11-29"),
    ("this week's standups", "2026-11-30", "2026-12-06"),
    ("the past 7 days", "2026-11-26", "2026-12-02"),
    ("3 days ago", "2026-11-29", "2026-11-29"),
    ("two weeks ago", "2026-11-16", "2026-11-22"),
    ("last Monday", "2026-11-30", "2026-11-30"),
    ("budget last month", "2026-11-01", "2026-11-30"),
    ("what happened last year", "2025-01-01", "2025-12-31"),
    ("in March 2023", "2023-03-01", "2023-03-31"),
    ("March of 2023", "2023-03-01", "2023-03-31"),
    ("on 8 May 2023", "2023-05-08", "2023-05-08"),
    ("on 8th May, 2023", "2023-05-08", "2023-05-08"),
    ("on October 6, 2022", "2022-10-06", "2022-10-06"),
    ("shared on December 1,2023", "2023-12-01", "2023-12-01"),
    ("the Sunday before October 25, 2022", "2022-10-25", "2022-10-25"),
    ("between August 11 and August 15 2023", "2023-08-11", "2023-08-15"),
    ("2023-05-08 standup", "2023-05-08", "2023-05-08"),
    ("what did we do in 2023", "2023-01-01", "2023-12-31"),
    ("since March 2023", "2023-03-01", "2026-12-02"),
    ("in December", "2026-12-01", "2026-12-31"),
    ("in May", "2026-05-01", "2026-05-31"),
    ("昨天的会议", "2026-12-01", "2026-12-01"),
    ("前天", "2026-11-30", "2026-11-30"),
    ("上周的计划", "2026-11-23", "2026-11-29"),
    ("上个星期", "2026-11-23", "2026-11-29"),
    ("本周", "2026-11-30", "2026-12-06"),
    ("上个月的预算", "2026-11-01", "2026-11-30"),
    ("去年", "2025-01-01", "2025-12-31"),
    ("三月的会议", "2026-03-01", "2026-03-31"),
    ("十二月", "2026-12-01", "2026-12-31"),
    ("去年三月", "2025-03-01", "2025-03-31"),
    ("2023年5月", "2023-05-01", "2023-05-31"),
    ("2023年5月8日的记录", "2023-05-08", "2023-05-08"),
    ("5月8号", "2026-05-08", "2026-05-08"),
    ("3天前", "2026-11-29", "2026-11-29"),
    ("1998年发生了什么", "1998-01-01", "1998-12-31"),
]
NOT_DATES = ["apples and bread", "this may be wrong", "May I ask why", "三个月的计划", "每月的报告", "2000 patients"]


@pytest.mark.parametrize(("query", "start", "end"), DATE_CASES)
def test_date_words_parse(query: str, start: str, end: str):
    found = read_dates(query, TODAY)
    assert found is not None, query
    assert (found.start.isoformat(), found.end.isoformat()) == (start, end), (query, found)
    assert found.words and all(w in query for w in found.words)


@pytest.mark.parametrize("query", NOT_DATES)
def test_words_that_are_not_dates(query: str):
    assert read_dates(query, TODAY) is None


BUDGET = "- The quarterly budget review for the budget committee: budget approved.\n"


def test_date_words_filter_or_boost_the_notes_of_that_time(layout, cli):
    yesterday = dt.date.today() - dt.timedelta(days=1)
    notes = {f"daily/2026-01-{d:02}.md": f"# 2026-01-{d:02}\n\n{BUDGET}" for d in range(1, 6)}
    notes["daily/2026-03-02.md"] = "# 2026-03-02\n\n- Lunch chat mentioned the budget once.\n"
    notes[f"daily/{yesterday}.md"] = f"# {yesterday}\n\n- A short budget note.\n"
    notes["MEMORY.md"] = "# Memory\n\n## Decisions\n\n- The budget review is quarterly.\n"
    _indexed(layout, cli, notes)
    off = _search(cli, "budget review in March 2026", "--dates", "off")
    assert "dates" not in off and off["hits"][0]["path"].startswith("daily/2026-01")
    filtered = _search(cli, "budget review in March 2026", "--dates", "filter")
    assert filtered["dates"] == {"words": ["March 2026"], "from": "2026-03-01", "to": "2026-03-31",
                                 "applied": "filter"}  # fmt: skip
    assert [h["path"] for h in filtered["hits"]] == ["daily/2026-03-02.md"]
    boosted = _search(cli, "budget review in March 2026", "--dates", "boost")
    assert boosted["dates"]["applied"] == "boost" and boosted["hits"][0]["path"] == "daily/2026-03-02.md"
    assert len(boosted["hits"]) > 1  # the rest stay, behind
    assert _search(cli, "budget review in March 2026") == boosted  # the default, auto, is the boost
    auto = _search(cli, "预算 budget 昨天", "--dates", "auto")  # relative words count from today
    assert auto["dates"]["from"] == auto["dates"]["to"] == yesterday.isoformat()
    assert auto["hits"][0]["path"] == f"daily/{yesterday}.md"
    nothing_then = _search(cli, "budget review in March 2019", "--dates", "filter")
    assert nothing_then["dates"]["applied"] == "none"  # no note dated then: the words are not used
    assert nothing_then["hits"] == _search(cli, "budget review in March 2019")["hits"]
    explicit = _search(cli, "budget review in March 2026", "--dates", "filter", "--from", "2026-01-02")
    assert "dates" not in explicit and explicit["hits"][0]["path"] != "daily/2026-01-01.md"  # --from wins


def test_time_options_travel_under_their_public_names(layout, cli, tmp_path):
    opts = build_options(decay=30, mmr=0.5, dates="auto")
    assert (opts.decay, opts.mmr, opts.dates) == (30.0, 0.5, "auto")
    assert options_from(opts.to_public()) == opts  # batch lines and the socket rebuild them the same
    assert (SearchOptions().decay, SearchOptions().mmr, SearchOptions().dates) == (None, None, "auto")
    for bad in ({"decay": 0}, {"decay": -3}, {"mmr": 1.5}, {"mmr": -0.1}, {"dates": "sometimes"}):
        with pytest.raises(UsageError):
            options_from(bad)
    _indexed(layout, cli, {"daily/2026-02-01.md": f"# 2026-02-01\n\n{BUDGET}"})
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"id": 1, "query": "budget", "decay": 7, "mmr": 0.5, "dates": "auto"}) + "\n"
                     + json.dumps({"id": 2, "query": "budget", "mmr": 2}) + "\n")  # fmt: skip
    out = cli("search", "--batch", str(batch), "--json")
    first, second = (json.loads(line) for line in out.stdout.splitlines())
    assert first["hits"][0]["path"] == "daily/2026-02-01.md"
    assert second["id"] == 2 and "mmr" in second["error"]
    bad = cli("search", "budget", "--decay", "0")
    assert bad.returncode != 0 and "decay" in bad.stderr


def test_the_quick_screen_before_the_date_patterns_changes_no_answer(monkeypatch):
    """`read_dates` skips its patterns for a query with no digit, date character or date word: on every
    case above, and on near misses, it answers as the patterns alone do."""
    import memvault.search.dates as dates

    near = ["full-width ２０２３年５月", "on ８ May ２０２３", "a week", "mid-june", "today?", "今晚的会", "去年十月",
            "the 3rd of july", "since jan 5", "yesterday's notes", "Monday standup", "十二天前", "最近一周",
            "这个礼拜", "大前天的会", "日志保留多少天", "机房空调哪天维修", "五天前"]  # fmt: skip
    queries = [q for q, _, _ in DATE_CASES] + NOT_DATES + near + ["budget review", "向量数据库什么时候备份"]
    screened = [read_dates(q, TODAY) for q in queries]
    monkeypatch.setattr(dates, "_may_name_a_date", lambda text: True)
    assert [read_dates(q, TODAY) for q in queries] == screened
    assert sum(found is not None for found in screened) > len(DATE_CASES)  # the near misses are dates too
