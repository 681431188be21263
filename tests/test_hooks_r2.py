"""The hooks' settings file and transcripts, second round: `hooks uninstall` takes out only memvault's own
hooks from the file as it is now (a person's edits since install stay), install and uninstall change only
memvault's part of the text (every other byte as the person wrote it, a symlinked file written through its
link, a copy of the version replaced kept), and a hook reads only a regular file, a bounded window of it,
line by line, passing over (and counting) a line it cannot read."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from memvault.hooks.settings import EVENTS
from tests.reliability.conftest import run_cli
from tests.test_hooks import SESSION, THEIRS, _hook, _line, _payload, _transcript

# a settings file as a person might keep it: values Python's json would not write back as they are
# (1e400 becomes Infinity, long floats and ints are cut or reformatted, a duplicate key is merged)
ORIGINAL = """{
    "model": "sonnet",
    "cleanupPeriodDays": 1e400,
    "ratio": 0.1000000000000000055511151231257827,
    "big": 123456789012345678901234567890,
    "negzero": -0.0,
    "name": "caf\\u00e9",
    "permissions": {"allow": ["Bash(npm test)"], "allow": ["Bash(make)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}]
    }
}
"""


def _commands(settings: Path) -> list[str]:
    data = json.loads(settings.read_text(encoding="utf-8"))
    return [h["command"] for groups in data.get("hooks", {}).values() for g in groups for h in g["hooks"]]


def _install(cli, settings: Path, *args: str):
    return cli("hooks", "install", "claude-code", "--settings", str(settings), *args)


def _uninstall(cli, settings: Path):
    return cli("hooks", "uninstall", "claude-code", "--settings", str(settings))


def _one_line(stderr: str) -> bool:
    return stderr.count("\n") == 1 and "internal error" not in stderr and "Traceback" not in stderr


def test_uninstall_keeps_the_edits_made_after_install_even_after_a_second_install(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(THEIRS, indent=2) + "\n", encoding="utf-8")
    assert _install(cli, settings).returncode == 0
    edited = json.loads(settings.read_text(encoding="utf-8"))
    edited["model"] = "opus"  # the person changes their settings since
    edited["permissions"]["allow"].append("Bash(make)")
    settings.write_text(json.dumps(edited, indent=2) + "\n", encoding="utf-8")
    assert _install(cli, settings, "--budget", "900").returncode == 0
    assert _uninstall(cli, settings).returncode == 0
    expected = {"permissions": {"allow": ["Bash(npm test)", "Bash(make)"]}, "hooks": THEIRS["hooks"], "model": "opus"}
    assert settings.read_text(encoding="utf-8") == json.dumps(expected, indent=2) + "\n"  # their edits, their text


def test_install_again_with_another_budget_updates_memvaults_hooks_in_place(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(THEIRS, indent=2) + "\n", encoding="utf-8")
    assert _install(cli, settings).returncode == 0
    again = _install(cli, settings, "--budget", "900")
    assert again.returncode == 0 and again.stdout.startswith("updated 5 hooks"), again
    ours = [c for c in _commands(settings) if str(layout.root) in c]
    assert len(ours) == len(EVENTS) and all(c.endswith("--budget 900") for c in ours)  # one set, not two
    gone = _uninstall(cli, settings)
    assert gone.returncode == 0 and gone.stdout.startswith("removed 5 hooks"), gone
    assert settings.read_text(encoding="utf-8") == json.dumps(THEIRS, indent=2) + "\n"


def test_install_writes_through_a_symlinked_settings_file_and_keeps_the_link(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text(json.dumps(THEIRS, indent=4) + "\n", encoding="utf-8")
    original = real.read_text(encoding="utf-8")
    link = tmp_path / "home" / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    assert _install(cli, link).returncode == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sum(str(layout.root) in c for c in _commands(real)) == len(EVENTS)  # written in the link's target
    assert [p.name for p in link.parent.iterdir()] == ["settings.json"]  # no temp file left beside the link
    real.write_text(real.read_text(encoding="utf-8").replace('"Bash(npm test)"', '"Bash(npm run)"'), "utf-8")
    gone = _uninstall(cli, link)
    assert gone.returncode == 0 and gone.stdout.startswith("removed 5 hooks"), gone
    assert link.is_symlink() and real.read_text(encoding="utf-8") == original.replace("npm test", "npm run")


def test_values_memvault_does_not_touch_keep_their_text(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    settings = tmp_path / "settings.json"
    settings.write_text(ORIGINAL, encoding="utf-8")
    assert _install(cli, settings).returncode == 0
    installed = settings.read_text(encoding="utf-8")
    head = ORIGINAL[: ORIGINAL.index('"PreToolUse"')]
    assert installed.startswith(head) and '"SessionEnd": [' in installed  # only the hooks object grew
    edited = installed.replace('"model": "sonnet"', '"model": "opus"')  # the person edits: not as install left it
    settings.write_text(edited, encoding="utf-8")
    gone = _uninstall(cli, settings)
    assert gone.returncode == 0 and gone.stdout.startswith("removed 5 hooks"), gone
    assert settings.read_text(encoding="utf-8") == ORIGINAL.replace('"model": "sonnet"', '"model": "opus"')


def test_a_settings_file_that_cannot_be_kept_faithfully_is_refused_in_one_line(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    for name, text in (("nan", '{"model": NaN}\n'), ("infinity", '{"x": -Infinity}\n'),
                       ("deep", '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
                       ("bom", '\ufeff{"model": "opus"}\n')):  # fmt: skip
        settings = tmp_path / f"{name}.json"
        settings.write_text(text, encoding="utf-8")
        for refused in (_install(cli, settings), _uninstall(cli, settings)):
            assert refused.returncode == 2 and _one_line(refused.stderr), (name, refused)
            assert str(settings) in refused.stderr, (name, refused.stderr)
        assert settings.read_text(encoding="utf-8") == text, name  # never written over


def test_each_change_keeps_the_version_it_replaced(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(THEIRS) + "\n", encoding="utf-8")
    assert _install(cli, settings).returncode == 0
    edited = settings.read_text(encoding="utf-8").replace('"echo checked"', '"echo checked twice"')
    settings.write_text(edited, encoding="utf-8")
    gone = _uninstall(cli, settings)
    assert gone.returncode == 0, gone
    kept = sorted((layout.root / ".trash" / "settings").iterdir())
    assert [p.read_text(encoding="utf-8") for p in kept] == [json.dumps(THEIRS) + "\n", edited]
    assert str(kept[-1]) in gone.stdout  # the command says where


def test_a_transcript_that_is_not_a_regular_file_is_refused_in_one_line(layout, tmp_path):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/urandom"), Path("/dev/zero"), tmp_path):
        payload = json.dumps(_payload("PreCompact", path, trigger="auto"))
        failed = run_cli(layout, "hook", "claude-code", input=payload, process=True, timeout=60)
        assert failed.returncode == 1 and failed.stdout == "" and _one_line(failed.stderr), (path, failed)
        assert str(path) in failed.stderr and "not a regular file" in failed.stderr, failed.stderr
    assert not layout.daily_note(dt.date.today()).exists()


def test_a_line_that_cannot_be_read_is_passed_over_and_counted(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    transcript = _transcript(tmp_path / f"{SESSION}.jsonl")
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "]" * 100_000 + "\n")  # valid JSON, nested past the parser's depth
        fh.write('{"type": "user", "message": \n')  # not JSON
        fh.write(_line("user", "a very long paste " + "x" * (9 << 20)) + "\n")  # over the line limit
        fh.write(_line("user", "Lines\u2028and\u0085separators stay in one message.") + "\n")
        fh.write(_line("assistant", "Noted.") + "\n")
    done = _hook(cli, _payload("PreCompact", transcript, trigger="auto"))
    assert done.returncode == 0 and done.stdout == "", done
    assert "3 lines of the transcript" in done.stderr and str(transcript) in done.stderr, done.stderr
    note = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    assert "6 messages, 3 from the user" in note and "separators stay in one message" in note
    assert "a very long paste" not in note


def test_a_huge_transcript_is_read_from_its_last_window(layout, cli, tmp_path):
    from memvault.vault.conversation import TRANSCRIPT_WINDOW

    assert cli("init", "--lang", "en").returncode == 0
    transcript = tmp_path / f"{SESSION}.jsonl"
    head = _line("user", "An old remark from the start of the session.") + "\n"
    with transcript.open("wb") as fh:
        fh.write(head.encode("utf-8"))
        fh.seek(len(head) + 2 * TRANSCRIPT_WINDOW)  # a hole: NUL bytes, one line twice the window long
        fh.write(b"\n" + (_line("user", "The newest question.") + "\n").encode("utf-8"))
        fh.write((_line("assistant", "The newest answer.") + "\n").encode("utf-8"))
    done = _hook(cli, _payload("PreCompact", transcript, trigger="auto"))
    assert done.returncode == 0, done
    assert f"only its last {TRANSCRIPT_WINDOW >> 20} MiB" in done.stderr and _one_line(done.stderr), done.stderr
    today = layout.daily_note(dt.date.today())
    note = today.read_text(encoding="utf-8")
    assert "2 messages, 1 from the user" in note and "The newest question." in note and "An old remark" not in note
    with transcript.open("a", encoding="utf-8") as fh:  # the session goes on: the next hook reads what follows
        fh.write(_line("user", "One more thing before I go.") + "\n")
    ended = _hook(cli, _payload("SessionEnd", transcript, reason="other"))
    assert ended.returncode == 0 and ended.stderr == "", ended
    summaries = [line for line in today.read_text(encoding="utf-8").splitlines() if "Conversation: " in line]
    assert len(summaries) == 1 and "3 messages, 2 from the user" in summaries[0], summaries  # one, replaced
    assert "One more thing before I go." in today.read_text(encoding="utf-8")


def test_extract_splits_json_lines_on_newlines_only(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    messages = [{"role": "user", "content": "one\u2028two"}, {"role": "assistant", "content": "three\u0085four"}]
    lines = tmp_path / "lines.jsonl"
    lines.write_text("\n".join(json.dumps(m, ensure_ascii=False) for m in messages) + "\n", encoding="utf-8")
    done = cli("extract", str(lines), "--json")
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["messages"] == 2
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    refused = cli("extract", str(deep))
    assert refused.returncode == 2 and _one_line(refused.stderr) and str(deep) in refused.stderr, refused


def test_each_turn_is_captured_at_stop_into_the_sessions_one_summary(layout, cli, tmp_path):
    """Issue 47: `Stop` (run in the background) extracts each turn as it ends, so a session killed
    mid-way keeps what it said; the session keeps one summary in the day's note, replaced in place."""
    assert cli("init", "--lang", "en").returncode == 0
    transcript = tmp_path / "session.jsonl"
    said = [_line("user", "We decided to ship on Tuesdays from now on."), _line("assistant", "Noted.")]
    transcript.write_text("\n".join(said) + "\n")
    first = _hook(cli, _payload("Stop", transcript, stop_hook_active=False))
    assert first.returncode == 0 and first.stdout == "", first
    today = layout.daily_note(dt.date.today())
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(_line("user", "I prefer squash merges for feature branches.") + "\n")
        fh.write(_line("assistant", "Squash merges it is.") + "\n")
    assert _hook(cli, _payload("Stop", transcript, stop_hook_active=False)).returncode == 0
    note = today.read_text(encoding="utf-8")
    summaries = [line for line in note.splitlines() if "Conversation: " in line]
    assert len(summaries) == 1 and "4 messages, 2 from the user" in summaries[0], summaries
    assert "ship on Tuesdays from now on" in note and "Squash merges it is." in note  # first and last kept
    review = cli("review").stdout
    assert "ship on Tuesdays" in review and "squash merges" in review and "seen 2x" not in review  # each once
    ended = _hook(cli, _payload("SessionEnd", transcript, reason="exit"))  # nothing new: nothing written
    assert ended.returncode == 0 and today.read_text(encoding="utf-8") == note


def test_auto_index_off_starts_no_daemon(layout, cli, tmp_path):
    """Seed 003's auto-indexing switch: with `auto_index = false` the session's start gives the stable
    block and starts no daemon (a person indexes, or starts one)."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "Answers in English, terse", "--type", "preference").returncode == 0
    (layout.root / "memvault.toml").write_text("auto_index = false\n")
    started = _hook(cli, _payload("SessionStart", _transcript(tmp_path / "t.jsonl"), source="startup"))
    assert started.returncode == 0 and "Answers in English, terse" in started.stdout, started
    assert json.loads(cli("daemon", "status", "--json").stdout)["running"] is False
