"""A query's words said in the other script lift the dense list's candidates that BM25 finds on them
(issue 44, `search.translation`): the real default model, CC-CEDICT, the CLI in this process."""

from __future__ import annotations

import json

from memvault.search.translation import other_words
from tests.test_prompt_relevance import MEMORY, _ok

GPU = "which machine room holds the GPU cluster of the machine learning team?"


def _hits(cli, query: str, *options: str) -> list[dict]:
    return json.loads(_ok(cli("search", "--json", *options, query)).stdout)["hits"]


def test_the_words_of_a_query_are_said_in_the_other_script():
    said = other_words(["univers", "bank", "mani"])  # as the index stems "university", "bank", "many"
    assert "大学" in said and "银行" in said
    assert len(other_words(["bank"])) <= 8  # the likeliest few, not every word whose sense holds it
    assert other_words(["mani", "much"]) == []  # a question's own words are said by no answer
    assert "backup" in other_words(["备份"])
    assert other_words(["备份", "backup"]).count("backup") == 0  # none that the query says already


def test_an_english_question_lifts_the_chinese_note_that_says_its_words(layout, cli):
    _ok(cli("init", "--lang", "en"))
    layout.memory_md.write_text(MEMORY, encoding="utf-8")
    _ok(cli("index"))
    gpu = [h for h in _hits(cli, GPU) if "显卡集群" in h["text"]]
    assert gpu and gpu[0]["ranks"].get("translated") == 1, gpu
    (before,) = [h for h in _hits(cli, GPU, "--w-translated", "0") if "显卡集群" in h["text"]]
    assert "translated" not in before["ranks"] and before["score"] < gpu[0]["score"]
    # an English note is not lifted by an English question: BM25 on its own words ranks it
    assert not any("translated" in h["ranks"] and h["text"].isascii() for h in _hits(cli, GPU))


def test_a_vault_in_one_script_is_searched_as_before(layout, cli):
    _ok(cli("init", "--lang", "en"))
    english = [line for line in MEMORY.splitlines() if line.isascii()]
    layout.memory_md.write_text("\n".join(english) + "\n", encoding="utf-8")
    _ok(cli("index"))
    query = "where do the nightly backups go?"
    assert [h["ranks"] for h in _hits(cli, query)] == [h["ranks"] for h in _hits(cli, query, "--w-translated", "0")]
