from __future__ import annotations

import os

from tests.conftest import run_main


def test_vault_resolution_order(tmp_path, cli):
    flag, env_dir, cwd = tmp_path / "flag", tmp_path / "env", tmp_path / "cwd"
    cwd.mkdir()
    assert cli("init", env={"MEMVAULT_VAULT": str(env_dir)}).returncode == 0
    assert (env_dir / "MEMORY.md").exists()
    assert cli("--vault", str(flag), "init", env={"MEMVAULT_VAULT": str(env_dir)}).returncode == 0
    assert (flag / "MEMORY.md").exists()
    assert cli("init", "--vault", str(flag / "after")).returncode == 0  # after the verb too
    assert (flag / "after" / "MEMORY.md").exists()
    env = {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}
    result = run_main(["init"], env, cwd, None, 60)
    assert result.returncode == 0, result.stderr
    assert (cwd / "memory" / "MEMORY.md").exists()


def test_errors_are_one_line_without_traceback_unless_debug(layout, cli):
    result = cli("show", "../x.md")
    assert result.returncode == 2
    assert result.stderr.startswith("memvault: error: ../x.md:") and result.stderr.count("\n") == 1
    debug = cli("--debug", "show", "../x.md")
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_note_without_text_or_stdin(layout, cli):
    result = cli("note", input="")
    assert result.returncode != 0 and "empty entry" in result.stderr


def test_show_memory_and_sections_before_init(layout, cli):
    result = cli("show", "memory")
    assert result.returncode == 4 and "MEMORY.md: no such note" not in result.stdout
    assert "no such note" in result.stderr
    assert cli("sections").returncode == 1


def test_a_vault_that_is_not_there_is_named_not_made_and_the_version_is_one_flag_away(layout, cli, tmp_path):
    """Issue 29: a mistyped --vault exited 0 with no hits (or the user vault's), and the first save made
    a vault there with the Chinese template whatever the person meant."""
    typo = tmp_path / "memroy"
    for args in (("search", "deploy"), ("remember", "--type", "config", "Uses pnpm"), ("status",), ("mcp",)):
        refused = cli("--vault", str(typo), *args, input="")
        assert refused.returncode == 2 and f"{typo}: no vault there" in refused.stderr, (args, refused)
        assert refused.stderr.count("\n") == 1
    assert not typo.exists()
    env = {"MEMVAULT_VAULT": str(typo)}
    assert "no vault there" in cli("search", "deploy", env=env).stderr  # the same through the environment
    assert cli("--vault", str(typo), "init", "--lang", "en").returncode == 0 and typo.is_dir()
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("memvault ") and version.stdout.strip()[-1].isdigit()


def test_the_parser_of_one_command_is_that_command_of_the_whole_parser():
    """A run builds the named command's parser alone (`memvault.cli.parser.AREAS`): each area adds
    exactly the commands its line lists, and each one-command parser is that command alone, with the
    same arguments."""
    import argparse
    import importlib

    from memvault.cli.parser import AREAS, build_parser, command_named

    def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices

    whole = subparsers(build_parser())
    listed = [name for names in AREAS.values() for name in names]
    assert len(listed) == len(set(listed)) and set(listed) <= set(whole)
    for area, names in AREAS.items():
        added: list[str] = []

        def record(name, handler, text, added=added):
            added.append(name)
            return argparse.ArgumentParser(add_help=False)

        importlib.import_module(f"memvault.cli.{area}").add_commands(record)
        assert added == list(names), area
    for name, full in whole.items():
        alone = subparsers(build_parser(name))
        assert set(alone) == {name}, name
        assert alone[name].format_help() == full.format_help(), name
    assert command_named(["--vault", "v", "--debug", "search", "x"]) == "search"
    assert command_named(["--vault=v", "list"]) == "list"
    assert [command_named(a) for a in (["--help"], ["--vau", "v", "list"], [], ["--version"])] == [None] * 4
