"""The daemon as a real background process with a real watchdog observer and Unix socket."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import time
from pathlib import Path

import pytest

from memvault.daemon.files import pid_path, socket_path
from memvault.vault.locks import lock_is_free
from tests.conftest import open_files


def _search(cli, query, *args):
    result = cli("search", "--json", query, *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def _wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def _daemon(layout, cli, env=None):
    assert cli("init", "--lang", "en").returncode == 0
    started = cli("daemon", "start", "--debounce", "0.3", env=env)
    assert started.returncode == 0, started.stderr
    yield layout
    cli("daemon", "stop")


@pytest.fixture
def daemon(layout, cli):
    yield from _daemon(layout, cli)


@pytest.fixture
def hash_daemon(layout, cli):
    """The daemon with the hash embedder, for tests of the socket and BM25 that have no use for the model
    (which re-embeds the growing day's note after each save)."""
    yield from _daemon(layout, cli, {"MEMVAULT_EMBEDDER": "hash-384"})


def test_lifecycle_files_and_socket_mode(daemon, cli):
    sock, pid_file = socket_path(daemon), pid_path(daemon)
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600 and stat.S_ISSOCK(os.stat(sock).st_mode)
    pid = int(pid_file.read_text())
    status = json.loads(cli("daemon", "status", "--json").stdout)
    assert status["running"] and status["pid"] == pid and status["uptime"] >= 0
    for key in ("queue", "last_event", "last_full_reconcile", "files_indexed", "files_failed", "errors"):
        assert key in status
    with open(f"/proc/{pid}/net/tcp") as fh:  # no TCP listener of ours (state 0A = LISTEN)
        listening = [line for line in fh.read().splitlines()[1:] if line.split()[3] == "0A"]
    own_inodes = open_files(pid)
    assert not any(f"socket:[{line.split()[9]}]" in own_inodes for line in listening)
    stopped = cli("daemon", "stop")
    assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
    assert not sock.exists() and not pid_file.exists()
    assert cli("daemon", "status").returncode == 3


def test_read_your_writes_through_the_daemon(daemon, cli):
    result = cli("note", "Ordered a standing desk from the Berlin shop")
    assert result.returncode == 0 and "indexed by the daemon" in result.stdout
    data, _ = _search(cli, "standing desk Berlin")
    assert data["source"] == "hybrid" and "standing desk" in data["hits"][0]["snippet"]
    assert cli("remember", "--type", "preference", "Likes green tea in the afternoon").returncode == 0
    data, _ = _search(cli, "green tea", "--kind", "memory")
    assert data["hits"][0]["path"] == "MEMORY.md"


def test_external_edits_atomic_saves_moves_and_deletes(daemon, cli):
    notes = daemon.root / "notes"
    notes.mkdir()
    tmp = notes / ".plan.md.swp"
    tmp.write_text("# Plan\n\nMigrate the billing service to Postgres.\n", encoding="utf-8")
    os.replace(tmp, notes / "plan.md")  # how editors save atomically
    data, _ = _search(cli, "billing Postgres")  # within the debounce window: indexed before answering
    assert data["hits"][0]["path"] == "notes/plan.md"
    (notes / "plan.md").rename(notes / "renamed.md")
    _wait_for(lambda: _search(cli, "billing Postgres", "--mode", "bm25")[0]["hits"][0]["path"] == "notes/renamed.md")
    (notes / "renamed.md").unlink()
    _wait_for(lambda: not _search(cli, "billing Postgres", "--mode", "bm25")[0]["hits"])


def test_a_burst_of_files_becomes_few_batches(daemon, cli):
    burst = daemon.root / "burst"
    burst.mkdir()
    for i in range(150):
        (burst / f"n{i:03}.md").write_text(f"# Note {i}\n\nburst item number {i}\n", encoding="utf-8")

    def changed() -> list[int]:  # the daemon logs a batch just after it lets go of the lock a status reads under
        log = (daemon.state_dir / "daemon.log").read_text()
        return [int(m) for m in re.findall(r"'files_changed': (\d+)", log)]

    _wait_for(lambda: json.loads(cli("daemon", "status", "--json").stdout)["files_indexed"] >= 151, timeout=120)
    _wait_for(lambda: sum(changed()) >= 151, timeout=60)
    batches = [n for n in changed() if n]
    assert sum(batches) >= 151 and len(batches) <= 6, batches  # the first is the start-up reconcile


def test_malformed_and_oversized_requests_do_not_kill_it(daemon, cli):
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(socket_path(daemon)))
        reader = sock.makefile("rb")
        for bad in (
            b"not json\n",
            b"[1, 2]\n",
            b'{"op": "nope"}\n',
            b'{"op": "search"}\n',
            b'{"op": "note", "text": "password=hunter2"}\n',
            b'{"op": "search", "query": "x", "kind": "z"}\n',
        ):
            sock.sendall(bad)
            reply = json.loads(reader.readline())
            assert reply["ok"] is False and reply["error"]
        sock.sendall(b'{"op": "ping"}\n')
        assert json.loads(reader.readline())["ok"] is True
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(socket_path(daemon)))
        sock.sendall(b"x" * (1 << 20) + b"yy\n")
        assert "request over" in json.loads(sock.makefile("rb").readline())["error"]
    assert cli("daemon", "status").returncode == 0


def test_killed_daemon_leaves_stale_files_that_are_cleaned(daemon, cli):
    pid = int(pid_path(daemon).read_text())
    os.kill(pid, signal.SIGKILL)
    _wait_for(lambda: not os.path.exists(f"/proc/{pid}") or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z")
    assert socket_path(daemon).exists()  # stale
    status = cli("daemon", "status", "--json")
    assert status.returncode == 3 and not json.loads(status.stdout)["running"]
    assert not pid_path(daemon).exists() and not socket_path(daemon).exists()
    cli("note", "written with no daemon")
    # the premise of what follows; under load a killed daemon's lock was seen held for a moment after its
    # leader showed Z (its other threads still exiting?); a search meanwhile rightly answers by substring
    _wait_for(lambda: lock_is_free(daemon.state_dir / "index.lock"))
    data, _ = _search(cli, "written with no daemon", "--mode", "bm25")
    assert data["source"] == "bm25", data["reason"]  # no daemon answers and the lock is free: search opened the stores
    assert cli("daemon", "start").returncode == 0


def test_hung_daemon_means_substring_fallback(daemon, cli, cli_process):
    cli("note", "the hung daemon test note")
    pid = int(pid_path(daemon).read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        data, stderr = _search(cli_process, "hung daemon")  # a hang is caught by the subprocess's timeout
        assert "answered by substring search" in stderr
        assert data["source"] == "substring" and "open in another memvault process" in data["reason"]
        assert data["hits"][0]["path"].startswith("daily/")
        assert time.monotonic() - started < 20
    finally:
        os.kill(pid, signal.SIGCONT)


def test_install_service_writes_but_never_enables(layout, cli, tmp_path):
    result = cli("daemon", "install-service", env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert result.returncode == 0, result.stderr
    unit = next((tmp_path / "cfg" / "systemd" / "user").glob("memvault-*.service"))
    text = unit.read_text()
    assert f'--vault "{layout.root}" daemon run' in text and "systemctl --user" in result.stdout


def _indexed_within(layout, seconds: float = 60.0) -> float:
    """Wait until the daemon has indexed every note as it is on disk: status shows nothing pending and
    the manifest records each note's current size and mtime (status alone can be idle before the
    watcher has delivered the last change). `seconds` only bounds a hang."""
    from memvault.daemon.client import ask
    from memvault.vault.scan import scan_vault

    started = time.monotonic()
    while time.monotonic() - started < seconds:
        reply = ask(layout, {"op": "status"})
        status = reply["status"] if reply else None
        if status and status["files_pending"] == 0 and status["queue"] == 0 and not status["vectors"]["waiting"]:
            on_disk = {e.rel: (e.size, e.mtime_ns) for e in scan_vault(layout)}
            if _recorded(layout) == on_disk:
                return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"not indexed within {seconds}s")


def _recorded(layout) -> dict[str, tuple[int, int]]:
    import sqlite3

    db = sqlite3.connect(f"file:{layout.state_dir / 'manifest.sqlite'}?mode=ro", uri=True, timeout=10)
    try:
        return {path: (size, mtime) for path, size, mtime in db.execute("SELECT path, size, mtime_ns FROM files")}
    finally:
        db.close()


@pytest.fixture
def default_daemon(layout, cli):
    """A daemon at the default debounce (1.5 s), for the watcher's own timing."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("daemon", "start").returncode == 0
    yield layout
    cli("daemon", "stop")


def test_every_kind_of_edit_is_indexed(default_daemon, cli):
    root = default_daemon.root
    notes = root / "notes"
    notes.mkdir()
    note = notes / "a.md"
    note.write_text("# A\n\nfirst version about kayaks\n", encoding="utf-8")
    _indexed_within(default_daemon)
    note.write_text("# A\n\nedited in place: now about canoes\n", encoding="utf-8")  # in place
    _indexed_within(default_daemon)
    tmp = notes / ".a.md.tmp"
    tmp.write_text("# A\n\nsaved through a temp file: rafts\n", encoding="utf-8")
    os.replace(tmp, note)  # temp file and rename
    _indexed_within(default_daemon)
    note.rename(notes / "a.md~")  # vim: the original becomes a backup, then a new file is written
    note.write_text("# A\n\nvim wrote this: paddles\n", encoding="utf-8")
    (notes / "a.md~").unlink()
    _indexed_within(default_daemon)
    assert _search(cli, "paddles", "--mode", "bm25")[0]["hits"][0]["path"] == "notes/a.md"
    assert not _search(cli, "rafts canoes kayaks", "--mode", "bm25")[0]["hits"]
    note.rename(notes / "b.md")  # moved
    _indexed_within(default_daemon)
    assert [h["path"] for h in _search(cli, "paddles", "--mode", "bm25")[0]["hits"]] == ["notes/b.md"]
    notes.rename(root / "archive")  # a folder of notes moved
    _indexed_within(default_daemon)
    assert [h["path"] for h in _search(cli, "paddles", "--mode", "bm25")[0]["hits"]] == ["archive/b.md"]
    (root / "archive" / "b.md").unlink()  # deleted
    _indexed_within(default_daemon)
    assert not _search(cli, "paddles", "--mode", "bm25")[0]["hits"]


@pytest.mark.long
def test_a_thousand_file_burst_agrees_exactly_in_few_batches(default_daemon, cli):
    from memvault.daemon.client import ask

    burst = default_daemon.root / "burst"
    burst.mkdir()
    for i in range(1000):
        (burst / f"n{i:04}.md").write_text(f"# Burst {i}\n\nitem {i} of the checkout\n", encoding="utf-8")
    _indexed_within(default_daemon, 240)
    assert ask(default_daemon, {"op": "verify"}, timeout=120)["disagreements"] == []
    log = (default_daemon.state_dir / "daemon.log").read_text()
    batches = [int(n) for n in re.findall(r"'files_changed': (\d+)", log) if int(n)]
    assert sum(batches) >= 1000 and len(batches) < 10, batches


def test_sigkill_mid_batch_then_start_is_consistent(layout, cli, cli_process):
    from memvault.daemon.client import ask

    assert cli("init", "--lang", "en").returncode == 0
    assert cli_process("daemon", "start", env={"MEMVAULT_CRASH_AT": "after-upsert:2"}).returncode == 0
    pid = int(pid_path(layout).read_text())
    for i in range(300):
        (layout.root / f"n{i:03}.md").write_text(f"# N {i}\n\nnote {i}\n", encoding="utf-8")
    _wait_for(lambda: not os.path.exists(f"/proc/{pid}") or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z")
    try:
        assert cli("daemon", "start").returncode == 0
        _indexed_within(layout, 120)
        assert ask(layout, {"op": "verify"}, timeout=120)["disagreements"] == []
    finally:
        cli("daemon", "stop")


def test_concurrent_searches_during_a_reindex_all_answer(daemon, cli_process):
    import concurrent.futures as cf

    for i in range(120):
        (daemon.root / f"r{i:03}.md").write_text(f"# R {i}\n\nreindex subject {i}\n", encoding="utf-8")
    _indexed_within(daemon, 120)
    with cf.ThreadPoolExecutor(max_workers=5) as pool:
        rebuild = pool.submit(cli_process, "index", "--rebuild")
        searches = [pool.submit(cli_process, "search", "--json", f"reindex subject {i}") for i in range(4)]
        results = [f.result() for f in searches]
        assert rebuild.result().returncode == 0
    for result in results:
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["source"] == "hybrid"


def test_write_then_search_through_the_socket_50_times(hash_daemon):
    from memvault.daemon.client import connect

    conn = connect(hash_daemon, timeout=60)
    try:
        for i in range(50):
            word = f"zebra{i}quokka"
            assert conn.call({"op": "note", "text": f"sighting {word} at the lake"})["ok"]
            reply = conn.call({"op": "search", "query": word, "mode": "bm25", "limit": 1})
            assert reply["ok"] and word in reply["hits"][0]["snippet"], i
    finally:
        conn.close()


def test_pid_file_mode_and_light_client(daemon, cli):
    """A search through the daemon imports no model, store, jieba, numpy, YAML or frontmatter, no verb
    module and no library module that defines a dataclass (dataclasses and inspect cost 10 ms): the path
    that makes it 60 ms end to end (issue 30); and it prints what the library answers through the daemon."""
    assert stat.S_IMODE(os.stat(pid_path(daemon)).st_mode) == 0o600
    probe = (
        "import sys\nfrom memvault.cli import main\n"
        "rc = main([*sys.argv[1:], 'search', '--json', '--per-doc', '1', 'anything'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'fastembed', 'onnxruntime', 'qdrant_edge', 'qdrant_client', 'jieba', 'numpy', 'tokenizers', 'yaml', "
        "'frontmatter', 'tomllib', 'statistics', 'dataclasses', 'inspect'} or m.startswith(('memvault.verbs', "
        "'memvault.indexer', 'memvault.search.engine', 'memvault.search.hits', 'memvault.search.options', "
        "'memvault.vault.entries', 'memvault.vault.paths', 'memvault.api', 'memvault.scopes', 'memvault.protocol', "
        "'memvault.daemon.client')))\n"
        "print(rc, heavy, file=sys.stderr)\n"
    )
    import subprocess
    import sys

    from memvault import Scopes, Vault
    from memvault.daemon.client import ask
    from memvault.daemon.connection import REPLY_TIMEOUT_S
    from memvault.verbs.query import Search

    assert Search.timeout == REPLY_TIMEOUT_S  # the light client waits for a search as long as the library

    settled = lambda: (s := (ask(daemon, {"op": "status"}, timeout=5.0) or {}).get("status", {})).get(  # noqa: E731
        "last_full_reconcile") and not s["vectors"]["waiting"]  # fmt: skip
    for text in ("anything goes in the kettle log", "the kettle log, second line", "a third note on anything"):
        assert cli("note", text).returncode == 0
    _wait_for(settled)
    result = subprocess.run([sys.executable, "-P", "-c", probe, "--vault", str(daemon.root)], capture_output=True,
                            text=True, timeout=60, cwd="/")  # fmt: skip
    assert result.stderr.strip().endswith("0 []"), result.stderr
    printed = json.loads(result.stdout)
    by_env = subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, text=True, timeout=60, cwd="/",
                            env={**os.environ, "MEMVAULT_VAULT": str(daemon.root)})  # fmt: skip
    assert by_env.stderr.strip().endswith("0 []") and json.loads(by_env.stdout) == printed, by_env.stderr
    assert printed["source"] == "hybrid" and printed["hits"]
    with Scopes(Vault(daemon.root)) as scopes:  # the library's answer, through the same daemon
        assert scopes.search_json("anything", per_doc=1) == printed


def test_python_api_goes_through_the_daemon(daemon):
    from memvault import Vault

    with Vault(daemon.root) as v:
        saved = v.note("API note about the sailing club")
        assert (v.root / saved.path).parent == daemon.daily_dir and saved.indexed and saved.section == "daily"
        result = v.search_result("sailing club", kind="daily", date_from="2000-01-01")
        assert result.source == "hybrid" and "sailing club" in result.hits[0].snippet
        assert "sailing club" in result.hits[0].text and result.hits[0].chunk_id  # nothing lost on the wire
        assert v.status()["pid"] == int(pid_path(daemon).read_text())
        assert v.index().files_scanned >= 2
