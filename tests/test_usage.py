"""Usage statistics: `status` counts the searches the daemon served, its caches and latency; each
entry in a hit is recorded as recalled (in the index, never in the notes), so `list
--unused-since` finds the facts nobody uses."""

from __future__ import annotations

import datetime as dt
import json

from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV


def test_status_usage_and_entries_nobody_recalls(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Drinks", "Green tea in the morning").returncode == 0
    assert cli("remember", "--section", "Editors", "Helix for quick edits").returncode == 0
    memory = (layout.root / "MEMORY.md").read_bytes()
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        for _ in range(2):  # the same query twice: its vector comes from the cache the second time
            assert cli("search", "--json", "green tea").returncode == 0
        usage = json.loads(cli("status", "--json").stdout)["usage"]
        assert usage["searches"] == 2 and usage["query_cache"] == {"hits": 1, "misses": 1}
        assert usage["search_ms"]["p50"] > 0 and usage["search_ms"]["max"] >= usage["search_ms"]["p50"]
        assert usage["embed_cache"]["misses"] >= 1
        rows = {e["text"]: e for e in json.loads(cli("list", "--json").stdout)["entries"]}
        tea, helix = rows["Green tea in the morning"], rows["Helix for quick edits"]
        assert tea["recalled"] >= 1 and tea["last_recalled"].startswith(dt.date.today().isoformat())
        unused = json.loads(cli("list", "--json", "--unused-since", dt.date.today().isoformat()).stdout)["entries"]
        assert [e["text"] for e in unused] == ["Helix for quick edits"] and helix["last_recalled"] is None
    finally:
        cli("daemon", "stop")
    assert (layout.root / "MEMORY.md").read_bytes() == memory  # usage is never written into the notes
    here = json.loads(cli("list", "--json", "--unused-since", dt.date.today().isoformat()).stdout)["entries"]
    assert [e["text"] for e in here] == ["Helix for quick edits"]  # read from the index without a daemon too
    assert cli("list", "--unused-since", "yesterday-ish").returncode == 2
