"""An entry is named by a key, an id, a place or a piece of its text: an empty or blank one names no entry
and is refused in one line by every door (CLI, the verbs' requests, the library, MCP), before anything
moves. `--match ""` used to match every entry, so a vault of one entry lost it to `forget --purge`."""

from __future__ import annotations

import anyio
import pytest

from memvault.api import Vault
from memvault.vault.correct import correct
from memvault.vault.errors import UsageError
from memvault.vault.forget import forget
from memvault.vault.purge import purge
from memvault.verbs.entries import Correct, Forget

ONLY = "The build server is ci-7"


@pytest.fixture
def one_entry(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Notes", ONLY).returncode == 0
    return layout.memory_md.read_bytes()


@pytest.mark.parametrize("args", [
    ("forget", "--purge", "--match", ""), ("forget", "--match", ""), ("forget", "--match", "  \t "),
    ("forget", "--purge", "--match", "\u3000"), ("correct", "--match", "", "The build server is ci-8"),
])  # fmt: skip
def test_an_empty_match_or_locator_is_refused_by_the_cli_and_nothing_moves(one_entry, layout, cli, args):
    refused = cli(*args)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "Traceback" not in refused.stderr and "internal error" not in refused.stderr
    assert layout.memory_md.read_bytes() == one_entry
    assert not list(layout.root.glob("daily/*.md"))  # no correction written either
    assert not (layout.trash_dir / "entries").exists() or not list((layout.trash_dir / "entries").iterdir())
    moved = cli("forget", "--match", "  ci-7 ")  # a real piece of its text still names it
    assert moved.returncode == 0 and ONLY not in layout.memory_md.read_text(encoding="utf-8"), moved.stderr


@pytest.mark.parametrize("key, match", [(None, ""), (None, " \n "), ("", None), ("  ", None)])
def test_the_requests_and_the_library_refuse_it_at_the_root(one_entry, layout, key, match):
    for build in (lambda: Forget(key, match), lambda: Forget(key, match, purge=True),
                  lambda: Correct("The build server is ci-8", key, match)):  # fmt: skip
        with pytest.raises(UsageError):
            build()
    for call in (lambda: forget(layout, key, match), lambda: purge(layout, key, match),
                 lambda: correct(layout, key, match, "The build server is ci-8")):  # fmt: skip
        with pytest.raises(UsageError) as caught:
            call()
        assert "\n" not in str(caught.value)
    assert layout.memory_md.read_bytes() == one_entry


def test_mcp_memory_forget_and_correct_refuse_an_empty_match_or_place(one_entry, layout):
    from mcp.server.mcpserver.exceptions import ToolError

    from memvault.mcp.server import build_server

    async def calls() -> list[str]:
        server = build_server(Vault(layout.root))
        said = []
        for name, args in (("memory_forget", {"match": ""}), ("memory_forget", {"match": "   "}),
                           ("memory_forget", {"where": ""}), ("memory_forget", {"key": ""}),
                           ("memory_correct", {"text": "ci-8", "match": " "})):  # fmt: skip
            with pytest.raises(ToolError) as caught:
                await server.call_tool(name, args)
            said.append(str(caught.value))
        return said

    for said in anyio.run(calls):
        assert "\n" not in said and " is empty" in said and "memory_search finds it" not in said, said
    assert layout.memory_md.read_bytes() == one_entry
