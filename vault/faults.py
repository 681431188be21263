"""Named crash points for the crash-consistency tests, and the file-system features a test says are missing.

A SIGKILL at an exact step of a reconcile cannot be timed from outside, so
tests set `MEMVAULT_CRASH_AT=<point>` and the process kills itself there (reconcile steps in
`indexer.index`, note writes in `vault`).
Unset (always, outside tests), each call is one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

from memvault.vault.places import env

_COUNTERS: dict[str, int] = {}


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL at the N-th pass of `name` when `MEMVAULT_CRASH_AT=name[:N]`."""
    wanted = env("MEMVAULT_CRASH_AT")
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _COUNTERS[name] = _COUNTERS.get(name, 0) + 1
    if _COUNTERS[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def lacks(feature: str) -> bool:
    """True when `MEMVAULT_FS_LACKS` (comma-separated: `exchange`, `lease`) says this file system lacks
    `feature`: how the tests run the paths a laptop takes where the system has no atomic swap or no
    leases (macOS, NFS, FUSE), which cannot be made otherwise on a Linux test machine."""
    wanted = env("MEMVAULT_FS_LACKS")
    return wanted is not None and feature in wanted.split(",")
