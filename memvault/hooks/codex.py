"""What `memvault hook codex` does with each Codex hook payload (JSON on stdin).

Codex's hooks take Claude Code's shapes (openai/codex `codex-rs/hooks/schema`): every event has
`session_id`, `cwd`, `transcript_path` (nullable) and `hook_event_name`; `UserPromptSubmit` has
`prompt`, `Stop` has `last_assistant_message`; `SessionStart` and `UserPromptSubmit` answer with
`{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`. The memory blocks are Claude Code's
(`memvault.hooks.claude_code`). Codex's transcript is its own rollout format, which memvault does not
read: each turn is captured at `Stop` from the prompt `UserPromptSubmit` saw (kept with the session's
progress in the vault's state folder until then) and the reply `Stop` carries.
"""

from __future__ import annotations

from typing import Any

from memvault.api import Vault
from memvault.hooks import claude_code


def handle(vault: Vault, payload: dict[str, Any], budget: int) -> dict[str, Any] | None:
    event = payload["hook_event_name"]
    if event == "SessionStart":
        return claude_code.session_start(vault, payload, budget)
    if event == "UserPromptSubmit":
        keep_prompt(vault, payload)
        return claude_code.prompt_submit(vault, payload, budget)
    if event == "Stop":
        capture_turn(vault, payload, payload.get("last_assistant_message"), "codex session")
    return None


def keep_prompt(vault: Vault, payload: dict[str, Any]) -> None:
    """The prompt, kept with the session's progress until its turn ends (the host's transcript is not read)."""
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        claude_code.capture(vault, claude_code.session_of(payload), [], "", None, {"prompt": prompt})


def capture_turn(vault: Vault, payload: dict[str, Any], reply: Any, name: str) -> None:
    """The turn that just ended (the prompt kept, then the reply) through `extract`."""
    session = claude_code.session_of(payload)
    prompt = claude_code.progress_of(vault, session).get("prompt")
    turn = [{"role": "user", "content": prompt}] if isinstance(prompt, str) and prompt.strip() else []
    turn += [{"role": "assistant", "content": reply}] if isinstance(reply, str) and reply.strip() else []
    claude_code.capture(vault, session, turn, name, None, {"prompt": None})
