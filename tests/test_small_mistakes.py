"""Left from earlier audits: a section named in other case or spacing is the section there, a mistyped
command is answered with the nearest one, `status` refuses the `memvault.toml` that `search` refuses,
and `daemon status` prints values a person reads (no Python reprs, no epoch seconds)."""

from __future__ import annotations

import datetime as dt
import re

from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV


def test_a_section_named_in_other_case_or_spacing_is_the_one_there(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    done = cli("remember", "--section", "user  PREFERENCES", "Likes tea")
    assert done.returncode == 0 and "§ User Preferences" in done.stdout and done.stderr == "", done
    assert cli("remember", "--section", "Team", "Ana owns billing").returncode == 0
    assert cli("remember", "--section", "team", "Bob owns search").returncode == 0
    text = layout.memory_md.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.*)$", text, re.M)
    assert [h for h in headings if h.casefold() in ("user preferences", "team")] == ["User Preferences", "Team"]
    assert "## User Preferences\n\n- Likes tea" in text and "- Ana owns billing" in text
    team = text.split("## Team")[1]
    assert "- Ana owns billing <!-- saved" in team and "- Bob owns search" in team
    again = cli("remember", "--section", "TEAM", "bob owns  search")
    assert again.returncode == 0 and "already" in again.stdout, again.stdout  # the same fact in the same section


def test_a_mistyped_command_gets_the_nearest_one(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    for args, meant in ((("serch", "deploy"), "search"), (("remmeber", "x"), "remember"),
                        (("daemon", "stauts"), "status")):  # fmt: skip
        done = cli(*args)
        assert done.returncode == 2 and f"did you mean '{meant}'?" in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("memvault: error: ")
    nothing_near = cli("zzzzzz")
    assert nothing_near.returncode == 2 and "did you mean" not in nothing_near.stderr


def test_status_refuses_the_settings_file_search_refuses(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    (layout.root / "memvault.toml").write_text("embedder = 3\n", encoding="utf-8")
    search = cli("search", "anything")
    status = cli("status")
    assert search.returncode == status.returncode == 2, (search, status)
    assert status.stderr == search.stderr and "memvault.toml: embedder must be a string" in status.stderr
    assert status.stdout == "" and cli("status", "--json").returncode == 2


def test_daemon_status_prints_readable_values(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    stopped = cli("daemon", "status")
    assert stopped.returncode == 3 and re.search(r"^running\s+no$", stopped.stdout, re.M), stopped.stdout
    assert "None" not in stopped.stdout and "False" not in stopped.stdout
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        shown = cli("daemon", "status", env=HASH_ENV)
    finally:
        cli("daemon", "stop")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert re.search(r"^running\s+yes$", out, re.M) and not re.search(r"[{}\[\]']|\bTrue\b|\bNone\b", out), out
    when = re.search(r"^last full reconcile\s+(\S+)$", out, re.M)
    assert when and dt.datetime.fromisoformat(when.group(1)).year >= 2024, out  # a date, not epoch seconds
    assert re.search(r"^vectors\s+\d+ of \d+ embedded", out, re.M) and re.search(r"^searches\s+0$", out, re.M), out
