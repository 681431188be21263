"""What `memvault hook claude-code` does with each Claude Code hook payload (JSON on stdin).

The payload fields relied on (Claude Code's hook reference, "Hook input"): every event has
`session_id`, `transcript_path` (the session's JSON-lines transcript), `cwd` and `hook_event_name`;
`SessionStart` has `source` (startup, resume, clear, compact), `UserPromptSubmit` has `prompt`,
`PreCompact` has `trigger` (manual, auto), `SessionEnd` has `reason`. What goes back on stdout is
`{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`, which Claude Code adds to the
model's context for the two events that take it.

- `SessionStart`: the `<memory-stable>` block (core entries, latest conversation summaries), once
  a session and again after a compaction; and the daemon of every vault the session reads (the
  project's and the user's) is started when none runs, so the prompts after it are answered in a
  fraction of a second rather than a cold start each. It stops itself after `SESSION_DAEMON_IDLE_S`
  with no request and no client holding it: no session's end stops a daemon another session (or an
  MCP server) still uses, and one killed before its end leaves no daemon behind for long.
- `UserPromptSubmit`: the `<memory-context>` recall for the prompt, only when something relevant
  was found (tier `dense` or `keyword`): the newest entries after every prompt would be noise.
- `PreCompact`, `SessionEnd`: the transcript's messages not yet extracted go through `extract`
  (their summary into today's note with the session's title and `[conversation:: SESSION_ID]`, the
  user's lasting statements into REVIEW.md); how far each session got (the byte its last read ended
  at) is kept in the vault's state folder, so a compaction then the session's end extract each message
  once, and each reads only what was added since (`vault.conversation.read_transcript` bounds it).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.api import Vault
from memvault.vault.errors import MemvaultError, UsageError
from memvault.vault.logger import log

if TYPE_CHECKING:  # the transcript reader is the capture events': a prompt's hook never loads it (9 ms)
    from memvault.vault.conversation import Transcript

_STATE = "claude-code-sessions.json"
KEPT_SESSIONS = 200  # sessions whose progress is remembered, the latest first to stay
SESSION_DAEMON_IDLE_S = 1800.0  # a person may think for minutes between prompts: the daemon waits half an hour


def payload_of(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text)
    except ValueError:
        raise UsageError("the hook's input is not JSON (Claude Code sends the event as a JSON object)") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("hook_event_name"), str):
        raise UsageError('the hook\'s input has no "hook_event_name"')
    return payload


def _sessions(vault: Vault) -> dict[str, Any]:
    from memvault.vault.state import read_state  # the capture events': a prompt's hook never loads it (5 ms)

    return read_state(vault.layout, _STATE)


def _save_sessions(vault: Vault, sessions: dict[str, Any]) -> None:
    from memvault.vault.state import write_state

    write_state(vault.layout, _STATE, dict(list(sessions.items())[-KEPT_SESSIONS:]))


def session_of(payload: dict[str, Any]) -> str:
    session = payload.get("session_id")
    return session if isinstance(session, str) and session else "unknown"


def _context(text: str, event: str) -> dict[str, Any] | None:
    if not text.strip():
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def session_start(vault: Vault, payload: dict[str, Any], budget: int) -> dict[str, Any] | None:
    from memvault.scopes import Scopes
    from memvault.verbs.context import stable_block

    with Scopes(vault) as scopes:
        for _, each in scopes.read("all"):
            _serve(each)
        session = session_of(payload)
        blocks = scopes.context(None, budget, conversation=session if session != "unknown" else None)
    return _context(stable_block(blocks), "SessionStart")


def _serve(vault: Vault) -> None:
    """Start the vault's daemon when none runs, to stop itself once idle (no session holds it); not
    where memvault.toml says `auto_index = false` (then a person indexes, or starts the daemon)."""
    from memvault.vault.config import load_settings

    if vault.daemon_status()["running"] or not load_settings(vault.root).auto_index:
        return
    with contextlib.suppress(MemvaultError):  # else each prompt's hook answers in its own process, slower
        vault.start_daemon(["--idle-exit", f"{SESSION_DAEMON_IDLE_S:g}"])


def prompt_submit(vault: Vault, payload: dict[str, Any], budget: int) -> dict[str, Any] | None:
    from memvault.scopes import Scopes

    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    from memvault.verbs.context import prompt_block

    with Scopes(vault) as scopes:
        recall = prompt_block(scopes.context(prompt, budget))
    return None if recall is None else _context(recall, "UserPromptSubmit")


def _progress(sessions: dict[str, Any], session: str) -> dict[str, Any]:
    found = sessions.get(session)
    return found if isinstance(found, dict) else {}


def progress_of(vault: Vault, session: str) -> dict[str, Any]:
    """What the hooks keep of a session: how far its transcript was read, its summary's digest, ..."""
    return _progress(_sessions(vault), session)


def extract_transcript(vault: Vault, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The transcript's lines after the byte the session's last extraction stopped at go to `extract`."""
    from memvault.vault.conversation import read_transcript

    session = session_of(payload)
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise UsageError('the hook\'s input has no "transcript_path"')
    progress = _progress(_sessions(vault), session)
    offset = progress.get("offset")
    counted = 0 if "offset" in progress else progress.get("extracted", 0)  # messages, as earlier versions kept it
    try:
        transcript = read_transcript(Path(path).expanduser(), offset if isinstance(offset, int) else 0)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the transcript ({exc.strerror or exc})") from None
    _report(path, transcript)
    messages = transcript.messages
    new = messages[counted:] if isinstance(counted, int) and 0 <= counted <= len(messages) else messages
    capture(vault, session, new, path, transcript.title or progress.get("title"), {"offset": transcript.end})
    return None


def capture(vault: Vault, session: str, new: list[dict[str, str]], name: str, title: Any,
            progress: dict[str, Any]) -> None:  # fmt: skip
    """A session's new messages through `extract`: the session's one summary of the day, replaced by
    each part's and covering the parts before (their digest is kept with the session's progress, and
    `progress` is merged into it: None removes a field); proposals from these messages alone."""
    from memvault.verbs.extract import Extract

    digest = _progress(_sessions(vault), session).get("digest")
    if new:
        conversation_id, key = (session, f"conversation-{session}") if session != "unknown" else (None, None)
        title = title if isinstance(title, str) else None
        done_part = vault.run(Extract(json.dumps(new, ensure_ascii=False), name, title, conversation_id, key,
                                      digest if isinstance(digest, dict) and key else None))  # fmt: skip
        digest = done_part.digest
    sessions = _sessions(vault)
    done = _progress(sessions, session)
    done.pop("extracted", None)
    done.update({**({"title": title} if isinstance(title, str) else {}),
                 **({"digest": digest} if isinstance(digest, dict) else {}), **progress})  # fmt: skip
    sessions[session] = {k: v for k, v in done.items() if v is not None}
    _save_sessions(vault, sessions)


def _report(path: str, transcript: Transcript) -> None:
    """What was passed over, one line each on stderr (the hook still answers)."""
    from memvault.vault.conversation import MAX_LINE_BYTES, TRANSCRIPT_WINDOW

    if transcript.skipped_bytes:
        log.warning(f"{path}: over {TRANSCRIPT_WINDOW >> 20} MiB not extracted yet: only its last "
                    f"{TRANSCRIPT_WINDOW >> 20} MiB were read ({transcript.skipped_bytes:,} bytes before them "
                    f"passed over)")  # fmt: skip
    if transcript.skipped_lines:
        log.warning(f"{path}: {transcript.skipped_lines} lines of the transcript passed over (not JSON, nested "
                    f"too deeply, or over {MAX_LINE_BYTES >> 20} MiB)")  # fmt: skip


READS = ("SessionStart", "UserPromptSubmit")  # the events that only read memory; the others write it


def session_root(payload: dict[str, Any]) -> str | None:
    """The vault a hook installed without `--vault` serves: the project vault of the session's folder
    (the payload's `cwd`, else `$CLAUDE_PROJECT_DIR`, else the hook's own), found as `vault_root` finds
    it; where the project has none, the user's vault for the events that read (its memory still
    helps), and None for those that write: a session in a project without a vault creates nothing."""
    from memvault.vault.places import is_vault_root, project_vault, user_root

    cwd = payload.get("cwd")
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.environ.get("CLAUDE_PROJECT_DIR") or None
    root = project_vault(start if start and os.path.isdir(start) else os.getcwd())
    if is_vault_root(root):
        return root
    return user_root() if payload["hook_event_name"] in READS and is_vault_root(user_root()) else None


def handle(vault: Vault, payload: dict[str, Any], budget: int) -> dict[str, Any] | None:
    """The answer to one hook payload (None: nothing to print); events not named here are left alone."""
    event = payload["hook_event_name"]
    if event == "SessionStart":
        return session_start(vault, payload, budget)
    if event == "UserPromptSubmit":
        return prompt_submit(vault, payload, budget)
    if event in ("Stop", "PreCompact"):  # each turn as it ends (a session killed keeps what it said)
        return extract_transcript(vault, payload)
    if event == "SessionEnd":  # the daemons stay for other sessions; idle, they stop themselves
        return extract_transcript(vault, payload)
    return None
