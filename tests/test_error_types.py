"""An error keeps its type across the daemon's socket (issue 45): the API raises the same exception
class, message and exit code whether a daemon answered or the verb ran in this process, for a verb of
each family (notes, entries, edit, days, exchange, extract, context)."""

from __future__ import annotations

from memvault.api import Vault
from memvault.vault.errors import MemvaultError
from memvault.verbs.context import Context
from memvault.verbs.days import Summary
from memvault.verbs.edit import Edit
from memvault.verbs.entries import Correct, Forget
from memvault.verbs.exchange import Import
from memvault.verbs.extract import Approve
from memvault.verbs.notes import Get, Remember
from tests.conftest import start_daemon, write_notes
from tests.reliability.conftest import HASH_ENV


def _requests(tmp_path):
    return [
        Remember("x", section="## not a title"),
        Get("daily/1999-13-40.md"),
        Forget("no-such-key"),
        Correct("new", "no-such-key"),
        Edit("MEMORY.md#@000000000000", "0" * 16, "text"),
        Summary("2026-13-01", "s"),
        Import(str(tmp_path / "missing.json")),
        Approve("no-such-proposal"),
        Context("zzz", conversation="bad]id"),
    ]


def _outcomes(root, requests) -> list[tuple[type, str, int]]:
    """Each request's error (class, message, exit code), or none."""
    out: list[tuple[type, str, int]] = []
    with Vault(root) as vault:
        for request in requests:
            try:
                vault.run(request)
            except MemvaultError as exc:
                out.append((type(exc), str(exc), exc.exit_code))
            else:
                out.append((type(None), "", 0))
    return out


def test_the_same_error_whether_a_daemon_answers_or_not(layout, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMVAULT_EMBEDDER", HASH_ENV["MEMVAULT_EMBEDDER"])
    assert cli("init", "--lang", "en").returncode == 0
    write_notes(layout, {})
    local = _outcomes(layout.root, _requests(tmp_path))
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        assert Vault(layout.root).daemon_status()["running"]
        remote = _outcomes(layout.root, _requests(tmp_path))
    finally:
        cli("daemon", "stop", env=HASH_ENV)
    raised = [k for k in local if k[0] is not type(None)]
    assert len(raised) >= 7, local  # the requests are refused here: the comparison is of real errors
    assert remote == local
