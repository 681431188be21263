"""Seed 002's `/memory status` in full: both scopes (as the MCP tool shows them), the recall errors with
the last one and its time, the latest conversation summary's size; and `context` over a broken index says
it answered from the notes' text (a reason in the JSON, a line on stderr) and counts it as a recall error."""

from __future__ import annotations

import datetime as dt
import json

from tests.reliability.conftest import HASH_ENV

DIGEST = ("Conversation: “Release plan”, 4 messages, 2 from the user, 2 from the assistant\n"
          "  user: when do we ship?\n  assistant: Tuesday")  # fmt: skip


def _status(cli) -> dict:
    done = cli("status", "--json", env=HASH_ENV)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_status_shows_both_scopes_and_the_latest_summary_size(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "Uses pnpm").returncode == 0
    assert cli("remember", "--type", "preference", "--scope", "user", "Answers in English").returncode == 0
    (layout.root / "daily" / "2024-05-01.md").write_text(
        f"---\ndate: 2024-05-01\n---\n# 2024-05-01 Daily Log\n\n## Conversations\n\n- 09:30 {DIGEST}\n"
        "- 10:15 Conversation: a short one\n",
        encoding="utf-8",
    )
    memory = _status(cli)["memory"]
    assert set(memory) == {"project", "user"}, memory
    assert (memory["project"]["current"], memory["user"]["current"]) == (3, 1)
    assert memory["project"]["latest_summary_chars"] == len("Conversation: a short one")  # the latest, as one line
    assert memory["user"]["latest_summary_chars"] == 0 and memory["project"]["recall_errors"] == 0
    assert memory["project"]["last_recall_error"] is None
    text = cli("status", env=HASH_ENV).stdout
    assert "[project] 3 current" in text and "[user] 1 current" in text, text
    assert "the latest 25 characters" in text and "recall errors   [project] 0" in text


def test_context_over_a_broken_index_says_so_and_counts_it(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    for fact in ("Deploys go out on Tuesdays after lunch", "The staging database lives in Frankfurt"):
        assert cli("note", fact).returncode == 0
    assert cli("index", env=HASH_ENV).returncode == 0
    healthy = json.loads(cli("context", "staging database", "--json", env=HASH_ENV).stdout)
    assert healthy["reason"] is None and _status(cli)["memory"]["project"]["recall_errors"] == 0

    manifest = layout.state_dir / "manifest.sqlite"
    for suffix in ("-wal", "-shm"):
        (layout.state_dir / f"manifest.sqlite{suffix}").unlink(missing_ok=True)
    manifest.write_bytes(manifest.read_bytes()[:100])
    before = dt.datetime.now().astimezone().replace(microsecond=0)
    data = cli("context", "staging database", "--json", env=HASH_ENV)
    assert data.returncode == 0 and data.stderr == "", data.stderr
    reply = json.loads(data.stdout)
    assert "unreadable manifest" in reply["reason"] and reply["reasons"] == {"project": reply["reason"]}
    assert "Frankfurt" in " ".join(item["text"] for item in reply["recall"])  # the notes' text still answers

    shown = cli("context", "staging database", env=HASH_ENV)
    assert shown.returncode == 0 and "<memory-context" in shown.stdout
    said = shown.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("memvault: ") and "unreadable manifest" in said[0], shown.stderr

    project = _status(cli)["memory"]["project"]
    assert project["recall_errors"] == 2 and "unreadable manifest" in project["last_recall_error"]
    assert dt.datetime.fromisoformat(project["last_recall_error_at"]) >= before
    assert "recall errors   [project] 2, the last at" in cli("status", env=HASH_ENV).stdout


def test_status_counts_days_and_sections_and_says_when_memory_md_changed(layout, cli):
    """Seed 003's statistics and lastUpdated: the days with a note, MEMORY.md's sections, and when it last
    changed, per scope, in JSON and in words."""
    import datetime as dt
    import json

    assert cli("init", "--lang", "en").returncode == 0
    assert cli("note", "a day's line").returncode == 0
    assert cli("remember", "Prefers tabs", "--type", "preference").returncode == 0
    memory = json.loads(cli("status", "--json").stdout)["memory"]["project"]
    assert memory["daily_notes"] == 1 and memory["sections"] >= 5
    changed = dt.datetime.fromisoformat(memory["memory_updated"])
    assert abs((dt.datetime.now() - changed).total_seconds()) < 600
    assert f"1 daily notes, {memory['sections']} sections; MEMORY.md last changed" in cli("status").stdout
