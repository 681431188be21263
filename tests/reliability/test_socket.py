"""The daemon's socket under malformed, oversized, slow and flooding clients: each request is answered
or refused with an error, memory stays bounded, others keep being served; 0600 and no TCP."""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from memvault.daemon.client import connect
from memvault.daemon.files import socket_path
from memvault.daemon.transport import MAX_CLIENTS, MAX_REQUEST_BYTES, PARTIAL_LINE_S
from memvault.vault.paths import Layout
from tests.conftest import open_files
from tests.reliability.conftest import ask, run_cli, running_daemon, tally, wait_for

MALFORMED: list[bytes] = [
    b"not json\n", b"[1, 2]\n", b"null\n", b"42\n", b'"op"\n', b"{}\n", b'{"op": 7}\n', b'{"op": "nope"}\n',
    b'{"op": "search"}\n', b'{"op": "search", "query": 5}\n', b'{"op": "search", "query": "x", "limit": "many"}\n',
    b'{"op": "search", "query": "x", "limit": -1}\n', b'{"op": "search", "query": "x", "rrf_k": -1}\n',
    b'{"op": "search", "query": "x", "w_vector": -2}\n', b'{"op": "search", "query": "x", "kind": "z"}\n',
    b'{"op": "search", "query": "x", "from": "yesterday-ish"}\n', b'{"op": "search", "query": ""}\n',
    b'{"op": "note"}\n', b'{"op": "note", "text": 5}\n', b'{"op": "note", "text": "x", "date": 5}\n',
    b'{"op": "note", "text": "x", "section": ["a"]}\n', b'{"op": "note", "text": "x", "date": "2026-02-30"}\n',
    b'{"op": "note", "text": "password=hunter2"}\n', b'{"op": "note", "text": "' + b"y" * 5000 + b'"}\n',
    b'{"op": "remember", "text": ""}\n', b'{"op": "remember", "text": "x", "section": 7}\n',
    b'{"op": "remember", "text": "x", "type": ["config"]}\n', b'{"op": "remember", "text": "x", "section": "a\\n#"}\n',
    b'{"op": "reindex", "paths": [1, 2]}\n', b'{"op": "reindex", "paths": {"a": 1}}\n',
    b'{"op": "reindex", "paths": ["../x.md"]}\n', b"\xff\xfe\xfd garbage bytes\n", b'{"op": "ping"\x00}\n',
    b"[" * 100_000 + b"\n", b'{"op": "search", "query": "x", "limit": 1e400}\n',
    b'{"op": "search", "query": "x", "limit": 123456789012345678901234567890}\n',
]  # fmt: skip


def _rss_mb(pid: int) -> float:
    return int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) / 1024


def _connect(layout: Layout, timeout: float = 30) -> socket.socket:
    """A raw socket, connected the way the memvault client connects (it waits while the backlog is full)."""
    return connect(layout, timeout).sock


def _reply(sock: socket.socket) -> dict:
    line = sock.makefile("rb").readline()
    assert line, "the daemon hung up without an answer"
    return json.loads(line)


@pytest.fixture
def daemon(layout):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    (layout.root / "a.md").write_text("# A\n\nthe socket sentinel walrus\n")
    with running_daemon(layout) as pid:
        yield layout, pid
    assert "Traceback" not in (layout.state_dir / "daemon.log").read_text()


def test_malformed_requests_are_refused_one_by_one(daemon):
    layout, pid = daemon
    with _connect(layout) as sock:
        reader = sock.makefile("rb")
        for bad in MALFORMED:
            sock.sendall(bad)
            reply = json.loads(reader.readline())
            assert reply["ok"] is False and reply["error"], bad[:60]
            assert not reply["error"].startswith("internal error"), (bad[:60], reply)
        sock.sendall(b'{"op": "search", "query": "walrus", "mode": "bm25"}\n')
        assert json.loads(reader.readline())["hits"][0]["path"] == "a.md"
    assert ask(layout, {"op": "ping"})["pid"] == pid
    tally("socket", len(MALFORMED))


def test_oversized_requests_are_refused(daemon):
    layout, pid = daemon
    for size in (MAX_REQUEST_BYTES + 1, 2 * MAX_REQUEST_BYTES):
        with _connect(layout) as sock:
            sender = threading.Thread(target=lambda s=sock, n=size: _send_quietly(s, b"x" * n + b"\n"))
            sender.start()
            assert "request over" in _reply(sock)["error"]
            sender.join()
    assert ask(layout, {"op": "ping"})["pid"] == pid
    tally("socket", 2)


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the daemon closed after refusing: expected
        sock.sendall(data)


def test_slow_client_is_cut_off_with_an_error_and_others_are_served(daemon):
    layout, pid = daemon
    slow = _connect(layout, timeout=PARTIAL_LINE_S + 20)
    slow.sendall(b'{"op": "search", "qu')  # half a line, then nothing
    started = time.monotonic()
    for _ in range(20):
        assert ask(layout, {"op": "ping"}, timeout=5)["pid"] == pid
    # served while the slow client still stalls: its cut-off (after PARTIAL_LINE_S) has not come yet
    assert select.select([slow], [], [], 0)[0] == []
    reply = _reply(slow)
    assert reply["ok"] is False and "incomplete request" in reply["error"]
    assert time.monotonic() - started < PARTIAL_LINE_S + 10
    slow.close()
    tally("socket", 21)


def _flood(layout: Layout, pid: int, clients: int) -> None:
    # 1. many clients at once, each with a request: every one answered, or refused as busy
    def one(i: int) -> dict:
        with _connect(layout, timeout=120) as sock:  # a "busy" refusal may close before we write: read it anyway
            _send_quietly(sock, json.dumps({"op": "search", "query": f"walrus {i}", "mode": "bm25"}).encode() + b"\n")
            return _reply(sock)

    with ThreadPoolExecutor(max_workers=min(clients, 200)) as pool:
        replies = list(pool.map(one, range(clients)))
    assert all(r["ok"] or r.get("busy") for r in replies)
    assert sum(r["ok"] for r in replies) >= min(clients, MAX_CLIENTS) // 2
    # 2. a thousand requests down one connection: all answered, in order
    with _connect(layout) as sock:
        reader = sock.makefile("rb")
        sender = threading.Thread(
            target=sock.sendall, args=(b"".join(b'{"op": "ping", "n": %d}\n' % i for i in range(clients)),)
        )
        sender.start()
        assert all(json.loads(reader.readline())["ok"] for _ in range(clients))
        sender.join()
    # 3. clients that each send almost a full-size request and stop: memory stays bounded
    base = _rss_mb(pid)
    socks = [_connect(layout, timeout=PARTIAL_LINE_S + 30) for _ in range(clients)]
    body = b'{"op": "ping", "pad": "' + b"p" * (MAX_REQUEST_BYTES - 100)
    with ThreadPoolExecutor(max_workers=64) as pool:
        list(pool.map(lambda s: _send_quietly(s, body), socks))
    time.sleep(1)
    grown = _rss_mb(pid) - base
    with connect(layout, timeout=5) as other:  # meanwhile another client is refused at once, not left hanging
        reply = other.call({"op": "ping"})
        assert reply is not None and (reply["ok"] or reply.get("busy")), reply
    started = time.monotonic()  # and served again as soon as the stalled ones are cut off
    wait_for(lambda: ask(layout, {"op": "ping"}, timeout=5), PARTIAL_LINE_S + 15, step=0.5)
    assert time.monotonic() - started < PARTIAL_LINE_S + 15
    bound = MAX_CLIENTS * MAX_REQUEST_BYTES / 2**20 + 64
    assert grown < bound, f"RSS grew {grown:.0f} MB with {clients} stalled clients (bound {bound:.0f} MB)"
    answers = [_reply(s) for s in socks]  # each refused as busy, or cut off as incomplete
    assert all(a["ok"] is False and (a.get("busy") or "incomplete" in a["error"]) for a in answers)
    for s in socks:
        s.close()
    assert ask(layout, {"op": "ping"})["pid"] == pid
    tally("socket", 3 * clients)


def test_flood_quick(daemon):
    _flood(*daemon, 200)


@pytest.mark.reliability_full
def test_flood_full(daemon):
    _flood(*daemon, 1000)


def test_socket_is_0600_and_nothing_listens_on_tcp(daemon):
    layout, pid = daemon
    mode = os.stat(socket_path(layout)).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    inodes = open_files(pid)
    for table in ("tcp", "tcp6", "udp", "udp6"):
        with open(f"/proc/{pid}/net/{table}") as fh:
            rows = [line.split() for line in fh.read().splitlines()[1:]]
        assert not any(f"socket:[{row[9]}]" in inodes for row in rows), table
    tally("socket", 1)
