"""Who a client talks to, and what it can send:

- A vault path too long for AF_UNIX puts the daemon's socket in this user's private folder, made 0700
  and refused when it is a link, another user's or open to others; before, the socket went to a
  predictable name in the shared temp folder, where another user could listen first.
- Every client asks the kernel who listens before it sends anything: another user's listener gets
  nothing, the command says so in one line and works without the daemon; before, that user got the
  owner's query and its hits were printed as the owner's memory.
- A request longer than the daemon reads (a long conversation to `extract`, the hooks' transcripts)
  runs in the client, as with no daemon; before, the daemon refused it and nothing ran.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.daemon.connection import socket_file
from memvault.vault.paths import Layout
from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV, NOBODY

SUN_PATH = 100


@pytest.fixture
def short(tmp_path: Path) -> Iterator[Path]:
    """A folder with a short name, as /run/user/UID and /tmp are (the test's own folder can be too deep
    for a socket in it, under parallel workers)."""
    folder = Path(tempfile.mkdtemp(prefix="mv-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def runtime(short: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$XDG_RUNTIME_DIR: a private folder of this user's, as the session manager makes it."""
    run = short / "run"
    run.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    return run


@pytest.fixture
def deep(tmp_path: Path) -> Layout:
    """A vault whose `.memvault/daemon.sock` is too long for AF_UNIX."""
    root = tmp_path / ("deep-" + "d" * max(10, SUN_PATH - len(str(tmp_path))))
    root.mkdir()
    assert len(os.fsencode(root / ".memvault" / "daemon.sock")) >= SUN_PATH
    return Layout(root.resolve())


def _served_from(cli, layout: Layout, env: dict[str, str] | None = None) -> Path:
    """Where the socket of the daemon started on `layout` is, checked to answer a search."""
    from memvault.daemon.files import socket_path

    (layout.root / "a.md").write_text("# A\n\nthe walrus sleeps on the ice floe\n", encoding="utf-8")
    start_daemon(cli, layout.root, env={**HASH_ENV, **(env or {})})
    try:
        found = cli("--vault", str(layout.root), "search", "--json", "--mode", "bm25", "walrus")
        assert found.returncode == 0 and json.loads(found.stdout)["hits"][0]["path"] == "a.md", found.stderr
        sock = socket_path(layout)
        assert sock.is_socket() and sock.stat().st_mode & 0o777 == 0o600
        folder = sock.parent
        assert (folder.stat().st_mode & 0o777, folder.stat().st_uid) == (0o700, os.geteuid())
        assert not folder.is_symlink()
    finally:
        cli("--vault", str(layout.root), "daemon", "stop")
    return sock


def test_a_long_vault_path_puts_the_socket_in_a_private_folder(deep, runtime, cli):
    assert _served_from(cli, deep).parent == runtime / "memvault"


def test_without_xdg_runtime_dir_the_private_folder_is_in_the_temp_folder(deep, short, cli, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    shared = short / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp
    monkeypatch.setattr(tempfile, "tempdir", str(shared))  # (this process's temp folder is already chosen)
    assert _served_from(cli, deep, {"TMPDIR": str(shared)}).parent == shared / f"memvault-{os.geteuid()}"


def _open_to_all(folder: Path) -> None:
    folder.mkdir()
    folder.chmod(0o777)


def _a_link(folder: Path) -> None:
    elsewhere = folder.parent / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    folder.symlink_to(elsewhere)


def _someone_elses(folder: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can make a folder another user owns")
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)


@pytest.mark.parametrize("made", [_open_to_all, _a_link, _someone_elses], ids=["open", "link", "not-ours"])
def test_a_socket_folder_made_by_someone_else_is_refused(deep, runtime, cli, made):
    folder = runtime / "memvault"
    made(folder)
    assert cli("init", "--lang", "en").returncode == 0
    started = cli("--vault", str(deep.root), "daemon", "start", env=HASH_ENV)
    assert started.returncode != 0 and started.stderr.count("\n") == 1, started.stderr
    assert started.stderr.startswith("memvault: error: ") and str(folder) in started.stderr
    assert not list(Path(os.path.realpath(folder)).iterdir())  # no socket there
    assert not (deep.state_dir / "daemon.pid").exists()


LISTENER = r"""
import json, os, socket, sys
path, uid = sys.argv[1], int(sys.argv[2])
answer = json.loads(sys.stdin.read())
os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
if os.path.lexists(path):
    os.unlink(path)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o666)
os.setgid(uid)
os.setuid(uid)  # listens as that user (the kernel records who listens at listen())
server.listen(8)
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    reader = conn.makefile("rb")
    for line in reader:
        print("got " + line.decode(errors="replace").strip(), flush=True)
        request = json.loads(line)
        reply = {"ok": True, "pid": 1} if request.get("op") == "ping" else {"ok": True, **answer}
        conn.sendall(json.dumps(reply).encode() + b"\n")
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a listener of another user needs root to become that user")
def test_a_listener_of_another_user_is_sent_nothing_and_the_search_runs_here(deep, runtime, cli):
    from memvault.daemon.client import ask

    (deep.root / "a.md").write_text("# A\n\nthe walrus sleeps on the ice floe\n", encoding="utf-8")
    env = {"MEMVAULT_VAULT": str(deep.root), **HASH_ENV}
    local = cli("search", "--json", "--mode", "bm25", "walrus", env=env)
    assert local.returncode == 0, local.stderr
    answer = json.loads(local.stdout)
    planted = [{**hit, "text": "PLANTED by uid 65534", "snippet": "PLANTED by uid 65534"} for hit in answer["hits"]]
    path = socket_file(str(deep.root))
    listener = subprocess.Popen([sys.executable, "-c", LISTENER, path, str(NOBODY)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        listener.stdin.write(json.dumps({**answer, "hits": planted}))
        listener.stdin.close()
        assert listener.stdout.readline().strip() == "ready", listener.stderr.read()
        found = cli("search", "--json", "--mode", "bm25", "walrus", env=env)
        asked = ask(deep, {"op": "ping"})  # the library's client, likewise
    finally:
        listener.kill()
        listener.wait(30)
        heard = listener.stdout.read()
        if os.path.lexists(path):
            os.unlink(path)
    assert heard == ""  # not a byte: not the ping, not the query
    assert found.returncode == 0, found.stderr
    assert "PLANTED" not in found.stdout and json.loads(found.stdout)["hits"][0]["path"] == "a.md"
    said = found.stderr.splitlines()
    assert len(said) == 1 and said[0].startswith("memvault: ") and f"uid {NOBODY}" in said[0], found.stderr
    assert asked is None


def _conversation(path: Path, size: int) -> Path:
    """A conversation longer than `size` bytes (the daemon reads 1 MiB a request), with one decision."""
    words = ["the", "harbour", "crane", "lifted", "a", "container", "while", "gulls", "circled", "the", "quay"]
    messages = [{"role": "user", "content": "We decided to never deploy on Fridays."}]
    while sum(len(m["content"]) for m in messages) < size:
        i = len(messages)
        text = " ".join(words[(i + k) % len(words)] for k in range(400))
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}: {text}"})
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def _summaries(layout: Layout) -> list[str]:
    today = layout.daily_note(dt.date.today())
    text = today.read_text(encoding="utf-8") if today.exists() else ""
    return [line for line in text.splitlines() if "Conversation: " in line]


def test_a_request_too_long_for_the_socket_runs_in_the_client(layout, cli, tmp_path):
    from memvault.daemon.transport import MAX_REQUEST_BYTES

    assert cli("init", "--lang", "en").returncode == 0
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        conversation = _conversation(tmp_path / "long.json", MAX_REQUEST_BYTES + 200_000)
        done = cli("extract", str(conversation), env=HASH_ENV)
        assert done.returncode == 0, done.stderr
        assert len(_summaries(layout)) == 1 and "never deploy on Fridays" in (layout.root / "REVIEW.md").read_text()
        status = json.loads(cli("daemon", "status", "--json", env=HASH_ENV).stdout)
        assert status["running"]  # it ran beside the daemon, whose watcher indexes what it wrote
    finally:
        cli("daemon", "stop")


def test_a_long_session_is_summarised_by_the_hook_once(layout, cli, tmp_path):
    from memvault.daemon.transport import MAX_REQUEST_BYTES

    assert cli("init", "--lang", "en").returncode == 0
    start_daemon(cli, layout.root, env=HASH_ENV)
    messages = json.loads(_conversation(tmp_path / "c.json", MAX_REQUEST_BYTES + 200_000).read_text())
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("".join(json.dumps({"type": m["role"], "message": m}) + "\n" for m in messages))
    payload = {"session_id": "s-long", "transcript_path": str(transcript), "cwd": str(tmp_path),
               "hook_event_name": "PreCompact", "trigger": "auto"}  # fmt: skip
    try:
        for _ in range(2):  # the second finds nothing new: the hook advanced past what it extracted
            hooked = cli("hook", "claude-code", input=json.dumps(payload), env=HASH_ENV)
            assert hooked.returncode == 0, hooked.stderr
    finally:
        cli("daemon", "stop")
    assert len(_summaries(layout)) == 1
