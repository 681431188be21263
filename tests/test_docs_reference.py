"""Docs that cannot drift (issue 45): the reference pages of docs/reference/ are what `python -m memvault.docs`
makes from the code now, they name every CLI command and every MCP tool, they hold nothing of one machine,
and every relative link of README.md and docs/ reaches a file (and a heading, when it names one)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from memvault import docs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def made() -> dict[Path, str]:
    """Every reference page as the code makes it now (once: listing the MCP tools builds the server)."""
    return docs.pages()


@pytest.mark.parametrize("name", sorted(docs.MAKERS))
def test_each_reference_page_is_what_the_code_makes_now(name, made):
    path = docs.REFERENCE / name
    there = ROOT / path
    assert there.is_file(), f"{path} is missing: run `./dev.sh docs`"
    assert there.read_text(encoding="utf-8") == made[path], f"{path} is stale: run `./dev.sh docs`"


def test_check_names_a_stale_page_and_writing_fixes_it(tmp_path, capsys):
    assert docs.main(["--root", str(tmp_path)]) == 0
    assert docs.main(["--check", "--root", str(tmp_path)]) == 0
    stale = tmp_path / docs.REFERENCE / "mcp.md"
    stale.write_text(stale.read_text(encoding="utf-8").replace("memory_search", "memory_seek"), encoding="utf-8")
    (tmp_path / docs.REFERENCE / "cli.md").unlink()
    capsys.readouterr()
    assert docs.main(["--check", "--root", str(tmp_path)]) == 1
    said = capsys.readouterr().err
    assert "cli.md: stale" in said and "mcp.md: stale" in said and "settings.md" not in said
    assert docs.main(["--root", str(tmp_path)]) == 0
    assert docs.main(["--check", "--root", str(tmp_path)]) == 0


def test_every_cli_command_has_its_help(made):
    import argparse

    from memvault.cli.parser import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    page = made[docs.REFERENCE / "cli.md"]
    assert len(sub.choices) >= 20
    for name in sub.choices:
        assert f"\n## memvault {name}\n" in page and f"usage: memvault {name} " in page, name


def test_every_mcp_tool_has_its_parameters_and_annotations(made):
    _, tools, *_ = docs._listed()
    page = made[docs.REFERENCE / "mcp.md"]
    assert len(tools) >= 10
    for tool in tools:
        section = page.split(f"\n### {tool.name}\n", 1)[1].split("\n### ", 1)[0]
        assert "`readOnlyHint: " in section, tool.name
        for param in tool.input_schema.get("properties", {}):
            assert f"| `{param}` |" in section, (tool.name, param)


def test_every_setting_option_and_environment_variable_is_there_and_described(made):
    from memvault.search.option_table import OPTIONS
    from memvault.vault.config import ENV_VARS, Settings

    page = made[docs.REFERENCE / "settings.md"]
    for name in [f for f in Settings.__dataclass_fields__] + [o.name for o in OPTIONS]:
        assert f"| `{name}` |" in page, name
    read = docs.environment_variables()
    assert {"MEMVAULT_VAULT", "MEMVAULT_USER_VAULT", "MEMVAULT_LLM_URL", *ENV_VARS.values()} <= set(read)
    undescribed = sorted(set(read) - set(ENV_VARS.values()) - set(docs.ENV_ABOUT))
    assert not undescribed, f"describe these in memvault.docs.ENV_ABOUT: {undescribed}"


def test_the_pages_hold_nothing_of_this_machine(made):
    for path, text in made.items():
        for local in (str(Path.home()), str(ROOT), dt.date.today().isoformat()):
            assert local not in text, (path, local)


# ---------------------------------------------------------------------------------------------- links

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _outside_code(text: str) -> str:
    """The text without fenced code blocks and code spans, where a link or heading is no link or heading."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as `-`."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_the_anchor_reader_reads_headings_as_github_does(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# A page\n\n## Hooks: the loop in Claude Code\n\n## 4. Vault format\n\n```\n## not one\n```\n"
                    "## `memvault init`\n\n## memory_search\n\n## Again\n\n## Again\n", encoding="utf-8")  # fmt: skip
    assert _anchors(page) == {"a-page", "hooks-the-loop-in-claude-code", "4-vault-format", "memvault-init",
                              "memory_search", "again", "again-1"}  # fmt: skip


def test_every_relative_link_reaches_a_file_and_its_heading():
    broken = []
    links = 0
    for page in _markdown_files():
        for target in LINK.findall(_outside_code(page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            links += 1
            name, _, anchor = target.partition("#")
            there = (page.parent / name).resolve() if name else page
            if not there.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and there.suffix == ".md" and anchor not in _anchors(there):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert links > 30
    assert not broken, broken


def test_the_readme_is_short_and_points_at_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for page in sorted((ROOT / "docs").rglob("*.md")):
        assert f"({page.relative_to(ROOT)})" in readme, f"README.md does not link {page.relative_to(ROOT)}"
