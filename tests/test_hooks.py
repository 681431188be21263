"""The automatic loop through Claude Code's hooks (issue 29): `hooks install` merges with the settings
there and `uninstall` takes exactly its own out; a recorded session's payloads, the transcript a real
JSON-lines file in Claude Code's shape, go through `memvault hook claude-code` as Claude Code runs it."""

from __future__ import annotations

import datetime as dt
import json
import shlex
from pathlib import Path

from memvault.hooks.claude_code import SESSION_DAEMON_IDLE_S
from tests.reliability.conftest import HASH_ENV

SESSION = "5a0ddcd0-5487-4794-99ac-143f6bb9e248"
THEIRS = {  # a settings file as a person keeps it: their own hook, permissions, their formatting
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}],
              "SessionStart": [{"hooks": [{"type": "command", "command": "cat NOTES.md"}]}]},
}  # fmt: skip


def _line(kind: str, content, **extra) -> str:
    role = "user" if kind == "user" else "assistant"
    return json.dumps({"type": kind, "uuid": f"u{len(content)}", "sessionId": SESSION, "parentUuid": None,
                       "timestamp": "2026-12-02T10:00:00.000Z", "message": {"role": role, "content": content},
                       **extra})  # fmt: skip


def _transcript(path: Path, more: bool = False) -> Path:
    """A transcript as Claude Code writes it: other line types, tool calls and results, thinking,
    a subagent's lines and a slash command's echo among the conversation."""
    lines = [
        json.dumps({"type": "queue-operation", "operation": "dequeue", "sessionId": SESSION}),
        json.dumps({"type": "summary", "summary": "Release day planning", "leafUuid": "x"}),
        _line("user", "<command-name>/clear</command-name>"),
        _line("user", "We decided to ship on Tuesdays from now on."),
        _line("assistant", [{"type": "thinking", "thinking": "plan", "signature": "s"},
                            {"type": "text", "text": "Noted: releases go out on Tuesdays."},
                            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/x"}}]),
        _line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "file text"}]),
        _line("user", "Search the code for the release script", isSidechain=True),
        _line("user", "Also, I prefer squash merges for feature branches."),
        _line("assistant", [{"type": "text", "text": "Understood, squash merges it is."}]),
    ]  # fmt: skip
    if more:
        lines += [_line("user", "Thanks, that is all for today."), _line("assistant", "Bye!")]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _hook(cli, payload: dict, *args: str):
    return cli("hook", "claude-code", *args, input=json.dumps(payload), env=HASH_ENV)


def _payload(event: str, transcript: Path, **extra) -> dict:
    return {"session_id": SESSION, "transcript_path": str(transcript), "cwd": "/work/project",
            "hook_event_name": event, "permission_mode": "default", **extra}  # fmt: skip


def test_install_merges_with_the_settings_and_uninstall_leaves_them_byte_identical(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = json.dumps(THEIRS, indent=4) + "\n"  # not the indentation memvault writes
    settings.write_text(original, encoding="utf-8")
    done = cli("hooks", "install", "claude-code", "--settings", str(settings))
    assert done.returncode == 0 and done.stdout.startswith("added 5 hooks"), done
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert merged["permissions"] == THEIRS["permissions"]
    assert merged["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    assert merged["hooks"]["SessionStart"][0] == THEIRS["hooks"]["SessionStart"][0]  # theirs first, still there
    ours = {event: groups[-1]["hooks"][0] for event, groups in merged["hooks"].items() if event != "PreToolUse"}
    assert set(ours) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}
    words = shlex.split(ours["UserPromptSubmit"]["command"])
    assert words[1:] == ["--vault", str(layout.root), "hook", "claude-code"] and Path(words[0]).is_absolute()
    assert all(h["type"] == "command" and h["timeout"] > 0 for h in ours.values())
    again = cli("hooks", "install", "claude-code", "--settings", str(settings))
    assert again.stdout.startswith("already installed") and json.loads(settings.read_text()) == merged
    gone = cli("hooks", "uninstall", "claude-code", "--settings", str(settings))
    assert gone.returncode == 0 and "as it was before install" in gone.stdout, gone
    assert settings.read_text(encoding="utf-8") == original  # byte for byte

    fresh = tmp_path / "repo"  # --project: the repository's .claude/settings.json, created and removed
    (fresh / ".git").mkdir(parents=True)
    deep = fresh / "src" / "pkg"  # run from a subfolder: the file is at the repository's root (issue 47)
    deep.mkdir(parents=True)
    assert cli("hooks", "install", "claude-code", "--project", cwd=deep).returncode == 0
    assert (fresh / ".claude" / "settings.json").is_file() and not (deep / ".claude").exists()
    assert cli("hooks", "uninstall", "claude-code", "--project", cwd=deep).returncode == 0
    assert not (fresh / ".claude" / "settings.json").exists()


def test_uninstall_after_the_file_changed_takes_out_only_memvaults_hooks(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(THEIRS), encoding="utf-8")
    assert cli("hooks", "install", "claude-code", "--settings", str(settings)).returncode == 0
    edited = json.loads(settings.read_text(encoding="utf-8"))
    edited["model"] = "opus"  # the person changed something since
    settings.write_text(json.dumps(edited), encoding="utf-8")
    gone = cli("hooks", "uninstall", "claude-code", "--settings", str(settings))
    assert gone.returncode == 0 and gone.stdout.startswith("removed 5 hooks"), gone
    assert json.loads(settings.read_text(encoding="utf-8")) == {**THEIRS, "model": "opus"}
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    refused = cli("hooks", "install", "claude-code", "--settings", str(broken))
    assert refused.returncode == 2 and str(broken) in refused.stderr and "\n" not in refused.stderr.strip()
    assert broken.read_text(encoding="utf-8") == "{not json"  # never written over
    missing = cli("--vault", str(tmp_path / "nope"), "hooks", "install", "claude-code", "--settings", str(settings))
    assert missing.returncode == 2 and "no vault there" in missing.stderr


def test_a_recorded_claude_code_session_goes_through_the_hooks(layout, cli, cli_process, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "preference", "Answers in English, terse").returncode == 0
    assert cli("remember", "--type", "config", "The staging database is on port 6543").returncode == 0
    assert cli("index", env=HASH_ENV).returncode == 0
    transcript = _transcript(tmp_path / f"{SESSION}.jsonl")

    start = _hook(cli, _payload("SessionStart", transcript, source="startup"), "--budget", "600")
    assert start.returncode == 0, start.stderr
    context = json.loads(start.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart" and "Answers in English, terse" in context["additionalContext"]
    assert len(context["additionalContext"]) <= 600 + 40  # the budget, and the two tags around it
    assert cli("daemon", "status", "--json", env=HASH_ENV).stdout.count('"running": true') == 1  # for the prompts

    asked = _hook(cli_process, _payload("UserPromptSubmit", transcript, prompt="which port is staging on?"))
    assert asked.returncode == 0, asked.stderr
    recall = json.loads(asked.stdout)["hookSpecificOutput"]["additionalContext"]
    assert recall.startswith("<memory-context") and "6543" in recall and "<memory-stable>" not in recall
    unrelated = _hook(cli, _payload("UserPromptSubmit", transcript, prompt="zzqxv"))
    assert unrelated.returncode == 0 and unrelated.stdout == ""  # nothing relevant: nothing added

    compact = _hook(cli, _payload("PreCompact", transcript, trigger="auto", custom_instructions=""))
    assert compact.returncode == 0 and compact.stdout == "", compact.stderr
    today = layout.root / "daily" / f"{dt.date.today().isoformat()}.md"
    note = today.read_text(encoding="utf-8")
    summary = next(line for line in note.splitlines() if "Conversation: " in line)
    assert "“Release day planning”, 4 messages, 2 from the user" in summary and f"[conversation:: {SESSION}]" in summary
    assert "/clear" not in note and "Search the code" not in note and "file text" not in note
    review = (layout.root / "REVIEW.md").read_text(encoding="utf-8")
    assert "ship on Tuesdays" in review and "squash merges" in review
    memory = json.loads(cli("status", "--json", env=HASH_ENV).stdout)["memory"]["project"]  # seed 002's /memory status
    # the stable block: the preference, then the conversation's summary
    assert (memory["summaries"], memory["review"], memory["current"], memory["stable_entries"]) == (1, 2, 3, 2)
    assert memory["recalled"] >= 1 and memory["stable_chars"] > len("Answers in English, terse")  # the prompt's

    ended = _hook(cli, _payload("SessionEnd", _transcript(transcript, more=True), reason="prompt_input_exit"))
    assert ended.returncode == 0, ended.stderr
    summaries = [line for line in today.read_text(encoding="utf-8").splitlines() if "Conversation: " in line]
    # the session's one summary, replaced in place: the whole session, the new messages read once
    assert len(summaries) == 1 and "6 messages, 3 from the user" in summaries[0], summaries
    assert "Bye!" in today.read_text(encoding="utf-8")  # the last message, in the summary's last five
    assert "seen 2x" not in cli("review").stdout  # nothing extracted twice
    # the daemon stays for other sessions and stops itself once idle
    stayed = json.loads(cli("daemon", "status", "--json", env=HASH_ENV).stdout)
    assert stayed["running"] and stayed["idle_exit"] == SESSION_DAEMON_IDLE_S
    assert cli("daemon", "stop", env=HASH_ENV).returncode == 0


def test_one_sessions_end_leaves_the_daemons_another_session_uses(layout, cli, cli_process, user_root, tmp_path):
    """Two sessions in one project, and the user vault: SessionStart starts the daemon of every vault the
    session reads; the first session's end stops none of them, and the second's prompts are answered by
    the daemons (before, SessionStart started the project's alone and its session's end stopped it)."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "The staging database is on port 6543").returncode == 0
    assert cli("remember", "--scope", "user", "--type", "preference", "Answers in English, terse").returncode == 0
    first, second = _transcript(tmp_path / "first.jsonl"), _transcript(tmp_path / "second.jsonl")
    other = {"session_id": "second-session"}
    assert _hook(cli, _payload("SessionStart", first, source="startup")).returncode == 0
    assert _hook(cli, {**_payload("SessionStart", second, source="startup"), **other}).returncode == 0
    ended = _hook(cli, _payload("SessionEnd", first, reason="prompt_input_exit"))
    assert ended.returncode == 0, ended.stderr
    try:
        for root in (layout.root, user_root):
            status = json.loads(cli("--vault", str(root), "daemon", "status", "--json", env=HASH_ENV).stdout)
            assert status["running"] and status["idle_exit"] == SESSION_DAEMON_IDLE_S, root
        served = json.loads(cli("daemon", "status", "--json", env=HASH_ENV).stdout)["usage"]["searches"]
        asked = _hook(cli_process, {**_payload("UserPromptSubmit", second, prompt="which port is staging on?"),
                                    **other})  # fmt: skip
        assert asked.returncode == 0 and "6543" in json.loads(asked.stdout)["hookSpecificOutput"]["additionalContext"]
        after = json.loads(cli("daemon", "status", "--json", env=HASH_ENV).stdout)["usage"]["searches"]
        assert after > served  # the daemon answered the second session's prompt
    finally:
        for root in (layout.root, user_root):
            cli("--vault", str(root), "daemon", "stop", env=HASH_ENV)


def test_a_hook_that_cannot_do_its_work_says_so_in_one_line_and_never_blocks_the_prompt(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    for given in ("not json", json.dumps({"session_id": "s"}),
                  json.dumps(_payload("PreCompact", tmp_path / "missing.jsonl", trigger="manual"))):  # fmt: skip
        failed = cli("hook", "claude-code", input=given, env=HASH_ENV)
        assert failed.returncode == 1 and failed.stdout == "", failed  # 1: shown and passed by; 2 would block
        assert failed.stderr.startswith("memvault: hook: ") and failed.stderr.count("\n") == 1, failed.stderr
    started = _hook(cli, _payload("SessionStart", tmp_path / "gone.jsonl", source="startup"))
    assert started.returncode == 0 and '"running": true' in cli("daemon", "status", "--json", env=HASH_ENV).stdout
    ended = _hook(cli, _payload("SessionEnd", tmp_path / "gone.jsonl", reason="other"))
    assert ended.returncode == 1 and "cannot read the transcript" in ended.stderr
    assert '"running": true' in cli("daemon", "status", "--json", env=HASH_ENV).stdout  # left for its idle exit
    assert cli("daemon", "stop", env=HASH_ENV).returncode == 0
    other = _hook(cli, _payload("Notification", tmp_path / "t.jsonl", message="hi"))
    assert other.returncode == 0 and other.stdout == ""
    printed = cli("hooks", "mcp-config", "codex")
    assert printed.returncode == 0 and f'"--vault", "{layout.root}", "mcp"' in printed.stdout


def test_after_a_compaction_the_stable_block_leaves_out_the_sessions_own_summary(layout, cli, tmp_path):
    """Seed 002: a session's own summaries are in its history already; after a compaction its
    SessionStart repeated the summary PreCompact had just written. Another session still gets it."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "preference", "Answers in English, terse").returncode == 0
    transcript = _transcript(tmp_path / f"{SESSION}.jsonl")
    compact = _hook(cli, _payload("PreCompact", transcript, trigger="auto", custom_instructions=""))
    assert compact.returncode == 0, compact.stderr
    try:
        again = _hook(cli, _payload("SessionStart", transcript, source="compact"))
        assert again.returncode == 0, again.stderr
        own = json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "Answers in English, terse" in own and "Release day planning" not in own
        other = _hook(cli, {**_payload("SessionStart", transcript, source="startup"), "session_id": "another"})
        assert "Release day planning" in json.loads(other.stdout)["hookSpecificOutput"]["additionalContext"]
    finally:
        cli("daemon", "stop", env=HASH_ENV)
