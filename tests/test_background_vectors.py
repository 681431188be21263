"""A new vault is searchable before its vectors are done: the daemon puts every note into BM25 first,
answers hybrid queries with the vectors it has so far (and says so), shows the embedding's progress
in `status`, and fills in the rest in the background (the real model, a real daemon)."""

from __future__ import annotations

import json

from memvault.daemon.client import ask
from tests.reliability.conftest import wait_for

NOTES = 60  # one chunk each: about ten seconds of the default model on two cores, a step is 32


def _status(layout):
    reply = ask(layout, {"op": "status"}, timeout=30)
    return reply["status"] if reply and reply["ok"] else {}


def test_bm25_answers_while_the_vectors_fill_in(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    for i in range(NOTES):
        note = layout.root / "notes" / f"n{i:02}.md"
        note.parent.mkdir(exist_ok=True)
        note.write_text(f"# Note {i}\n\nThe harbour log of day {i} mentions topic{i} and the tide.\n", encoding="utf-8")
    assert cli("daemon", "start").returncode == 0
    try:
        first = wait_for(lambda: (now := _status(layout)).get("last_full_reconcile") and now)
        total = first["vectors"]["total"]
        assert total >= NOTES and 0 < first["vectors"]["waiting"] <= total  # BM25 has them all; vectors follow
        found = ask(layout, {"op": "search", "query": "topic37", "mode": "hybrid"}, timeout=60)
        assert found["ok"] and found["hits"][0]["path"] == "notes/n37.md"  # by BM25, however far the model is
        if _status(layout)["vectors"]["waiting"]:  # still waiting after the answer: it was partial, and says so
            assert f"of {total} chunks so far: the dense ranking weighs" in found["reason"]
        floored = ask(layout, {"op": "search", "query": "topic59 tide", "min_similarity": "auto"}, timeout=60)
        assert floored["ok"], floored
        if "so far" in (floored["reason"] or ""):  # answered while vectors were missing: unknown, not irrelevant
            assert floored["floor"]["vectors_pending"] is True
            assert "notes/n59.md" in [h["path"] for h in floored["hits"]]
        else:
            assert "vectors_pending" not in floored["floor"]
        done = wait_for(lambda: (now := _status(layout))["vectors"]["waiting"] == 0 and now, timeout=300)
        assert done["vectors"]["embedded"] == total and done["vectors"]["rate_per_s"] > 0
        assert done["vectors"]["eta_s"] == 0
        again = ask(layout, {"op": "search", "query": "topic37"}, timeout=60)
        assert again["source"] == "hybrid" and "vectors for" not in (again["reason"] or "")
        assert again["hits"][0]["path"] == "notes/n37.md"
        shown = cli("status")
        assert shown.returncode == 0 and f"{total} of {total} embedded" in shown.stdout
        assert ask(layout, {"op": "verify"}, timeout=120)["disagreements"] == []
    finally:
        cli("daemon", "stop")
    assert json.loads(cli("status", "--json").stdout)["vectors"] == {"embedded": total, "total": total, "waiting": 0}
