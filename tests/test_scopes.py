"""User and project scopes: saves routed by key, tags and --scope; search and list read both vaults,
each through its own daemon, label every hit, and merge by rank."""

from __future__ import annotations

import json

from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV


def _search(cli, *args):
    result = cli("search", "--json", "--mode", "bm25", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_saves_are_routed_by_key_tags_and_scope(layout, cli, user_root):
    assert cli("init", "--lang", "en").returncode == 0
    first = cli("remember", "--type", "preference", "--key", "user_name", "The user is called Ada")
    assert first.returncode == 0, first.stderr
    assert f"created the user vault at {user_root}" in first.stderr and f"(user vault {user_root})" in first.stdout
    assert cli("remember", "--type", "preference", "--tag", "personal", "Ada drinks green tea").returncode == 0
    assert cli("note", "--tag", "Profile", "Ada moved to Lisbon").returncode == 0  # tags are matched without case
    assert cli("remember", "--scope", "user", "--section", "Habits", "Walks at noon").returncode == 0
    assert cli("remember", "--type", "architecture", "This project serves tea menus").returncode == 0
    assert cli("remember", "--scope", "project", "--type", "config", "--key", "user_count", "Ten users").returncode == 0
    user_text = (user_root / "MEMORY.md").read_text(encoding="utf-8")
    project_text = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "## User Preferences" in user_text  # created in the project's language
    for fact in ("called Ada", "green tea #personal", "Walks at noon"):
        assert fact in user_text and fact not in project_text
    assert "Lisbon" in next((user_root / "daily").glob("*.md")).read_text(encoding="utf-8")
    assert "tea menus" in project_text and "Ten users" in project_text and "tea menus" not in user_text
    forgot = cli("forget", "user_name")  # a user_ key is looked up in the user vault
    assert forgot.returncode == 0 and "called Ada" not in (user_root / "MEMORY.md").read_text(encoding="utf-8")
    assert cli("forget", "user_count", "--scope", "project").returncode == 0


def test_search_and_list_read_both_vaults_through_their_daemons(layout, cli, user_root):
    assert cli("init", "--lang", "en").returncode == 0
    for i in range(3):  # a section each: a chunk each
        assert cli("remember", "--section", f"Kettle {i}", f"Tea kettle setting {i} for the project").returncode == 0
    for i in range(2):
        saved = cli("remember", "--scope", "user", "--section", f"Ritual {i}", f"Tea ritual {i} of the user")
        assert saved.returncode == 0
    start_daemon(cli, layout.root, env=HASH_ENV)
    start_daemon(cli, user_root, env=HASH_ENV)
    try:
        both = _search(cli, "--per-doc", "0", "tea")
        scopes = [h["scope"] for h in both["hits"]]
        assert scopes == ["project", "user", "project", "user", "project"]  # taking turns by rank, not by score
        assert all(h["path"] == "MEMORY.md" for h in both["hits"])
        assert [h["scope"] for h in _search(cli, "--scope", "user", "--per-doc", "0", "tea")["hits"]] == ["user"] * 2
        assert {h["scope"] for h in _search(cli, "--scope", "project", "tea")["hits"]} == {"project"}
        noted = cli("note", "--scope", "user", "Tea with Sam on the terrace")
        assert "indexed by the daemon" in noted.stdout  # the user vault's own daemon took it
        hit = _search(cli, "--scope", "user", "terrace")["hits"][0]
        assert hit["scope"] == "user" and hit["path"].startswith("daily/")
        human = cli("search", "--mode", "bm25", "terrace").stdout
        assert human.startswith("[user] daily/")
        listed = json.loads(cli("list", "--json", "--section", "Ritual 1").stdout)
        assert [e["scope"] for e in listed["entries"]] == ["user"]
        every = json.loads(cli("list", "--json").stdout)["entries"]
        assert {e["scope"] for e in every} == {"project", "user"}
        assert "[user] MEMORY.md:" in cli("list").stdout
    finally:
        cli("daemon", "stop")
        cli("--vault", str(user_root), "daemon", "stop")


def test_the_cli_prints_what_the_library_answers_with_one_daemon_or_two(layout, cli, user_root):
    """A search both daemons answer is sent, merged and printed before the library is imported
    (`memvault.cli.via_daemon`); with the user vault's daemon stopped the whole CLI answers, the user
    vault read here. Either way the CLI prints what `Scopes` answers, hit for hit."""
    from memvault import Scopes, Vault

    assert cli("init", "--lang", "en").returncode == 0
    for i in range(3):
        assert cli("remember", "--section", f"Kettle {i}", f"Tea kettle setting {i} for the project").returncode == 0
        saved = cli("remember", "--scope", "user", "--section", f"Ritual {i}", f"Tea ritual {i} of the user")
        assert saved.returncode == 0
    start_daemon(cli, layout.root, env=HASH_ENV)
    start_daemon(cli, user_root, env=HASH_ENV)
    try:
        by_daemons = _search(cli, "--per-doc", "0", "--limit", "5", "tea")
        with Scopes(Vault(layout.root)) as scopes:
            assert scopes.search_json("tea", mode="bm25", per_doc=0, limit=5) == by_daemons
        assert [h["scope"] for h in by_daemons["hits"]] == ["project", "user", "project", "user", "project"]
        cli("--vault", str(user_root), "daemon", "stop")
        assert _search(cli, "--per-doc", "0", "--limit", "5", "tea") == by_daemons
    finally:
        cli("daemon", "stop")
        cli("--vault", str(user_root), "daemon", "stop")


def test_no_user_vault_means_the_project_alone(layout, cli, user_root):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "Only the project here").returncode == 0
    result = _search(cli, "project")
    assert [h["scope"] for h in result["hits"]] == ["project"] and not user_root.exists()
    refused = cli("search", "--scope", "user", "project")
    assert refused.returncode == 2 and "no user vault yet" in refused.stderr


def test_the_python_api_routes_and_reads_both(layout, user_root):
    from memvault import Scopes, Vault

    with Scopes(Vault(layout.root)) as s:
        assert s.save(key="project_thing")[0] == "project"
        name, vault = s.save(key="user_lang")
        assert name == "user" and vault.root == user_root and s.created_user
        vault.remember("Answers in English", section="Preferences", key="user_lang")
        s.project.remember("English docs for the API", section="Docs")
        hits = s.search("English", mode="bm25")
        assert [(h.scope, h.path) for h in hits] == [("project", "MEMORY.md"), ("user", "MEMORY.md")]


def test_a_keyed_save_goes_where_its_fact_is_whatever_its_tags(layout, cli, user_root):
    """Issue 27, case 5: `--tag preference` routed the update of a project fact's key to the user
    vault, and the project's older version stayed current."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "preference", "--key", "editor", "Uses Vim").returncode == 0
    moved = cli("remember", "--type", "preference", "--key", "editor", "--tag", "preference", "Switched to Helix")
    assert moved.returncode == 0 and moved.stdout.startswith("updated the entry with key editor in MEMORY.md"), moved
    assert "user vault" not in moved.stdout + moved.stderr
    project = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "Switched to Helix #preference [key:: editor]" in project and "Uses Vim" not in project
    assert cli("remember", "--type", "preference", "--tag", "preference", "Likes short commits").returncode == 0
    assert "Likes short commits" in (user_root / "MEMORY.md").read_text(encoding="utf-8")  # routed by the tag
    assert cli("remember", "--scope", "user", "--type", "preference", "--key", "theme", "Dark theme").returncode == 0
    again = cli("remember", "--type", "preference", "--key", "theme", "Light theme")  # no tag: to the user vault
    assert again.returncode == 0 and f"(user vault {user_root})" in again.stdout, again
    assert "Light theme" in (user_root / "MEMORY.md").read_text(encoding="utf-8")
    assert "theme" not in (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    gone = cli("forget", "theme")  # looked up where it is
    assert gone.returncode == 0 and "Light theme" not in (user_root / "MEMORY.md").read_text(encoding="utf-8")
