"""Statistics kept over time (issue 48, seed 003): per day, the searches a daemon served by mode, their
latency and the query cache's hits, in `status`, kept across a restart with the daemon's events; an
event says what changed (the sections of MEMORY.md an update touched, the chunks a note's removal took)."""

from __future__ import annotations

import datetime as dt
import json

from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV, wait_for


def _status(cli) -> dict:
    return json.loads(cli("daemon", "status", "--json", env=HASH_ENV).stdout)


def _events(cli) -> list[dict]:
    return [json.loads(line) for line in cli("events", "--json", env=HASH_ENV).stdout.splitlines()]


def test_the_days_figures_and_the_events_outlive_a_restart(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    start_daemon(cli, layout.root, "--debounce", "0.2", env=HASH_ENV)
    try:
        for args in (("staging port",), ("staging port",), ("--mode", "bm25", "billing")):
            assert cli("search", *args, env=HASH_ENV).returncode == 0
        assert cli("remember", "The staging database listens on port 6543", "--section", "Configuration",
                   env=HASH_ENV).returncode == 0  # fmt: skip
        touched = lambda: [e["sections"] for e in _events(cli) if e["event"] == "memory-updated"]  # noqa: E731
        assert wait_for(lambda: ["Configuration"] in touched(), 60), touched()  # the section the save changed
        today = _status(cli)["usage"]["days"][dt.date.today().isoformat()]
        assert today["searches"] == 3 and today["by_mode"] == {"hybrid": 2, "bm25": 1}, today
        assert today["cache_hits"] >= 1 and today["ms_max"] >= today["ms_mean"] > 0
        before = _events(cli)
    finally:
        assert cli("daemon", "stop", env=HASH_ENV).returncode == 0
    (layout.root / "scratch.md").write_text("# Scratch\n\n- a note to remove\n")
    start_daemon(cli, layout.root, "--debounce", "0.2", env=HASH_ENV)
    try:
        again = _status(cli)["usage"]["days"][dt.date.today().isoformat()]
        assert again["searches"] == 3 and again["by_mode"] == {"hybrid": 2, "bm25": 1}  # kept across the restart
        kept = _events(cli)
        assert [e["seq"] for e in kept[: len(before)]] == [e["seq"] for e in before]  # the earlier ones, then on
        assert kept[len(before)]["seq"] > before[-1]["seq"]
        assert wait_for(lambda: any(e.get("path") == "scratch.md" for e in _events(cli)), 60)
        (layout.root / "scratch.md").unlink()
        assert wait_for(lambda: any(e["event"] == "file-unindexed" for e in _events(cli)), 60)
        gone = next(e for e in _events(cli) if e["event"] == "file-unindexed")
        assert gone["path"] == "scratch.md" and gone["chunks"] >= 1, gone
    finally:
        cli("daemon", "stop", env=HASH_ENV)


def test_broken_frontmatter_is_an_event_and_an_error_not_a_silent_pass(layout, cli):
    """A note whose frontmatter cannot be read is indexed as plain text; the daemon says so in `status`'s
    errors and as an `index-error` event for that note (before, only its log had it)."""
    assert cli("init", "--lang", "en").returncode == 0
    start_daemon(cli, layout.root, "--debounce", "0.2", env=HASH_ENV)
    try:
        (layout.root / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Note\n\n- a fact\n", encoding="utf-8")
        said = lambda: [e for e in _events(cli) if e["event"] == "index-error"]  # noqa: E731
        assert wait_for(said, 60), _events(cli)
        event = said()[0]
        assert event["path"] == "broken.md" and "broken frontmatter" in event["error"] and event["indexed"] is True
        assert any("broken.md" in e for e in _status(cli)["errors"])
        found = json.loads(cli("search", "--json", "--mode", "bm25", "fact", env=HASH_ENV).stdout)["hits"]
        assert any(h["path"] == "broken.md" for h in found)  # read as plain text all the same
    finally:
        cli("daemon", "stop", env=HASH_ENV)
