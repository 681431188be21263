"""memvault's hooks in Claude Code's settings file (and Codex's `hooks.json`, of the same shape), added
beside whatever is there and taken out again.

Claude Code reads hooks from `~/.claude/settings.json` (every project) or a repository's
`.claude/settings.json`, as `{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command",
"command", "timeout"}]}]}}`. `install` appends one group per event whose command is memvault's for
this vault, leaving every other hook as it is (a hook of this vault's with another command, an earlier
install's `--budget`, gets the new command in place); `uninstall` removes exactly this vault's hooks
from the file as it is now, so whatever a person changed since install stays.

Both change only memvault's part of the text (`memvault.hooks.jsontext`): every other byte stays as
the person wrote it. A symlinked file is written through its link, atomically and only over the version
read; the version replaced is first copied into the vault's trash (`.trash/settings/`). Install also
remembers, in the vault's state folder, the file as it was before the first install: while the file is
as memvault's last install left it, uninstall puts those bytes back (or removes the file install
created), so install then uninstall leaves the settings byte-identical.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.hooks.jsontext import JsonTextError, Splice, Value, append, apply, parse, remove, replace
from memvault.hooks.mcp_config import memvault_program
from memvault.vault.errors import MemvaultError, NoteWriteError, UsageError
from memvault.vault.fileio import ABSENT, atomic_write
from memvault.vault.paths import Layout, vault_file
from memvault.vault.regular import read_regular
from memvault.vault.state import read_state, write_state

# event -> seconds Claude Code waits for the hook: the prompt ones stay short (a daemon answers in
# a fraction of a second, a cold search in about 4 s), the transcript ones may run `extract`
EVENTS = {"SessionStart": 60, "UserPromptSubmit": 20, "Stop": 120, "PreCompact": 120, "SessionEnd": 120}
HOST = "claude-code"


@dataclass(frozen=True)
class Host:
    """An agent host whose hooks file takes Claude Code's shape: where it keeps it (`~/FOLDER/FILE`, a
    repository's `FOLDER/FILE`), the events memvault hooks and their timeouts, and those it may run in
    the background (the host goes on while the transcript's new messages are extracted)."""

    name: str
    folder: str
    file: str
    events: dict[str, int]
    background: tuple[str, ...] = ()
    flat: bool = False  # Cursor's: {"version": 1, "hooks": {EVENT: [{"command"}]}}, no groups


# Codex reads `hooks.json` in Claude Code's shape (codex-rs/hooks/schema: the same event names, payload
# fields and `hookSpecificOutput.additionalContext`); its transcript is its own format, so each turn is
# captured at Stop from the prompt and the reply (`memvault.hooks.codex`)
CODEX_EVENTS = {"SessionStart": 60, "UserPromptSubmit": 20, "Stop": 120}
# Cursor's `hooks.json` has no groups, and its prompt hook cannot add context (an agent there reads
# memory through MCP's memory_context): its hooks capture each turn, the prompt and then the reply
CURSOR_EVENTS = {"beforeSubmitPrompt": 20, "afterAgentResponse": 120}
HOSTS = {HOST: Host(HOST, ".claude", "settings.json", EVENTS, ("Stop", "PreCompact")),
         "codex": Host("codex", ".codex", "hooks.json", CODEX_EVENTS),
         "cursor": Host("cursor", ".cursor", "hooks.json", CURSOR_EVENTS, flat=True)}  # fmt: skip
CLAUDE = HOSTS[HOST]
_STATE = "hooks-installed.json"
Ours = Callable[[str | None], bool]  # whether a hook's command is this vault's
COPIES = "settings"  # the trash's folder for the versions of settings files install and uninstall replaced


@dataclass(frozen=True)
class Changed:
    """What install or uninstall did to a settings file: hooks `added`, `updated` (another command of
    this vault's) or `removed`, whether the file was put back byte for byte (`restored`), and where the
    version it replaced was copied (`kept`)."""

    path: Path
    added: int = 0
    updated: int = 0
    removed: int = 0
    restored: bool = False
    kept: Path | None = None


@dataclass(frozen=True)
class _Settings:
    """A settings file as read: `path` as named, `target` where its bytes are (a link's target), its
    `data` (None: no file), `text` to edit (an empty object for an empty file) and the parsed `top` object."""

    path: Path
    target: Path
    data: bytes | None
    text: str
    top: Value

    def hooks(self) -> Value | None:
        return self.top.member("hooks")


def settings_path(project: Path | None = None, explicit: Path | None = None, host: Host = CLAUDE) -> Path:
    """The file to edit: one named, a repository's `.claude/settings.json`, else the user's."""
    if explicit is not None:
        return explicit
    if project is not None:
        return project / host.folder / host.file
    return Path.home() / host.folder / host.file


def hook_command(layout: Layout | None, budget: int | None = None, host: Host = CLAUDE) -> str:
    """The command Claude Code runs: this installation's memvault, and this vault by its absolute path,
    or (`layout` None) no vault: each session's project vault, found from its folder (`session_root`)."""
    budget_args = ["--budget", str(budget)] if budget is not None else []
    vault = ["--vault", str(layout.root.resolve())] if layout is not None else []
    return shlex.join([*memvault_program(), *vault, "hook", host.name, *budget_args])


def _follows(command: str, host: Host) -> bool:
    """A memvault hook that names no vault (any installation's, any `--budget`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    at = next((i for i in range(len(words) - 1) if words[i : i + 2] == ["hook", host.name]), None)
    program = words[:at] if at is not None else []
    named = program[-1:] == ["memvault"] or program[-1:] == ["memvault.cli"] or program[-1].endswith("/memvault")
    return at is not None and bool(program) and named and "--vault" not in words


def _read(path: Path) -> _Settings:
    target = Path(os.path.realpath(path))  # a symlinked file is edited where it is, and the link kept
    try:
        data: bytes | None = read_regular(target)  # a FIFO or device in its place is refused, never waited on
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = "" if data is None else data.decode("utf-8")
        text = text if text.strip() else "{\n}\n"  # a new file laid out as Claude Code writes its own
        top = parse(text)
    except (UnicodeDecodeError, JsonTextError) as exc:
        raise UsageError(f"{path}: not a JSON settings file ({exc}); fix it by hand first") from None
    hooks = top.member("hooks") if top.kind == "object" else None
    if top.kind != "object" or (hooks is not None and hooks.kind != "object"):
        raise UsageError(f'{path}: not a settings object with a "hooks" object; fix it by hand first')
    for event, groups in zip(hooks.keys if hooks else (), hooks.items if hooks else (), strict=True):
        if groups.kind != "array":
            raise UsageError(f'{path}: hooks "{event}" is not a list; fix it by hand first')
    return _Settings(path, target, data, text, top)


def _sha(data: bytes | None) -> str:
    return ABSENT if data is None else hashlib.sha256(data).hexdigest()


def _entries(groups: Value) -> Iterator[tuple[int, Value | None, int, Value]]:
    """(group's index, its hooks list, the hook's index, the hook's command string) of each command hook;
    a hook that is its own group (Cursor's) has no list (None)."""
    for g, group in enumerate(groups.items):
        flat = group.member("command") if group.kind == "object" else None
        if flat is not None and flat.kind == "string":
            yield g, None, 0, flat
            continue
        hooks = group.member("hooks") if group.kind == "object" else None
        for h, hook in enumerate(hooks.items if hooks is not None and hooks.kind == "array" else ()):
            command = hook.member("command") if hook.kind == "object" else None
            if command is not None and command.kind == "string":
                yield g, hooks, h, command


def _texts(groups: Value | None) -> list[str | None]:
    return [c.text for *_, c in _entries(groups)] if groups is not None else []


def _ours(layout: Layout, recorded: dict[str, Any], follow: bool = False, host: Host = CLAUDE) -> Ours:
    """Whether a command is this vault's hook: the one install wrote, or any naming this vault (an
    earlier install's, with another `--budget` or from another installation of memvault); following
    the project (`follow`), any memvault hook naming no vault."""
    if follow:
        return lambda command: command is not None and (command == recorded.get("command") or _follows(command, host))
    exact = {c for c in (recorded.get("command"), hook_command(layout, None, host)) if c}
    vault = shlex.join(["--vault", str(layout.root.resolve()), "hook", host.name])
    return lambda command: command is not None and (command in exact or vault in command)


def _install_splices(found: _Settings, command: str, ours: Ours, host: Host) -> tuple[list[Splice], int, int]:
    def group(event: str) -> dict[str, Any]:
        if host.flat:
            return {"command": command, "timeout": host.events[event]}
        hook = {"type": "command", "command": command, "timeout": host.events[event]}
        return {"hooks": [{**hook, "async": True} if event in host.background else hook]}

    hooks = found.hooks()
    if hooks is None:
        versioned = host.flat and found.top.member("version") is None  # Cursor's file says its format's version
        members: list[tuple[str | None, Any]] = [("version", 1)] if versioned else []
        members.append(("hooks", {e: [group(e)] for e in host.events}))
        return [append(found.text, found.top, members)], len(host.events), 0
    splices: list[Splice] = []
    missing: list[tuple[str | None, Any]] = []
    added, updated = 0, 0
    for event in host.events:
        groups = hooks.member(event)
        if groups is None:
            missing.append((event, [group(event)]))
            continue
        mine = [c for *_, c in _entries(groups) if ours(c.text)]
        if any(c.text == command for c in mine):
            continue
        if mine:  # installed before with another command: that one now runs this
            splices += [replace(c, command) for c in mine]
            updated += len(mine)
        else:
            splices.append(append(found.text, groups, [(None, group(event))]))
            added += 1
    if missing:
        splices.append(append(found.text, hooks, missing))
    return splices, added + len(missing), updated


def _uninstall_splices(found: _Settings, ours: Ours) -> tuple[list[Splice], int]:
    """Splices that take this vault's hooks out: a hook, else its group when nothing else is in it, else
    the event when no group is left, else the "hooks" member when no event is (what install added)."""
    hooks = found.hooks()
    if hooks is None:
        return [], 0
    splices: list[Splice] = []
    removed, gone_events = 0, set()
    for n, groups in enumerate(hooks.items):
        mine: dict[int, set[int]] = {}
        lists: dict[int, Value] = {}
        whole: set[int] = set()  # a hook that is its own group
        for g, hook_list, h, command in _entries(groups):
            if ours(command.text) and hook_list is None:
                whole.add(g)
            elif ours(command.text) and hook_list is not None:
                mine.setdefault(g, set()).add(h)
                lists[g] = hook_list
        removed += sum(map(len, mine.values())) + len(whole)
        gone = whole | {g for g, hs in mine.items() if len(hs) == len(lists[g].items)}
        if gone and len(gone) == len(groups.items) and hooks.unique(hooks.keys[n]):
            gone_events.add(n)
            continue
        splices += [s for g, hs in mine.items() if g not in gone for s in remove(lists[g], hs)]
        splices += remove(groups, gone) if gone else []
    if gone_events and len(gone_events) == len(hooks.items) and found.top.unique("hooks"):
        splices += remove(found.top, {found.top.index("hooks")})  # type: ignore[arg-type]
    elif gone_events:
        splices += remove(hooks, gone_events)
    return splices, removed


def _checked(found: _Settings, splices: list[Splice], ours: Ours, command: str | None, host: Host = CLAUDE) -> str:
    """The new text, read back: strict JSON with `command` in every event (install) or no hook of this
    vault's left (uninstall); anything else would be a damaged file, and is refused before writing."""
    new = apply(found.text, splices)
    try:
        hooks = parse(new).member("hooks")
    except JsonTextError:
        right = False
    else:
        if command is not None:
            right = hooks is not None and all(command in _texts(hooks.member(e)) for e in host.events)
        else:
            right = hooks is None or not any(ours(c) for groups in hooks.items for c in _texts(groups))
    if not right:
        raise UsageError(f"{found.path}: memvault could not change its hooks without changing the rest; edit it "
                         f"by hand")  # fmt: skip
    return new


def _keep(layout: Layout, found: _Settings) -> Path | None:
    """A copy of the version about to be replaced or removed, in the vault's trash (beside the file when
    the vault is gone, as after an uninstall of a removed vault's hooks)."""
    if found.data is None:
        return None
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S%f")
    try:
        if layout.root.is_dir():
            from memvault.vault.trash import trash_folder

            folder = trash_folder(layout, COPIES)  # refused when the trash is a symlink out of the vault
            folder.mkdir(parents=True, exist_ok=True)
            copy = vault_file(layout, folder / f"{stamp}-{found.target.name}")
        else:
            copy = found.target.with_name(f"{found.target.name}.{stamp}.bak")
        atomic_write(copy, found.data, expect=ABSENT, new_mode=0o600)  # it may hold the settings' secrets
    except (OSError, MemvaultError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"{found.path}: cannot keep a copy of it before changing it ({why}); nothing changed") \
            from None  # fmt: skip
    return copy


def _write(layout: Layout, found: _Settings, new: str | None) -> Path | None:
    """Put `new` in place of the version read (None: remove the file), after keeping a copy of it."""
    kept = _keep(layout, found)
    try:
        if new is None:
            found.target.unlink()
        else:
            found.target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(found.target, new.encode("utf-8"), expect=_sha(found.data))  # over the version read
    except (OSError, NoteWriteError) as exc:
        raise UsageError(f"{found.path}: cannot write it ({exc.strerror or exc})") from None
    return kept


def _record(layout: Layout, key: str, entry: dict[str, Any] | None) -> None:
    state = read_state(layout, _STATE)
    if entry is None:
        if key not in state:
            return
        del state[key]
    else:
        state[key] = entry
    try:
        write_state(layout, _STATE, state)
    except (OSError, NoteWriteError) as exc:
        raise UsageError(f"{layout.state_dir / _STATE}: cannot write it ({exc.strerror or exc})") from None


def install(layout: Layout, path: Path, budget: int | None = None, follow: bool = False, host: Host = CLAUDE
            ) -> Changed:  # fmt: skip
    """Add the hooks for `layout`'s vault, or (`follow`) for each session's project vault; what install
    did is recorded in `layout`'s state (the user vault's, when following)."""
    found = _read(path)
    command = hook_command(None if follow else layout, budget, host)
    key = str(found.target)
    recorded = read_state(layout, _STATE).get(key, {})
    ours = _ours(layout, recorded, follow, host)
    hooks = found.hooks()
    had_ours = hooks is not None and any(ours(c.text) for g in hooks.items for *_, c in _entries(g))
    splices, added, updated = _install_splices(found, command, ours, host)
    if not splices:
        return Changed(path)
    new = _checked(found, splices, ours, command, host)
    kept = _write(layout, found, new)
    after = _sha(new.encode("utf-8"))
    if not had_ours:  # the first install: the file as it was, to put back while nothing else changed
        entry = {"before": None if found.data is None else found.data.decode("utf-8"), "after": after}
    elif "before" in recorded and recorded.get("after") == _sha(found.data):  # only memvault changed it since
        entry = {"before": recorded["before"], "after": after}
    else:  # changed by a person since: uninstall takes out only the hooks
        entry = {"after": after}
    _record(layout, key, {**entry, "command": command})
    return Changed(path, added=added, updated=updated, kept=kept)


def uninstall(layout: Layout, path: Path, follow: bool = False, host: Host = CLAUDE) -> Changed:
    found = _read(path)
    key = str(found.target)
    recorded = read_state(layout, _STATE).get(key, {})
    ours = _ours(layout, recorded, follow, host)
    splices, removed = _uninstall_splices(found, ours)
    restored = "before" in recorded and recorded.get("after") == _sha(found.data)
    kept = None
    if restored:  # as install left it: put the old bytes back (or remove the file it created)
        kept = _write(layout, found, recorded["before"])
    elif splices:
        kept = _write(layout, found, _checked(found, splices, ours, None, host))
    _record(layout, key, None)
    return Changed(path, removed=removed, restored=restored, kept=kept)
