"""Which files in a vault are notes: every `*.md` outside dot-folders and `.gitignore`d paths.

Only `stat` is called here; reading and hashing is the indexer's business,
so a walk over an unchanged vault reads no file content.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.paths import Layout, is_note_rel
from memvault.vault.regular import NotRegular, read_regular

_WARNED: set[Path] = set()


@dataclass(frozen=True)
class FileEntry:
    """A note file on disk, as the walk saw it; `error` is set when it cannot be indexed."""

    rel: str
    path: Path
    size: int
    mtime_ns: int
    error: str | None = None


def _gitignore_regex(pattern: str) -> str:
    """Translate one gitignore glob to a regex over vault-relative posix paths."""
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    body = pattern.strip("/")
    out = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    prefix = "^" if anchored else "^(?:.*/)?"
    return prefix + "".join(out) + "(?:/.*)?$"


class GitIgnore:
    """The vault root's `.gitignore` (the common subset: globs, `**`, anchors, `!`, dir-only `/`)."""

    def __init__(self, text: str = "") -> None:
        self.rules: list[tuple[re.Pattern[str], bool, bool]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            line = line[1:] if negate else line
            self.rules.append((re.compile(_gitignore_regex(line)), negate, line.endswith("/")))

    @classmethod
    def load(cls, root: Path) -> GitIgnore:
        try:
            return cls(read_regular(root / ".gitignore").decode("utf-8", errors="replace"))
        except NotRegular as exc:  # a FIFO would hang every walk: no rules, said once per vault
            if root not in _WARNED:
                _WARNED.add(root)
                import logging  # only here: a no-change `index` walks the vault and imports nothing it does not use

                logging.getLogger("memvault").warning("%s: %s; its rules are not applied", root / ".gitignore",
                                                      exc.strerror)  # fmt: skip
            return cls()
        except OSError:
            return cls()

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        result = False
        parent = rel.rsplit("/", 1)[0] if "/" in rel else None
        for pattern, negate, dir_only in self.rules:
            # a dir-only rule matches a file only through one of its folders
            target = parent if dir_only and not is_dir else rel
            if target is not None and pattern.match(target):
                result = not negate
        return result


def scan_vault(layout: Layout) -> Iterator[FileEntry]:
    """Walk the vault in a stable order. A symlink is no note of its own (`stat_entry`): to a file of the
    vault it is another name for it, and one out of the vault is an error."""
    ignore = GitIgnore.load(layout.root)
    # the walk never enters a symlinked folder, so below a resolved root a regular file that is no
    # symlink is its own real path: one `lstat` says all `stat_entry` would (most of a vault's cost)
    plain = layout.root == layout.root.resolve()
    for dirpath, dirnames, filenames in os.walk(layout.root):
        base = Path(dirpath)
        rel_dir = base.relative_to(layout.root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and not ignore.ignored(rel_dir + d, is_dir=True)
        )
        for name in sorted(filenames):
            rel = rel_dir + name
            if not is_note_rel(rel) or ignore.ignored(rel):
                continue
            entry = (_regular(base / name, rel) if plain else None) or stat_entry(layout, rel)
            if entry is not None:
                yield entry


def _regular(path: Path, rel: str) -> FileEntry | None:
    """The entry of a regular file that is no symlink, else None (then `stat_entry` judges it)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return FileEntry(rel, path, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def stat_entry(layout: Layout, rel: str) -> FileEntry | None:
    """Stat one note: None when it does not exist, or when its name leads through a symlink to a file of
    the vault: that file is indexed under its own name (or left out, hidden or ignored, on purpose), never
    twice (a daily note linked from a project folder). Problems (a symlink out, a loop) become `error`."""
    path = layout.root / rel
    try:
        path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return FileEntry(rel, path, 0, 0, f"{rel}: cannot stat ({exc.strerror or exc})")
    try:
        real = path.resolve(strict=True)
        root = layout.root.resolve()
        if not real.is_relative_to(root):
            return FileEntry(rel, path, 0, 0, f"{rel}: symlink points outside the vault ({real})")
        if real != root / rel:  # another name of a file of the vault
            return None
        st = real.stat()
    except FileNotFoundError:
        return FileEntry(rel, path, 0, 0, f"{rel}: broken symlink")
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on some Pythons
        return FileEntry(rel, path, 0, 0, f"{rel}: cannot stat ({getattr(exc, 'strerror', None) or exc})")
    if path.is_dir():  # a folder named like a note (or a link to one): the walk sees a folder, so must this
        return None
    if not path.is_file():
        return FileEntry(rel, path, 0, 0, f"{rel}: not a regular file")
    return FileEntry(rel, real, st.st_size, st.st_mtime_ns)
