"""The daemon as a process: start it in the background, stop it, ask its status, write a service file."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memvault.daemon.client import DaemonError, ask
from memvault.daemon.files import log_path, private_dir, read_pid, socket_path
from memvault.vault.paths import Layout, make_state_dir

START_TIMEOUT_S = 120.0
STARTED_S = 1.5  # how long a daemon that answered must stay alive (unless its first pass is done sooner)
# the daemons this process started: `stop` reaps its own child, which would otherwise linger as a zombie
# (`os.kill(pid, 0)` succeeds on one) until this process ends
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def start(layout: Layout, args: list[str]) -> int:
    """Start `memvault daemon run` in the background and wait until it answers; returns its pid."""
    pid = read_pid(layout)
    if pid is not None and ask(layout, {"op": "ping"}) is not None:
        raise DaemonError(f"a daemon already serves {layout.root} (pid {pid})")
    make_state_dir(layout)
    private_dir(layout)  # its socket's folder: refused here in one line, before a daemon is started
    log = open(log_path(layout), "ab")  # noqa: SIM115 - handed to the child
    child = subprocess.Popen(
        # -P and cwd "/": a folder named like one of our packages (a vault called "vault") must not shadow it
        [sys.executable, "-P", "-m", "memvault.cli", "--vault", str(layout.root), "daemon", "run", *args],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True, cwd="/",
    )  # fmt: skip
    log.close()
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        _exited(layout, child, "at start")
        if ask(layout, {"op": "ping"}, timeout=1.0) is not None:
            _still_alive(layout, child)
            _CHILDREN[child.pid] = child
            return child.pid
        time.sleep(0.1)
    child.terminate()
    raise DaemonError(f"the daemon did not answer within {START_TIMEOUT_S:.0f}s (see {log_path(layout)})")


def _exited(layout: Layout, child: subprocess.Popen[bytes], when: str) -> None:
    """Raise, with the log's last line, when the daemon has exited."""
    if child.poll() is None:
        return
    try:
        tail = log_path(layout).read_text(errors="replace").strip().splitlines()[-1:]
    except OSError:
        tail = []
    raise DaemonError(f"the daemon exited {when}: {tail[0] if tail else 'no log'} (see {log_path(layout)})")


def _still_alive(layout: Layout, child: subprocess.Popen[bytes]) -> None:
    """A daemon that answered may still die in its first pass (a fatal error there): it is started once it
    is still alive `STARTED_S` later, or as soon as that pass is done and it still answers."""
    settled = time.monotonic() + STARTED_S
    while time.monotonic() < settled:
        time.sleep(0.1)
        _exited(layout, child, "just after it answered")
        reply = ask(layout, {"op": "status"}, timeout=1.0)
        if reply and reply.get("ok") and (reply.get("status") or {}).get("last_full_reconcile"):
            break
    _exited(layout, child, "just after it answered")


def stop(layout: Layout, timeout: float = 60.0) -> int | None:
    """SIGTERM the daemon and wait for it to finish its batch and remove its files."""
    pid = read_pid(layout)
    if pid is None:
        return None
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        child = _CHILDREN.get(pid)
        if child is not None and child.poll() is not None:
            del _CHILDREN[pid]
            break
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise DaemonError(f"pid {pid} did not stop within {timeout:.0f}s")
    read_pid(layout)  # removes stale files if it could not
    return pid


def status(layout: Layout) -> dict[str, Any]:
    pid = read_pid(layout)
    reply = ask(layout, {"op": "status"}, timeout=5.0) if pid is not None else None
    if reply is None:
        return {"running": False, "pid": pid, "socket": str(socket_path(layout))}
    return {"running": True, "socket": str(socket_path(layout)), **reply["status"]}


def service_name(layout: Layout) -> str:
    """`memvault-<folder name>-<8 hex of the vault's absolute path>`: two vaults both named `memory` get
    units of their own (the same vault always the same one); only characters unit names allow."""
    import hashlib

    folder = re.sub(r"[^A-Za-z0-9_.-]+", "_", layout.root.name)[:64].strip("._") or "vault"
    return f"memvault-{folder}-{hashlib.sha256(os.fsencode(layout.root)).hexdigest()[:8]}"


def install_service(layout: Layout) -> tuple[Path, str]:
    """Write a systemd user unit (Linux) or a launchd agent (macOS); returns its path and how to enable it."""
    exe = shutil.which("memvault") or str(Path(sys.executable).parent / "memvault")
    name = service_name(layout)
    if sys.platform == "darwin":
        path = Path.home() / "Library" / "LaunchAgents" / f"com.memvault.{name}.plist"
        body = plistlib.dumps({
            "Label": f"com.memvault.{name}",
            "ProgramArguments": [exe, "--vault", str(layout.root), "daemon", "run"],
            "RunAtLoad": True, "KeepAlive": True,
            "StandardErrorPath": str(log_path(layout)), "StandardOutPath": str(log_path(layout)),
        }).decode()  # fmt: skip
        how = f"launchctl load -w {path}"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        path = base / "systemd" / "user" / f"{name}.service"
        body = (
            "[Unit]\nDescription=memvault daemon for " + str(layout.root) + "\n\n"
            "[Service]\nType=simple\n"
            f'ExecStart="{exe}" --vault "{layout.root}" daemon run\n'
            "ExecStop=/bin/kill -TERM $MAINPID\nRestart=on-failure\nRestartSec=5\n\n"
            "[Install]\nWantedBy=default.target\n"
        )
        how = f"systemctl --user daemon-reload && systemctl --user enable --now {path.name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path, how
