"""The running panel of a vault, so that a second `memvault ui` opens the one already serving it
instead of starting another: `.memvault/panel.json` (mode 0600, since its URL carries the token) holds
the server's pid and URL while it runs."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from memvault.vault.paths import Layout

RECORD = "panel.json"


def _record(layout: Layout) -> Path:
    return layout.state_dir / RECORD


def running_url(layout: Layout) -> str | None:
    """The URL of the panel serving this vault now: its process is alive and its port takes a
    connection; None otherwise (a record a killed panel left is removed)."""
    path = _record(layout)
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        pid, url = int(found["pid"]), str(found["url"])
        port = urlsplit(url).port
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if port is None or not _alive(pid) or not _answers(port):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return url


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process took the pid: not our panel
        return False
    return True


def _answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def record(layout: Layout, url: str) -> None:
    """Note this process's panel: written whole (a temp file renamed), readable by this user alone."""
    layout.state_dir.mkdir(parents=True, exist_ok=True)
    tmp = layout.state_dir / f".{RECORD}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"pid": os.getpid(), "url": url}, fh)
    os.replace(tmp, _record(layout))


def forget_record(layout: Layout) -> None:
    """Remove the record when it is this process's (a newer panel's stays)."""
    path = _record(layout)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        if int(json.loads(path.read_text(encoding="utf-8"))["pid"]) == os.getpid():
            path.unlink()
