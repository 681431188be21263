"""Seed 000's "this conversation / all" in search (issue 48): `search --conversation ID` (and
`memory_search`'s `conversation`, and a batch line's) keeps the conversation's entries
(`[conversation:: ID]`) and what it said (its history note), in every mode and in the fallback."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write_notes

NOTES = {
    "MEMORY.md": "# Memory\n\n## Decisions\n\n"
                 "- Deploys go out on Thursdays [conversation:: conv-a]\n"
                 "- Deploys are frozen in December [conversation:: conv-b]\n"
                 "- Deploys need two approvals\n",
    "conversations/2026-12-01-conv-a.md": "# Deploy day\n\n[conversation:: conv-a]\n\n## Messages\n\n"
                                          "- **user** 10:00: when do deploys go out?\n",
    "conversations/2026-12-02-conv-b.md": "# Freeze\n\n[conversation:: conv-b]\n\n## Messages\n\n"
                                          "- **user** 11:00: are deploys frozen this month?\n",
}  # fmt: skip


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector", "substring"])
def test_a_search_keeps_one_conversation(layout, cli, mode):
    write_notes(layout, NOTES)
    assert cli("index").returncode == 0
    every = json.loads(cli("search", "--json", "--mode", mode, "--kind", "memory", "--kind", "conversation",
                           "deploys").stdout)["hits"]  # fmt: skip
    assert {h["path"] for h in every} >= {"MEMORY.md", "conversations/2026-12-01-conv-a.md"} or mode == "vector"
    result = cli("search", "--json", "--mode", mode, "--kind", "memory", "--kind", "conversation",
                 "--conversation", "conv-a", "deploys")  # fmt: skip
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)["hits"]
    said = "\n".join(h["text"] for h in hits)
    assert hits and "Thursdays" in said and "December" not in said and "two approvals" not in said
    assert "frozen this month" not in said
    if mode != "substring":
        assert "conversations/2026-12-01-conv-a.md" in {h["path"] for h in hits}
