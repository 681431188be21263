"""memvault's hooks in Claude Code's settings file, added beside whatever is there and taken out again.

Claude Code reads hooks from `~/.claude/settings.json` (every project) or a repository's
`.claude/settings.json`, as `{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command",
"command", "timeout"}]}]}}`. `install` appends one group per event whose command is memvault's for
this vault, leaving every other hook as it is (and adds nothing that is there already); `uninstall`
removes exactly those commands. The file is replaced atomically, and only over the version read.

Install remembers, in the vault's state folder, the file as it was and a hash of what it wrote: an
uninstall that finds the file as install left it puts the old bytes back (or removes the file it
created), so install then uninstall leaves the settings byte-identical. If the file changed since,
only memvault's commands come out and the rest is written back as JSON.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.hooks.mcp_config import memvault_program
from memvault.hooks.state import read_state, write_state
from memvault.vault.errors import UsageError
from memvault.vault.fileio import ABSENT, atomic_write
from memvault.vault.paths import Layout

# event -> seconds Claude Code waits for the hook: the prompt ones stay short (a daemon answers in
# a fraction of a second, a cold search in about 4 s), the transcript ones may run `extract`
EVENTS = {"SessionStart": 60, "UserPromptSubmit": 20, "PreCompact": 120, "SessionEnd": 120}
HOST = "claude-code"
_STATE = "hooks-installed.json"


@dataclass(frozen=True)
class Changed:
    """What install or uninstall did to a settings file: hooks `added` or `removed`, and whether the
    file was put back byte for byte (`restored`)."""

    path: Path
    added: int = 0
    removed: int = 0
    restored: bool = False


def settings_path(project: Path | None = None, explicit: Path | None = None) -> Path:
    """The file to edit: one named, a repository's `.claude/settings.json`, else the user's."""
    if explicit is not None:
        return explicit
    if project is not None:
        return project / ".claude" / "settings.json"
    return Path.home() / ".claude" / "settings.json"


def hook_command(layout: Layout, budget: int | None = None) -> str:
    """The command Claude Code runs: this installation's memvault, this vault by its absolute path."""
    budget_args = ["--budget", str(budget)] if budget is not None else []
    return shlex.join([*memvault_program(), "--vault", str(layout.root.resolve()), "hook", HOST, *budget_args])


def _read(path: Path) -> tuple[str | None, dict[str, Any]]:
    if not path.exists():
        return None, {}
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path}: not a JSON settings file ({exc}); fix it by hand first") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise UsageError(f'{path}: not a settings object with a "hooks" object; fix it by hand first')
    for event, groups in data.get("hooks", {}).items():
        if not isinstance(groups, list):
            raise UsageError(f'{path}: hooks "{event}" is not a list; fix it by hand first')
    return text, data


def _sha(text: str | None) -> str:
    return ABSENT if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _commands(group: Any) -> list[str]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return [h.get("command") for h in hooks if isinstance(h, dict)] if isinstance(hooks, list) else []


def _write(path: Path, text: str | None, data: dict[str, Any]) -> str:
    new = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, new.encode("utf-8"), expect=_sha(text))  # over the version read, or not at all
    return new


def install(layout: Layout, path: Path, budget: int | None = None) -> Changed:
    text, data = _read(path)
    command = hook_command(layout, budget)
    hooks = data.setdefault("hooks", {})
    added = 0
    for event, timeout in EVENTS.items():
        groups = hooks.setdefault(event, [])
        if any(command in _commands(g) for g in groups):
            continue
        groups.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
        added += 1
    if not added:
        return Changed(path)
    new = _write(path, text, data)
    state = read_state(layout, _STATE)
    key = str(path.resolve())
    before = state[key]["before"] if key in state else text  # installed again: the first "before" stands
    state[key] = {"before": before, "after": _sha(new), "command": command}
    write_state(layout, _STATE, state)
    return Changed(path, added=added)


def uninstall(layout: Layout, path: Path) -> Changed:
    text, data = _read(path)
    state = read_state(layout, _STATE)
    key = str(path.resolve())
    recorded = state.get(key, {})
    ours = {c for c in (recorded.get("command"), hook_command(layout)) if c}
    vault = shlex.join(["--vault", str(layout.root.resolve()), "hook", HOST])
    hooks = data.get("hooks", {})
    removed = 0
    for event in list(hooks):
        kept = []
        for group in hooks[event]:
            mine = [c for c in _commands(group) if c in ours or (isinstance(c, str) and vault in c)]
            if not mine:
                kept.append(group)
                continue
            removed += len(mine)
            rest = [h for h in group["hooks"] if not (isinstance(h, dict) and h.get("command") in mine)]
            if rest:
                kept.append({**group, "hooks": rest})
        if kept:
            hooks[event] = kept
        elif len(hooks[event]):  # emptied by this removal, not empty before
            del hooks[event]
    restored = bool(recorded) and _sha(text) == recorded.get("after")
    if restored:  # as install left it: put the old bytes back (or remove the file it created)
        before = recorded.get("before")
        if before is None:
            path.unlink()
        else:
            atomic_write(path, before.encode("utf-8"), expect=_sha(text))
    elif removed:
        if not hooks and "hooks" in data:
            del data["hooks"]
        _write(path, text, data)
    if key in state:
        del state[key]
        write_state(layout, _STATE, state)
    return Changed(path, removed=removed, restored=restored)
