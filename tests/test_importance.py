"""Seed 003's importance (1-5): `remember --importance N` writes `[importance:: N]` (a person may type
it too); 4 or 5 keep the entry in every prompt's stable block whatever its section; `list
--importance N` narrows to N or more; out of range is refused in one line."""

from __future__ import annotations

import json

from tests.reliability.conftest import HASH_ENV


def test_an_important_entry_is_in_the_stable_block_and_list_narrows_to_it(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "The prod database is never restarted on Fridays", "--section", "Operations",
               "--importance", "5", env=HASH_ENV).returncode == 0  # fmt: skip
    assert cli("remember", "The office plant is a ficus", "--section", "Operations", "--importance", "2",
               env=HASH_ENV).returncode == 0  # fmt: skip
    memory = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "never restarted on Fridays [importance:: 5]" in memory
    with (layout.root / "MEMORY.md").open("a", encoding="utf-8") as fh:  # typed by a person, in a plain section
        fh.write("- Deploys need two approvals [importance:: 4]\n")
    stable = cli("context", env=HASH_ENV).stdout
    assert "never restarted on Fridays" in stable and "two approvals" in stable and "ficus" not in stable
    listed = json.loads(cli("list", "--importance", "4", "--json", env=HASH_ENV).stdout)["entries"]
    assert sorted(e["importance"] for e in listed) == [4, 5] and all("ficus" not in e["text"] for e in listed)
    refused = cli("remember", "x", "--importance", "9", env=HASH_ENV)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1


def test_the_prompt_reads_importance_in_words(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "The payments queue is RabbitMQ", "--section", "Notes", "--importance", "3",
               env=HASH_ENV).returncode == 0  # fmt: skip
    assert cli("index", env=HASH_ENV).returncode == 0
    given = json.loads(cli("context", "--json", "which queue do payments use", env=HASH_ENV).stdout)
    line = next(item["text"] for item in given["recall"] if "RabbitMQ" in item["text"])
    assert "importance 3 of 5" in line and "[importance::" not in line


def test_an_important_entry_ranks_above_an_equal_one(layout, cli):
    """Two entries that answer alike, in two sections (never joined into one hit): unmarked, one of them
    comes first; the other, marked important, then comes first (the order is the importance's)."""
    assert cli("init", "--lang", "en").returncode == 0
    said = "The billing service listens on port {} for refunds"

    def first(marked: str | None) -> str:
        lines = {port: said.format(port) + (" [importance:: 5]" if port == marked else "") for port in ("7001", "7002")}
        memory = f"# Memory\n\n## Notes\n\n- {lines['7001']}\n\n## Services\n\n- {lines['7002']}\n"
        (layout.root / "MEMORY.md").write_text(memory, encoding="utf-8")
        assert cli("index", env=HASH_ENV).returncode == 0
        query = ("search", "--json", "--per-doc", "0", "billing service port refunds")
        ports = [h["text"] for h in json.loads(cli(*query, env=HASH_ENV).stdout)["hits"] if "billing" in h["text"]]
        assert len(ports) == 2 and all(p.count("listens") == 1 for p in ports), ports
        return "7001" if "7001" in ports[0] else "7002"

    ahead = first(None)
    behind = "7002" if ahead == "7001" else "7001"
    assert first(behind) == behind


def test_a_decision_in_an_adrs_shape(layout, cli):
    """Seed 003: a decision with its context and consequences, as lines of one entry in the
    architecture decisions, labelled in the vault's language, found by its consequences too."""
    assert cli("init", "--lang", "en").returncode == 0
    done = cli("remember", "We use Postgres 16 for billing", "--type", "architecture", "--context",
               "refunds need transactions across orders", "--consequences", "one more service to run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    memory = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert ("- We use Postgres 16 for billing <!-- saved" in memory and "  Context: refunds need transactions across"
            " orders\n  Consequences: one more service to run\n" in memory)  # fmt: skip
    listed = json.loads(cli("list", "--json").stdout)["entries"]
    assert any(e["text"].endswith("Consequences: one more service to run") for e in listed)
    assert cli("remember", "x", "--context", " ").returncode == 2  # an empty part is refused in one line
