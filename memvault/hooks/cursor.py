"""What `memvault hook cursor` does with each Cursor hook payload (JSON on stdin).

Cursor's hooks (`~/.cursor/hooks.json`, or a repository's `.cursor/hooks.json`: `{"version": 1,
"hooks": {EVENT: [{"command"}]}}`) send `conversation_id`, `generation_id`, `workspace_roots` and
`hook_event_name`; `beforeSubmitPrompt` has `prompt`, `afterAgentResponse` has `text`. Its prompt hook
can only let a prompt through or stop it, not add to it, so an agent there reads memory through the
MCP server (`memory_context`); the hooks capture each turn, the prompt kept until the reply comes, into
the conversation's one summary of the day (`memvault.hooks.codex`).
"""

from __future__ import annotations

from typing import Any

from memvault.api import Vault
from memvault.hooks import codex


def normalized(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with the fields the other hosts' name: `session_id` (the conversation) and `cwd`
    (the first workspace root), by which the project's vault is found."""
    roots = payload.get("workspace_roots")
    cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else payload.get("cwd")
    return {**payload, "session_id": payload.get("conversation_id"), "cwd": cwd}


def handle(vault: Vault, payload: dict[str, Any], budget: int) -> dict[str, Any] | None:
    event = payload["hook_event_name"]
    if event == "beforeSubmitPrompt":
        codex.keep_prompt(vault, payload)
        return {"continue": True}
    if event == "afterAgentResponse":
        codex.capture_turn(vault, payload, payload.get("text"), "cursor conversation")
    return None
