"""The agent benchmark's own vault and prompts (bench/data/agent) hold together: every prompt's fact
exists, every marker names its fact alone, and the vault the verbs build from them holds each fact's
marker with the corrections made (the old entries marked superseded)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench import agent
from tests.reliability.conftest import HASH_ENV


def test_the_spec_is_coherent():
    facts, corrections, prompts = agent.spec()
    for ident, fact in facts.items():  # a marker names its fact alone among the facts
        assert [i for i, f in facts.items() if fact["marker"] in f["text"]] == [ident]
    assert set(corrections) <= set(facts)
    assert all(c["marker"] not in facts[i]["text"] for i, c in corrections.items())
    assert {p["pair"] for p in prompts} == {"en-en", "en-zh", "zh-zh", "zh-en", "en-none", "zh-none"}
    for p in prompts:
        assert all(n in facts for n in p["needs"]) and p["split"] in ("dev", "test")
        if p["needs"]:
            assert p["pair"].split("-")[1] == facts[p["needs"][0]]["lang"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The set's vault as the verbs build it (the stand-in embedder), and the environment to ask it in."""
    tmp = tmp_path_factory.mktemp("agent")
    env = {**os.environ, **HASH_ENV, "MEMVAULT_USER_VAULT": str(tmp / "user")}
    agent.build(tmp / "vault", env)
    return tmp / "vault", env


def test_the_vault_the_verbs_build_holds_every_fact(built: tuple[Path, dict[str, str]]):
    facts, corrections, _ = agent.spec()
    vault = built[0]
    listed = json.loads(agent._memvault(vault, "list", "--json", env={**os.environ, **HASH_ENV}))
    entries = listed["entries"] if isinstance(listed, dict) else listed
    for ident, fact in facts.items():
        holders = [e for e in entries if fact["marker"] in e["text"]]
        assert holders, ident
        if ident in corrections:
            assert any(e.get("superseded") for e in holders), ident
            assert any(corrections[ident]["marker"] in e["text"] and not e.get("superseded") for e in entries)


def test_a_turn_counts_the_items_its_block_gives_and_those_that_are_a_needed_fact():
    """Recall alone let a block of seven unrelated entries around the one fact pass as well as the fact
    alone; `precision` is the share of a needing prompt's items that is a fact it needs."""
    facts, _, prompts = agent.spec()
    asked = next(p for p in prompts if p["needs"] and p["needs"][0] not in agent.spec()[1])
    other = next(f for i, f in facts.items() if i not in asked["needs"])
    fact = facts[asked["needs"][0]]
    block = (f'<memory-context tier="keyword">\n[MEMORY.md#L5-L5] {fact["text"]}\n'
             f'[MEMORY.md#L9-L9] {other["text"]}\n</memory-context>\n')  # fmt: skip
    turn = agent.judge(asked, "", block)
    assert (turn["found"], turn["items"], turn["items_needed"]) == (True, 2, 1)
    quiet = next(p for p in prompts if not p["needs"])
    summary = agent.summarise([turn, agent.judge(quiet, "", block)])
    assert summary["precision"] == 0.5 and summary["items_quiet"] == 2 and summary["quiet"] == 0.0


def test_judged_counts_a_needed_fact_among_the_hits_recall_left_out(built: tuple[Path, dict[str, str]]):
    """`--judged` tells a miss of the relevance decision from one of the ranking: a fact among the hits
    recall judged counts, given or not. The GPU note holds one of the prompt's five content words, fewer
    than a hit needs to answer it by its words, so it is not given, yet BM25 ranks it first."""
    vault, env = built
    asked = {"prompt": "gpu cooling fan noise complaints", "needs": ["gpu-box"], "pair": "en-en", "split": "dev"}
    said = json.loads(agent._memvault(vault, "context", "--json", asked["prompt"], env=env))
    assert agent.spec()[0]["gpu-box"]["marker"] not in said["text"]  # not given
    assert agent.judged(vault, env, asked) is True
    elsewhere = {**asked, "prompt": "zebra xylophone", "needs": ["gpu-box"]}
    assert agent.judged(vault, env, elsewhere) is False
    assert agent.judged(vault, env, {**asked, "needs": []}) is None
    turns = [{**agent.judge(asked, "", ""), "judged": True}, {**agent.judge(elsewhere, "", ""), "judged": False}]
    assert agent.summarise(turns)["judged"] == {"en-en": 0.5}
