from __future__ import annotations

import os

import pytest

from memvault.vault.errors import GuardError, PathError, UsageError
from memvault.vault.guards import MAX_ENTRY_CHARS, check_entry, check_section_name
from memvault.vault.paths import inside

SECRETS = [
    "my key is sk-proj-abcdefghijklmnopqrstuvwx123",
    "aws AKIAIOSFODNN7EXAMPLE here",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----",
    "db password=hunter2",
    "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "token = 'abc123def'",
    "api_key: AbC123xyz987",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
    "slack xoxb-1234567890-abcdefghij",
]
PROSE = [
    "the password manager is 1Password; use it",
    "token limits: the model reads 256 tokens",
    "rotate the API key every 90 days",
    "密码不要写进笔记",
    "set tokenizer = jieba for Chinese",
]


@pytest.mark.parametrize("text", SECRETS)
def test_credentials_are_refused_with_a_reason(text):
    with pytest.raises(GuardError, match=r"refused: line \d+ of the entry looks like"):
        check_entry(text)


@pytest.mark.parametrize("text", PROSE)
def test_ordinary_prose_passes(text):
    assert check_entry(f"  {text}\n") == text


def test_length_limit():
    assert check_entry("x" * MAX_ENTRY_CHARS) == "x" * MAX_ENTRY_CHARS
    with pytest.raises(GuardError, match="4,001 characters; the limit is 4,000"):
        check_entry("x" * (MAX_ENTRY_CHARS + 1))


def test_refused_entry_writes_nothing(layout, cli):
    assert cli("init").returncode == 0
    before = layout.memory_md.read_bytes()
    result = cli("remember", "--type", "config", "password=hunter2")
    assert result.returncode == 3
    assert result.stderr.startswith("memvault: error: refused:") and result.stderr.count("\n") == 1
    assert layout.memory_md.read_bytes() == before
    assert not list(layout.daily_dir.glob("*.md"))


@pytest.mark.parametrize("name", ["a\n## injected", "#x", "", "   ", "x" * 121])
def test_bad_section_names(name):
    with pytest.raises(UsageError):
        check_section_name(name)


def test_path_escapes_are_refused(layout, tmp_path, cli):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside the vault", encoding="utf-8")
    os.symlink(outside, layout.root / "link")
    os.symlink(outside / "secret.md", layout.root / "file-link.md")
    (layout.root / "sub").mkdir()
    (layout.root / "sub" / "in.md").write_text("inside", encoding="utf-8")
    os.symlink(layout.root / "sub" / "in.md", layout.root / "ok-link.md")
    for ref in (
        "../outside/secret.md",
        str(outside / "secret.md"),
        "link/secret.md",
        "file-link.md",
        "sub/../../outside/secret.md",
    ):
        with pytest.raises(PathError):
            inside(layout, ref)
        for args in (("show", ref), ("rewrite", ref)):
            result = cli(*args, input="overwrite attempt")
            assert result.returncode == 2, (args, result.stderr)
            assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    assert (outside / "secret.md").read_text(encoding="utf-8") == "outside the vault"
    assert inside(layout, "ok-link.md") == layout.root / "sub" / "in.md"


def test_bad_date_argument(layout, cli):
    result = cli("note", "--date", "../../etc/passwd", "x")
    assert result.returncode == 2 and "not a date" in result.stderr
