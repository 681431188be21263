"""Reading notes as text, and changing them atomically under the vault's write lock.

A note is decoded without normalising its line endings, so an edit that only
appends leaves every existing byte as it was; new lines use the file's own
dominant line ending and encoding.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from memvault.vault.errors import LockError, NoteReadError
from memvault.vault.locks import try_lock
from memvault.vault.paths import Layout

MAX_NOTE_BYTES = 10 * 1024 * 1024
LOCK_TIMEOUT = 30.0
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class TextFile:
    """A note's decoded text plus what is needed to write it back the same way; `sha256` is the hex
    digest of the bytes it was decoded from when `read_note` read it ("" otherwise)."""

    text: str
    encoding: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"
    sha256: str = ""

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on `\\n` only (unlike `str.splitlines`, which
    also splits on form feeds and Unicode separators and would shift line numbers)."""
    return _LINE.findall(text)


def _detect_newline(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def decode_note(data: bytes, name: str) -> TextFile:
    """Decode UTF-8 (with or without BOM) or BOM-marked UTF-16; refuse everything else by name."""
    bom, encoding = next(((b, e) for b, e in _BOMS if data.startswith(b)), (b"", "utf-8"))
    if not bom and b"\x00" in data[:8192]:
        raise NoteReadError(f"{name}: binary file (NUL bytes), not a Markdown note")
    body = data[len(bom) :]
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        raise NoteReadError(
            f"{name}: not valid {encoding.upper()} (byte 0x{body[exc.start]:02x} at offset "
            f"{exc.start + len(bom)}); convert it to UTF-8"
        ) from None
    if "\x00" in text:
        raise NoteReadError(f"{name}: binary file (NUL characters), not a Markdown note")
    return TextFile(text, encoding, bom, _detect_newline(text))


def read_note(
    path: Path,
    name: str | None = None,
    max_bytes: int = MAX_NOTE_BYTES,
    *,
    size: int | None = None,
    missing: str = "no such note",
) -> TextFile:
    """Read one note (its bytes once), turning every way it can fail into a one-line `NoteReadError`.

    `size` is the size a caller already knows from its own `stat` (the walk's): the limit is
    checked against it and the file is not stat-ed again. `missing` says what a missing file is
    ("vanished before it could be read" for a file the walk had just seen)."""
    label = name or str(path)
    try:
        if size is None:
            size = path.stat().st_size
        if size > max_bytes:
            raise NoteReadError(f"{label}: {size:,} bytes is over the {max_bytes:,}-byte note limit")
        data = path.read_bytes()
    except NoteReadError:
        raise
    except FileNotFoundError:
        raise NoteReadError(f"{label}: {missing}") from None
    except IsADirectoryError:
        raise NoteReadError(f"{label}: is a directory, not a note") from None
    except OSError as exc:
        raise NoteReadError(f"{label}: cannot read ({exc.strerror or exc})") from None
    return replace(decode_note(data, label), sha256=hashlib.sha256(data).hexdigest())


@contextmanager
def vault_lock(layout: Layout, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Serialise every memvault write in a vault through one advisory lock file.

    The lock is on a sidecar file, not on the note: notes are replaced by
    rename, so a lock on the note's inode would not outlive the first write.
    """
    layout.state_dir.mkdir(parents=True, exist_ok=True)
    path = layout.state_dir / "write.lock"
    deadline = time.monotonic() + timeout
    while (fd := try_lock(path)) is None:
        if time.monotonic() > deadline:
            raise LockError(f"{path}: vault is locked by another writer for over {timeout:.0f}s")
        time.sleep(0.005)
    try:
        yield
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temp file in the same folder, fsync, rename over the target, fsync the folder.

    A crash leaves either the old note or the new one, never a torn mix.
    """
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def update_note(
    layout: Layout,
    path: Path,
    change: Callable[[TextFile | None], str],
) -> str:
    """Read-modify-write one note under the vault lock; `change` gets None for a new note.

    The result is encoded the way the note already was, so a UTF-8-with-BOM or
    UTF-16 note stays so.
    """
    with vault_lock(layout):
        current = read_note(path, layout.relative(path)) if path.exists() else None
        new_text = change(current)
        if current is not None and new_text == current.text:
            return new_text  # nothing changed: no write, so no mtime change and no reindex
        encoder = current or TextFile("")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, encoder.encode(new_text))
    return new_text
