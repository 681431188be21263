"""The one non-blocking lock helper behind the write lock, the index lock and the live-daemon test."""

from __future__ import annotations

import os

import pytest

from memvault.vault.locks import lock_is_free, try_lock


def test_try_lock_holds_until_closed(tmp_path):
    path = tmp_path / "some.lock"
    assert lock_is_free(path) and not path.exists()  # judging a missing lock creates nothing
    with pytest.raises(FileNotFoundError):
        try_lock(path, create=False)
    fd = try_lock(path)
    assert fd is not None and path.exists() and (path.stat().st_mode & 0o777) == 0o600
    try:
        # flock belongs to an open file description: a second open conflicts even in this process
        assert try_lock(path) is None and try_lock(path, create=False) is None
        assert not lock_is_free(path)
    finally:
        os.close(fd)
    assert lock_is_free(path)
    again = try_lock(path, create=False)
    assert again is not None
    os.close(again)


def test_write_lock_and_index_lock_use_it(layout):
    from memvault.daemon.files import _index_lock_free
    from memvault.vault.errors import LockError
    from memvault.vault.fileio import vault_lock

    with vault_lock(layout):
        assert not lock_is_free(layout.state_dir / "write.lock")
        with (
            pytest.raises(LockError, match=r"write\.lock: vault is locked by another writer for over 0s"),
            vault_lock(layout, timeout=0.05),
        ):
            pass
    assert lock_is_free(layout.state_dir / "write.lock")
    assert _index_lock_free(layout)
    fd = try_lock(layout.state_dir / "index.lock")
    try:
        assert not _index_lock_free(layout)
    finally:
        os.close(fd)
