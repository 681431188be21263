"""Codex's hooks (issue 47): `hooks install codex` writes `hooks.json` in Claude Code's shape and
uninstall leaves it byte-identical; recorded Codex payloads (openai/codex's hook input schemas:
`transcript_path` null, `turn_id`, `model`) drive the same loop as Claude Code's: the stable block at
SessionStart, recall per prompt, and each turn captured at Stop from the prompt and the reply."""

from __future__ import annotations

import datetime as dt
import json
import shlex

from memvault.hooks.settings import CODEX_EVENTS
from tests.reliability.conftest import HASH_ENV

SESSION = "019d036d-c7fa-72d2-b6fd-78878bfe34e4"


def _payload(event: str, cwd, **extra) -> dict:
    return {"session_id": SESSION, "transcript_path": None, "cwd": str(cwd), "hook_event_name": event,
            "model": "gpt-5.4", "permission_mode": "default", **extra}  # fmt: skip


def _hook(cli, payload: dict):
    return cli("hook", "codex", input=json.dumps(payload), env=HASH_ENV)


def test_install_writes_codex_hooks_json_and_uninstall_restores_it(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    hooks = tmp_path / "codex" / "hooks.json"
    hooks.parent.mkdir()
    audit = '{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}'
    theirs = '{\n  "hooks": {\n    "PreToolUse": [' + audit + "]\n  }\n}\n"
    hooks.write_text(theirs)
    done = cli("hooks", "install", "codex", "--settings", str(hooks))
    assert done.returncode == 0 and done.stdout.startswith(f"added {len(CODEX_EVENTS)} hooks"), done
    written = json.loads(hooks.read_text())["hooks"]
    assert set(written) == {"PreToolUse", *CODEX_EVENTS}
    for event in CODEX_EVENTS:
        (hook,) = written[event][0]["hooks"]
        assert shlex.split(hook["command"])[-2:] == ["hook", "codex"] and "async" not in hook
    assert cli("hooks", "install", "codex", "--settings", str(hooks)).stdout.startswith("already installed")
    gone = cli("hooks", "uninstall", "codex", "--settings", str(hooks))
    assert gone.returncode == 0 and hooks.read_text() == theirs, gone


def test_a_codex_session_is_given_memory_and_each_turn_is_captured(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "Answers in English, terse", "--type", "preference").returncode == 0
    assert cli("remember", "The staging database listens on port 6543", "--type", "config").returncode == 0
    start = _hook(cli, _payload("SessionStart", layout.root, source="startup"))
    assert start.returncode == 0, start.stderr
    given = json.loads(start.stdout)["hookSpecificOutput"]
    assert given["hookEventName"] == "SessionStart" and "Answers in English, terse" in given["additionalContext"]
    asked = _hook(cli, _payload("UserPromptSubmit", layout.root, turn_id="t1", prompt="which port is staging on?"))
    recall = json.loads(asked.stdout)["hookSpecificOutput"]
    assert recall["hookEventName"] == "UserPromptSubmit" and "6543" in recall["additionalContext"]
    stop = _hook(cli, _payload("Stop", layout.root, turn_id="t1", stop_hook_active=False,
                               last_assistant_message="Staging is on port 6543."))  # fmt: skip
    assert stop.returncode == 0 and stop.stdout == "", stop
    said = _hook(cli, _payload("UserPromptSubmit", layout.root, turn_id="t2",
                               prompt="We decided to ship on Tuesdays from now on."))  # fmt: skip
    assert said.returncode == 0
    replied = _payload("Stop", layout.root, turn_id="t2", stop_hook_active=False,
                       last_assistant_message="Noted: releases go out on Tuesdays.")  # fmt: skip
    assert _hook(cli, replied).returncode == 0
    note = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    summaries = [line for line in note.splitlines() if "Conversation: " in line]
    assert len(summaries) == 1 and "4 messages, 2 from the user" in summaries[0], summaries
    assert f"[conversation:: {SESSION}]" in summaries[0] and "which port is staging on?" in note
    assert "ship on Tuesdays" in cli("review").stdout  # the user's lasting statement, proposed once
    cli("daemon", "stop", env=HASH_ENV)


def _cursor(event: str, root, **extra) -> dict:
    return {"conversation_id": "conv-7f3a", "generation_id": "gen-1", "hook_event_name": event,
            "workspace_roots": [str(root)], "model": "claude-sonnet", "cursor_version": "2.0.77", **extra}  # fmt: skip


def test_cursor_hooks_json_installs_flat_and_captures_each_turn(layout, cli, tmp_path):
    """Cursor's hooks.json has no groups and its prompt hook cannot add context: memvault's hooks
    capture each turn there (memory is read through MCP), and uninstall gives the file back as it was."""
    assert cli("init", "--lang", "en").returncode == 0
    hooks = tmp_path / "cursor" / "hooks.json"
    hooks.parent.mkdir()
    theirs = '{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{"command": "./format.sh"}]\n  }\n}\n'
    hooks.write_text(theirs)
    assert cli("hooks", "install", "cursor", "--settings", str(hooks)).returncode == 0
    written = json.loads(hooks.read_text())
    assert written["version"] == 1 and written["hooks"]["afterFileEdit"] == [{"command": "./format.sh"}]
    for event in ("beforeSubmitPrompt", "afterAgentResponse"):
        (hook,) = written["hooks"][event]
        assert shlex.split(hook["command"])[-2:] == ["hook", "cursor"] and "hooks" not in hook
    fresh = tmp_path / "fresh" / "hooks.json"  # none there: made with its version, and removed again
    assert cli("hooks", "install", "cursor", "--settings", str(fresh)).returncode == 0
    assert json.loads(fresh.read_text())["version"] == 1
    assert cli("hooks", "uninstall", "cursor", "--settings", str(fresh)).returncode == 0 and not fresh.exists()

    asked = cli("hook", "cursor", input=json.dumps(_cursor("beforeSubmitPrompt", layout.root,
                prompt="We decided to ship on Tuesdays from now on.", attachments=[])), env=HASH_ENV)  # fmt: skip
    assert asked.returncode == 0 and json.loads(asked.stdout) == {"continue": True}, asked
    replied = cli("hook", "cursor", input=json.dumps(_cursor("afterAgentResponse", layout.root,
                  text="Noted: releases go out on Tuesdays.")), env=HASH_ENV)  # fmt: skip
    assert replied.returncode == 0 and replied.stdout == "", replied
    note = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    assert "2 messages, 1 from the user" in note and "[conversation:: conv-7f3a]" in note
    assert "ship on Tuesdays" in cli("review").stdout
    gone = cli("hooks", "uninstall", "cursor", "--settings", str(hooks))
    assert gone.returncode == 0 and hooks.read_text() == theirs, gone
