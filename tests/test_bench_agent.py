"""The agent benchmark's own vault and prompts (bench/data/agent) hold together: every prompt's fact
exists, every marker names its fact alone, and the vault the verbs build from them holds each fact's
marker with the corrections made (the old entries marked superseded)."""

from __future__ import annotations

import json
import os
from pathlib import Path

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


def test_the_vault_the_verbs_build_holds_every_fact(tmp_path: Path):
    facts, corrections, _ = agent.spec()
    vault = tmp_path / "vault"
    agent.build(vault, {**os.environ, **HASH_ENV, "MEMVAULT_USER_VAULT": str(tmp_path / "user")})
    listed = json.loads(agent._memvault(vault, "list", "--json", env={**os.environ, **HASH_ENV}))
    entries = listed["entries"] if isinstance(listed, dict) else listed
    for ident, fact in facts.items():
        holders = [e for e in entries if fact["marker"] in e["text"]]
        assert holders, ident
        if ident in corrections:
            assert any(e.get("superseded") for e in holders), ident
            assert any(corrections[ident]["marker"] in e["text"] and not e.get("superseded") for e in entries)
