"""Idle `events --follow` connections never take the slots requests need: a follower holds a slot of
its own kind (at most `MAX_FOLLOWERS`), so searches and saves are still served by the daemon."""

from __future__ import annotations

import json
import socket

from memvault.daemon.files import socket_path
from memvault.daemon.transport import MAX_CLIENTS, MAX_FOLLOWERS
from tests.reliability.conftest import running_daemon, tally


def _follow(layout) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(socket_path(layout)))
    sock.sendall(b'{"op": "subscribe", "since": 0}\n')
    return sock


def _first_line(sock: socket.socket) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return json.loads(data.split(b"\n")[0])


def test_idle_followers_leave_the_daemon_serving_requests(layout, mv):
    assert mv("init", "--lang", "en").returncode == 0
    assert mv("note", "the lighthouse keeper fed the gulls").returncode == 0
    with running_daemon(layout):
        followers = [_follow(layout) for _ in range(MAX_CLIENTS)]  # as many as every request slot
        try:
            answers = [_first_line(s) for s in followers]
            subscribed = sum(bool(a.get("subscribed")) for a in answers)
            refused = [a for a in answers if not a.get("ok")]
            assert subscribed == MAX_FOLLOWERS and len(refused) == MAX_CLIENTS - MAX_FOLLOWERS
            assert all("followers" in a["error"] and "\n" not in a["error"] for a in refused)
            found = mv("search", "--json", "lighthouse keeper", "--mode", "bm25")
            assert found.returncode == 0 and json.loads(found.stdout)["source"] == "bm25", found.stderr
            assert "substring" not in found.stderr
            status = mv("daemon", "status", "--json")
            assert status.returncode == 0 and json.loads(status.stdout)["running"] is True
            saved = mv("note", "a save while every follower waits")
            assert saved.returncode == 0 and "indexed by the daemon" in saved.stdout, saved.stdout
        finally:
            for s in followers:
                s.close()
    tally("idle followers beside requests", MAX_CLIENTS)
