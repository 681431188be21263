"""Where things live in a vault, and the guard that keeps every path inside it."""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memvault.vault.errors import PathError, UsageError, unwritable
from memvault.vault.places import DAILY_DIR, MEMORY_FILE, REVIEW_FILE, STATE_DIR, TRASH_DIR, vault_root
from memvault.vault.regular import file_kind

NOTE_SUFFIXES = (".md", ".markdown")
_DAY_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")


@dataclass(frozen=True)
class Layout:
    """The fixed places inside one vault; `root` is absolute and resolved."""

    root: Path

    @property
    def memory_md(self) -> Path:
        return self.root / MEMORY_FILE

    @property
    def daily_dir(self) -> Path:
        return self.root / DAILY_DIR

    @property
    def state_dir(self) -> Path:
        """Derived, rebuildable data (index, manifest, locks)."""
        return self.root / STATE_DIR

    @property
    def trash_dir(self) -> Path:
        """Recoverable copies of anything memvault replaced or removed."""
        return self.root / TRASH_DIR

    def daily_note(self, day: dt.date) -> Path:
        return self.daily_dir / f"{day.isoformat()}.md"

    def relative(self, path: Path) -> str:
        """The vault-relative name with `/` separators, as shown to users and stored in indexes."""
        return path.relative_to(self.root).as_posix()


def daily_notes(layout: Layout) -> list[tuple[dt.date, Path]]:
    """The vault's daily notes (`daily/YYYY-MM-DD.md`), oldest first."""
    if not layout.daily_dir.is_dir():
        return []
    out = []
    for path in layout.daily_dir.iterdir():
        found = _DAY_FILE.match(path.name)
        if found and path.is_file():
            try:
                out.append((dt.date.fromisoformat(found.group(1)), path))
            except ValueError:
                continue
    return sorted(out)


def resolve_vault(arg: str | os.PathLike[str] | None = None) -> Layout:
    """`--vault`, else `$MEMVAULT_VAULT`, else `./memory`: the order users expect from CLI tools."""
    return Layout(Path(vault_root(arg)))


def inside(layout: Layout, name: str | os.PathLike[str]) -> Path:
    """Resolve a user-given note path against the vault, refusing anything that escapes it.

    Absolute paths, `..` and symlinks that lead out are all refused, so an
    argument can never make memvault read or write outside the vault.
    """
    raw = Path(name)
    if raw.is_absolute():
        raise PathError(f"{name}: absolute paths are not allowed; give a path inside the vault")
    if ".." in raw.parts:
        raise PathError(f"{name}: '..' is not allowed in a note path")
    return vault_file(layout, layout.root / raw, str(name))


def vault_file(layout: Layout, path: Path, name: str | None = None, *, folder: bool = False) -> Path:
    """The one path rule for every file memvault reads or writes in a vault (a note, MEMORY.md, REVIEW.md,
    a copy in `.trash/`): it resolves inside the vault (no symlink of it or of a folder above it leads
    out) and, when it exists, is a regular file (no FIFO, device or folder, which could hang or mislead
    a read; with `folder`, a folder such as `.trash/`). Else a one-line `PathError` naming it (`name`,
    else its vault-relative path); returns the resolved path, checked before anything opens it."""
    label = name or (path.relative_to(layout.root).as_posix() if path.is_relative_to(layout.root) else str(path))
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise PathError(f"{label}: cannot resolve ({getattr(exc, 'strerror', None) or exc})") from None
    if not resolved.is_relative_to(layout.root):
        raise PathError(f"{label}: resolves outside the vault ({resolved}); memvault reads and writes inside it only")
    try:
        mode = resolved.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return resolved
    except OSError:
        return resolved  # unreadable: the read names it with its reason
    if not (stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)):
        if folder:
            raise PathError(f"{label}: is {file_kind(mode)}, not a folder")
        raise PathError(f"{label}: is {file_kind(mode)}, not a regular file; memvault reads and writes only those")
    return resolved


def state_problem(layout: Layout) -> str | None:
    """Why `.memvault/` cannot hold memvault's derived data (something else has its name), else None."""
    path = layout.state_dir
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if not path.is_symlink():
            return None
        kind = "a broken symlink"
    except OSError as exc:
        kind = f"unusable ({exc.strerror or exc})"
    else:
        if stat.S_ISDIR(mode):
            return None
        kind = file_kind(mode)
    return (f"{path}: is {kind}, not a folder: memvault keeps its index, locks and daemon files there; "
            f"move it aside (memvault makes the folder again)")  # fmt: skip


def make_state_dir(layout: Layout) -> Path:
    """`.memvault/`, made when missing; refused in one line (`PathError`) when something else has its name."""
    problem = state_problem(layout)
    if problem:
        raise PathError(problem)
    try:
        layout.state_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unwritable(exc, layout.state_dir, layout.root) or exc from None
    return layout.state_dir


def parse_date(text: str) -> dt.date:
    """Dates are ISO `YYYY-MM-DD`, plus `today` and `yesterday` for people typing at a shell."""
    lowered = text.strip().lower()
    today = dt.date.today()
    if lowered == "today":
        return today
    if lowered == "yesterday":
        return today - dt.timedelta(days=1)
    try:
        return dt.date.fromisoformat(lowered)
    except ValueError:
        raise UsageError(f"{text!r}: not a date; use YYYY-MM-DD") from None


def _hidden(rel: str) -> bool:
    """Some part of a vault-relative posix path starts with '.' (`.memvault/`, `.trash/`, `..`, `.draft.md`)."""
    return any(part.startswith(".") for part in rel.split("/"))


def is_note_rel(rel: str) -> bool:
    """The one rule for "this vault-relative posix path names a note", as the walk, the watcher, the
    daemon and `show`/`rewrite` all judge it: relative, no '..' and no empty part, no part starting
    with '.', and a `.md`/`.markdown` name (any case); the review queue is not a note (not memory yet)."""
    parts = rel.split("/")
    return rel.lower().endswith(NOTE_SUFFIXES) and all(parts) and not _hidden(rel) and rel != REVIEW_FILE


def names_a_day(ref: str) -> bool:
    """`today`, `yesterday` or a `YYYY-MM-DD`-shaped word: a day, where a command takes a day or a path."""
    return ref.lower() in ("today", "yesterday") or (len(ref) == 10 and ref[4:5] == "-" and ref[:4].isdigit())


def note_path(layout: Layout, ref: str) -> Path:
    """`memory`, a date (`today`, `YYYY-MM-DD`) or a vault-relative path, as `show` and `rewrite` accept.

    A path must name a note (`*.md` outside dot-folders): `rewrite` replaces whole files, and must
    never be pointed at the index, the lock files or the trash in `.memvault/` and `.trash/`."""
    if ref.lower() in ("memory", MEMORY_FILE.lower()):
        return vault_file(layout, layout.memory_md)
    if names_a_day(ref):
        return inside(layout, layout.relative(layout.daily_note(parse_date(ref))))
    resolved = inside(layout, ref)
    # the name as given (`./a.md` and `a//b.md` name `a.md` and `a/b.md`, `a.md/` names no note) must be
    # a note, and the file it leads to must not be hidden either (a symlink into `.memvault/`)
    given = Path(ref).as_posix()
    if not is_note_rel(given) or ref.endswith(("/", "/.")) or _hidden(layout.relative(resolved)):
        raise PathError(f"{ref}: not a note (a note is a *.md file outside dot-folders such as {STATE_DIR}/)")
    return resolved
