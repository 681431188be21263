"""BM25 reads an entry with the entries before it (`vault.model.bm25_text`: they lift the evidence of a
conversation's turns), but a BM25 hit holds a word of the query itself: an entry that matched only through
its neighbours' words is not one (it came back, ranked, without the word the person searched for)."""

from __future__ import annotations

from tests.conftest import search_json
from tests.reliability.conftest import HASH_ENV

FACTS = ("Deploys go out on Fridays after lunch", "The staging database lives in Frankfurt",
         "Backups rotate every night", "Alerts page the on-call engineer")  # fmt: skip


def test_a_bm25_hit_holds_a_word_of_the_query(layout, cli, monkeypatch):
    monkeypatch.setenv("MEMVAULT_EMBEDDER", HASH_ENV["MEMVAULT_EMBEDDER"])
    assert cli("init", "--lang", "en").returncode == 0
    for fact in FACTS:
        assert cli("remember", "--section", "Ops", fact).returncode == 0
    assert cli("index").returncode == 0
    found = search_json(cli, "--mode", "bm25", "fridays")
    assert [h["text"] for h in found["hits"]] == [f"- {FACTS[0]}"], found["hits"]
    both = " ".join(h["text"] for h in search_json(cli, "--mode", "bm25", "fridays staging")["hits"])
    assert all(f in both for f in FACTS[:2]) and not any(f in both for f in FACTS[2:]), both  # (joined: neighbours)
    hybrid = search_json(cli, "fridays")  # the dense list may bring any entry, BM25 only the one
    assert [h["text"] for h in hybrid["hits"] if "bm25" in h["ranks"]] == [f"- {FACTS[0]}"], hybrid["hits"]
